"""Measured power of the stratified permutation shift test (paper Eq. 3) at planted shifts.

Data-generating process
-----------------------
On the common support, with its observed design kept (``x = logit(MATH)``,
the post labels ``d`` and the strata of ``x``), replicate ``r`` at planted
shift ``c`` is::

    y*_r(c) = a_hat + b_hat * x + c * d + e*_r

``a_hat, b_hat`` are the full model's OLS fit, and ``e*_r`` is a residual
bootstrap: ``n`` draws with replacement from the full model's *modified*
residuals ``e_i / sqrt(1 - h_ii)``, centred (Davison & Hinkley 1997,
Algorithm 6.3). Raw residuals have variance ``sigma^2 (1 - h_ii)``, too small
by about ``k/n``; the leverage correction restores ``sigma^2``. Resampling the
residuals (rather than drawing normal errors) keeps their actual shape,
including the heavy lower tail from a model clipped at AIME = 0; the same
function accepts any other error matrix (e.g. normal draws, as the tests do).

Each replicate's data set is then put through the same test as the claim: the
post label permuted within the strata with *fresh* permutations, ``p = (1 +
#{gamma_perm >= gamma_obs}) / (n_perm + 1)`` (one-sided, +1 convention, ties
within relative rounding counted), and a detection is ``p < alpha``. The
power at ``c`` is the share of the ``R`` replicates detecting, with Monte
Carlo standard error ``sqrt(power (1 - power) / R)``.

Common random numbers: within a replicate, every shift of the grid uses the
same errors and the same permutations, so the curve is smooth in ``c`` and
differences between shifts carry less Monte Carlo noise; each shift's power is
still an average over ``R`` independent replicates.

A sensitivity variant (``mean_model="strata"`` in :func:`shift_test_power`)
replaces ``a + b x`` by stratum intercepts and a common slope, so that the
simulated data keep the observed between-stratum departures from the line.

Why this is cheap: the test is linear in ``y`` through the Frisch-Waugh-Lovell
form (:func:`harness.stats.shift.group_shift_grid`), so one replicate's
responses at every shift of the grid are residualised together and one
matrix product gives every permuted ``gamma`` at every shift. Under the
linear mean model ``a + b x`` lies in the span of ``[1, x]`` and is projected
out altogether: it changes no ``gamma``.

The planted shift is detected or not; a rise of ``gamma_hat`` by exactly
``c`` is true by algebra (OLS is linear in ``y``) and says nothing about
power. The stratified null moves with ``c`` too (a permuted label keeps part
of the true label's bin composition), which is why the power is measured.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from harness.stats.shift import (
    _prepare,
    group_shift_grid,
    inverted_interval,
    ols_classical,
    permutation_count_ge,
    permutation_p_value,
    stratified_permutation_indices,
    stratum_labels,
)

__all__ = [
    "modified_residuals",
    "residual_bootstrap_errors",
    "permutation_test_power",
    "shift_at_power",
    "shift_test_power",
]


def modified_residuals(design, y) -> np.ndarray:
    """OLS residuals divided by ``sqrt(1 - h_ii)``, then centred.

    ``h_ii`` is the leverage, the diagonal of ``A (A'A)^{-1} A'`` for the
    design ``A``. Each modified residual has variance ``sigma^2`` under the
    linear model with homoskedastic errors.
    """
    A = np.asarray(design, dtype=float)
    y = np.asarray(y, dtype=float)
    coef, *_ = np.linalg.lstsq(A, y, rcond=None)
    Q, _ = np.linalg.qr(A)
    h = np.einsum("ij,ij->i", Q, Q)
    if np.any(h >= 1.0 - 1e-12):
        raise ValueError("a point has leverage 1; its residual carries no error information")
    m = (y - A @ coef) / np.sqrt(1.0 - h)
    return m - m.mean()


def residual_bootstrap_errors(residuals, n_replicates: int, rng: np.random.Generator) -> np.ndarray:
    """``(n_replicates, n)`` errors, each row ``n`` draws with replacement from ``residuals``."""
    res = np.asarray(residuals, dtype=float)
    return res[rng.integers(0, res.size, size=(int(n_replicates), res.size))]


def permutation_test_power(
    x,
    d,
    strata,
    errors,
    shifts: Sequence[float],
    *,
    rng: np.random.Generator,
    baseline=None,
    n_perm: int,
    alpha: float = 0.05,
    interval_alpha: float | None = None,
) -> dict:
    """Power of the stratified permutation test of ``gamma > 0`` at each planted shift.

    Parameters
    ----------
    x : array_like, shape (n,)
        The regressor (``logit(MATH)`` on the support).
    d : array_like of bool or {0, 1}, shape (n,)
        The group label whose coefficient is tested.
    strata : array_like, shape (n,)
        Permutation strata (all equal: an unstratified test).
    errors : ndarray, shape (R, n)
        One error vector per replicate.
    shifts : sequence of float
        Planted shifts ``c``.
    rng : numpy.random.Generator
        Source of the permutations: ``n_perm`` fresh stratified permutations
        per replicate, drawn replicate by replicate.
    baseline : array_like, shape (n,), optional
        ``a + b x`` (default 0; any vector in the span of ``[1, x]`` leaves
        every ``gamma`` unchanged up to rounding).
    n_perm : int
        Permutations per replicate.
    alpha : float
        Level; a replicate detects when ``p < alpha``.
    interval_alpha : float, optional
        With it, each replicate also inverts its test into an interval for ``gamma``
        (:func:`harness.stats.shift.inverted_interval` at this level, from the same
        permutations), and the result holds how often it covers the planted shift:
        ``coverage, coverage_mc_se`` (lists over ``shifts``), ``interval_level``.

    Returns
    -------
    dict
        Lists over ``shifts``: ``shifts, power, mc_se, n_detected,
        mean_gamma`` (mean ``gamma_hat``; equals ``c`` plus the mean of the
        errors' own ``gamma``), ``mean_null_centre`` (mean over replicates of
        the permuted gammas' mean); scalars ``n_replicates, n_perm, alpha``.
        ``power = n_detected / R`` and ``mc_se = sqrt(power (1 - power) / R)``.
    """
    x = np.asarray(x, dtype=float)
    d = np.asarray(d, dtype=float)
    E = np.atleast_2d(np.asarray(errors, dtype=float))
    c = np.asarray(shifts, dtype=float)
    if E.shape[1] != x.size or d.shape != x.shape:
        raise ValueError(
            f"x, d and the rows of errors must have one entry per point, got {x.shape}, {d.shape}, {E.shape}"
        )
    if c.ndim != 1 or c.size == 0:
        raise ValueError("shifts must be a non-empty 1-d sequence")
    base = np.zeros_like(x) if baseline is None else np.asarray(baseline, dtype=float)
    R = E.shape[0]
    detected = np.zeros(c.size, dtype=np.int64)
    gamma_sum = np.zeros(c.size)
    null_sum = np.zeros(c.size)
    covered = np.zeros(c.size, dtype=np.int64)
    for e in E:
        Y = base[None, :] + c[:, None] * d[None, :] + e[None, :]  # (K, n): one response per shift
        D = d[stratified_permutation_indices(strata, n_perm, rng)]
        gam_perm = group_shift_grid(x, Y, D)  # (K, n_perm)
        gam_obs = group_shift_grid(x, Y, d[None, :])[:, 0]
        p = permutation_p_value(permutation_count_ge(gam_perm, gam_obs), n_perm)
        detected += p < alpha
        gamma_sum += gam_obs
        null_sum += gam_perm.mean(axis=1)
        if interval_alpha is not None:
            lo, hi = inverted_interval(gam_obs, gam_perm, group_shift_grid(x, d[None, :], D)[0], interval_alpha)
            covered += (lo <= c) & (c <= hi)
    power = detected / R
    coverage = {}
    if interval_alpha is not None:
        share = covered / R
        coverage = {
            "coverage": share.tolist(),
            "coverage_mc_se": np.sqrt(share * (1.0 - share) / R).tolist(),
            "interval_level": 1.0 - 2.0 * interval_alpha,
        }
    return {
        "shifts": c.tolist(),
        "power": power.tolist(),
        "mc_se": np.sqrt(power * (1.0 - power) / R).tolist(),
        "n_detected": detected.tolist(),
        "mean_gamma": (gamma_sum / R).tolist(),
        "mean_null_centre": (null_sum / R).tolist(),
        "n_replicates": int(R),
        "n_perm": int(n_perm),
        "alpha": float(alpha),
        **coverage,
    }


def shift_at_power(shifts, power, target: float = 0.8) -> dict:
    """Smallest shift whose power reaches ``target``, by linear interpolation on the grid.

    The grid is taken in increasing ``shift``. With ``k`` the first grid point
    where ``power >= target`` (the first crossing; a Monte Carlo curve need not
    be monotone), the shift is interpolated linearly between points ``k - 1``
    and ``k``::

        c* = c[k-1] + (target - P[k-1]) * (c[k] - c[k-1]) / (P[k] - P[k-1])

    Returns
    -------
    dict
        ``shift`` (``None`` when no grid point reaches ``target``; equal to
        ``c[0]``, an upper bound, when the first point already does),
        ``bracket`` (``[c[k-1], c[k]]``, or ``None``), ``target``, and
        ``max_power`` with ``shift_at_max_power`` (the largest power on the
        grid and where it is reached).
    """
    c = np.asarray(shifts, dtype=float)
    P = np.asarray(power, dtype=float)
    if c.shape != P.shape or c.ndim != 1 or c.size == 0:
        raise ValueError("shifts and power must be equal-length non-empty 1-d sequences")
    order = np.argsort(c, kind="stable")
    c, P = c[order], P[order]
    i_max = int(np.argmax(P))
    out = {
        "shift": None,
        "bracket": None,
        "target": float(target),
        "max_power": float(P[i_max]),
        "shift_at_max_power": float(c[i_max]),
    }
    reached = np.flatnonzero(target <= P)
    if reached.size == 0:
        return out
    k = int(reached[0])
    if k == 0:
        out["shift"] = float(c[0])
        return out
    c0, c1, p0, p1 = c[k - 1], c[k], P[k - 1], P[k]
    out["shift"] = float(c0 + (target - p0) * (c1 - c0) / (p1 - p0))
    out["bracket"] = [float(c0), float(c1)]
    return out


def shift_test_power(
    x_pct,
    y_pct,
    post,
    *,
    shifts: Sequence[float],
    rng: np.random.Generator,
    n_replicates: int,
    eps: float,
    n_bins: int,
    n_perm: int,
    alpha: float,
    target: float,
    mean_model: str = "linear",
) -> dict:
    """Power curve of the claim's shift test on its own design, at the grid and at the fitted shift.

    Prepares the data exactly as :func:`harness.stats.shift.shift_test` does
    (clipped logits, common support, ``n_bins`` quantile strata), fits the
    mean model, draws ``R`` residual-bootstrap error vectors from its modified
    residuals (first, from ``rng``), and runs :func:`permutation_test_power`
    (permutations next, from ``rng``) at ``shifts`` plus the fitted shift.

    Parameters
    ----------
    mean_model : {"linear", "strata"}
        ``"linear"`` (default): Equation 3 itself, ``a + b x + gamma d``; the
        fitted shift is the test's ``gamma_hat``. ``"strata"``: one intercept
        per stratum, a common slope and ``gamma d``, so the simulated data keep
        the observed between-stratum departures from the line (which the
        stratified permutation null absorbs); its fitted shift is the
        within-stratum ``gamma``, and on such data the test's ``gamma_hat``
        exceeds the planted shift by the between-stratum part (see
        ``curve["mean_gamma"]``). A sensitivity analysis of the first.

    Returns
    -------
    dict
        ``curve`` (:func:`permutation_test_power` on the grid), ``at_observed``
        (``shift`` = the mean model's fitted shift, ``power, mc_se,
        n_detected``, and ``coverage, coverage_mc_se``: how often the test
        inverted at ``alpha`` covers that shift), ``minimal_shift`` (:func:`shift_at_power` of the grid at
        ``target``), ``mean_model``, ``gamma_hat`` (Equation 3's estimate),
        ``sigma`` (the mean model's residual standard deviation), ``n``,
        ``n_post``, ``n_bins_used``, ``eps``.
    """
    X, Y, g, *_ = _prepare(x_pct, y_pct, post, eps)
    d = g.astype(float)
    strata = stratum_labels(X, n_bins)
    if mean_model == "linear":
        nuisance = np.column_stack([np.ones_like(X), X])
    elif mean_model == "strata":
        nuisance = np.column_stack([(strata[:, None] == np.unique(strata)[None, :]).astype(float), X])
    else:
        raise ValueError(f"mean_model must be 'linear' or 'strata', got {mean_model!r}")
    design = np.column_stack([nuisance, d])
    fit = ols_classical(design, Y)
    shift_hat = float(fit["coef"][-1])
    gamma_hat = float(ols_classical(np.column_stack([np.ones_like(X), X, d]), Y)["coef"][2])
    errors = residual_bootstrap_errors(modified_residuals(design, Y), n_replicates, rng)
    grid = [float(s) for s in shifts]
    res = permutation_test_power(
        X,
        d,
        strata,
        errors,
        grid + [shift_hat],
        rng=rng,
        baseline=nuisance @ fit["coef"][:-1],
        n_perm=n_perm,
        alpha=alpha,
        interval_alpha=alpha,
    )
    k = len(grid)
    curve = {key: (val[:k] if isinstance(val, list) else val) for key, val in res.items()}
    at_obs = {
        "shift": shift_hat,
        "power": res["power"][k],
        "mc_se": res["mc_se"][k],
        "n_detected": res["n_detected"][k],
        "coverage": res["coverage"][k],
        "coverage_mc_se": res["coverage_mc_se"][k],
    }
    se = np.asarray(curve["mc_se"], dtype=float)
    P = np.asarray(curve["power"], dtype=float)
    return {
        "curve": curve,
        "at_observed": at_obs,
        "minimal_shift": shift_at_power(curve["shifts"], curve["power"], target),
        # the same crossing of the curve +- 1.96 Monte Carlo s.e.: how far the Monte Carlo error moves it
        "minimal_shift_range": {
            "lo": shift_at_power(curve["shifts"], (P + 1.96 * se).tolist(), target)["shift"],
            "hi": shift_at_power(curve["shifts"], (P - 1.96 * se).tolist(), target)["shift"],
            "z": 1.96,
        },
        "mean_model": mean_model,
        "gamma_hat": gamma_hat,
        "sigma": math.sqrt(fit["sigma2"]),
        "n": int(fit["n"]),
        "n_post": int(g.sum()),
        "n_bins_used": int(np.unique(strata).size),
        "eps": float(eps),
    }
