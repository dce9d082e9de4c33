"""Parameter schemas and helpers shared by the leaderboard protocols."""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np
import pandas as pd
from pydantic import Field, field_validator, model_validator

from ..core.errors import DataError
from ..core.schema import Count, Label, Number
from ..stats.leaderboard import cluster_weights, task_arrays, weight_column, with_compute_column, with_log_compute
from .base import Choice, Protocol, ProtocolParams

#: The sigmoid estimator's choices a leaderboard claim's multiverse may vary (:class:`~harness.protocols.base.Choice`).
ESTIMATOR_CHOICES = {
    "tau": Choice(
        "the quantile level τ of the boundary",
        "estimand",
        "the claim names the quantile level its boundaries estimate; another level is another boundary",
    ),
    "kappa": Choice(
        "the smoothing κ of the pinball loss",
        "estimand",
        "at finite κ the smoothed loss's minimiser is another quantile than τ's, and it moves with κ: another κ is "
        "another boundary",
    ),
    "lam": Choice(
        "the ridge λ on the slope",
        "analysis",
        "a setting of the estimator, a penalty the quantile itself does not name",
    ),
    "warm_start": Choice(
        "the (τ, κ) continuation each fit is started from (κ's schedule), or the target alone",
        "analysis",
        "a setting of the optimiser: the schedule leads to the same objective's minimum",
    ),
    "n_random": Choice(
        "random restarts of each fit beside the deterministic starts",
        "analysis",
        "a setting of the optimiser: more restarts only search the same objective harder",
    ),
}
#: The data choices of the leaderboard protocols: which scores and which rows enter.
DATA_CHOICES = {
    "scores": Choice(
        "raw accuracies or the leaderboard's normalised scores",
        "estimand",
        "the claim's boundaries are of raw accuracies; normalised scores (chance at 0) put each benchmark on "
        "another scale, so their boundary is another quantity",
        kind="data",
    ),
    "weighting": Choice(
        "each row weighing one in the fit, or each base model (its rows 1/n_g each)",
        "analysis",
        "the rows are the same either way; the claim does not say how fine-tunes of one base model are to be weighed",
        kind="data",
    ),
}

#: The authors' optimiser box (slope limits; the midpoint inside the data), measured, never adopted.
Box = tuple[Number, Number]


class TauOverride(ProtocolParams):
    """A control that refits at another quantile level, everything else as claimed."""

    tau: Number = Field(gt=0, lt=1, description="the quantile level the control refits at instead of the claim's `tau`")


#: A compute column's unit, and the factor that turns it into the harness's unit (1e21 FLOPs, so z = log10 x).
COMPUTE_UNITS = {"FLOPs": 1e-21, "1e21 FLOPs": 1.0}


class ComputeColumn(ProtocolParams):
    """A column that holds training compute itself (the Epoch AI tables' ``training_compute_flop``), and its unit."""

    column: Label = Field(description="column of the table holding each row's training compute")
    unit: Literal["FLOPs", "1e21 FLOPs"] = Field(
        description="the column's unit: `FLOPs` (multiplied by 1e-21) or `1e21 FLOPs` (read as is)"
    )

    @property
    def scale(self) -> float:
        return COMPUTE_UNITS[self.unit]


class LeaderboardParams(ProtocolParams):
    """Which table columns give the compute axis and which give the scores.

    The compute axis is either the proxy ``multiplier * tokens * params`` (in units of 1e21 FLOPs when the
    multiplier is 6, tokens in T and parameters in B: the Open LLM Leaderboard's) or ``compute``, a column
    that holds compute itself with its declared unit; ``z = log10(x)`` with ``x`` in units of 1e21 FLOPs.
    """

    table: Label = Field("oll", description="name in `data/lock.yaml` of the input table the rows are read from")
    tokens_col: Label | None = Field(
        "Pretraining tokens (T)",
        description="the proxy's column of pretraining tokens (in T for units of 1e21 FLOPs at multiplier 6); "
        "not with `compute`",
    )
    params_col: Label | None = Field(
        "#Params (B)",
        description="the proxy's column of parameter counts (in B for units of 1e21 FLOPs at multiplier 6); "
        "not with `compute`",
    )
    multiplier: Number = Field(
        6.0, gt=0, description="the factor of the compute proxy `multiplier * tokens * params`; not with `compute`"
    )
    compute: ComputeColumn | None = Field(None, description="a column of compute, instead of the proxy")
    tasks: dict[Label, Label] = Field(min_length=1, description="benchmark label -> score column")
    scale: Literal["fraction", "percent"] = Field(
        "fraction",
        description="the score columns' scale: fractions in [0, 1], or percents in [0, 100], which both arms "
        "divide by 100 before anything else (the authors' code reads a copy of the table so divided)",
    )
    scores: Literal["raw", "normalised"] = Field(
        "raw",
        description="raw accuracies (the named columns), or the leaderboard's normalised scores: the column of the "
        "same name without ' Raw' (random-guess baseline at 0, in percent), divided by 100",
    )
    weighting: Literal["rows", "base_model"] = Field(
        "rows",
        description="the fit's weights: `rows`, each row one; `base_model`, each row 1/n_g with n_g the scored rows "
        "of its base model (`base_model_col`; a row without one is its own), so that each base model weighs one",
    )
    base_model_col: Label = Field("Identified base model", description="column naming a row's base model")

    @model_validator(mode="after")
    def _one_compute_axis(self):
        if self.compute is not None:
            given = [k for k in ("tokens_col", "params_col", "multiplier") if k in self.model_fields_set]
            if given:
                raise ValueError(
                    f"'compute' names a column that holds compute, which replaces the proxy multiplier x tokens x "
                    f"params: drop {', '.join(given)}"
                )
            # the proxy's columns are not read: the record says so (the model is frozen, hence __dict__)
            self.__dict__.update(tokens_col=None, params_col=None)
        elif self.tokens_col is None or self.params_col is None:
            raise ValueError("the compute axis needs tokens_col and params_col (the proxy), or 'compute' (a column)")
        return self

    def compute_columns(self) -> dict[str, str]:
        """``{parameter: column}`` of the columns the compute axis reads."""
        if self.compute is not None:
            return {"compute.column": self.compute.column}
        return {"tokens_col": self.tokens_col, "params_col": self.params_col}


