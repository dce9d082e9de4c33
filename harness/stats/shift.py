"""Cross-benchmark shift test of AIME-2025 against MATH-500 (paper Section 5.2.2, Equation 3).

Model (one row per model in the common support)::

    logit(AIME_i) = alpha + beta * logit(MATH_i) + gamma * post_i + e_i

with ``post_i = 1{release_i >= cutoff}`` (the claim's cutoff: the release date of
the later benchmark). Every model post-dates MATH-500, so inflation of MATH-500 moves all
points, while AIME-2025-specific contamination lifts only the post-release
group: a positive ``gamma`` is the contamination signature.

Conventions (each one is a choice where several exist):

* scores are percentages, divided by 100 and clipped to ``[eps, 1 - eps]``
  before the logit (the claim's ``eps``, e.g. 1e-6; one model scores AIME = 0, so
  ``gamma`` depends on ``eps``, see :func:`eps_sensitivity`);
* common support: keep ``logit(MATH)`` in ``[max(min_pre, min_post),
  min(max_pre, max_post)]``, both ends inclusive;
* OLS with classical (homoskedastic) standard errors,
  ``sigma^2 = RSS / (n - 3)``, ``R^2 = 1 - RSS / TSS`` (centred);
* p-value: one-sided (``gamma > 0``) stratified permutation test. The
  ``post`` label is permuted within ``n_bins`` quantile bins of ``logit(MATH)``
  in the support (the claim's, 10 in the paper; ``pandas.qcut`` semantics,
  ``duplicates="drop"``, so tied edges can leave fewer), and
  ``p = (1 + #{gamma_perm >= gamma_obs}) / (n_perm + 1)``;
* interval for ``gamma``: the same test inverted (:func:`inverted_interval`),
  the shifts ``gamma0`` it rejects on neither side at ``alpha``.

The permutations are evaluated in one batch through the Frisch-Waugh-Lovell
theorem (see :func:`group_shift_batch`).
"""

from __future__ import annotations

import copy

import numpy as np
import pandas as pd

from .permutation import mc_se, refined_p_value

__all__ = [
    "merge_aa_exports",
    "clipped_logit",
    "common_support",
    "ols_classical",
    "stratum_labels",
    "stratified_permutation_indices",
    "group_shift_batch",
    "group_shift_grid",
    "permutation_count_ge",
    "permutation_p_value",
    "inverted_interval",
    "shift_test",
    "inflation_control",
    "relabel_control",
    "eps_sensitivity",
]

#: Ties of a permuted gamma with the observed one are decided up to this
#: relative rounding error (a permutation that only swaps equal labels
#: reproduces gamma_obs, but through different floating-point arithmetic).
_TIE_RTOL = 1e-10

#: Permutations drawn at once while refining a p-value (the indices of a batch take ``n`` times this many).
_CHUNK = 20_000


def merge_aa_exports(
    math500: pd.DataFrame,
    aime: pd.DataFrame,
    *,
    cutoff: str,
    key: str = "model_id",
    x_col: str = "math_500_pct",
    y_col: str = "aime_2025_pct",
    date_col: str = "release_date",
) -> pd.DataFrame:
    """Inner join of the two Artificial Analysis exports, with the release group.

    Parameters
    ----------
    math500, aime : DataFrame
        The MATH-500 and AIME-2025 exports. The release date is taken from
        the AIME export.
    cutoff : str
        ISO date; ``post = release_date >= cutoff``.

    Returns
    -------
    DataFrame
        Columns ``key, x_col, y_col, date_col, post`` (``post`` boolean).
        Rows with a missing score or release date are dropped.
    """
    for name, df, cols in (("math500", math500, (key, x_col)), ("aime", aime, (key, y_col, date_col))):
        missing = [c for c in cols if c not in df.columns]
        if missing:
            raise ValueError(f"{name} export lacks columns {missing}")
    for name, df in (("math500", math500), ("aime", aime)):
        if df[key].duplicated().any():
            raise ValueError(f"{name} export has duplicate {key!r} values")
    out = math500[[key, x_col]].merge(aime[[key, y_col, date_col]], on=key, how="inner")
    out[date_col] = pd.to_datetime(out[date_col], errors="coerce")
    out[x_col] = pd.to_numeric(out[x_col], errors="coerce")
    out[y_col] = pd.to_numeric(out[y_col], errors="coerce")
    out = out.dropna(subset=[x_col, y_col, date_col]).reset_index(drop=True)
    out["post"] = (out[date_col] >= pd.Timestamp(cutoff)).to_numpy()
    return out


