"""Protocol ``boundary_at_budget``: each benchmark's boundary at one compute budget.

Fit the sigmoid boundary of every task on all rows with a compute proxy and
evaluate it at ``x = eval_x`` (``z = log10(eval_x)``; x = 1000 is 1e24 FLOPs).
Robustness: refit cold, directly at the final (tau, kappa), and report the
largest shift. Control ``tau_override``: refit at another quantile level.
"""

from __future__ import annotations

import math

import numpy as np
from pydantic import Field

from ..stats.sigmoid import sigmoid_objective
from .base import Measurement, Protocol, ProtocolParams, register
from .common import EstimatorParams, LeaderboardParams, fit_boundary, leaderboard_frame, leaderboard_summary, task_data


class BoundaryParams(LeaderboardParams, EstimatorParams):
    eval_x: float = Field(1000.0, gt=0, description="compute budget in units of 1e21 FLOPs")
    robustness_cold_start: bool = True
    box_check: tuple[float, float] | None = Field(
        None, description="refit also with the slope in [lo, hi] and the midpoint inside the data (the authors' box)")


class TauOverride(ProtocolParams):
    tau: float = Field(gt=0, lt=1)


def _fit_all(data, est, rng, z_eval, **overrides):
    values, fits = {}, {}
    for label, (z, y) in data.items():
        model, secs = fit_boundary(z, y, est, rng, **overrides)
        values[label] = float(model.predict(z_eval))
        fits[label] = {"params": model.params_, "objective": model.objective_, "n_iter": model.n_iter_,
                       "converged": model.converged_, "seconds": secs,
                       "coverage": float(np.mean(y <= model.predict(z))), "n": int(z.size)}
    return values, fits


@register
class BoundaryAtBudget(Protocol):
    name = "boundary_at_budget"
    Params = BoundaryParams
    controls = {"tau_override": TauOverride}
    requires_inputs = ("oll",)
    template = "boundary_at_budget.md.j2"
    adapter = "boundary_at_budget.py"
    summary = "fit each benchmark's sigmoid boundary on all rows and evaluate it at one compute budget"

    def data_summary(self, params: BoundaryParams, tables):
        return leaderboard_summary(tables, params)

    def measure(self, params: BoundaryParams, tables, rng):
        data = task_data(leaderboard_frame(tables, params), params)
        z_eval = math.log10(params.eval_x)
        warm, fits = _fit_all(data, params, rng, z_eval)
        values = {f"boundary.{k}": v for k, v in warm.items()}
        values.update({f"coverage.{k}": f["coverage"] for k, f in fits.items()})
        z_all = next(iter(data.values()))[0]
        details = {"fits": fits, "z_eval": z_eval, "warm_start": params.warm_start,
                   "n_beyond_eval": int(np.sum(z_all >= z_eval))}
        if params.robustness_cold_start:
            cold, cold_fits = _fit_all(data, params, rng, z_eval, warm_start=not params.warm_start)
            values.update({f"alt_start.boundary.{k}": v for k, v in cold.items()})
            values["alt_start.max_shift"] = max(abs(cold[k] - warm[k]) for k in warm)
            details["alt_start_fits"] = cold_fits
        if params.box_check is not None:
            boxed, boxed_fits = _fit_all(data, params, rng, z_eval, box=tuple(params.box_check))
            values.update({f"boxed.boundary.{k}": v for k, v in boxed.items()})
            details["boxed_fits"] = boxed_fits
        return Measurement(values, details)

    def control(self, kind, cparams: TauOverride, params: BoundaryParams, tables, rng, baseline):
        data = task_data(leaderboard_frame(tables, params), params)
        vals, fits = _fit_all(data, params, rng, math.log10(params.eval_x), tau=cparams.tau)
        values = {f"boundary.{k}": v for k, v in vals.items()}
        values.update({f"coverage.{k}": f["coverage"] for k, f in fits.items()})
        return Measurement(values, {"fits": fits})

    def explain(self, params: BoundaryParams, tables, reimpl: Measurement, upstream: Measurement) -> dict:
        """Both arms' optima scored on one objective, to say why their values differ."""
        data = task_data(leaderboard_frame(tables, params), params)
        out = {}
        for label, (z, y) in data.items():
            theirs = upstream.details.get("fits", {}).get(label, {}).get("params")
            if not theirs:
                continue
            kw = {"tau": params.tau, "kappa": params.kappa, "lam": params.lam}
            mine_obj = sigmoid_objective([reimpl.details["fits"][label]["params"][k] for k in ("y0", "L", "a", "beta")], z, y, **kw)
            their_obj = sigmoid_objective([theirs[k] for k in ("y0", "L", "a", "beta")], z, y, **kw)
            fit = upstream.details["fits"][label]
            active = fit.get("bounds_active", [])
            gaps = {k: g for k, g in fit.get("bound_gaps", {}).items() if k not in active}
            near = min(gaps, key=gaps.get) if gaps else None
            boxed = reimpl.values.get(f"boxed.boundary.{label}")
            out[label] = {"objective_reimpl": mine_obj, "objective_upstream": their_obj,
                          "reimpl": reimpl.values[f"boundary.{label}"], "upstream": upstream.values[f"boundary.{label}"],
                          "reimpl_boxed": boxed,
                          "objective_reimpl_boxed": reimpl.details["boxed_fits"][label]["objective"] if boxed is not None else None,
                          "objective_gap": their_obj - mine_obj, "upstream_bounds_active": active,
                          "nearest_inactive_bound": near, "nearest_inactive_gap": gaps.get(near)}
        return out