class EstimatorParams(ProtocolParams):
    """The sigmoid estimator's hyperparameters and optimiser settings."""

    tau: Number = Field(gt=0, lt=1, description="the quantile level the sigmoid boundary estimates")
    kappa: Number = Field(
        gt=0,
        le=1e6,
        description="the smoothing of the pinball loss `log(1 + exp(kappa u)) / kappa + (tau - 1) u` (larger: "
        "closer to the sharp check loss)",
    )
    lam: Number = Field(
        ge=0, le=1e6, description="the ridge: `lam * beta**2` added to the mean loss, a penalty on the slope only"
    )
    warm_start: bool = Field(
        True,
        description="solve each fit through the warm-up stages in (tau, kappa), capped at the target, before the "
        "target itself; `false` solves at the target alone (cold start)",
    )
    n_random: Count = Field(
        4, ge=0, le=1000, description="random starts of each fit beside the 9 deterministic (midpoint, slope) starts"
    )

    def loss(self) -> dict[str, float]:
        """The objective's settings: ``{"tau", "kappa", "lam"}``."""
        return {"tau": self.tau, "kappa": self.kappa, "lam": self.lam}

    def estimator(self, **overrides) -> dict:
        """The keyword arguments of :class:`~harness.stats.sigmoid.SigmoidQuantileRegressor` for these settings
        (``overrides`` replace some), built here and nowhere else."""
        return {**self.loss(), "warm_start": self.warm_start, "n_random": self.n_random, **overrides}


class BoxParams(ProtocolParams):
    box_check: Box | None = Field(
        None, description="also refit with the slope in [lo, hi] and the midpoint inside the data (the authors' box)"
    )

    @field_validator("box_check")
    @classmethod
    def _box(cls, box):
        if box is not None and not 0 < box[0] < box[1]:
            raise ValueError(f"box_check must be (beta_min, beta_max) with 0 < beta_min < beta_max, got {list(box)}")
        return box


def normalised_column(column: str) -> str:
    """The leaderboard's normalised score column beside a raw one: ``"BBH Raw"`` -> ``"BBH"``."""
    return column.removesuffix(" Raw")


def _scores(df, p: LeaderboardParams):
    """The score columns as fractions (divided by 100 when the claim says they are percents, ``scale``), or the
    leaderboard's normalised scores in their place (``scores: normalised``)."""
    if p.scale == "fraction" and p.scores == "raw":
        return df
    df = df.copy()
    if p.scale == "percent":
        for col in dict.fromkeys(p.tasks.values()):
            df[col] = pd.to_numeric(df[col], errors="coerce") / 100.0
    if p.scores == "normalised":
        for col in p.tasks.values():  # the normalised score replaces the raw one, on the raw one's scale
            df[col] = pd.to_numeric(df[normalised_column(col)], errors="coerce") / 100.0
    return df


def with_weights(df, p: LeaderboardParams, by: tuple[str, ...] = ()):
    """With ``weighting: base_model``, a weight column per score column (:func:`weight_column`): ``1/n_g`` on each
    scored row, ``n_g`` the scored rows of its base model within the same values of the columns ``by`` (a
    period: each period's fit weighs each base model one), ``NaN`` where the score is missing. The columns
    travel with the rows: a resample's row drawn twice weighs twice."""
    if p.weighting == "rows":
        return df
    df = df.copy()
    for col in dict.fromkeys(p.tasks.values()):
        scored = np.isfinite(pd.to_numeric(df[col], errors="coerce").to_numpy(dtype=float))
        w = np.full(len(df), np.nan)
        keys = zip(*(df.loc[scored, c] for c in (p.base_model_col, *by)))
        w[scored] = cluster_weights([None if pd.isna(k[0]) else k for k in keys])
        df[weight_column(col)] = w
    return df


