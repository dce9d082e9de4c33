"""The one check of a fit's inputs: ``y``, or ``z`` and ``y``, as 1-d float arrays of equal length, finite, and
at least as many points as the model needs. Every estimator of :mod:`harness.stats` checks its data here."""

from __future__ import annotations

import numpy as np

__all__ = ["check_y", "check_zy"]


def check_y(y, *, min_points: int = 1) -> np.ndarray:
    """``y`` as a 1-d float array of at least ``min_points`` finite values, or a ``ValueError`` saying which fails."""
    y = np.asarray(y, dtype=float)
    if y.ndim != 1:
        raise ValueError(f"y must be 1-d, got shape {y.shape}")
    if y.size < min_points:
        raise ValueError(f"need at least {min_points} points, got {y.size}")
    if not np.all(np.isfinite(y)):
        raise ValueError("y must be finite")
    return y


def check_zy(z, y, *, min_points: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """``(z, y)`` as 1-d float arrays of equal length with at least ``min_points`` finite pairs, or a
    ``ValueError`` saying which fails."""
    z = np.asarray(z, dtype=float)
    y = np.asarray(y, dtype=float)
    if z.ndim != 1 or z.shape != y.shape:
        raise ValueError(f"z and y must be 1-d of equal length, got {z.shape} and {y.shape}")
    if z.size < min_points:
        raise ValueError(f"need at least {min_points} (z, y) points, got {z.size}")
    if not (np.all(np.isfinite(z)) and np.all(np.isfinite(y))):
        raise ValueError("z and y must be finite")
    return z, y
