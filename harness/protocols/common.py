"""Parameter schemas and helpers shared by the leaderboard protocols."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from pydantic import Field

from ..stats.leaderboard import task_arrays, with_log_compute
from ..stats.sigmoid import SigmoidQuantileRegressor
from .base import ProtocolParams

__all__ = ["LeaderboardParams", "EstimatorParams", "leaderboard_frame", "fit_boundary", "leaderboard_summary", "task_data"]


class LeaderboardParams(ProtocolParams):
    """Which table columns give the compute proxy and which give the scores."""

    table: str = "oll"
    tokens_col: str = "Pretraining tokens (T)"
    params_col: str = "#Params (B)"
    multiplier: float = Field(6.0, gt=0)
    tasks: dict[str, str] = Field(min_length=1, description="benchmark label -> score column")


class EstimatorParams(ProtocolParams):
    """The sigmoid estimator's hyperparameters and optimiser settings."""

    tau: float = Field(0.98, gt=0, lt=1)
    kappa: float = Field(50.0, gt=0)
    lam: float = Field(1e-3, ge=0)
    warm_start: bool = True
    n_random: int = Field(4, ge=0)


def leaderboard_frame(tables, p: LeaderboardParams):
    df = tables.frame(p.table)
    missing = [c for c in [p.tokens_col, p.params_col, *p.tasks.values()] if c not in df.columns]
    if missing:
        from ..errors import DataError

        raise DataError(f"{tables.root / tables.entry(p.table).path}: columns {missing} named in the claim are not in the table")
    return with_log_compute(df, p.tokens_col, p.params_col, p.multiplier)


def leaderboard_summary(tables, p: LeaderboardParams) -> dict[str, Any]:
    df = tables.frame(p.table)
    kept = leaderboard_frame(tables, p)
    return {"oll_rows": int(len(df)), "oll_rows_with_compute": int(len(kept)),
            "z_min": float(kept["z"].min()), "z_max": float(kept["z"].max())}


def fit_boundary(z, y, est: EstimatorParams, rng: np.random.Generator, **overrides) -> tuple[SigmoidQuantileRegressor, float]:
    """Fit one boundary; return the fitted estimator and the seconds it took."""
    opts = {"tau": est.tau, "kappa": est.kappa, "lam": est.lam, "warm_start": est.warm_start, "n_random": est.n_random}
    opts.update(overrides)
    t0 = time.perf_counter()
    model = SigmoidQuantileRegressor(rng=rng, **opts).fit(z, y)
    return model, time.perf_counter() - t0


def task_data(frame, p: LeaderboardParams):
    """``{label: (z, y)}`` for every task of the claim."""
    return {label: task_arrays(frame, col) for label, col in p.tasks.items()}
