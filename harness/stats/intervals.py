"""Confidence intervals from cluster resamples: percentile, BCa with a cluster jackknife, m-out-of-n subsampling.

Every method here resamples *clusters* (base models), never rows, exactly as
:mod:`harness.stats.resample` does: a cluster is kept whole, a row without a
cluster label is a cluster of its own (:func:`~harness.stats.resample.cluster_ids_from_labels`),
and ``cluster_ids=None`` means every row is its own cluster. ``G`` below is the
number of clusters, ``theta_hat`` the statistic on the full data, ``alpha = 1 -
level``, ``Phi`` the standard normal distribution function and ``z_p =
Phi^{-1}(p)``. All quantiles of draws are ``numpy.quantile`` with its default
"linear" rule (Hyndman & Fan 1996, type 7), over the *finite* draws only: a
draw that is not finite is a failed resample (a fit that raised or did not
give a number); leaving it out conditions on success, so the number left out
is always returned.

Methods
-------
Percentile (Efron 1979; Efron & Tibshirani 1993, Section 13.3)
    ``[Q(alpha/2), Q(1 - alpha/2)]`` of the cluster-bootstrap draws; see
    :func:`percentile`.
Basic (Davison & Hinkley 1997, Section 5.2.1)
    The percentile interval reflected about the estimate; see :func:`basic`.
BCa, bias-corrected and accelerated (Efron 1987, JASA 82:171; Efron &
Tibshirani 1993, Section 14.3, eqs. 14.10-14.15)
    The percentile interval read at adjusted levels
    ``alpha_j = Phi(z0 + (z0 + z_j) / (1 - a (z0 + z_j)))`` for ``z_j`` in
    ``{z_{alpha/2}, z_{1-alpha/2}}``, with the bias correction ``z0`` from the
    bootstrap draws and the acceleration ``a`` from a *cluster* jackknife:
    clusters (or groups of clusters) are deleted, never rows. See
    :func:`bca`, :func:`bias_correction`, :func:`jackknife_acceleration`,
    :func:`cluster_jackknife`. The formulas are those of
    ``scipy.stats.bootstrap(method="BCa")`` (mid-rank ``z0``, same ``a``),
    written here for clusters; on unclustered data with the delete-one
    jackknife the two agree (see the tests).
m-out-of-n subsampling (Politis & Romano 1994, Ann. Statist. 22:2031;
Politis, Romano & Wolf 1999, Chapter 2)
    ``m`` of the ``G`` clusters drawn *without* replacement, the statistic
    recomputed, and the law of ``theta_hat_m - theta_hat`` rescaled by the
    assumed convergence rate to stand for the law of ``theta_hat -
    theta``; see :func:`subsampling`, :func:`cluster_subsample`,
    :func:`subsample_size`.

    Why *without* replacement: (i) a subsample is then a sample of ``m``
    distinct base models, as the real data are; a with-replacement draw of
    ``m`` of ``G`` clusters repeats ``m (m - 1) / (2 G)`` pairs on average
    (about 3 at ``m = 38``, ``G = 231``), and repeated top models are the very
    ties that make the bootstrap misbehave for an extreme quantile;
    (ii) subsampling needs only that ``r_G (theta_hat - theta)`` has a limit
    law at a known rate ``r_G`` (Politis & Romano 1994, Theorem 2.1), the
    weakest condition on offer; (iii) its finite-population correction is
    exact for linear statistics (see :func:`subsampling`). The two schemes
    agree to first order when ``m^2 / G -> 0``, the draws then having no
    repeats with probability tending to one.

Randomness
----------
Every function that draws takes an explicit :class:`numpy.random.Generator`.
As in :func:`~harness.stats.resample.cluster_bootstrap`, all draws of all
resamples are made up front, then one 128-bit entropy draw seeds the
per-resample child generators handed to a statistic that asks for one
(``with_rng``): resample ``i`` depends on the generator's state and ``i``
only.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import scipy.stats

from .resample import BootstrapDraws, ClusterResamples, _validated_ids, percentile_interval

__all__ = [
    "Interval",
    "percentile",
    "basic",
    "bias_correction",
    "jackknife_acceleration",
    "bca",
    "jackknife_groups",
    "JackknifeValues",
    "cluster_jackknife",
    "subsample_size",
    "SUBSAMPLE_RULE",
    "cluster_subsample_indices",
    "cluster_subsample",
    "subsampling",
]

#: The rule for ``m`` of :func:`subsample_size`, in words (for reports and study outputs).
SUBSAMPLE_RULE = (
    "m = ceil(G**(2/3)) clusters, drawn without replacement (2 <= m <= G - 1): a fixed rate with m -> infinity "
    "and m/G -> 0, the conditions of Politis & Romano (1994, Thm 2.1) and Bickel, Goetze & van Zwet (1997); "
    "a convention, not a data-driven choice (the adaptive rule of Bickel & Sakov 2008 is not implemented)"
)


@dataclass(frozen=True)
class Interval:
    """A two-sided interval and what it was computed from.

    Attributes
    ----------
    lo, hi : float
        Endpoints (``nan`` when the method could not give an interval; ``info["why"]`` says why).
    level : float
        Nominal coverage, e.g. 0.95.
    method : str
        ``"percentile"``, ``"basic"``, ``"bca"`` or ``"subsampling"``.
    n_used : int
        Finite resample draws the endpoints were read from.
    n_failed : int
        Draws that were not finite (failed resamples), left out.
    info : dict
        Method-specific facts (``z0``, ``acceleration``, the adjusted levels, ``m``, the scale, ...).
    """

    lo: float
    hi: float
    level: float
    method: str
    n_used: int
    n_failed: int
    info: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """Both endpoints are finite."""
        return bool(np.isfinite(self.lo) and np.isfinite(self.hi))

    @property
    def width(self) -> float:
        return float(self.hi - self.lo) if self.ok else math.nan

    def covers(self, value: float) -> bool:
        """``lo <= value <= hi`` (False when there is no interval or ``value`` is not finite)."""
        return bool(self.ok and np.isfinite(value) and self.lo <= value <= self.hi)

    def to_dict(self) -> dict:
        return {
            "lo": float(self.lo),
            "hi": float(self.hi),
            "level": float(self.level),
            "method": self.method,
            "n_used": int(self.n_used),
            "n_failed": int(self.n_failed),
            **dict(self.info),
        }


def _check_level(level: float) -> float:
    level = float(level)
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")
    return level


def _finite(draws) -> tuple[np.ndarray, int]:
    v = np.asarray(draws, dtype=float).ravel()
    ok = np.isfinite(v)
    return v[ok], int((~ok).sum())


def _none(method: str, level: float, n_used: int, n_failed: int, why: str, **info) -> Interval:
    return Interval(math.nan, math.nan, level, method, n_used, n_failed, {"why": why, **info})


# -- percentile ------------------------------------------------------------------------------------------------


def percentile(draws, level: float = 0.95) -> Interval:
    """Percentile bootstrap interval ``[Q(alpha/2), Q(1 - alpha/2)]`` of the draws.

    Parameters
    ----------
    draws : array_like of float
        Bootstrap draws of one quantity; non-finite ones are left out and counted.
    level : float
        Nominal coverage ``1 - alpha``.

    Returns
    -------
    Interval
        Endpoints by :func:`harness.stats.resample.percentile_interval` (numpy "linear" quantiles).

    Notes
    -----
    First-order accurate when the bootstrap is consistent (Hall 1992,
    Section 3.5); it is transformation-respecting but makes no correction for
    bias or skewness, and for an extreme quantile with few points above it the
    bootstrap law itself can be inconsistent.
    """
    level = _check_level(level)
    iv = percentile_interval(draws, level)
    if iv["n_used"] == 0:
        return _none("percentile", level, 0, iv["n_failed"], "no finite draw")
    return Interval(iv["lo"], iv["hi"], level, "percentile", iv["n_used"], iv["n_failed"])


# -- basic ------------------------------------------------------------------------------------------------------


def basic(draws, estimate: float, level: float = 0.95) -> Interval:
    """Basic (reflected) bootstrap interval ``[2 theta_hat - Q(1 - alpha/2), 2 theta_hat - Q(alpha/2)]``.

    Davison & Hinkley (1997, eq. 5.6), Efron & Tibshirani's "hybrid": the law
    of ``theta* - theta_hat`` stands for that of ``theta_hat - theta``, so
    the percentile interval is reflected about the estimate. Where the
    resampled fits are shifted against the full-sample fit by ``b`` (a
    bias), the percentile interval moves by ``b`` once more, in the
    direction of the bias; the basic interval moves against it, correcting
    a bias that the resampling reproduces. Unlike the percentile interval
    it is not transformation-respecting and can leave the range of a
    bounded quantity.

    Parameters
    ----------
    draws : array_like of float
        Bootstrap draws of one quantity; non-finite ones are left out and counted.
    estimate : float
        ``theta_hat`` on the full data.
    level : float
        Nominal coverage ``1 - alpha``.

    Examples
    --------
    Draws centred below the estimate give an interval shifted above it:

    >>> iv = basic([0.0, 1.0, 2.0, 3.0, 4.0], 3.0, level=0.5)
    >>> (iv.lo, iv.hi)
    (3.0, 5.0)
    """
    level = _check_level(level)
    iv = percentile_interval(draws, level)
    if iv["n_used"] == 0 or not np.isfinite(estimate):
        return _none("basic", level, iv["n_used"], iv["n_failed"], "no finite draw or estimate")
    return Interval(2.0 * estimate - iv["hi"], 2.0 * estimate - iv["lo"], level, "basic", iv["n_used"], iv["n_failed"])


# -- normal ----------------------------------------------------------------------------------------------------


def normal(draws, estimate: float, level: float = 0.95) -> Interval:
    """Normal approximation with the bootstrap's bias correction, ``theta_hat - b +- z(1 - alpha/2) sd(draws)``,
    ``b = mean(draws) - theta_hat`` (Davison & Hinkley 1997, eq. 5.5): the draws give only a bias and a standard
    error, so few of them do. Assumes a symmetric law of the estimate."""
    level = _check_level(level)
    v, n_failed = _finite(draws)
    if v.size < 3 or not np.isfinite(estimate):
        return _none("normal", level, int(v.size), n_failed, "fewer than 3 finite draws, or no estimate")
    centre = 2.0 * estimate - float(v.mean())
    half = float(scipy.stats.norm.ppf(0.5 + level / 2.0) * np.std(v, ddof=1))
    return Interval(centre - half, centre + half, level, "normal", int(v.size), n_failed)


# -- BCa -------------------------------------------------------------------------------------------------------


def bias_correction(draws, estimate: float) -> float:
    """BCa bias correction ``z0 = Phi^{-1}(p)``, ``p = (#{draw < estimate} + #{draw <= estimate}) / (2 B)``.

    The mid-rank share of the finite draws below the estimate (a tie counts
    one half), as in ``scipy.stats.bootstrap`` (its ``_percentile_of_score``,
    the "mean" kind of ``scipy.stats.percentileofscore``); Efron &
    Tibshirani (1993, eq. 14.14) write it with ``<`` only, which differs only
    when draws tie with the estimate -- frequent for a share of a few hundred
    models. ``B`` is the number of finite draws. Returns ``-inf`` / ``+inf``
    when no draw lies below / above, ``nan`` without a finite draw.
    """
    from scipy.special import ndtri  # lazily: claim files name these methods, and reading one needs no scipy

    v, _ = _finite(draws)
    if v.size == 0 or not np.isfinite(estimate):
        return math.nan
    p = (np.count_nonzero(v < estimate) + np.count_nonzero(v <= estimate)) / (2.0 * v.size)
    return float(ndtri(p))


def jackknife_acceleration(values) -> float:
    """Jackknife acceleration ``a = sum d_k^3 / (6 (sum d_k^2)^{3/2})``, ``d_k = mean_j(theta_(j)) - theta_(k)``.

    Efron (1987, eq. 6.6) and Efron & Tibshirani (1993, eq. 14.15), with
    ``theta_(k)`` the statistic with unit (or group) ``k`` deleted; the
    same expression as scipy's ``U = (n - 1)(mean - theta_(k))`` form (the
    factor cancels). Non-finite values (failed refits) are left out before the
    mean is taken. ``a = 0`` when fewer than two values are finite or all are
    equal (no information on skewness: the statistic did not move when a unit
    was deleted).

    Parameters
    ----------
    values : array_like of float, shape (g,)
        Delete-one (``g = G``) or delete-a-group jackknife values of one quantity.
    """
    v, _ = _finite(values)
    if v.size < 2:
        return 0.0
    d = v.mean() - v
    s2 = float(np.sum(d * d))
    if s2 <= 0.0:
        return 0.0
    return float(np.sum(d**3) / (6.0 * s2**1.5))


def bca(draws, estimate: float, jackknife_values, level: float = 0.95) -> Interval:
    """BCa interval: percentiles of the draws at levels adjusted for bias (``z0``) and skewness (``a``).

    ``alpha_lo = Phi(z0 + (z0 + z_{alpha/2}) / (1 - a (z0 + z_{alpha/2})))`` and
    ``alpha_hi`` the same with ``z_{1-alpha/2}`` (Efron & Tibshirani 1993,
    eq. 14.10); the interval is ``[Q(alpha_lo), Q(alpha_hi)]`` of the finite
    draws (numpy "linear" quantiles, as :func:`percentile`). With ``z0 = 0``
    and ``a = 0`` it is the percentile interval.

    Parameters
    ----------
    draws : array_like of float
        Cluster-bootstrap draws of the quantity.
    estimate : float
        ``theta_hat`` on the full data (the draws' centre for ``z0``).
    jackknife_values : array_like of float
        Cluster jackknife values of the quantity (:func:`cluster_jackknife`);
        delete-one or delete-a-group.
    level : float
        Nominal coverage.

    Returns
    -------
    Interval
        ``info``: ``z0``, ``acceleration``, ``alpha_lo``, ``alpha_hi`` (the
        adjusted levels), ``n_jackknife`` (finite jackknife values) and
        ``n_jackknife_failed``. No interval (``nan``, with ``why``) when no
        draw is finite, when every finite draw lies on one side of the estimate
        (``z0`` infinite: the bootstrap law does not reach the estimate), or
        when ``1 - a (z0 + z) <= 0`` (an acceleration too large for the
        formula).
    """
    from scipy.special import ndtr, ndtri

    level = _check_level(level)
    v, n_failed = _finite(draws)
    jv, jfail = _finite(jackknife_values)
    if v.size == 0:
        return _none("bca", level, 0, n_failed, "no finite draw")
    z0 = bias_correction(v, estimate)
    a = jackknife_acceleration(jv)
    info = {"z0": z0, "acceleration": a, "n_jackknife": int(jv.size), "n_jackknife_failed": jfail}
    if not np.isfinite(z0):
        return _none("bca", level, int(v.size), n_failed, "bias correction z0 is not finite", **info)
    alpha = 1.0 - level
    z = np.array([ndtri(alpha / 2.0), ndtri(1.0 - alpha / 2.0)])
    num = z0 + z
    den = 1.0 - a * num
    if np.any(den <= 0.0):
        return _none("bca", level, int(v.size), n_failed, "acceleration out of the formula's range", **info)
    levels = ndtr(z0 + num / den)
    lo, hi = np.quantile(v, levels)
    info.update({"alpha_lo": float(levels[0]), "alpha_hi": float(levels[1])})
    return Interval(float(lo), float(hi), level, "bca", int(v.size), n_failed, info)


# -- the cluster jackknife -----------------------------------------------------------------------------------


def jackknife_groups(n_clusters: int, n_groups: int | None = None, rng: np.random.Generator | None = None):
    """The clusters deleted together by each jackknife value.

    Parameters
    ----------
    n_clusters : int
        ``G``.
    n_groups : int, optional
        ``g``. ``None`` or ``G``: the delete-one jackknife, group ``k`` is
        cluster ``k`` (no randomness). Otherwise ``2 <= g < G``: a random
        permutation of the clusters (from ``rng``) cut into ``g`` consecutive
        blocks of sizes ``floor(G/g)`` or ``ceil(G/g)`` (``numpy.array_split``),
        each block sorted.
    rng : numpy.random.Generator
        Required for a grouped jackknife; one ``permutation(G)`` is drawn.

    Returns
    -------
    list of ndarray of int
        ``g`` disjoint arrays covering ``0 .. G-1``.

    Notes
    -----
    What grouping changes (the delete-a-group jackknife; Kott 2001, J. Off.
    Stat. 17:521 in survey sampling): to first order, deleting a random group
    of ``h = G/g`` clusters moves the statistic by ``-(1/(G - h))`` times the
    sum of their empirical influences ``S_k``, so the acceleration formula
    applied to the ``g`` group values estimates ``sum S_k^3 / (6 (sum
    S_k^2)^{3/2})``, whose expectation under random grouping is that of the
    delete-one ``sum L_i^3 / (6 (sum L_i^2)^{3/2})`` (both ``~ mu_3 / (6
    sigma^3 sqrt(G))``: third cumulants add over a group). The target is the
    same; the estimate is noisier the fewer the groups (a skewness from ``g``
    sums instead of ``G`` terms), and, the grouping being a deterministic
    function of the seed, that noise is fixed by the seed. Deleting ``h > 1``
    clusters at a time is a larger perturbation (second-order terms of the
    statistic enter more), which for a non-smooth statistic such as a
    quantile is closer to the delete-d jackknife that is consistent where the
    delete-one is not (Shao & Wu 1989, Ann. Statist. 17:1176). Cost: ``g``
    refits instead of ``G``.
    """
    G = int(n_clusters)
    if G < 2:
        raise ValueError(f"a jackknife needs at least 2 clusters, got {G}")
    if n_groups is None or int(n_groups) == G:
        return [np.array([k], dtype=np.intp) for k in range(G)]
    g = int(n_groups)
    if not 2 <= g < G:
        raise ValueError(f"n_groups must be in [2, {G}] (or None for delete-one), got {n_groups}")
    if rng is None:
        raise ValueError("a grouped jackknife needs an explicit rng (numpy.random.Generator) for its grouping")
    perm = rng.permutation(G)
    return [np.sort(block).astype(np.intp) for block in np.array_split(perm, g)]


@dataclass(frozen=True, eq=False)
class JackknifeValues:
    """Cluster jackknife values of named quantities.

    Attributes
    ----------
    names : tuple of str
        Quantity names, in the order of the statistic's first returned dict.
    values : ndarray of float, shape (g, len(names))
        Row ``k``: the statistic with the clusters of ``groups[k]`` deleted (``nan`` where it failed).
    groups : tuple of ndarray
        The deleted clusters of each value.
    n_clusters : int
        ``G``.
    n_raised : int
        Values whose statistic raised one of the caught exceptions.
    """

    names: tuple[str, ...]
    values: np.ndarray
    groups: tuple[np.ndarray, ...]
    n_clusters: int
    n_raised: int

    @property
    def n_groups(self) -> int:
        return len(self.groups)

    def column(self, name: str) -> np.ndarray:
        try:
            return self.values[:, self.names.index(name)]
        except ValueError:
            raise KeyError(f"no quantity {name!r}; have {list(self.names)}") from None


def _entropy(rng: np.random.Generator | None, with_rng: bool):
    """One 128-bit entropy draw (always, when ``rng`` is given, so the state does not depend on ``with_rng``)."""
    if rng is None:
        if with_rng:
            raise ValueError("with_rng needs an explicit rng (numpy.random.Generator)")
        return None
    return rng.integers(0, 2**63, size=2, dtype=np.int64)


def _evaluate(statistic, index_sets, entropy, catch, with_rng) -> tuple[tuple[str, ...], np.ndarray, int]:
    """``statistic`` on each row-index array; ``(names, values, n_raised)``, failed rows ``nan``."""
    children = np.random.SeedSequence([int(e) for e in entropy]).spawn(len(index_sets)) if with_rng else None
    results, names, n_raised = [], None, 0
    for i, idx in enumerate(index_sets):
        args = (idx, np.random.default_rng(children[i])) if with_rng else (idx,)
        try:
            out = statistic(*args)
        except catch:
            n_raised += 1
            results.append(None)
            continue
        if names is None:
            names = tuple(out)
        elif set(out) != set(names):
            raise ValueError(f"call {i}: statistic returned keys {sorted(out)}, expected {sorted(names)}")
        results.append(out)
    names = names or ()
    values = np.full((len(index_sets), len(names)), np.nan)
    for row, out in enumerate(results):
        if out is not None:
            values[row] = [float(out[k]) for k in names]
    return names, values, n_raised


def _ids(cluster_ids, n_rows: int) -> np.ndarray:
    return np.arange(int(n_rows), dtype=np.intp) if cluster_ids is None else _validated_ids(cluster_ids, int(n_rows))


def cluster_jackknife(
    statistic: Callable[..., dict],
    n_rows: int,
    cluster_ids=None,
    *,
    n_groups: int | None = None,
    rng: np.random.Generator | None = None,
    catch: tuple[type[BaseException], ...] = (),
    with_rng: bool = False,
) -> JackknifeValues:
    """The statistic with each cluster (or group of clusters) deleted in turn.

    Parameters
    ----------
    statistic : callable
        ``statistic(indices) -> dict[str, float]`` (or ``statistic(indices,
        rng)`` with ``with_rng``); ``indices`` are the kept rows in
        increasing order.
    n_rows : int
        Rows of the data.
    cluster_ids : array_like of int, optional
        Cluster of each row, ``0 .. G-1`` (``None``: every row its own cluster).
    n_groups : int, optional
        ``None``: delete-one (``G`` values). Otherwise a delete-a-group
        jackknife with this many groups; see :func:`jackknife_groups` for the
        grouping and what it changes.
    rng : numpy.random.Generator, optional
        The grouping's permutation is drawn first (grouped jackknife only),
        then, whenever ``rng`` is given, one entropy draw that seeds the
        per-value generators of ``with_rng``. Required for a grouped
        jackknife or ``with_rng``.
    catch : tuple of exception types
        Exceptions that mark a value as failed (``nan``) instead of propagating.
    with_rng : bool
        Pass each call its own child generator.

    Returns
    -------
    JackknifeValues
    """
    ids = _ids(cluster_ids, n_rows)
    G = int(ids.max()) + 1
    groups = jackknife_groups(G, n_groups, rng)
    group_of = np.empty(G, dtype=np.intp)
    for k, members in enumerate(groups):
        group_of[members] = k
    row_group = group_of[ids]
    index_sets = [np.flatnonzero(row_group != k) for k in range(len(groups))]
    entropy = _entropy(rng, with_rng)
    names, values, n_raised = _evaluate(statistic, index_sets, entropy, catch, with_rng)
    return JackknifeValues(names, values, tuple(groups), G, n_raised)


# -- m-out-of-n subsampling ------------------------------------------------------------------------------------


def subsample_size(n_clusters: int, exponent: float = 2.0 / 3.0) -> int:
    """``m = ceil(G**exponent)``, held in ``[2, G - 1]``; the default is the rule of :data:`SUBSAMPLE_RULE`.

    Subsampling is consistent when ``m -> infinity`` and ``m/G -> 0``
    (Politis & Romano 1994, Theorem 2.1; Politis, Romano & Wolf 1999,
    Theorem 2.2.1); any ``0 < exponent < 1`` satisfies both. ``2/3`` is a
    common fixed choice, not an optimised one: larger ``m`` makes each
    subsample statistic closer to the full-sample one in law (here it keeps
    enough models above a 0.98 quantile for the fit to be defined), smaller
    ``m`` makes the subsamples less dependent on one another. For ``G = 231``
    it gives ``m = 38``. The data-driven choice of Bickel & Sakov (2008,
    Statistica Sinica 18:967), comparing the laws at successive ``m``, is not
    implemented (each candidate ``m`` costs ``B`` refits).
    """
    G = int(n_clusters)
    if G < 3:
        raise ValueError(f"subsampling needs at least 3 clusters, got {G}")
    if not 0.0 < exponent < 1.0:
        raise ValueError(f"exponent must be in (0, 1), got {exponent}")
    return int(min(max(math.ceil(G**exponent), 2), G - 1))


def cluster_subsample_indices(cluster_ids, m: int, n_resamples: int, rng: np.random.Generator) -> ClusterResamples:
    """Row indices of ``n_resamples`` subsamples of ``m`` distinct clusters each (without replacement).

    All draws up front in one call: each subsample's clusters are the ``m``
    smallest of ``G`` independent uniforms' ranks (``argsort`` of
    ``rng.random((B, G))``), a uniformly random ``m``-subset in random order.
    ``resamples[i]`` holds the rows of subsample ``i``'s clusters in draw
    order, each cluster's rows in increasing row order
    (:class:`~harness.stats.resample.ClusterResamples`, whose
    ``cluster_draws`` here has shape ``(B, m)``).
    """
    ids = _validated_ids(cluster_ids)
    G = int(ids.max()) + 1
    m = int(m)
    if not 1 <= m < G:
        raise ValueError(f"m must be in [1, {G - 1}] for {G} clusters, got {m}")
    if int(n_resamples) < 1:
        raise ValueError(f"n_resamples must be positive, got {n_resamples}")
    draws = np.argsort(rng.random((int(n_resamples), G)), axis=1, kind="stable")[:, :m].astype(np.intp)
    order = np.argsort(ids, kind="stable")
    size = np.bincount(ids)
    return ClusterResamples(draws, order, np.cumsum(size) - size, size)


def cluster_subsample(
    statistic: Callable[..., dict],
    n_rows: int,
    cluster_ids=None,
    *,
    m: int,
    n_resamples: int,
    rng: np.random.Generator,
    catch: tuple[type[BaseException], ...] = (),
    with_rng: bool = False,
) -> BootstrapDraws:
    """The statistic on ``n_resamples`` subsamples of ``m`` clusters drawn without replacement.

    Parameters are those of :func:`harness.stats.resample.cluster_bootstrap`
    plus ``m`` (see :func:`subsample_size`). The cluster draws come first,
    then one entropy draw for the per-subsample generators (always drawn).

    Returns
    -------
    BootstrapDraws
        One row per subsample (``n_clusters`` is ``G``, not ``m``).
    """
    ids = _ids(cluster_ids, n_rows)
    resamples = cluster_subsample_indices(ids, m, n_resamples, rng)
    entropy = _entropy(rng, with_rng)
    names, values, n_raised = _evaluate(
        statistic, [resamples[i] for i in range(len(resamples))], entropy, catch, with_rng
    )
    B = len(resamples)
    return BootstrapDraws(names, values, np.arange(B, dtype=np.intp), B, resamples.n_clusters, int(n_rows), n_raised)


def subsampling(
    draws,
    estimate: float,
    *,
    m: int,
    n_clusters: int,
    level: float = 0.95,
    rate: float = 0.5,
    fpc: bool = True,
) -> Interval:
    """Equal-tailed subsampling interval ``[theta_hat - s q(1 - alpha/2), theta_hat - s q(alpha/2)]``.

    ``q(p)`` are quantiles of ``theta_hat_m - theta_hat`` over the finite
    subsample draws and ``s`` rescales them from ``m`` to ``G`` clusters by
    the assumed rate ``r_k = k**rate`` of ``r_G (theta_hat - theta)``:
    ``s = r_m / r_G = (m / G)**rate`` (Politis, Romano & Wolf 1999, eq. 2.7;
    ``rate = 1/2``, i.e. ``s = sqrt(m / G)``, for a root-G statistic, which
    every smooth statistic of ``G`` independent clusters is, a fixed-tau
    quantile regression included).

    Parameters
    ----------
    draws : array_like of float
        The statistic on subsamples of ``m`` clusters without replacement (:func:`cluster_subsample`).
    estimate : float
        ``theta_hat`` on all ``G`` clusters.
    m, n_clusters : int
        Subsample size and ``G``.
    level : float
        Nominal coverage.
    rate : float
        Exponent of the convergence rate (``1/2``: root-G).
    fpc : bool
        With ``rate = 1/2``, also divide the deviations by ``sqrt(1 - m/G)``,
        so ``s = sqrt(m / (G - m))``. Without replacement, a linear statistic
        has ``Var(theta_hat_m - theta_hat) = (1/m - 1/G) S^2`` (finite
        population correction), so ``sqrt(m/G)`` alone under-scales by
        ``sqrt(1 - m/G)`` (9% narrower at ``G = 231``, ``m = 38``); ``m/(G -
        m)`` is the delete-d jackknife's factor ``r/d`` (Shao & Wu 1989).
        Asymptotically (``m/G -> 0``) the two agree. Not defined for other rates.

    Returns
    -------
    Interval
        ``info``: ``m``, ``n_clusters``, ``rate``, ``fpc``, ``scale`` (``s``).
    """
    level = _check_level(level)
    G, m = int(n_clusters), int(m)
    if not 1 <= m < G:
        raise ValueError(f"m must be in [1, {G - 1}] for {G} clusters, got {m}")
    if not rate > 0:
        raise ValueError(f"rate must be positive, got {rate}")
    if fpc and rate != 0.5:
        raise ValueError("the finite population correction is derived for rate = 1/2 only")
    scale = (m / G) ** rate / (math.sqrt(1.0 - m / G) if fpc else 1.0)
    info = {"m": m, "n_clusters": G, "rate": float(rate), "fpc": bool(fpc), "scale": float(scale)}
    v, n_failed = _finite(draws)
    if v.size == 0 or not np.isfinite(estimate):
        return _none("subsampling", level, int(v.size), n_failed, "no finite draw or estimate", **info)
    alpha = 1.0 - level
    q_lo, q_hi = np.quantile(v - estimate, [alpha / 2.0, 1.0 - alpha / 2.0])
    return Interval(
        float(estimate - scale * q_hi),
        float(estimate - scale * q_lo),
        level,
        "subsampling",
        int(v.size),
        n_failed,
        info,
    )
