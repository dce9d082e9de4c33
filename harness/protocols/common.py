"""Parameter schemas and helpers shared by the leaderboard protocols."""

from __future__ import annotations

from typing import Any

import numpy as np
from pydantic import Field, field_validator

from ..errors import DataError
from ..schema import Count, Label, Number
from ..quantities import boxed as boxed_name
from ..stats.leaderboard import task_arrays, with_log_compute
from ..stats.periods import assign_periods, validate_periods
from ..stats.sigmoid import SigmoidQuantileRegressor
from ..stats.splits import rolling_splits
from .base import ProtocolParams

__all__ = ["LeaderboardParams", "EstimatorParams", "leaderboard_frame", "fit_boundary", "leaderboard_summary",
           "task_data", "leaderboard_columns", "Box", "BoxParams", "check_box", "PeriodParams", "period_frame",
           "period_summary", "sigmoid_options", "boxed_options", "outside_box", "box_explanation"]

#: The authors' optimiser box (slope limits; the midpoint inside the data), measured, never adopted.
Box = tuple[Number, Number]


class LeaderboardParams(ProtocolParams):
    """Which table columns give the compute proxy and which give the scores."""

    table: Label = "oll"
    tokens_col: Label = "Pretraining tokens (T)"
    params_col: Label = "#Params (B)"
    multiplier: Number = Field(6.0, gt=0)
    tasks: dict[Label, Label] = Field(min_length=1, description="benchmark label -> score column")


class EstimatorParams(ProtocolParams):
    """The sigmoid estimator's hyperparameters and optimiser settings."""

    tau: Number = Field(gt=0, lt=1)
    kappa: Number = Field(gt=0, le=1e6)
    lam: Number = Field(ge=0, le=1e6)
    warm_start: bool = True
    n_random: Count = Field(4, ge=0, le=1000)


def check_box(box):
    if box is not None and not 0 < box[0] < box[1]:
        raise ValueError(f"box_check must be (beta_min, beta_max) with 0 < beta_min < beta_max, got {list(box)}")
    return box


class BoxParams(ProtocolParams):
    box_check: Box | None = Field(
        None, description="also refit with the slope in [lo, hi] and the midpoint inside the data (the authors' box)")

    @field_validator("box_check")
    @classmethod
    def _box(cls, box):
        return check_box(box)


def leaderboard_columns(p: LeaderboardParams, **extra: str) -> list[tuple[str, str, dict[str, str]]]:
    """The table and columns the parameters name, for the claim file's validation."""
    cols = {"tokens_col": p.tokens_col, "params_col": p.params_col, **extra}
    cols.update({f"tasks.{label}": col for label, col in p.tasks.items()})
    return [("table", p.table, cols)]


def leaderboard_frame(tables, p: LeaderboardParams):
    df = tables.frame(p.table)
    missing = [c for c in [p.tokens_col, p.params_col, *p.tasks.values()] if c not in df.columns]
    if missing:
        raise DataError(f"table '{p.table}' ({tables.entry(p.table).path}): columns {missing} named in the claim "
                        "are not in it")
    return with_log_compute(df, p.tokens_col, p.params_col, p.multiplier)


def leaderboard_summary(tables, p: LeaderboardParams) -> dict[str, Any]:
    df = tables.frame(p.table)
    kept = leaderboard_frame(tables, p)
    return {"oll_rows": int(len(df)), "oll_rows_with_compute": int(len(kept)),
            "z_min": float(kept["z"].min()), "z_max": float(kept["z"].max())}


def fit_boundary(z, y, est: EstimatorParams, rng: np.random.Generator, **overrides) -> SigmoidQuantileRegressor:
    """Fit one boundary with the claim's estimator settings (``overrides`` replace some)."""
    opts = {"tau": est.tau, "kappa": est.kappa, "lam": est.lam, "warm_start": est.warm_start, "n_random": est.n_random}
    opts.update(overrides)
    return SigmoidQuantileRegressor(rng=rng, **opts).fit(z, y)


def task_data(frame, p: LeaderboardParams):
    """``{label: (z, y)}`` for every task of the claim."""
    return {label: task_arrays(frame, col) for label, col in p.tasks.items()}


