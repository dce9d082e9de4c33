"""Coverage of a quantile boundary (paper Sections 3.1.1 and 3.2).

Conventions
-----------
* A point is *covered* when ``y <= q`` (inclusive); *above* when ``y > q``.
* Signed coverage error: ``mean(y <= q) - tau``, pooled over points.
  Negative = under-coverage = more points above the boundary than ``1 - tau``.
* Bin-averaged signed coverage error: ``mean_b (coverage_b - tau)`` over the
  non-empty bins, each bin weighted equally (the paper's Figure 2 averages
  over bins this way).
* Calibration error (Table 2): ``mean_b |coverage_b - tau|`` over non-empty bins.
* Exceedance test: one-sided exact binomial test of ``k`` points above among
  ``n`` against the rate ``p0`` (``H1: rate > p0``), as
  ``scipy.stats.binomtest(k, n, p0, alternative="greater")``.
* Clustered exceedance test: the share above ``p = k / n`` with its cluster-robust (CR1, sandwich) variance
  ``G / (G - 1) * sum_g (sum_{i in g} (x_i - p))^2 / n^2`` over ``G`` clusters; ``z = (p - p0) / se`` and the
  one-sided large-sample p-value ``1 - Phi(z)``. Design effect: that variance over the binomial variance of
  the same share, ``p (1 - p) / n``.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import binomtest, norm

__all__ = [
    "coverage",
    "signed_coverage_error",
    "share_above",
    "count_above",
    "bin_coverages",
    "calibration_error",
    "binned_signed_coverage_error",
    "exceedance_binomial_pvalue",
    "exceedance_cluster_test",
]


def _pair(y, q) -> tuple[np.ndarray, np.ndarray]:
    y, q = np.asarray(y, dtype=float), np.asarray(q, dtype=float)
    if q.shape != y.shape:  # a boundary's value per point, or one for all
        q = np.broadcast_to(q, y.shape)
    if y.ndim != 1 or y.size == 0:
        raise ValueError(f"y must be a non-empty 1-d array, got shape {y.shape}")
    return y, q


def coverage(y, q) -> float:
    """Share of points with ``y <= q``.

    Examples
    --------
    >>> coverage([0.1, 0.5, 0.9, 1.0], 0.9)  # 0.9 <= 0.9 counts as covered
    0.75
    """
    y, q = _pair(y, q)
    return float(np.mean(y <= q))


def signed_coverage_error(y, q, tau: float) -> float:
    """``coverage(y, q) - tau`` (negative: too many points above the boundary)."""
    return coverage(y, q) - float(tau)


def count_above(y, q) -> int:
    """Number of points with ``y > q``."""
    y, q = _pair(y, q)
    return int(np.count_nonzero(y > q))


def share_above(y, q) -> float:
    """Share of points with ``y > q`` (``1 - coverage``)."""
    y, q = _pair(y, q)
    return float(np.mean(y > q))


def bin_coverages(y, q, bins) -> tuple[np.ndarray, np.ndarray]:
    """``(coverage_b, n_b)`` for every non-empty bin, in increasing label order.

    ``bins`` is an integer label per point (e.g. from
    :func:`harness.stats.binning.equal_mass_bins`).
    """
    y, q = _pair(y, q)
    bins = np.asarray(bins)
    if bins.shape != y.shape:
        raise ValueError(f"bins must have one label per point, got {bins.shape} for {y.shape}")
    if bins.dtype.kind in "iu" and (bins.size == 0 or bins.min() >= 0):
        # counted by label, the empty labels dropped: the same sums, in the same order, as by rank (no sort)
        n_b = np.bincount(bins)
        covered = np.bincount(bins, weights=(y <= q).astype(float), minlength=n_b.size)
        kept = n_b > 0
        return covered[kept] / n_b[kept], n_b[kept]
    labels, inverse = np.unique(bins, return_inverse=True)
    n_b = np.bincount(inverse, minlength=labels.size)
    covered = np.bincount(inverse, weights=(y <= q).astype(float), minlength=labels.size)
    return covered / n_b, n_b


def calibration_error(y, q, bins, tau: float) -> float:
    """``mean_b |coverage_b - tau|`` over the non-empty bins (equal weight per bin).

    Examples
    --------
    Two bins, one fully covered (|1 - 0.9| = 0.1), one half covered
    (|0.5 - 0.9| = 0.4): the mean is 0.25.

    >>> round(calibration_error([0, 0, 1, 0], [1, 1, 0.5, 0.5], [0, 0, 1, 1], 0.9), 12)
    0.25
    """
    cov, _ = bin_coverages(y, q, bins)
    return float(np.mean(np.abs(cov - tau)))


def binned_signed_coverage_error(y, q, bins, tau: float) -> float:
    """``mean_b (coverage_b - tau)`` over the non-empty bins (equal weight per bin)."""
    cov, _ = bin_coverages(y, q, bins)
    return float(np.mean(cov - tau))


def exceedance_binomial_pvalue(k: int, n: int, p0: float = 0.02) -> float:
    """One-sided exact binomial p-value of ``k`` exceedances in ``n`` against rate ``p0``.

    ``P(K >= k)`` for ``K ~ Binomial(n, p0)``, i.e.
    ``scipy.stats.binomtest(k, n, p0, alternative="greater").pvalue``.
    """
    return float(binomtest(int(k), int(n), float(p0), alternative="greater").pvalue)


def exceedance_cluster_test(above, clusters, p0: float = 0.02) -> dict:
    """One-sided cluster-robust test of ``H1: rate > p0`` on exceedance indicators ``above``, one cluster label
    per point (see the module's conventions).

    Returns
    -------
    dict
        ``share``, ``se`` (cluster-robust), ``p``, ``n_clusters`` and ``design_effect`` (``None`` where the
        share is 0 or 1: no binomial variance to compare with).
    """
    x = np.asarray(above, dtype=float)
    clusters = np.asarray(clusters)
    if x.ndim != 1 or x.size == 0 or clusters.shape != x.shape:
        raise ValueError(
            f"above must be a non-empty 1-d array with one cluster each, got shapes {x.shape} and {clusters.shape}"
        )
    _, g = np.unique(clusters, return_inverse=True)
    n, n_clusters = x.size, int(g.max()) + 1
    if n_clusters < 2:
        raise ValueError(f"a cluster-robust variance needs at least 2 clusters, got {n_clusters}")
    share = float(x.mean())
    sums = np.bincount(g, weights=x - share, minlength=n_clusters)
    var = n_clusters / (n_clusters - 1) * float(np.sum(sums**2)) / n**2
    se = var**0.5
    if se > 0:
        p = float(norm.sf((share - p0) / se))
    else:  # every cluster's residuals sum to 0: the share is known exactly
        p = 0.0 if share > p0 else 1.0
    binomial = share * (1.0 - share) / n
    return {
        "share": share,
        "se": se,
        "p": p,
        "n_clusters": n_clusters,
        "design_effect": var / binomial if binomial > 0 else None,
    }
