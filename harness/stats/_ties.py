"""Points that share a value of the covariate, for curves evaluated once per distinct value.

A leaderboard's compute is a property of the base model, so its fine-tunes share it: claim 002's
3663 rows have 336 distinct values of ``z``. A curve of ``z`` alone (a sigmoid, its derivatives in
its parameters) is then computed once per distinct value and spread to the points, and a sum over
points of such a curve times a per-point weight is the sum over distinct values of the curve times
the weights summed within each::

    sum_i w_i f(z_i) = sum_g f(z_g) * (sum_{i in g} w_i)

The points are taken in increasing ``z`` (a stable sort), so that each value's points are one run.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Ties", "recent"]

#: Group the points only when there are at most this share of distinct values: with (nearly) all values
#: distinct, spreading and summing would be two more passes for nothing.
_WORTH = 0.5
#: What :func:`recent` keeps: the few things made last.
_RECENT: dict = {}


@dataclass(frozen=True)
class Ties:
    """The distinct values of a sorted covariate and where each one's run of points starts.

    ``values`` are the distinct values (all the values, repeats included, when grouping would not
    pay); ``starts`` is where each one's run begins and ``sizes`` how many points it has (both
    ``None`` when not grouped).
    """

    values: np.ndarray
    starts: np.ndarray | None
    sizes: np.ndarray | None

    @classmethod
    def of(cls, z_sorted: np.ndarray) -> Ties:
        """The runs of equal values in ``z_sorted`` (non-decreasing)."""
        n = z_sorted.size
        new = np.empty(n, dtype=bool)
        new[:1] = True
        np.not_equal(z_sorted[1:], z_sorted[:-1], out=new[1:])
        if np.count_nonzero(new) > _WORTH * n:
            return cls(z_sorted, None, None)
        starts = new.nonzero()[0]
        sizes = np.empty_like(starts)
        np.subtract(starts[1:], starts[:-1], out=sizes[:-1])
        sizes[-1] = n - starts[-1]
        return cls(z_sorted[starts], starts, sizes)

    @classmethod
    def sorted(cls, z: np.ndarray) -> tuple[np.ndarray, Ties]:
        """``(order, ties)``: the stable argsort of ``z`` and the runs of ``z[order]`` (remembered: :func:`recent`)."""

        def make():
            order = z.argsort(kind="stable")
            return order, cls.of(z[order])

        return recent(("sorted", z.dtype.str, z.tobytes()), make)

    @classmethod
    def none(cls) -> Ties:
        """One value per point: spreading and summing leave arrays as they are."""
        return cls(np.empty(0), None, None)

    def spread(self, v: np.ndarray) -> np.ndarray:
        """Per-value ``v`` (last axis) repeated to every point."""
        return v if self.sizes is None else v.repeat(self.sizes, axis=-1)

    def sums(self, w: np.ndarray) -> np.ndarray:
        """Per-point ``w`` (last axis) summed within each value's run."""
        return w if self.starts is None else np.add.reduceat(w, self.starts, axis=-1)


def recent(key, make):
    """``make()``, remembered under ``key`` with the few made last: the fits of a resample's tasks share its rows'
    ``z``, and with it their sorting, grouping and basis. Its arrays are made read-only (they are shared)."""
    out = _RECENT.get(key)
    if out is None:
        out = _RECENT[key] = _read_only(make())
        if len(_RECENT) > 16:
            _RECENT.pop(next(iter(_RECENT)), None)
    return out


def _read_only(x):
    """``x``, with every array in it (in tuples and in :class:`Ties`) made read-only."""
    if isinstance(x, np.ndarray):
        x.flags.writeable = False
    for part in x if isinstance(x, tuple) else vars(x).values() if isinstance(x, Ties) else ():
        _read_only(part)
    return x