# -- period protocols (temporal_coverage, estimator_comparison) --------------------------------------------

class PeriodParams(BoxParams):
    """Which column dates a model, and the chronological periods (label, first month, last month)."""

    date_col: Label = "Upload To Hub Date"
    periods: list[tuple[Label, Label | None, Label | None]] = Field(
        min_length=2, description="(label, first month 'YYYY-MM' or null, last month or null), in order")
    n_bins: Count = Field(10, ge=1, le=1000)
    min_bin_size: Count = Field(30, ge=1)
    n_jobs: Count = Field(2, ge=1, le=64, description="worker processes for the fits (results do not depend on it)")

    @field_validator("periods")
    @classmethod
    def _periods_in_order(cls, periods):
        validate_periods(periods)  # raises ValueError with the reason
        return periods


def period_frame(tables, params):
    """Leaderboard rows with a compute proxy and a dated period (column ``period``)."""
    frame = leaderboard_frame(tables, params)
    return assign_periods(frame, date_col=params.date_col, periods=params.periods)


def period_summary(tables, params) -> dict:
    """Rows per period and the rolling splits' sizes, for the report's setup."""
    out = leaderboard_summary(tables, params)
    dated = period_frame(tables, params)
    counts = dated["period"].value_counts()
    out["rows_dated"] = int(len(dated))
    out["periods"] = [{"label": label, "first": first, "last": last, "rows": int(counts.get(label, 0))}
                      for label, first, last in params.periods]
    first = next(iter(params.tasks))
    out["splits"] = [{k: v for k, v in s.describe().items() if k != "task"}
                     for s in rolling_splits(dated, {first: params.tasks[first]}, periods=params.periods)]
    return out


def sigmoid_options(params) -> dict:
    return {"warm_start": params.warm_start, "n_random": params.n_random}


def boxed_options(params) -> dict:
    """The sigmoid inside the authors' box. Every start is carried to the final stage: inside the box the
    warm-up stages can lead the best few starts into one basin and miss the box's optimum (measured on the
    GPQA and IFEval pairs of Table 2), which keeping all starts avoids."""
    n_starts = 9 + params.n_random  # the deterministic 3 x 3 grid plus the random starts
    return {"warm_start": params.warm_start, "n_random": params.n_random, "n_keep": n_starts,
            "box": tuple(params.box_check)}


def outside_box(df, params, fitted: list[dict]) -> list[dict]:
    """The free sigmoid fits that the authors' box would not allow.

    For each fitted (task, t) whose slope lies outside ``box_check`` or whose
    midpoint ``-a/beta`` lies outside the training z range: the midpoint, the
    slope and the range.
    """
    lo, hi = params.box_check
    ranges = {(s.task, s.t): (float(s.z_train.min()), float(s.z_train.max()))
              for s in rolling_splits(df, params.tasks, periods=params.periods)}
    out = []
    for f in fitted:
        beta, a = f["params"]["beta"], f["params"]["a"]
        z_lo, z_hi = ranges[(f["task"], f["t"])]
        mid = -a / beta if beta > 0 else None
        if not lo <= beta <= hi or mid is None or not z_lo <= mid <= z_hi:
            out.append({"task": f["task"], "t": f["t"], "beta": beta, "midpoint": mid, "z_min": z_lo, "z_max": z_hi})
    return out


def box_explanation(mine: dict, theirs: dict, names) -> dict:
    """Per value name with a ``boxed.`` counterpart: mine, boxed, authors' and the two gaps.

    ``closed`` is the share of the gap ``mine - authors'`` that the box removes
    (1 = all of it; negative = the box moves away from the authors').
    """
    out = {}
    for name in names:
        b = boxed_name(name)
        if b not in mine or mine.get(name) is None or theirs.get(name) is None:
            continue
        gap, boxed_gap = mine[name] - theirs[name], mine[b] - theirs[name]
        out[name] = {"reimpl": mine[name], "boxed": mine[b], "upstream": theirs[name], "gap": gap,
                     "boxed_gap": boxed_gap, "closed": (1.0 - abs(boxed_gap) / abs(gap)) if gap else None}
    return out
