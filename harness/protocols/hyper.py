"""Protocol ``hyperparameters``: are (tau, kappa, lambda) what the paper says, and load-bearing?

Three checks, each with its own values:

1. The loss in code is the loss on paper: ``loss.literal_max_gap`` (largest
   gap between the stable loss and the literal formula on a dense residual
   grid) and ``loss.sharp_rel_error`` (the sup-norm gap to the sharp check
   loss against ``log(2)/kappa``, relative), ``loss.sharp_sup_gap``.
2. A source-line audit of the pinned checkout: ``audit.n``, ``audit.n_failed``
   (the lines the claim file cites must say what it expects).
3. One-at-a-time sweeps on the full data: for each setting
   ``sweep.<param>=<value>.{max_dev,coverage_mean,max_shift,beta}`` where
   ``max_dev`` is the largest distance of the six boundaries at ``eval_x``
   from the ``reference`` values (Table 1), ``beta`` the fitted slope of
   ``beta_task``; and the summaries ``claimed.max_dev``,
   ``claimed.coverage_mean``, ``others.min_max_dev`` (the smallest ``max_dev``
   over all non-claimed settings) and ``n_within`` (settings whose
   ``max_dev <= within``).

Control ``tau_override`` refits the claimed setting at another tau and gives
``claimed.coverage_mean``, ``claimed.max_dev`` and ``claimed.mean_boundary``.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from pydantic import Field

from ..audit import audit_source_lines
from ..stats.losscheck import literal_formula_gap, residual_grid, sharp_loss_gap
from ..stats.sweep import fit_setting, hyperparameter_sweep
from .base import Measurement, Protocol, ProtocolParams, register
from .common import EstimatorParams, LeaderboardParams, leaderboard_frame, leaderboard_summary, task_data


class AuditEntry(ProtocolParams):
    file: str = Field(min_length=1)
    line: int = Field(ge=1)
    expect: str = Field(min_length=1)
    constant: str = Field(min_length=1)
    match: Literal["substring", "regex"] = "substring"


class HyperParams(LeaderboardParams, EstimatorParams):
    eval_x: float = Field(1000.0, gt=0)
    reference: dict[str, float] = Field(min_length=1, description="published boundary values at eval_x, by task label")
    within: float = Field(0.001, gt=0)
    tau_grid: list[float] = Field(min_length=1)
    kappa_grid: list[float] = Field(min_length=1)
    lam_grid: list[float] = Field(min_length=1)
    beta_task: str = "BBH"
    loss_grid_points: int = Field(200_001, ge=3)
    source_audit: list[AuditEntry] = Field(default_factory=list)


class TauOverride(ProtocolParams):
    tau: float = Field(gt=0, lt=1)


def key(param: str, value: float) -> str:
    """Value-name prefix of one sweep setting, e.g. ``sweep.lam=0.001``."""
    return f"sweep.{param}={value:g}"


@register
class Hyperparameters(Protocol):
    name = "hyperparameters"
    Params = HyperParams
    controls = {"tau_override": TauOverride}
    requires_inputs = ("oll",)
    template = "hyperparameters.md.j2"
    adapter = "hyperparameters.py"
    needs_checkout = True
    summary = "check the loss against its formula, audit the cited source lines, and sweep each hyperparameter"

    def data_summary(self, params: HyperParams, tables):
        return leaderboard_summary(tables, params)

    def measure(self, params: HyperParams, tables, rng, *, checkout=None, checkout_error=None):
        data = task_data(leaderboard_frame(tables, params), params)
        claimed = {"tau": params.tau, "kappa": params.kappa, "lam": params.lam}
        values, details = {}, {}

        grid = residual_grid(n=params.loss_grid_points)
        lit = literal_formula_gap(params.tau, params.kappa, grid)
        sharp = sharp_loss_gap(params.tau, params.kappa, grid)
        values.update({"loss.literal_max_gap": lit["max_abs_gap"], "loss.sharp_sup_gap": sharp["sup_gap"],
                       "loss.sharp_rel_error": sharp["rel_error"]})
        details["loss"] = {"literal": lit, "sharp": sharp,
                           "sharp_by_kappa": {f"{k:g}": sharp_loss_gap(params.tau, k, grid)["sup_gap"]
                                              for k in params.kappa_grid}}

        if checkout is not None:
            audit = audit_source_lines(checkout, [e.model_dump() for e in params.source_audit])
            values.update({"audit.n": audit["n"], "audit.n_failed": audit["n"] - audit["n_found"]})
            details["audit"] = audit
        else:
            details["audit"] = {"entries": [], "n": len(params.source_audit), "error": checkout_error}

        sweep = hyperparameter_sweep(
            data, rng=rng, reference=params.reference, claimed=claimed,
            grids={"tau": params.tau_grid, "kappa": params.kappa_grid, "lam": params.lam_grid},
            z_eval=math.log10(params.eval_x), beta_task=params.beta_task,
            estimator_options={"n_random": params.n_random}, starts="warm" if params.warm_start else "cold")
        values.update(sweep_values(sweep, claimed, params.within))
        details["sweep"] = sweep
        return Measurement(values, details)

    def control(self, kind, cparams: TauOverride, params: HyperParams, tables, rng, baseline):
        data = task_data(leaderboard_frame(tables, params), params)
        rngs = [np.random.default_rng(s) for s in rng.bit_generator.seed_seq.spawn(len(data))]
        fits = fit_setting(data, tau=cparams.tau, kappa=params.kappa, lam=params.lam, rngs=rngs,
                           z_eval=math.log10(params.eval_x), estimator_options={"n_random": params.n_random},
                           starts="warm" if params.warm_start else "cold")
        return Measurement(control_values(fits, params.reference), {"fits": fits})


def control_values(fits: dict, reference: dict) -> dict:
    """Summaries of one refit: coverage, distance from the reference, mean boundary."""
    bnd = {k: f["boundary"] for k, f in fits.items()}
    return {"claimed.coverage_mean": float(np.mean([f["coverage"] for f in fits.values()])),
            "claimed.max_dev": max(abs(bnd[k] - v) for k, v in reference.items()),
            "claimed.mean_boundary": float(np.mean(list(bnd.values())))}


def sweep_values(sweep: dict, claimed: dict, within: float) -> dict:
    """Flatten a sweep (as :func:`hyperparameter_sweep` returns it) into named values."""
    values = {}
    c = sweep["claimed"]
    values["claimed.max_dev"] = c["max_dev_reference"]
    values["claimed.coverage_mean"] = c["coverage_mean"]
    values["claimed.mean_boundary"] = float(np.mean(list(c["boundary"].values())))
    others, n_within = [], int(c["max_dev_reference"] <= within)
    for param, rows in sweep["sweeps"].items():
        for row in rows:
            k = key(param, row["value"])
            values[f"{k}.max_dev"] = row["max_dev_reference"]
            values[f"{k}.coverage_mean"] = row["coverage_mean"]
            values[f"{k}.max_shift"] = row["max_shift_vs_claimed"]
            values[f"{k}.beta"] = row["beta_of_task"]
            if row["value"] != claimed[param]:
                others.append(row["max_dev_reference"])
                n_within += int(row["max_dev_reference"] <= within)
    values["others.min_max_dev"] = min(others) if others else math.nan
    values["n_within"] = n_within
    return values
