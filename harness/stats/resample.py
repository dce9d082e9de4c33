"""Cluster bootstrap of a measurement, and the robustness of the comparisons it asserts.

Unit of resampling
------------------
Rows of the Open LLM Leaderboard are not independent: many fine-tunes share
one base model (column ``Identified base model``) and so one pretraining
compute value and much of their ability. The bootstrap therefore resamples
*clusters* (base models), not rows: a resample draws ``G`` clusters with
replacement from the ``G`` clusters of the data and keeps every drawn cluster
whole, so a cluster drawn twice contributes all its rows twice
(Davison & Hinkley 1997, Section 3.8, "resampling clusters"; the second stage,
resampling rows inside a cluster, is not done). A row without a cluster label
is its own cluster of size one (see :func:`cluster_ids_from_labels`). Without
cluster labels every row is its own cluster, i.e. the ordinary row bootstrap.

Strata
------
Optional. With ``strata`` the clusters are resampled within each stratum (each
stratum keeps its number of clusters in every resample); this needs every
cluster to lie inside one stratum. It is meant for designs where group sizes
are fixed by design. It is *not* the default, and not advised for the
leaderboard's upload periods: base models span several periods (the same base
is fitted on one period and evaluated on the next), and nesting would mean
splitting a base model into (base, period) cells, which throws away exactly
that cross-period dependence; and each period holds many base models, so an
unstratified resample leaves a period without rows with negligible
probability. Callers who do want (base, period) cells can pass
``cluster_ids_from_labels`` of the combined label as clusters.

Randomness
----------
All cluster draws of all resamples are made up front, in one call per stratum,
from the one ``rng`` (then one 128-bit entropy draw seeds the per-resample
child generators given to a statistic that asks for one). Resample ``i`` is
therefore a function of the parent ``rng`` state and ``i`` only: computing any
subset of resamples (a chunk, in another process, built from the same seed)
gives the same draws as the serial run.

Summaries
---------
:func:`percentile_interval` reads the *percentile* interval ``[Q(a/2), Q(1 -
a/2)]`` of the bootstrap draws (``numpy.quantile``, default "linear" rule,
Hyndman-Fan type 7), ``a = 1 - level``. The other interval methods, and the
one-sided decision on an asserted ordering that a claim's label rests on, are
in :mod:`harness.stats.intervals` and :mod:`harness.stats.methods`; which of
them a claim uses is the claim's choice, and its error is measured on the
claim's design (:mod:`harness.stats.calibration`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = [
    "cluster_ids_from_labels",
    "ClusterResamples",
    "cluster_bootstrap_indices",
    "BootstrapDraws",
    "cluster_bootstrap",
    "concat_draws",
    "percentile_interval",
]


def _is_missing(label) -> bool:
    if isinstance(label, str):
        return label.strip() == ""
    return bool(pd.isna(label))


def cluster_ids_from_labels(labels) -> np.ndarray:
    """Integer cluster id of each row; a row without a label is its own cluster.

    Parameters
    ----------
    labels : array_like of hashable
        One cluster label per row (e.g. the base model). Missing means
        ``None``, ``NaN``, ``pandas.NA`` or a string that is empty after
        stripping blanks.

    Returns
    -------
    ndarray of int, shape (n,)
        Ids ``0 .. G-1``. Labelled rows are numbered by first appearance of
        their label (``pandas.factorize`` order); then each unlabelled row, in
        row order, gets a new id of its own. Two unlabelled rows are never in
        the same cluster: an unknown base model is treated as a base model of
        its own (lumping the unknowns together would invent one large cluster
        of unrelated models; if some of them do share a base, their dependence
        is ignored).

    Examples
    --------
    >>> cluster_ids_from_labels(["a", "b", None, "a", ""]).tolist()
    [0, 1, 2, 0, 3]
    """
    values = list(labels) if not isinstance(labels, pd.Series) else labels.tolist()
    missing = np.array([_is_missing(v) for v in values], dtype=bool)
    codes = np.full(len(values), -1, dtype=np.intp)
    if (~missing).any():
        present = pd.Series([v for v, m in zip(values, missing) if not m], dtype=object)
        codes[~missing], _ = pd.factorize(present, sort=False)
    n_named = int(codes.max()) + 1 if (~missing).any() else 0
    codes[missing] = n_named + np.arange(int(missing.sum()))
    return codes


def _validated_ids(cluster_ids, n_rows: int | None = None) -> np.ndarray:
    ids = np.asarray(cluster_ids)
    if ids.ndim != 1 or ids.size == 0:
        raise ValueError(f"cluster_ids must be a non-empty 1-d array, got shape {ids.shape}")
    if not np.issubdtype(ids.dtype, np.integer):
        raise ValueError("cluster_ids must be integers (use cluster_ids_from_labels on labels)")
    if n_rows is not None and ids.size != n_rows:
        raise ValueError(f"cluster_ids has {ids.size} entries for {n_rows} rows")
    uniq = np.unique(ids)
    if uniq[0] != 0 or uniq[-1] != uniq.size - 1:
        raise ValueError("cluster_ids must be 0 .. G-1 with every id used")
    return ids.astype(np.intp, copy=False)


def _stratified_cluster_draws(ids: np.ndarray, strata, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """``(n_resamples, G)`` cluster ids: per stratum (increasing), its clusters drawn with replacement."""
    n_clusters = int(ids.max()) + 1
    if strata is None:
        return rng.integers(0, n_clusters, size=(n_resamples, n_clusters))
    strata = np.asarray(strata)
    if strata.shape != ids.shape:
        raise ValueError(f"strata must have one label per row, got {strata.shape} for {ids.shape}")
    pairs = np.unique(np.column_stack([ids, pd.factorize(strata, sort=True)[0]]), axis=0)
    n_spanning = int(np.sum(np.bincount(pairs[:, 0], minlength=n_clusters) > 1))
    if n_spanning:
        raise ValueError(
            f"{n_spanning} clusters span more than one stratum; stratified resampling needs clusters nested in strata"
        )
    cols = []
    for s in np.unique(pairs[:, 1]):
        members = pairs[pairs[:, 1] == s, 0]
        cols.append(members[rng.integers(0, members.size, size=(n_resamples, members.size))])
    return np.concatenate(cols, axis=1)


@dataclass(frozen=True, eq=False)
class ClusterResamples(Sequence):
    """The row indices of ``n_resamples`` cluster-bootstrap resamples, built on demand.

    Attributes
    ----------
    cluster_draws : ndarray of int, shape (n_resamples, G)
        The clusters drawn for each resample, in draw order.
    row_order, cluster_start, cluster_size : ndarray of int
        Rows sorted by cluster (stable), and where each cluster's block starts
        and how long it is.

    ``resamples[i]`` is the row-index array of resample ``i``: the rows of its
    drawn clusters concatenated in draw order, each cluster's rows in
    increasing row order. Its length varies with the sizes of the drawn
    clusters.
    """

    cluster_draws: np.ndarray
    row_order: np.ndarray
    cluster_start: np.ndarray
    cluster_size: np.ndarray

    def __len__(self) -> int:
        return self.cluster_draws.shape[0]

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        draw = self.cluster_draws[i]
        lengths = self.cluster_size[draw]
        block_start = np.cumsum(lengths) - lengths
        pos = np.arange(int(lengths.sum())) - np.repeat(block_start - self.cluster_start[draw], lengths)
        return self.row_order[pos]

    @property
    def n_clusters(self) -> int:
        return self.cluster_size.size


def cluster_bootstrap_indices(
    cluster_ids, n_resamples: int, rng: np.random.Generator, *, strata=None
) -> ClusterResamples:
    """Row indices of cluster-bootstrap resamples (clusters drawn with replacement, kept whole).

    Parameters
    ----------
    cluster_ids : array_like of int, shape (n,)
        Cluster of each row, ids ``0 .. G-1`` (see :func:`cluster_ids_from_labels`).
    n_resamples : int
        Number of resamples ``B``.
    rng : numpy.random.Generator
        All ``B x G`` cluster draws are taken from it now, in one call (one per
        stratum with ``strata``).
    strata : array_like, optional
        Stratum of each row. If given, each stratum's clusters are drawn within
        it (as many as it has); every cluster must lie in one stratum.

    Returns
    -------
    ClusterResamples
        A sequence of ``B`` row-index arrays; resample ``i`` holds, for each of
        its ``G`` drawn clusters, all that cluster's rows (a cluster drawn ``k``
        times appears ``k`` times).
    """
    ids = _validated_ids(cluster_ids)
    if int(n_resamples) < 1:
        raise ValueError(f"n_resamples must be positive, got {n_resamples}")
    draws = _stratified_cluster_draws(ids, strata, int(n_resamples), rng)
    order = np.argsort(ids, kind="stable")
    size = np.bincount(ids)
    start = np.cumsum(size) - size
    return ClusterResamples(draws, order, start, size)


@dataclass(frozen=True, eq=False)
class BootstrapDraws:
    """Bootstrap draws of named quantities.

    Attributes
    ----------
    names : tuple of str
        Quantity names, in the order of the statistic's first returned dict.
    values : ndarray of float, shape (n, len(names))
        One row per computed resample; ``nan`` where a resample failed.
    resample_ids : ndarray of int, shape (n,)
        Which resamples of the full sequence the rows are (``0 .. B-1``).
    n_resamples : int
        ``B``, the length of the full sequence (a chunk holds fewer rows).
    n_clusters, n_rows : int
        Resampling units and rows of the data.
    n_raised : int
        Resamples whose statistic raised one of the caught exceptions (their
        whole row is ``nan``).
    """

    names: tuple[str, ...]
    values: np.ndarray
    resample_ids: np.ndarray
    n_resamples: int
    n_clusters: int
    n_rows: int
    n_raised: int

    def column(self, name: str) -> np.ndarray:
        """The draws of one quantity."""
        try:
            return self.values[:, self.names.index(name)]
        except ValueError:
            raise KeyError(f"no quantity {name!r}; have {list(self.names)}") from None

    def n_failed(self, name: str) -> int:
        """Number of draws of ``name`` that are not finite."""
        return int(np.sum(~np.isfinite(self.column(name))))


def cluster_bootstrap(
    statistic: Callable[..., dict],
    n_rows: int,
    cluster_ids=None,
    *,
    n_resamples: int,
    rng: np.random.Generator,
    strata=None,
    chunk: range | None = None,
    catch: tuple[type[BaseException], ...] = (),
    with_rng: bool = False,
) -> BootstrapDraws:
    """Evaluate ``statistic`` on cluster-bootstrap resamples of the rows.

    Parameters
    ----------
    statistic : callable
        ``statistic(indices) -> dict[str, float]`` (or ``statistic(indices,
        rng)`` with ``with_rng``), where ``indices`` are the resample's row
        indices into the caller's data (rows repeat). Every call must return
        the same keys. A non-finite value marks that quantity as failed in that
        resample.
    n_rows : int
        Rows of the data.
    cluster_ids : array_like of int, optional
        Cluster of each row (``None``: every row its own cluster, the ordinary
        bootstrap).
    n_resamples : int
        ``B``.
    rng : numpy.random.Generator
        Parent generator; see "Randomness" in the module docstring. It is
        advanced by the same amount whatever ``chunk`` and ``with_rng`` are.
    strata : array_like, optional
        See :func:`cluster_bootstrap_indices`.
    chunk : range, optional
        Compute only these resamples (default: all ``B``). Chunks computed from
        generators in the same state, e.g. in separate processes from the same
        seed, and joined with :func:`concat_draws`, equal the serial result.
    catch : tuple of exception types
        Exceptions of the statistic that mark the resample as failed (row of
        ``nan``, counted in ``n_raised``) instead of propagating. Default: none.
    with_rng : bool
        Pass resample ``i`` its own generator, seeded from
        ``SeedSequence(entropy).spawn(B)[i]`` with ``entropy`` drawn from the
        parent after the cluster draws (use it for fits with random starts).

    Returns
    -------
    BootstrapDraws
    """
    n_rows = int(n_rows)
    ids = np.arange(n_rows) if cluster_ids is None else _validated_ids(cluster_ids, n_rows)
    resamples = cluster_bootstrap_indices(ids, n_resamples, rng, strata=strata)
    entropy = rng.integers(0, 2**63, size=2, dtype=np.int64)  # always drawn: rng state independent of with_rng
    todo = range(len(resamples)) if chunk is None else chunk
    if len(todo) and (min(todo) < 0 or max(todo) >= len(resamples)):
        raise ValueError(f"chunk {todo} is outside 0..{len(resamples) - 1}")
    children = np.random.SeedSequence([int(e) for e in entropy]).spawn(len(resamples)) if with_rng else None

    results: list[dict | None] = []
    names: tuple[str, ...] | None = None
    n_raised = 0
    for i in todo:
        args = (resamples[i], np.random.default_rng(children[i])) if with_rng else (resamples[i],)
        try:
            out = statistic(*args)
        except catch:
            n_raised += 1
            results.append(None)
            continue
        if names is None:
            names = tuple(out)
        elif tuple(out) != names and set(out) != set(names):
            raise ValueError(f"resample {i}: statistic returned keys {sorted(out)}, expected {sorted(names)}")
        results.append(out)
    names = names or ()
    values = np.full((len(todo), len(names)), np.nan)
    for row, out in enumerate(results):
        if out is not None:
            values[row] = [float(out[k]) for k in names]
    return BootstrapDraws(
        names, values, np.asarray(todo, dtype=np.intp), len(resamples), resamples.n_clusters, n_rows, n_raised
    )


def concat_draws(parts: Sequence[BootstrapDraws]) -> BootstrapDraws:
    """Join chunks of one bootstrap run into one result, rows ordered by resample id.

    The chunks must come from the same run (same ``n_resamples``, clusters,
    rows) and must not overlap. A chunk in which every resample failed has no
    names and only contributes its failures.
    """
    if not parts:
        raise ValueError("no chunks to join")
    named = [p for p in parts if p.names]
    names = named[0].names if named else ()
    for p in parts:
        if (p.n_resamples, p.n_clusters, p.n_rows) != (parts[0].n_resamples, parts[0].n_clusters, parts[0].n_rows):
            raise ValueError("chunks come from different bootstrap runs")
        if p.names and set(p.names) != set(names):
            raise ValueError(f"chunks have different quantities: {p.names} and {names}")
    ids = np.concatenate([p.resample_ids for p in parts])
    if np.unique(ids).size != ids.size:
        raise ValueError("chunks overlap")
    values = np.concatenate(
        [
            p.values[:, [p.names.index(k) for k in names]]
            if p.names
            else np.full((p.values.shape[0], len(names)), np.nan)
            for p in parts
        ]
    )
    order = np.argsort(ids, kind="stable")
    return BootstrapDraws(
        names,
        values[order],
        ids[order],
        parts[0].n_resamples,
        parts[0].n_clusters,
        parts[0].n_rows,
        sum(p.n_raised for p in parts),
    )


def percentile_interval(draws, level: float = 0.95) -> dict:
    """Percentile bootstrap interval ``[Q(a/2), Q(1 - a/2)]``, ``a = 1 - level``.

    Quantiles by ``numpy.quantile`` (method "linear", Hyndman-Fan type 7) over
    the finite draws; non-finite draws (failed resamples) are left out, which
    conditions on the resample succeeding, so their number is returned.

    Returns
    -------
    dict
        ``lo, hi, level, n_used, n_failed`` (``lo = hi = nan`` when no draw is
        finite).
    """
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")
    v = np.asarray(draws, dtype=float).ravel()
    ok = np.isfinite(v)
    a = 1.0 - float(level)
    if ok.any():
        lo, hi = np.quantile(v[ok], [a / 2.0, 1.0 - a / 2.0])
    else:
        lo = hi = math.nan
    return {
        "lo": float(lo),
        "hi": float(hi),
        "level": float(level),
        "n_used": int(ok.sum()),
        "n_failed": int((~ok).sum()),
    }
