"""Chronological periods of the leaderboard and the rolling train/validation pairs.

A model's period is read from the year-month of its upload date (Open LLM
Leaderboard column ``Upload To Hub Date``). Periods are *data*: a tuple of
``(label, first_month, last_month)`` with months written ``"YYYY-MM"`` and
both ends inclusive; ``None`` leaves an end open. The default is the one of
the paper's temporal experiments (Section 3, Figure 2 and Table 2)::

    P1  <= 2024-06
    P2  2024-07 .. 2024-09
    P3  2024-10 .. 2024-12
    P4  2025-01 .. 2025-03

Rows without a parseable date, and rows whose month falls in no period, get
no label and are dropped by :func:`assign_periods`.

Rolling pairs (t = 1, 2, ...): fit on ``P_t`` only, evaluate on ``P_{t+1}``
restricted to the overlap of the two z ranges, so that no validation point is
an extrapolation of the training range::

    [max(min z_tr, min z_va), min(max z_tr, max z_va)]     (both ends inclusive)
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = [
    "Period",
    "validate_periods",
    "period_labels",
    "assign_periods",
    "rolling_pairs",
    "overlap_interval",
    "overlap_mask",
]

#: ``(label, first month, last month)``; months ``"YYYY-MM"``, inclusive, ``None`` = open.
Period = tuple[str, "str | None", "str | None"]


def _month(text: str | None, what: str) -> pd.Period | None:
    if text is None:
        return None
    if not (isinstance(text, str) and re.fullmatch(r"\d{4}-(0[1-9]|1[0-2])", text)):
        raise ValueError(f"{what}: {text!r} is not a year-month 'YYYY-MM'")
    return pd.Period(text, freq="M")


def _validated(periods: Sequence[Period]) -> list[tuple[str, pd.Period | None, pd.Period | None]]:
    """Parse the months, and require unique labels and disjoint, ordered periods."""
    out = []
    for i, item in enumerate(periods):
        if len(item) != 3:
            raise ValueError(f"periods[{i}] must be (label, first_month, last_month), got {item!r}")
        label, first, last = item
        lo, hi = _month(first, f"periods[{i}] first month"), _month(last, f"periods[{i}] last month")
        if lo is not None and hi is not None and lo > hi:
            raise ValueError(f"periods[{i}] ({label}): first month {first} is after last month {last}")
        out.append((str(label), lo, hi))
    labels = [p[0] for p in out]
    if len(set(labels)) != len(labels):
        raise ValueError(f"period labels must be unique, got {labels}")
    for (la, _, hi_a), (lb, lo_b, _) in zip(out, out[1:]):
        if hi_a is None or lo_b is None or lo_b <= hi_a:
            raise ValueError(f"periods {la} and {lb} must be in chronological order and not overlap")
    return out


def validate_periods(periods: Sequence[Period]) -> None:
    """Raise ``ValueError`` unless the periods parse, have unique labels, and are ordered and disjoint."""
    _validated(periods)


def period_labels(dates, periods: Sequence[Period]) -> pd.Series:
    """Period label of each date, ``None`` where there is no date or no period.

    Parameters
    ----------
    dates : array_like or pandas.Series
        Dates or date strings (anything :func:`pandas.to_datetime` reads);
        unparseable entries count as missing.
    periods : sequence of (label, first_month, last_month)
        Inclusive year-month bounds, ``None`` for an open end.

    Returns
    -------
    pandas.Series of object
        Same index as ``dates`` when it is a Series.

    Examples
    --------
    >>> period_labels(["2024-06-30", "2024-07-01", None, "2025-04-02"]).tolist()
    ['P1', 'P2', None, None]
    """
    parsed = _validated(periods)
    index = dates.index if isinstance(dates, pd.Series) else None
    ts = pd.to_datetime(pd.Series(dates, index=index), errors="coerce")
    month = ts.dt.to_period("M")
    labels = pd.Series([None] * len(ts), index=ts.index, dtype=object)
    for label, lo, hi in parsed:
        inside = month.notna()
        if lo is not None:
            inside &= month >= lo
        if hi is not None:
            inside &= month <= hi
        labels[inside.to_numpy(dtype=bool)] = label
    return labels


def assign_periods(
    df: pd.DataFrame,
    *,
    date_col: str,
    periods: Sequence[Period],
    label_col: str = "period",
) -> pd.DataFrame:
    """Rows of ``df`` that fall in a period, with a ``label_col`` column added.

    Returns a new frame (``df`` is not modified); the row order is kept.
    """
    if date_col not in df.columns:
        raise KeyError(f"date column {date_col!r} is not in the frame")
    labels = period_labels(df[date_col], periods)
    keep = labels.notna().to_numpy()
    out = df.loc[keep].copy()
    out[label_col] = labels[keep].to_numpy()
    return out


#: :func:`rolling_pairs` of the periods seen (parsing the months is most of a bootstrap resample's split cost).
_PAIRS: dict[tuple, list[tuple[int, str, str]]] = {}


def rolling_pairs(periods: Sequence[Period]) -> list[tuple[int, str, str]]:
    """``[(t, label of P_t, label of P_{t+1}), ...]`` for t = 1 .. len(periods) - 1."""
    try:
        key = tuple(tuple((type(v), v) for v in p) for p in periods)  # typed: 1 and True are other labels
        hash(key)
    except TypeError:
        key = None
    out = _PAIRS.get(key) if key is not None else None
    if out is None:
        labels = [p[0] for p in _validated(periods)]
        out = [(t, labels[t - 1], labels[t]) for t in range(1, len(labels))]
        if key is not None and len(_PAIRS) < 256:
            _PAIRS[key] = out
    return list(out)


def overlap_interval(z_train, z_val) -> tuple[float, float]:
    """``(max(min z_tr, min z_va), min(max z_tr, max z_va))``; empty when lo > hi."""
    z_train = np.asarray(z_train, dtype=float)
    z_val = np.asarray(z_val, dtype=float)
    if z_train.size == 0 or z_val.size == 0:
        raise ValueError("overlap of an empty sample is undefined")
    return float(max(z_train.min(), z_val.min())), float(min(z_train.max(), z_val.max()))


def overlap_mask(z_train, z_val) -> np.ndarray:
    """Boolean mask of the ``z_val`` inside the overlap interval, both ends inclusive."""
    lo, hi = overlap_interval(z_train, z_val)
    z_val = np.asarray(z_val, dtype=float)
    return (z_val >= lo) & (z_val <= hi)
