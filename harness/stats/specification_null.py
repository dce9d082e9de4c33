"""The shift test's specification curve under the null (Simonsohn, Simmons & Nelson 2020, "Specification curve
analysis", Nature Human Behaviour 4: 1208-1214).

A multiverse of analysis choices gives one estimate and one test per specification. Whether the curve as a
whole shows an effect is asked of two statistics of the curve, each against its distribution under the null:

* the share of specifications whose test is significant, ``share = #{s: p_s < alpha} / S``;
* the median effect across specifications, ``median_s gamma_s``.

Data sets under the null come from the test's own permutation scheme: on the claim's common support, the
release label is permuted within the claim's strata (``n_bins`` quantile bins of ``logit(MATH)`` at the claim's
``eps``), which keeps each stratum's number of post-release models and breaks any link between the label and
the later benchmark's score at given strata; models outside the support keep their labels, scores are
unchanged. Every specification is then run on each data set as on the real labels (its clip, its common
support, its strata, its ``n_perm`` stratified permutations, the test's +1 convention and tie rule), so the
curve's statistics under the null are those of the same procedure. With ``R`` data sets, the one-sided
p-value of an observed statistic ``T`` is ``(1 + #{T_r >= T}) / (R + 1)``
(:func:`harness.resampling.multiverse.curve_p_value`).

Why it is cheap. The scores do not change between data sets, only the labels, so for one specification the
residual ``r = M y`` of the response on ``[1, x]`` is shared by every data set (Frisch-Waugh-Lovell, as in
:func:`harness.stats.shift.group_shift_batch`). A permuted label ``d o pi`` enters only through
``(d o pi)'r = d'(r o pi^-1)``, ``(d o pi)'x = d'(x o pi^-1)`` and ``(d o pi)'(d o pi) = d'd`` (0/1 labels),
so the coefficients of every data set on every permutation are two matrix products, ``L R'`` and ``L X'``,
with ``L`` the data sets' labels and the rows of ``R`` and ``X`` the residual and ``x`` permuted by each
inverse. That needs the same ``B`` permutations for the data sets of one stratification: they are drawn
once per specification's support and strata and shared by the data sets of a chunk (common random numbers;
each data set's test stays a valid permutation test, and with ``B = 2000`` the shared draw moves its
critical value by its Monte Carlo error only).
"""

from __future__ import annotations

import numpy as np

from .shift import (
    clipped_logit,
    common_support,
    permutation_count_ge,
    permutation_p_value,
    stratified_permutation_indices,
    stratum_labels,
)

__all__ = ["shift_specification_null", "null_labels"]


def null_labels(x_pct, post, *, eps: float, n_bins: int, n_datasets: int, rng: np.random.Generator) -> np.ndarray:
    """``(n_datasets, n)`` release labels under the null: each a permutation of ``post`` within the strata of the
    common support at ``eps`` and ``n_bins`` (the test's own scheme); labels outside the support are kept."""
    post = np.asarray(post, dtype=bool)
    X = clipped_logit(x_pct, eps)
    mask, _, _ = common_support(X, post)
    inside = np.flatnonzero(mask)
    idx = stratified_permutation_indices(stratum_labels(X[inside], n_bins), n_datasets, rng)
    out = np.broadcast_to(post, (int(n_datasets), post.size)).copy()
    out[:, inside] = post[inside][idx]
    return out


def _inverses(strata, n_perm: int, rng: np.random.Generator) -> np.ndarray:
    """The inverses of ``n_perm`` stratified permutations (:func:`stratified_permutation_indices`):
    ``inv[b, idx[b, i]] = i``."""
    idx = stratified_permutation_indices(strata, n_perm, rng)
    inv = np.empty_like(idx)
    np.put_along_axis(inv, idx, np.broadcast_to(np.arange(idx.shape[1]), idx.shape), axis=1)
    return inv


