"""Parameter schemas and helpers shared by the leaderboard protocols."""

from __future__ import annotations

from typing import Any

import numpy as np
from pydantic import Field, field_validator

from ..errors import DataError
from ..schema import Count, Label, Number
from ..stats.leaderboard import task_arrays, with_log_compute
from ..stats.sigmoid import SigmoidQuantileRegressor
from .base import ProtocolParams

__all__ = [
    "TauOverride",
    "LeaderboardParams",
    "EstimatorParams",
    "leaderboard_frame",
    "fit_boundary",
    "leaderboard_summary",
    "task_data",
    "leaderboard_columns",
    "Box",
    "BoxParams",
    "check_box",
]

#: The authors' optimiser box (slope limits; the midpoint inside the data), measured, never adopted.
Box = tuple[Number, Number]


class TauOverride(ProtocolParams):
    """A control that refits at another quantile level, everything else as claimed."""

    tau: Number = Field(gt=0, lt=1)


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
        None, description="also refit with the slope in [lo, hi] and the midpoint inside the data (the authors' box)"
    )

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
        raise DataError(
            f"table '{p.table}' ({tables.entry(p.table).path}): columns {missing} named in the claim are not in it"
        )
    return with_log_compute(df, p.tokens_col, p.params_col, p.multiplier)


def leaderboard_summary(tables, p: LeaderboardParams) -> dict[str, Any]:
    df = tables.frame(p.table)
    kept = leaderboard_frame(tables, p)
    return {
        "oll_rows": int(len(df)),
        "oll_rows_with_compute": int(len(kept)),
        "z_min": float(kept["z"].min()),
        "z_max": float(kept["z"].max()),
    }


def fit_boundary(z, y, est: EstimatorParams, rng: np.random.Generator, **overrides) -> SigmoidQuantileRegressor:
    """Fit one boundary with the claim's estimator settings (``overrides`` replace some)."""
    opts = {"tau": est.tau, "kappa": est.kappa, "lam": est.lam, "warm_start": est.warm_start, "n_random": est.n_random}
    opts.update(overrides)
    return SigmoidQuantileRegressor(rng=rng, **opts).fit(z, y)


def task_data(frame, p: LeaderboardParams):
    """``{label: (z, y)}`` for every task of the claim."""
    return {label: task_arrays(frame, col) for label, col in p.tasks.items()}
