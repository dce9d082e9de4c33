"""A leaderboard table as (z, y) pairs.

Compute proxy (paper Section 2)::

    x = multiplier * tokens[T] * params[B]     (units of 1e21 FLOPs when multiplier = 6)
    z = log10(x)

or a column that holds compute itself, ``x = scale * column`` (``scale = 1e-21`` for a column in FLOPs).
Rows whose ``x`` is not a finite positive number are dropped.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = [
    "compute_proxy",
    "with_log_compute",
    "with_compute_column",
    "task_arrays",
    "cluster_weights",
    "weight_column",
]


def compute_proxy(df: pd.DataFrame, tokens_col: str, params_col: str, multiplier: float) -> pd.Series:
    tokens = pd.to_numeric(df[tokens_col], errors="coerce")
    size = pd.to_numeric(df[params_col], errors="coerce")
    return multiplier * tokens * size


def with_log_compute(df: pd.DataFrame, tokens_col: str, params_col: str, multiplier: float) -> pd.DataFrame:
    """Rows with a finite positive compute proxy, with columns ``x`` and ``z`` added."""
    return _with_x(df, compute_proxy(df, tokens_col, params_col, multiplier))


def with_compute_column(df: pd.DataFrame, column: str, scale: float) -> pd.DataFrame:
    """Rows whose compute column is a finite positive number, with ``x = scale * column`` and ``z = log10 x``."""
    return _with_x(df, scale * pd.to_numeric(df[column], errors="coerce"))


def _with_x(df: pd.DataFrame, x: pd.Series) -> pd.DataFrame:
    keep = np.isfinite(x) & (x > 0)
    out = df.loc[keep].copy()
    out["x"] = x[keep].astype(float)
    out["z"] = np.log10(out["x"].to_numpy())
    return out


def task_arrays(df: pd.DataFrame, column: str) -> tuple[np.ndarray, np.ndarray]:
    """``(z, y)`` for one score column, dropping rows whose score is missing."""
    y = pd.to_numeric(df[column], errors="coerce").to_numpy(dtype=float)
    z = df["z"].to_numpy(dtype=float)
    keep = np.isfinite(y)
    return z[keep], y[keep]


def weight_column(column: str) -> str:
    """The name of the column that holds the fit's weight of each row scored in ``column``."""
    return f"{column} (weight)"


def cluster_weights(groups) -> np.ndarray:
    """``1/n_g`` per row, ``n_g`` the rows of its group: each group weighs one. A missing group (``None``,
    ``NaN``) is the row's own."""
    codes = pd.factorize(pd.Series(groups, dtype=object))[0]
    alone = codes < 0
    codes[alone] = codes.max(initial=-1) + 1 + np.arange(alone.sum())
    return 1.0 / np.bincount(codes)[codes]
