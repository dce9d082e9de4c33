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
unchanged. Every specification is then run on each data set exactly as on the real labels (its clip, its
common support, its strata, its ``n_perm`` permutations, :func:`harness.stats.shift.shift_test`'s
arithmetic), so the curve's statistics under the null are those of the same procedure. With ``R`` data sets,
the one-sided p-value of an observed statistic ``T`` is ``(1 + #{T_r >= T}) / (R + 1)``
(:func:`harness.multiverse_finding.curve_p_value`).

Cost: ``R`` data sets x ``S`` specifications x ``n_perm`` permuted refits, each refit two inner products
(:func:`harness.stats.shift.group_shift_batch`). Within a data set, specifications whose support and strata
coincide (clips that move no model across a bin edge) share one draw of permutations (common random numbers,
as the claim's eps table does), so the permutations are drawn once per distinct stratification.
"""

from __future__ import annotations

import numpy as np

from .shift import (
    clipped_logit,
    common_support,
    group_shift_batch,
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


def _one_dataset(logits: dict, post: np.ndarray, specs: list[dict], rng: np.random.Generator, strata_of: dict):
    """``(effects, p-values)`` of every specification on one labelling ``post``. ``strata_of`` keeps the strata
    of each (clip, support, bins) met so far: most data sets share the claim's support."""
    effects, p_values, drawn = np.empty(len(specs)), np.empty(len(specs)), {}
    for s, sp in enumerate(specs):
        X, Y = logits[sp["eps"]]
        mask, _, _ = common_support(X, post)
        x, y, d = X[mask], Y[mask], post[mask].astype(float)
        where = (sp["eps"], mask.tobytes(), sp["n_bins"])
        if where not in strata_of:
            strata_of[where] = stratum_labels(x, sp["n_bins"])
        strata = strata_of[where]
        key = (mask.tobytes(), strata.tobytes(), sp["n_perm"])
        if key not in drawn:  # the permuted labels, shared by the specifications of one stratification
            drawn[key] = d[stratified_permutation_indices(strata, sp["n_perm"], rng)]
        gamma = float(group_shift_batch(x, y, d[None, :])[0])
        perm = group_shift_batch(x, y, drawn[key])
        effects[s] = gamma
        p_values[s] = permutation_p_value(int(permutation_count_ge(perm, gamma)), sp["n_perm"])
    return effects, p_values


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
        The labels of every data set first, then each data set's permutations in turn.
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
    strata_of: dict = {}
    for r, lab in enumerate(labels):
        effect[r], p_value[r] = _one_dataset(logits, lab, specs, rng, strata_of)
    return {"effect": effect, "p_value": p_value, "significant": p_value < alpha}