def leaderboard_frame(tables, p: LeaderboardParams):
    df = tables.frame(p.table)
    needed = [*p.compute_columns().values(), *p.tasks.values()]
    if p.scores == "normalised":
        needed += [normalised_column(c) for c in p.tasks.values()]
    if p.weighting == "base_model":
        needed.append(p.base_model_col)
    missing = [c for c in needed if c not in df.columns]
    if missing:
        raise DataError(
            f"table '{p.table}' ({tables.entry(p.table).path}): columns {missing} named in the claim are not in it"
        )
    df = _scores(df, p)
    if p.compute is not None:
        return with_weights(with_compute_column(df, p.compute.column, p.compute.scale), p)
    return with_weights(with_log_compute(df, p.tokens_col, p.params_col, p.multiplier), p)


def task_data(frame, p: LeaderboardParams):
    """``{label: (z, y)}`` for every task of the claim."""
    return {label: task_arrays(frame, col) for label, col in p.tasks.items()}


def task_weights(frame, p: LeaderboardParams) -> dict:
    """``{label: weights}`` beside :func:`task_data` (its rows, in its order); ``None`` where each row weighs one."""
    out = dict.fromkeys(p.tasks)
    for label, col in p.tasks.items():
        if weight_column(col) in frame.columns:
            y = pd.to_numeric(frame[col], errors="coerce").to_numpy(dtype=float)
            out[label] = frame[weight_column(col)].to_numpy(dtype=float)[np.isfinite(y)]
    return out


def task_rows(frame, p: LeaderboardParams, labels: list[str]) -> dict:
    """The rows a bootstrap resamples (:func:`resampled_task`): ``z``, the score columns of the tasks ``labels`` side
    by side (``Y``), their weight columns (``W``, ``None`` where each row weighs one), and the ``labels``."""
    Y = np.column_stack([frame[p.tasks[k]].to_numpy(dtype=float) for k in labels])
    W = (
        frame[[weight_column(p.tasks[k]) for k in labels]].to_numpy(dtype=float)
        if p.weighting == "base_model"
        else None
    )
    return {"z": frame["z"].to_numpy(dtype=float), "Y": Y, "W": W, "labels": labels}


def resampled_task(z, Y, W, rows, counts, j: int) -> tuple:
    """Task ``j``'s scored rows among ``rows``, a row drawn k times (``counts``) fitted once and counted k times:
    ``(z, y, weights)``."""
    y = Y[rows, j]
    keep = np.isfinite(y)
    return z[rows][keep], y[keep], counts[keep] if W is None else counts[keep] * W[rows, j][keep]


class LeaderboardProtocol(Protocol):
    """A protocol on the leaderboard's rows with a compute axis: the columns it reads and its inputs' summary."""

    #: Parameters naming a column the protocol reads besides the compute axis and the scores.
    COLUMN_PARAMS: tuple[str, ...] = ()

    def columns(self, params: LeaderboardParams):
        cols = {**params.compute_columns(), **{k: getattr(params, k) for k in self.COLUMN_PARAMS}}
        cols.update({f"tasks.{label}": col for label, col in params.tasks.items()})
        return [("table", params.table, cols)]

    def data_summary(self, params: LeaderboardParams, tables) -> dict[str, Any]:
        rows, kept = tables.frame(params.table), leaderboard_frame(tables, params)
        return {
            "oll_rows": int(len(rows)),
            "oll_rows_with_compute": int(len(kept)),
            "all_rows_with_compute": len(kept) == len(rows),
            "z_min": float(kept["z"].min()),
            "z_max": float(kept["z"].max()),
        }


def budget_tail_support(tables, p: LeaderboardParams, fits: dict, name=str) -> dict:
    """What carries each boundary at the budget ``p.eval_x`` (the report's tail table): for every task with its
    fitted sigmoid ``fits[label]`` (``y0, L, a, beta``), the models above the fitted curve, the models at or above
    the budget, and those above the curve there. ``name(label)`` is the row's quantity name."""
    from ..stats.sigmoid import sigmoid_boundary

    rows, z_eval = [], math.log10(p.eval_x)
    for label, (z, y) in task_data(leaderboard_frame(tables, p), p).items():
        q = fits[label]
        above = y > sigmoid_boundary(z, q["y0"], q["L"], q["a"], q["beta"])
        there = z >= z_eval
        rows.append(
            {
                "label": name(label),
                "above": int(above.sum()),
                "n": int(z.size),
                "at_or_above": int(there.sum()),
                "above_there": int((above & there).sum()),
            }
        )
    return {"kind": "budget", "rows": rows}
