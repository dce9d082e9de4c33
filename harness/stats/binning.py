"""Group-aware equal-mass bins of the compute axis (paper Section 3.1.1, Table 2).

Definition (as stated for the paper's evaluation): points with identical ``z``
form a group that is never split; walk the sorted groups accumulating their
sizes until ``target = max(ceil(N / K), m)`` is reached (``K = n_bins``,
``m = min_bin_size``); then merge any bin under ``m`` points into its smaller
neighbour.

The definition leaves open which bin the *closing group* (the group whose
points make the running count reach the target) belongs to. Two readings:

``closing_group="next"`` (default)
    The z of each closing group is a bin *edge*, and bins are the half-open
    intervals between consecutive edges, ``[e_i, e_{i+1})``, the last one
    closed, as in :func:`numpy.histogram`; the edges are
    ``min z, closing values..., max z``. So the closing group *starts* the
    next bin, and the running count restarts at zero after it. This reading
    reproduces the published Table 2 rows that depend on the bins only
    (Constant calibration, Binwise; see ``tests/stats/test_temporal.py``), and
    it is the one in which bins under ``m`` arise in the middle of the range,
    which the merge step is there for.
``closing_group="same"``
    The closing group completes its own bin; every bin but the last then
    holds at least ``target`` points, so only the remainder can be merged.

Merge step (both readings): while some bin has fewer than ``m`` points and
more than one bin is left, take the smallest such bin (leftmost on a tie) and
merge it into the neighbour with fewer points (the left one on a tie; the
only one at an end). Fewer than ``m`` points in all give a single bin.

A binning is represented by its *left edges* (the smallest ``z`` of each
bin, increasing). Bin ``b`` is ``[left[b], left[b+1])``; the first bin also
takes everything below ``left[0]`` and the last everything from ``left[-1]``
up. :func:`assign_to_bins` applies that rule to new points (the Binwise
estimator's prediction by bin membership; a point in a gap between two
training bins goes to the lower one). For the points used to build the bins
it returns exactly the labels of :func:`equal_mass_bins`.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["equal_mass_bins", "equal_mass_left_edges", "bin_left_edges", "assign_to_bins"]

_RULES = ("next", "same")


def _merge_small(counts: list[int], min_bin_size: int) -> list[list[int]]:
    """Merge bins under the minimum; returns the merged bins as lists of original bin ids."""
    bins = [[i] for i in range(len(counts))]
    sizes = list(counts)
    while len(sizes) > 1:
        small = [i for i, s in enumerate(sizes) if s < min_bin_size]
        if not small:
            break
        i = min(small, key=lambda j: (sizes[j], j))
        if i == 0:
            j = 1
        elif i == len(sizes) - 1:
            j = i - 1
        else:
            j = i - 1 if sizes[i - 1] <= sizes[i + 1] else i + 1
        lo, hi = min(i, j), max(i, j)
        bins[lo : hi + 1] = [bins[lo] + bins[hi]]
        sizes[lo : hi + 1] = [sizes[lo] + sizes[hi]]
    return bins


def _check(z, n_bins, min_bin_size, closing_group) -> np.ndarray:
    z = np.asarray(z, dtype=float)
    if z.ndim != 1 or z.size == 0:
        raise ValueError(f"z must be a non-empty 1-d array, got shape {z.shape}")
    if not np.all(np.isfinite(z)):
        raise ValueError("z must be finite")
    if int(n_bins) != n_bins or n_bins < 1 or int(min_bin_size) != min_bin_size or min_bin_size < 1:
        raise ValueError(f"n_bins and min_bin_size must be positive integers, got {n_bins}, {min_bin_size}")
    if closing_group not in _RULES:
        raise ValueError(f"closing_group must be one of {_RULES}, got {closing_group!r}")
    return z


def equal_mass_left_edges(z, n_bins: int = 10, min_bin_size: int = 30, *, closing_group: str = "next") -> np.ndarray:
    """Left edges (smallest ``z`` of each bin) of the group-aware equal-mass binning.

    Parameters
    ----------
    z : array_like, shape (n,)
        Finite values; exact floating equality defines a group.
    n_bins : int
        Target number of bins ``K``.
    min_bin_size : int
        Minimum points per bin ``m``.
    closing_group : {"next", "same"}
        Where the group that reaches the target goes (module docstring).

    Returns
    -------
    ndarray, shape (B,)
        Increasing; ``B <= n_bins + 1`` before merging, and every bin holds at
        least ``m`` points unless there is a single bin.
    """
    z = _check(z, n_bins, min_bin_size, closing_group)
    values, counts = np.unique(z, return_counts=True)
    target = max(math.ceil(z.size / n_bins), int(min_bin_size))

    # accumulate whole groups; record where each bin starts (as a group index). The group that closes a bin is
    # the first whose running count (from the last closing one) reaches the target: found on the cumulative
    # counts, a search per bin rather than a step per group
    starts, cum, base = [0], np.cumsum(counts), 0
    while True:
        g = int(np.searchsorted(cum, base + target, side="left"))
        if g >= values.size:
            break
        # "next": a bin starts at the closing value, except at max z (the last bin is closed)
        nxt, end = (g, values.size - 1) if closing_group == "next" else (g + 1, values.size)
        if 0 < nxt < end and nxt != starts[-1]:
            starts.append(nxt)
        base = int(cum[g])
    sizes = np.add.reduceat(counts, starts).tolist()
    merged = _merge_small(sizes, int(min_bin_size))
    return values[[starts[ids[0]] for ids in merged]]


def assign_to_bins(z_new, left_edges) -> np.ndarray:
    """Bin of each point: the last bin whose left edge is ``<= z`` (the first bin below ``left[0]``)."""
    left = np.asarray(left_edges, dtype=float)
    return np.clip(np.searchsorted(left, np.asarray(z_new, dtype=float), side="right") - 1, 0, None)


def equal_mass_bins(z, n_bins: int = 10, min_bin_size: int = 30, *, closing_group: str = "next") -> np.ndarray:
    """Group-aware equal-mass bin label of every point, ``0 .. B-1`` in increasing ``z``.

    See :func:`equal_mass_left_edges` and the module docstring for the rule.

    Examples
    --------
    Eight points, ``K = 2``, so the target is 4; the tie at 2.0 reaches it.
    Under "same" the tie closes the first bin; under "next" 2.0 is an edge
    and the tie starts the second bin:

    >>> z = [1.0, 2.0, 2.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    >>> equal_mass_bins(z, 2, 1, closing_group="same").tolist()
    [0, 0, 0, 0, 1, 1, 1, 1]
    >>> equal_mass_bins(z, 2, 1, closing_group="next").tolist()
    [0, 1, 1, 1, 1, 1, 1, 1]
    """
    left = equal_mass_left_edges(z, n_bins, min_bin_size, closing_group=closing_group)
    return assign_to_bins(z, left)


def bin_left_edges(z, labels) -> np.ndarray:
    """Smallest ``z`` of each bin ``0 .. B-1`` of an existing labelling."""
    z = np.asarray(z, dtype=float)
    labels = np.asarray(labels, dtype=int)
    left = np.full(int(labels.max()) + 1, np.inf)
    np.minimum.at(left, labels, z)
    if not np.all(np.isfinite(left)) or np.any(np.diff(left) <= 0):
        raise ValueError("labels must be 0 .. B-1, non-empty, and ordered in z")
    return left