def clipped_logit(pct, eps: float) -> np.ndarray:
    """``logit(clip(pct / 100, eps, 1 - eps))``."""
    p = np.clip(np.asarray(pct, dtype=float) / 100.0, eps, 1.0 - eps)
    return np.log(p) - np.log1p(-p)


def common_support(x, post) -> tuple[np.ndarray, float, float]:
    """Mask of points with ``x`` inside both groups' ranges (inclusive).

    Returns
    -------
    mask : ndarray of bool
    lo, hi : float
        ``max(min_pre, min_post)`` and ``min(max_pre, max_post)``.
    """
    x = np.asarray(x, dtype=float)
    post = np.asarray(post, dtype=bool)
    if post.all() or not post.any():
        raise ValueError("both release groups must be non-empty")
    lo = max(x[post].min(), x[~post].min())
    hi = min(x[post].max(), x[~post].max())
    if not hi > lo:
        raise ValueError(f"the two groups' ranges do not overlap (lo={lo}, hi={hi})")
    return (x >= lo) & (x <= hi), float(lo), float(hi)


def ols_classical(design, y) -> dict:
    """OLS by least squares with classical standard errors.

    Parameters
    ----------
    design : ndarray (n, k)
        Regressors, including the constant column if wanted.
    y : ndarray (n,)

    Returns
    -------
    dict
        ``coef, se, t`` (ndarrays of length k), ``rss``, ``sigma2 = rss/(n-k)``,
        ``r2 = 1 - rss/tss`` (``tss`` about the mean of y), ``n``, ``df_resid``.
    """
    A = np.asarray(design, dtype=float)
    y = np.asarray(y, dtype=float)
    n, k = A.shape
    if n <= k:
        raise ValueError(f"need more rows than regressors, got n={n}, k={k}")
    coef, *_ = np.linalg.lstsq(A, y, rcond=None)
    resid = y - A @ coef
    rss = float(resid @ resid)
    sigma2 = rss / (n - k)
    cov = sigma2 * np.linalg.inv(A.T @ A)
    se = np.sqrt(np.diag(cov))
    tss = float(np.sum((y - y.mean()) ** 2))
    return {
        "coef": coef,
        "se": se,
        "t": coef / se,
        "rss": rss,
        "sigma2": sigma2,
        "r2": 1.0 - rss / tss,
        "n": n,
        "df_resid": n - k,
    }


def stratum_labels(x, n_bins: int = 10) -> np.ndarray:
    """Quantile-bin index of each ``x`` (``pandas.qcut(x, n_bins, labels=False, duplicates="drop")``)."""
    return pd.qcut(pd.Series(np.asarray(x, dtype=float)), q=int(n_bins), labels=False, duplicates="drop").to_numpy(
        dtype=int
    )


def stratified_permutation_indices(strata, n_perm: int, rng: np.random.Generator) -> np.ndarray:
    """Random permutations that move each position only within its stratum.

    Returns
    -------
    ndarray of int, shape (n_perm, n)
        Row ``p`` is a permutation ``pi`` of ``0..n-1`` with
        ``strata[pi[i]] == strata[i]``; a permuted label vector is
        ``labels[pi]``. Each stratum's block is shuffled independently per row
        with ``rng.permuted`` (strata in increasing order).
    """
    strata = np.asarray(strata)
    n = strata.size
    out = np.empty((int(n_perm), n), dtype=np.intp)
    for s in np.unique(strata):
        members = np.flatnonzero(strata == s)
        block = np.broadcast_to(members, (int(n_perm), members.size)).copy()
        out[:, members] = rng.permuted(block, axis=1)
    return out