def _tests(X: np.ndarray, Y: np.ndarray, L: np.ndarray, inv: np.ndarray):
    """``(gamma, p)`` of the shift test of ``Y`` on ``[1, X]`` and each row of ``L`` (0/1 labels), every row tested
    on the same permutations (given by their inverses ``inv``, one per row); arrays of one entry per row of ``L``.

    ``gamma = d'r / (d'd - v' A v)`` with ``r = M y``, ``v = (d'1, d'x)`` and ``A = (Z'Z)^-1``, ``Z = [1, x]``;
    for the permuted label ``d o pi`` the same with ``r`` and ``x`` permuted by ``pi^-1`` (module docstring).
    """
    Z = np.column_stack([np.ones_like(X), X])
    A = np.linalg.inv(Z.T @ Z)
    r = Y - Z @ (A @ (Z.T @ Y))
    s = L.sum(axis=1)

    def coefficient(num, xd):
        den = s[:, None] - (A[0, 0] * s[:, None] ** 2 + 2 * A[0, 1] * s[:, None] * xd + A[1, 1] * xd**2)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(den > 1e-12 * np.maximum(s[:, None], 1.0), num / den, np.nan)

    gamma = coefficient((L @ r)[:, None], (L @ X)[:, None])[:, 0]
    perm = coefficient(L @ r[inv].T, L @ X[inv].T)
    return gamma, permutation_p_value(permutation_count_ge(perm, gamma), inv.shape[0])


def _specification(X, Y, labels: np.ndarray, sp: dict, rng: np.random.Generator, cache: dict):
    """One specification's ``(gamma, p)`` on every labelling (rows of ``labels``): data sets are grouped by their
    common support, each group tested on one draw of permutations. ``cache`` keeps the strata of each (clip,
    support, bins) and the permutations of each (support, strata, count): specifications of one stratification
    (clips that move no model across a bin edge) share a draw, as the claim's eps table does."""
    masks = np.array([common_support(X, lab)[0] for lab in labels])
    gamma, p = np.empty(len(labels)), np.empty(len(labels))
    keys = [m.tobytes() for m in masks]
    for key in dict.fromkeys(keys):  # the supports met, in order
        rows = np.array([i for i, k in enumerate(keys) if k == key])
        mask = masks[rows[0]]
        where = (sp["eps"], key, sp["n_bins"])
        if where not in cache:
            cache[where] = stratum_labels(X[mask], sp["n_bins"])
        drawn = (key, cache[where].tobytes(), sp["n_perm"])
        if drawn not in cache:
            cache[drawn] = _inverses(cache[where], sp["n_perm"], rng)
        L = labels[np.ix_(rows, np.flatnonzero(mask))].astype(float)
        gamma[rows], p[rows] = _tests(X[mask], Y[mask], L, cache[drawn])
    return gamma, p


def shift_specification_null(
    x_pct,
    y_pct,
    post,
    *,
    paper: dict,
    specs: list[dict],
    n_datasets: int,
    rng: np.random.Generator,
    alpha: float,
) -> dict:
    """Every specification's shift test on ``n_datasets`` data sets drawn under the null.

    Parameters
    ----------
    x_pct, y_pct, post : array_like
        The merged table, as :func:`harness.stats.shift.shift_test` takes it.
    paper : dict
        ``{"eps", "n_bins"}`` of the claim: the permutation scheme of the null data sets.
    specs : list of dict
        ``{"eps", "n_bins", "n_perm"}`` of each specification.
    n_datasets : int
        ``R``.
    rng : numpy.random.Generator
        The labels of every data set first, then each specification's permutations, per support, in turn.
    alpha : float
        A specification is significant when its ``p < alpha``.

    Returns
    -------
    dict
        ``effect`` and ``p_value`` (arrays ``(R, S)``: each data set's ``gamma`` and p-value per
        specification), ``significant`` (``p_value < alpha``).
    """
    post = np.asarray(post, dtype=bool)
    labels = null_labels(x_pct, post, eps=paper["eps"], n_bins=paper["n_bins"], n_datasets=n_datasets, rng=rng)
    logits = {sp["eps"]: (clipped_logit(x_pct, sp["eps"]), clipped_logit(y_pct, sp["eps"])) for sp in specs}
    effect = np.empty((int(n_datasets), len(specs)))
    p_value = np.empty_like(effect)
    cache: dict = {}
    for j, sp in enumerate(specs):
        effect[:, j], p_value[:, j] = _specification(*logits[sp["eps"]], labels, sp, rng, cache)
    return {"effect": effect, "p_value": p_value, "significant": p_value < alpha}
