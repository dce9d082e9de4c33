"""What one cluster moves: the statistic with each cluster deleted in turn, and the clusters that move it most.

The delete-one cluster jackknife (:func:`without_each`) refits the statistic once per cluster (base model)
without it. :func:`influence` ranks the clusters by how far their deletion moves a quantity, and says whether
the largest move exceeds a *margin*: for a decision on an ordering, the distance of its deciding bound from 0;
for a value, the distance from the edge of its tolerance. A cluster that moves the statistic by more than the
margin carries the result: resampling clusters cannot reproduce the law of a statistic dominated by one of
them (the cluster bootstrap is not consistent there), so a decision resting on it is at most inconclusive
(:func:`harness.stats.methods.ordering_state`).
"""

from __future__ import annotations

import numpy as np

from .resample import BootstrapDraws, _validated_ids

__all__ = ["without_each", "influence"]


def without_each(statistic, n_rows: int, cluster_ids, clusters, seed: int, catch=()) -> BootstrapDraws:
    """The statistic with each cluster of ``clusters`` deleted in turn.

    ``statistic(indices, rng)`` gets the kept rows (increasing) and the generator of stream ``c`` of
    ``SeedSequence([seed, 3]).spawn(G)``, so any subset of clusters (a chunk, in another process) gives what the
    whole run gives. Row ``i`` of the result is cluster ``clusters[i]``; a call that raises one of ``catch`` is
    ``nan``.
    """
    ids = _validated_ids(cluster_ids, int(n_rows))
    G = int(ids.max()) + 1
    children = np.random.SeedSequence([int(seed), 3]).spawn(G)
    rows, names, raised = [], None, 0
    for c in clusters:
        try:
            out = statistic(np.flatnonzero(ids != c), np.random.default_rng(children[c]))
        except catch:
            raised += 1
            rows.append(None)
            continue
        names = names or tuple(out)
        rows.append([float(out[k]) for k in names])
    width = len(names or ())
    values = np.array([r if r is not None else [np.nan] * width for r in rows], dtype=float).reshape(len(rows), width)
    return BootstrapDraws(names or (), values, np.asarray(list(clusters), dtype=np.intp), G, G, int(n_rows), raised)


def influence(without, estimate: float | None, margin: float | None, k: int = 5, against: int = 0) -> dict:
    """The ``k`` clusters whose deletion moves a quantity most, how many move it past ``margin``, and each
    cluster's share of the jackknife variance.

    Parameters
    ----------
    without : array_like of float, shape (G,)
        The quantity with cluster ``c`` deleted, cluster by cluster (``nan`` where the refit failed).
    estimate : float or None
        The quantity on all rows.
    margin : float or None
        The move that would change the conclusion (``None``: no conclusion to change).
    against : {-1, 0, +1}
        The direction of a move that would change it (``0``: either): a decision whose bound lies below 0
        is undone by a move up (``+1``), never by one that pushes the difference further from 0.

    Returns
    -------
    dict
        ``top`` (``[(cluster, change)]``, largest ``|change|`` first, ties in cluster order), ``largest``
        (``|change|`` of the first), ``margin``, ``beyond_margin`` (a move in the direction ``against`` larger
        than ``margin``), ``n_beyond``, ``n_failed``, and ``dominant`` (``(cluster, share)``: the cluster with
        the largest share of ``sum_c (without_c - mean)^2``); empty when there is no estimate.
    """
    if estimate is None or not np.isfinite(estimate):
        return {
            "top": [],
            "largest": None,
            "margin": margin,
            "beyond_margin": None,
            "n_beyond": None,
            "n_failed": None,
            "dominant": None,
        }
    without = np.asarray(without, dtype=float)
    delta = without - float(estimate)
    finite = np.isfinite(delta)
    order = [int(c) for c in np.argsort(-np.abs(np.where(finite, delta, 0.0)), kind="stable") if finite[c]]
    top = [(c, float(delta[c])) for c in order[:k]]
    harmful = delta[finite] * against if against else np.abs(delta[finite])
    spread = (without[finite] - without[finite].mean()) ** 2
    total = float(spread.sum())
    c = int(np.flatnonzero(finite)[np.argmax(spread)]) if total > 0 else None
    return {
        "top": top,
        "largest": abs(top[0][1]) if top else None,
        "margin": margin,
        "beyond_margin": None if not top or margin is None else bool(harmful.max() > margin),
        "n_beyond": None if margin is None else int(np.sum(harmful > margin)),
        "n_failed": int(np.sum(~finite)),
        "dominant": None if c is None else (c, float(spread.max() / total)),
    }