def group_shift_batch(x, y, D) -> np.ndarray:
    """``gamma`` of ``y ~ 1 + x + d`` for every row ``d`` of ``D`` at once.

    Notes
    -----
    Frisch-Waugh-Lovell: with ``Z = [1, x]``, ``H = Z (Z'Z)^{-1} Z'`` and
    ``M = I - H``, ``gamma = (M d)'(M y) / (M d)'(M d)``. ``M`` is symmetric
    and idempotent, so with the fixed residual ``r = M y``::

        numerator   = d' r
        denominator = d' M d = d'd - (Z'd)' (Z'Z)^{-1} (Z'd)

    The residualised label ``M d`` changes with every permutation, but only
    through ``Z'd = (sum d, sum x d)``, a 2-vector per row; so all rows cost
    two matrix-vector products. A row whose ``d`` lies in the span of ``Z``
    (e.g. constant) has denominator 0 and gives ``nan``.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    D = np.atleast_2d(np.asarray(D, dtype=float))
    Z, ZtZ_inv = _intercept_slope_design(x)
    r = y - Z @ (ZtZ_inv @ (Z.T @ y))
    num = D @ r
    den, identified = _residualised_label_norms(D, Z, ZtZ_inv)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(identified, num / den, np.nan)


def group_shift_grid(x, Y, D) -> np.ndarray:
    """``gamma`` of ``y ~ 1 + x + d`` for every row ``y`` of ``Y`` and every row ``d`` of ``D``.

    Returns
    -------
    ndarray, shape (len(Y), len(D))
        Entry ``(k, p)`` is the OLS coefficient of ``D[p]`` with response
        ``Y[k]``; :func:`group_shift_batch` for many responses at once (the
        same Frisch-Waugh-Lovell algebra, with the residual matrix ``R = Y M``
        in place of ``r``: numerators ``R D'``, one denominator per ``d``).
    """
    x = np.asarray(x, dtype=float)
    Y = np.atleast_2d(np.asarray(Y, dtype=float))
    D = np.atleast_2d(np.asarray(D, dtype=float))
    Z, ZtZ_inv = _intercept_slope_design(x)
    R = Y - ((Y @ Z) @ ZtZ_inv) @ Z.T
    num = R @ D.T
    den, identified = _residualised_label_norms(D, Z, ZtZ_inv)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(identified[None, :], num / den[None, :], np.nan)


def _intercept_slope_design(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``Z = [1, x]`` and ``(Z'Z)^{-1}``."""
    Z = np.column_stack([np.ones_like(x), x])
    return Z, np.linalg.inv(Z.T @ Z)


def _residualised_label_norms(D: np.ndarray, Z: np.ndarray, ZtZ_inv: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``d'Md = d'd - (Z'd)'(Z'Z)^{-1}(Z'd)`` per row of ``D``, and whether it is non-degenerate."""
    Zd = D @ Z  # rows are (Z'd)'
    den = np.einsum("ij,ij->i", D, D) - np.einsum("ij,jk,ik->i", Zd, ZtZ_inv, Zd)
    scale = np.einsum("ij,ij->i", D, D)
    return den, den > 1e-12 * np.maximum(scale, 1.0)


def permutation_count_ge(gamma_perm, gamma_ref) -> np.ndarray:
    """``#{gamma_perm >= gamma_ref}`` along the last axis, ties within relative rounding counted.

    ``gamma_ref`` broadcasts against ``gamma_perm[..., 0]`` (a scalar for one
    test, a vector for many). A permuted value counts when it is at least
    ``gamma_ref - 1e-10 * max(1, |gamma_ref|)``; ``nan`` never counts.
    """
    ref = np.asarray(gamma_ref, dtype=float)
    return np.sum(np.asarray(gamma_perm) >= (ref - _TIE_RTOL * np.maximum(1.0, np.abs(ref)))[..., None], axis=-1)


def permutation_p_value(n_ge, n_perm: int):
    """One-sided permutation p-value with the +1 convention, ``(1 + n_ge) / (n_perm + 1)``."""
    return (1.0 + n_ge) / (n_perm + 1.0)


def inverted_interval(gamma_obs, gamma_perm, label_perm, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """The stratified permutation test inverted: the shifts ``gamma0`` it rejects on neither side at ``alpha``.

    For a hypothesised shift ``gamma0`` the test is run on ``y - gamma0 d``. OLS is linear in the response,
    so its coefficient on the true label is ``gamma_obs - gamma0`` and on a permuted label ``d_pi`` it is
    ``a_pi - gamma0 c_pi``, with ``a_pi = gamma_perm`` (the permuted coefficients of ``y``) and ``c_pi =
    label_perm`` (those of ``d`` itself, :func:`group_shift_batch` of ``d`` on ``d_pi``). With the test's
    +1 convention::

        p_up(gamma0)   = (1 + #{a_pi - gamma0 c_pi >= gamma_obs - gamma0}) / (B + 1)
        p_down(gamma0) = (1 + #{a_pi - gamma0 c_pi <= gamma_obs - gamma0}) / (B + 1)

    and ``gamma0`` is kept when both are at least ``alpha`` (the claim's test rejects when ``p < alpha``).
    The interval is equal-tailed with nominal coverage ``1 - 2 alpha``; its lower end is the one-sided
    ``1 - alpha`` lower bound, so it excludes 0 from below exactly when the one-sided test of ``gamma = 0``
    on the same permutations rejects (ties within rounding aside).

    Where every ``u_pi = 1 - c_pi`` is positive, ``a_pi - gamma0 c_pi >= gamma_obs - gamma0`` reads
    ``gamma0 >= t_pi = (gamma_obs - a_pi) / u_pi``, so ``#{t_pi <= gamma0} >= m = ceil(alpha (B + 1) - 1)``
    keeps ``gamma0``: the interval is ``[t_(m), t_(B + 1 - m)]`` (order statistics). Otherwise the counts
    are evaluated at every ``t_pi`` (:func:`_inverted_by_counting`).

    Parameters
    ----------
    gamma_obs : array_like, shape (K,)
        The observed coefficient of each of ``K`` responses.
    gamma_perm : array_like, shape (K, B)
        Their coefficients on ``B`` permuted labels (the same permutations for every response).
    label_perm : array_like, shape (B,)
        ``c_pi``: the coefficient of the true label on each permuted one.
    alpha : float
        The level of each one-sided test, in (0, 0.5).

    Returns
    -------
    lo, hi : ndarray, shape (K,)
        The interval's ends (``-inf``/``inf`` where ``B`` permutations cannot reject that far).
    """
    g = np.asarray(gamma_obs, dtype=float)
    A = np.atleast_2d(np.asarray(gamma_perm, dtype=float))
    u = 1.0 - np.asarray(label_perm, dtype=float)
    B = A.shape[1]
    if not 0 < alpha < 0.5:
        raise ValueError(f"alpha must lie in (0, 0.5), got {alpha}")
    m = int(np.ceil(alpha * (B + 1) - 1 - 1e-9))
    if m > B // 2:
        raise ValueError(f"{B} permutations cannot give an interval at alpha = {alpha}")
    if m <= 0:
        return np.full(g.shape, -np.inf), np.full(g.shape, np.inf)
    if np.all(u > 1e-9) and np.all(np.isfinite(A)):
        T = np.partition((g[:, None] - A) / u[None, :], [m - 1, B - m], axis=1)
        return T[:, m - 1], T[:, B - m]
    return _inverted_by_counting(g, A, u, m)


def _inverted_by_counting(g: np.ndarray, A: np.ndarray, u: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`inverted_interval` where some ``u_pi <= 0``: the counts at every candidate end ``t_pi``."""
    lo, hi = np.full(g.shape, -np.inf), np.full(g.shape, np.inf)
    ok = np.isfinite(A).all(axis=0)
    for k in range(g.size):
        a, uu = A[k, ok], u[ok]
        moving = np.abs(uu) > 1e-9
        cand = np.sort((g[k] - a[moving]) / uu[moving])
        # a_pi - gamma0 c_pi - (g - gamma0) = (a_pi - g) + gamma0 u_pi, at every candidate gamma0
        diff = (a - g[k])[None, :] + cand[:, None] * uu[None, :]
        scale = 1e-10 * np.maximum(1.0, np.abs(cand))[:, None]
        keep = (np.sum(diff >= -scale, axis=1) >= m) & (np.sum(diff <= scale, axis=1) >= m)
        if not keep.any():
            lo[k], hi[k] = np.nan, np.nan
            continue
        below, above = cand[0] - 1.0 - abs(cand[0]), cand[-1] + 1.0 + abs(cand[-1])
        edge = (a - g[k])[None, :] + np.array([[below], [above]]) * uu[None, :]
        ends = (np.sum(edge >= 0, axis=1) >= m) & (np.sum(edge <= 0, axis=1) >= m)
        lo[k] = -np.inf if ends[0] else cand[keep][0]
        hi[k] = np.inf if ends[1] else cand[keep][-1]
    return lo, hi


def _prepare(x_pct, y_pct, post, eps: float, y_logit_offset_post: float = 0.0):
    X = clipped_logit(x_pct, eps)
    Y = clipped_logit(y_pct, eps)
    post = np.asarray(post, dtype=bool)
    Y = Y + y_logit_offset_post * post
    mask, lo, hi = common_support(X, post)
    return X[mask], Y[mask], post[mask], mask, lo, hi


def shift_test(
    x_pct,
    y_pct,
    post,
    *,
    rng: np.random.Generator,
    eps: float,
    n_bins: int,
    n_perm: int,
    y_logit_offset_post: float = 0.0,
    interval_alpha: float | None = None,
    alpha: float | None = None,
    n_perm_max: int = 0,
) -> dict:
    """Equation 3 on the common support, with the stratified permutation p-value.

    Parameters
    ----------
    x_pct, y_pct : array_like
        MATH-500 and AIME-2025 accuracies in percent.
    post : array_like of bool
        Released on or after the AIME-2025 release.
    rng : numpy.random.Generator
        Source of the permutations.
    eps : float
        Clip of the proportions before the logit.
    n_bins : int
        Quantile bins of ``logit(MATH)`` (in the support) used as strata.
    n_perm : int
        Permutations.
    y_logit_offset_post : float
        Added to ``logit(AIME)`` of every post-release model (after clipping);
        0 for the test itself, 0.8 for the inflation control.
    interval_alpha : float, optional
        With it, ``gamma_lo, gamma_hi``: :func:`inverted_interval` at this level from
        the test's own permutations (no further draw), and ``interval_level = 1 - 2 alpha``.
    alpha : float, optional
        The level the p-value is decided at: with it, a p-value within its Monte Carlo error of ``alpha`` is
        refined by further permutations from ``rng``, up to ``n_perm_max`` in all (:func:`refined_p_value`),
        and the result holds its ``decision``. The null's summaries and the interval stay those of the first
        ``n_perm``.

    Returns
    -------
    dict
        ``gamma, se, t`` (of the post indicator), ``alpha, slope, r2, n,
        n_pre, n_post, n_merged, support_lo, support_hi, n_bins_used, p_value,
        p_value_mc_se, n_perm, n_perm_ge, null_mean, null_sd, null_histogram, eps``
        (``null_histogram``: :func:`null_histogram` of the permuted gammas).
        ``p_value_mc_se = sqrt(p (1 - p) / n_perm)`` is the Monte Carlo error of
        ``p`` as an estimate of the exact permutation p-value; ``n_perm`` the
        permutations ``p`` rests on (more than asked where it was refined). ``null_mean`` is the
        mean of the permuted gammas (the centre of the stratified null, not
        necessarily 0).

    Notes
    -----
    p is one-sided with the +1 convention,
    ``(1 + #{gamma_perm >= gamma_obs}) / (n_perm + 1)``; ties within
    relative rounding ``1e-10`` count as ``>=``.
    """
    X, Y, g, _, lo, hi = _prepare(x_pct, y_pct, post, eps, y_logit_offset_post)
    d = g.astype(float)
    design = np.column_stack([np.ones_like(X), X, d])
    fit = ols_classical(design, Y)
    gamma = float(fit["coef"][2])

    strata = stratum_labels(X, n_bins)
    idx = stratified_permutation_indices(strata, n_perm, rng)
    gam_perm = group_shift_batch(X, Y, d[idx])
    # Same arithmetic path for the observed value, so exact ties compare equal.
    gamma_ref = float(group_shift_batch(X, Y, d[None, :])[0])
    n_ge = int(permutation_count_ge(gam_perm, gamma_ref))

    def count_fresh(b: int) -> int:
        k = 0
        for i in range(0, b, _CHUNK):
            D = d[stratified_permutation_indices(strata, min(_CHUNK, b - i), rng)]
            k += int(permutation_count_ge(group_shift_batch(X, Y, D), gamma_ref))
        return k

    test = {"p_value": float(permutation_p_value(n_ge, n_perm)), "n_perm": int(n_perm), "n_perm_ge": n_ge}
    if alpha is not None:
        test = refined_p_value(n_ge, n_perm, count_fresh, alpha=alpha, n_perm_max=max(n_perm_max, n_perm))
    p = test["p_value"]
    interval = {}
    if interval_alpha is not None:
        lo, hi = inverted_interval([gamma_ref], gam_perm[None, :], group_shift_batch(X, d, d[idx]), interval_alpha)
        interval = {"gamma_lo": float(lo[0]), "gamma_hi": float(hi[0]), "interval_level": 1.0 - 2.0 * interval_alpha}
    return {
        "gamma": gamma,
        "se": float(fit["se"][2]),
        "t": float(fit["t"][2]),
        "alpha": float(fit["coef"][0]),
        "slope": float(fit["coef"][1]),
        "slope_se": float(fit["se"][1]),
        "r2": float(fit["r2"]),
        "n": int(fit["n"]),
        "n_pre": int((~g).sum()),
        "n_post": int(g.sum()),
        "n_merged": int(np.asarray(post).size),
        "support_lo": lo,
        "support_hi": hi,
        "n_bins_used": int(np.unique(strata).size),
        **test,
        "p_value_mc_se": mc_se(p, test["n_perm"]),
        "null_mean": float(np.mean(gam_perm)),
        "null_sd": float(np.std(gam_perm, ddof=1)),
        "null_histogram": null_histogram(gam_perm, gamma),
        "eps": float(eps),
        **interval,
    }


#: Bins of the permutation null's histogram kept in a test's result.
NULL_BINS = 60


def null_histogram(draws, observed: float, n_bins: int = NULL_BINS) -> dict:
    """The permuted gammas as ``{"edges": [lo, hi, n_bins], "counts": [...]}`` (equal-width bins over the
    draws and the observed value): what a figure of the null needs, without keeping every draw."""
    draws = np.asarray(draws, dtype=float)
    lo, hi = float(min(draws.min(), observed)), float(max(draws.max(), observed))
    counts, _ = np.histogram(draws, bins=n_bins, range=(lo, hi))
    return {"edges": [lo, hi, int(n_bins)], "counts": counts.tolist()}


def inflation_control(x_pct, y_pct, post, *, rng: np.random.Generator, shift: float, **kwargs) -> dict:
    """Positive control: add ``shift`` to ``logit(AIME)`` of every post-release model.

    ``gamma`` must rise by exactly ``shift`` (the support depends on
    ``logit(MATH)`` only, and OLS is linear in ``y``) and the test must
    reject. Returns :func:`shift_test`'s dict plus ``shift``.
    """
    out = shift_test(x_pct, y_pct, post, rng=rng, y_logit_offset_post=shift, **kwargs)
    out["shift"] = float(shift)
    return out


def relabel_control(x_pct, y_pct, post, *, rng: np.random.Generator, n_draws: int, eps: float) -> dict:
    """Negative control: gamma under random relabelling of the release group.

    The support sample is fixed (as in the test); the post label is permuted
    across all of it, with no strata, ``n_draws`` times, keeping the group
    sizes. Under a random label the expected shift is about 0.

    Returns
    -------
    dict
        ``n_draws, mean, sd`` (ddof=1) of the relabelled gammas, ``gammas``
        (list), ``n`` and ``n_post``.
    """
    X, Y, g, *_ = _prepare(x_pct, y_pct, post, eps)
    d = g.astype(float)
    idx = stratified_permutation_indices(np.zeros(d.size, dtype=int), n_draws, rng)
    gam = group_shift_batch(X, Y, d[idx])
    return {
        "n_draws": int(n_draws),
        "mean": float(np.mean(gam)),
        "sd": float(np.std(gam, ddof=1)),
        "gammas": gam.tolist(),
        "n": int(d.size),
        "n_post": int(g.sum()),
    }


def eps_sensitivity(
    x_pct,
    y_pct,
    post,
    *,
    rng: np.random.Generator,
    eps_grid,
    **kwargs,
) -> list[dict]:
    """:func:`shift_test` at each clip ``eps``.

    Every ``eps`` uses a copy of ``rng`` in its current state (common random
    numbers), so differences between rows come from ``eps`` and not from the
    permutation stream; ``rng`` itself is not advanced. Returns one dict per
    ``eps``: ``eps, gamma, se, t, p_value, n_perm, n, n_pre, n_post, slope, r2, null_mean``.
    """
    rows = []
    keys = ("eps", "gamma", "se", "t", "p_value", "n_perm", "n", "n_pre", "n_post", "slope", "r2", "null_mean")
    for eps in eps_grid:
        res = shift_test(x_pct, y_pct, post, rng=copy.deepcopy(rng), eps=float(eps), **kwargs)
        rows.append({k: res[k] for k in keys})
    return rows
