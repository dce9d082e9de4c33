"""Protocol ``boundary_at_budget``: each benchmark's boundary at one compute budget (Table 1).

Fit the sigmoid boundary of every task on all rows with a compute proxy and
evaluate it at ``x = eval_x`` (``z = log10(eval_x)``; x = 1000 is 1e24 FLOPs).
Robustness: refit from the other start (cold if the claim warms up, warm if
not) and report the largest shift. ``box_check``: refit inside the authors'
optimiser box, to measure what that box changes. Control ``tau_override``:
refit at another quantile level.
"""

from __future__ import annotations

import math
from functools import partial

import numpy as np
from pydantic import Field

from ...fanout import Mapper
from ...schema import Number
from ...stats.sigmoid import SigmoidQuantileRegressor, sigmoid_objective
from ..base import Context, Measurement, Protocol, finding
from ..leaderboard import (
    BoxParams,
    EstimatorParams,
    LeaderboardParams,
    TauOverride,
    leaderboard_columns,
    leaderboard_frame,
    leaderboard_summary,
    task_data,
)
from . import CARD
from . import quantities as Q

__all__ = ["BoundaryParams", "BoundaryAtBudget", "THIN_TAIL_SHARE", "OBJECTIVE_GAP"]

#: The evaluation point rests on a thin upper tail when fewer than this share of the models lie at or above it.
THIN_TAIL_SHARE = 0.2
#: Two optima whose objectives differ by less than this are the same optimum for the report (the optimisers'
#: own tolerances are about 1e-9 on these objectives).
OBJECTIVE_GAP = 1e-7


class BoundaryParams(LeaderboardParams, EstimatorParams, BoxParams):
    eval_x: Number = Field(gt=0, description="compute budget in units of 1e21 FLOPs")
    robustness_cold_start: bool = True


def _fit_task(job) -> tuple[float, dict]:
    """One task's boundary: ``(its value at z_eval, its fit)``; a task of the fan-out layer."""
    z, y, options, rng, z_eval = job
    model = SigmoidQuantileRegressor(rng=rng, **options).fit(z, y)
    fit = {
        "params": model.params_,
        "objective": model.objective_,
        "converged": model.converged_,
        "coverage": float(np.mean(y <= model.predict(z))),
        "n": int(z.size),
    }
    return float(model.predict(z_eval)), fit


def _fit_all(data, params, rng, z_eval, **overrides):
    """Every task's boundary, each from its own generator spawned from ``rng`` (in task order)."""
    options = params.estimator(**overrides)
    jobs = [(z, y, options, g, z_eval) for (z, y), g in zip(data.values(), rng.spawn(len(data)))]
    out = Mapper("fits of the tasks")(_fit_task, jobs)
    return {k: v for k, (v, _) in zip(data, out)}, {k: f for k, (_, f) in zip(data, out)}


def _resample_boundaries(indices, rng, *, z, Y, labels, inits, options, z_eval) -> dict:
    """One bootstrap resample: every task's boundary refitted on the resampled rows, from the full-sample
    optimum, and read off at ``z_eval``."""
    from ...stats.sigmoid import SigmoidQuantileRegressor

    zi, out = z[indices], {}
    for j, label in enumerate(labels):
        yi = Y[indices, j]
        keep = np.isfinite(yi)
        model = SigmoidQuantileRegressor(rng=rng, **options).fit(zi[keep], yi[keep], init=inits[label])
        out[Q.boundary(label)] = float(model.predict(z_eval))
    return out


def _values(cells: dict, fits: dict, prefix: str = "") -> dict:
    out = {prefix + Q.boundary(k): v for k, v in cells.items()}
    out.update({prefix + Q.coverage(k): f["coverage"] for k, f in fits.items()})
    return out


class BoundaryAtBudget(Protocol):
    card = CARD
    Params = BoundaryParams
    controls = {"tau_override": TauOverride}
    FINDINGS = {
        "result": ("measured",),
        "eval_support": ("inside", "upper_tail", "beyond", "below"),
        "start_robustness": ("not_run", "measured"),
        "control_shifts": ("measured",),
        "explanation": ("explained",),
    }

    def columns(self, params: BoundaryParams):
        return leaderboard_columns(params)

    def data_summary(self, params: BoundaryParams, tables):
        return leaderboard_summary(tables, params)

    def measure(self, params: BoundaryParams, tables, rng):
        data = task_data(leaderboard_frame(tables, params), params)
        z_eval = math.log10(params.eval_x)
        cells, fits = _fit_all(data, params, rng, z_eval)
        values = _values(cells, fits)
        z_all = next(iter(data.values()))[0]
        details = {"fits": fits, "z_eval": z_eval, "n_at_or_above_eval": int(np.sum(z_all >= z_eval))}
        if params.robustness_cold_start:
            alt, alt_fits = _fit_all(data, params, rng, z_eval, warm_start=not params.warm_start)
            values.update({Q.alt_start_boundary(k): v for k, v in alt.items()})
            values["alt_start.max_shift"] = max(abs(alt[k] - cells[k]) for k in cells)
            details["alt_start_fits"] = alt_fits
        if params.box_check is not None:
            boxed, boxed_fits = _fit_all(data, params, rng, z_eval, box=tuple(params.box_check))
            values.update({Q.boxed(Q.boundary(k)): v for k, v in boxed.items()})
            details["boxed_fits"] = boxed_fits
        return Measurement(values, details)

    def control(self, kind, cparams: TauOverride, params: BoundaryParams, tables, rng, baseline):
        data = task_data(leaderboard_frame(tables, params), params)
        cells, fits = _fit_all(data, params, rng, math.log10(params.eval_x), tau=cparams.tau)
        return Measurement(_values(cells, fits), {"fits": fits})

    def resampling(self, params: BoundaryParams, tables, reimpl, *, cluster_col: str):
        from ..base import Resampling

        frame = leaderboard_frame(tables, params)
        labels = list(params.tasks)
        Y = np.column_stack([frame[params.tasks[k]].to_numpy(dtype=float) for k in labels])
        options = params.estimator(n_random=0)  # each resample starts from the full-sample optimum
        stat = partial(
            _resample_boundaries,
            z=frame["z"].to_numpy(dtype=float),
            Y=Y,
            labels=labels,
            inits={k: f["params"] for k, f in reimpl.details["fits"].items()},
            options=options,
            z_eval=math.log10(params.eval_x),
        )
        return Resampling(
            len(frame),
            frame[cluster_col].to_numpy(dtype=object),
            stat,
            "the leaderboard rows with a compute proxy",
        )

    # -- findings ---------------------------------------------------------------------------------------

    def findings(self, ctx: Context) -> dict:
        out = {
            "result": self._result(ctx),
            "eval_support": self._eval_support(ctx),
            "start_robustness": self._start_robustness(ctx),
        }
        if ctx.controls:
            out["control_shifts"] = self._control_shifts(ctx)
        if ctx.upstream.ok:
            out["explanation"] = self._explanation(ctx)
        return out

    def _paper(self, ctx: Context) -> dict:
        """Paper value (and its text) of each task's boundary, where a target gives one."""
        out = {}
        for t in ctx.targets:
            if t.relation == "~" and t.quantity.startswith("boundary."):
                out[t.quantity] = t
        return out

    def _result(self, ctx: Context):
        p, mine, theirs = ctx.params, ctx.reimpl.values, ctx.upstream.values
        paper = self._paper(ctx)
        tau_ctl = next((c for c in ctx.controls if c.control == "tau_override"), None)
        ctl_values = ctx.reimpl.controls[tau_ctl.id].values if tau_ctl else {}
        rows = []
        for label in p.tasks:
            name = Q.boundary(label)
            t = paper.get(name)
            cv = ctl_values.get(name)
            rows.append(
                {
                    "label": label,
                    "reimpl": mine.get(name),
                    "upstream": theirs.get(name),
                    "paper_text": t.paper_text if t else None,
                    "delta": t.reimpl.delta if t else None,
                    "control": cv,
                    "control_minus_paper": (cv - t.paper) if (t and cv is not None) else None,
                }
            )
        deltas = [abs(t.reimpl.delta) for t in paper.values() if t.reimpl.delta is not None]
        deltas_up = [abs(t.upstream.delta) for t in paper.values() if t.upstream.delta is not None]
        tolerances = sorted({t.tolerance_text for t in paper.values()})
        return finding(
            "measured",
            budget=Q.budget_text(p.eval_x),
            eval_x=p.eval_x,
            z_eval=math.log10(p.eval_x),
            n_models=ctx.data["oll_rows_with_compute"],
            n_tasks=len(p.tasks),
            rows=rows,
            n_paper=len(paper),
            largest_reimpl=max(deltas) if deltas else None,
            largest_upstream=max(deltas_up) if deltas_up else None,
            tolerances=tolerances,
            n_holding_reimpl=sum(t.reimpl.holds is True for t in paper.values()),
            n_holding_upstream=sum(t.upstream.holds is True for t in paper.values()),
            control_id=tau_ctl.id if tau_ctl else None,
            control_tau=tau_ctl.params["tau"] if tau_ctl else None,
        )

    def _eval_support(self, ctx: Context):
        z_eval, d = math.log10(ctx.params.eval_x), ctx.data
        n_above = ctx.reimpl.details["n_at_or_above_eval"]
        n = d["oll_rows_with_compute"]
        facts = {
            "z_eval": z_eval,
            "z_min": d["z_min"],
            "z_max": d["z_max"],
            "n_at_or_above": n_above,
            "n_models": n,
            "share": n_above / n,
            "thin_share": THIN_TAIL_SHARE,
        }
        if z_eval > d["z_max"]:
            return finding("beyond", **facts)
        if z_eval < d["z_min"]:
            return finding("below", **facts)
        return finding("upper_tail" if n_above / n < THIN_TAIL_SHARE else "inside", **facts)

    def _start_robustness(self, ctx: Context):
        p = ctx.params
        if not p.robustness_cold_start:
            return finding("not_run")
        tols = [t.tolerance for t in self._paper(ctx).values()]
        tol = min(tols) if tols else None
        mine = ctx.reimpl.values["alt_start.max_shift"]
        theirs = ctx.upstream.values.get("alt_start.max_shift") if ctx.upstream.ok else None
        tol_text = next((t.tolerance_text for t in self._paper(ctx).values() if t.tolerance == tol), None)
        return finding(
            "measured",
            alternative="cold" if p.warm_start else "warm",
            reimpl_shift=mine,
            upstream_shift=theirs,
            tolerance=tol,
            tolerance_text=tol_text,
            reimpl_within=None if tol is None else mine <= tol,
            upstream_within=None if (tol is None or theirs is None) else theirs <= tol,
        )

    def _control_shifts(self, ctx: Context):
        paper = self._paper(ctx)
        rows = []
        for c in ctx.controls:
            vals = ctx.reimpl.controls[c.id].values
            shifts = [abs(vals[name] - t.paper) for name, t in paper.items() if vals.get(name) is not None]
            rows.append(
                {
                    "id": c.id,
                    "tau": c.params.get("tau"),
                    "n": len(shifts),
                    "mean": float(np.mean(shifts)) if shifts else None,
                    "min": min(shifts, default=None),
                    "max": max(shifts, default=None),
                }
            )
        return finding("measured", controls=rows)

    def _explanation(self, ctx: Context):
        """Both arms' optima scored on one objective, and the re-implementation refitted in the authors' box."""
        p = ctx.params
        data = task_data(leaderboard_frame(ctx.tables, p), p)
        kw = p.loss()
        mine_fits, their_fits = ctx.reimpl.details["fits"], ctx.upstream.details.get("fits", {})
        boxed_fits = ctx.reimpl.details.get("boxed_fits", {})
        rows = []
        for label, (z, y) in data.items():
            theirs = their_fits.get(label, {}).get("params")
            if not theirs:
                continue
            order = ("y0", "L", "a", "beta")
            obj_mine = sigmoid_objective([mine_fits[label]["params"][k] for k in order], z, y, **kw)
            obj_theirs = sigmoid_objective([theirs[k] for k in order], z, y, **kw)
            fit = their_fits[label]
            active = fit.get("bounds_active", [])
            gaps = {k: g for k, g in fit.get("bound_gaps", {}).items() if k not in active}
            near = min(gaps, key=gaps.get) if gaps else None
            name = Q.boundary(label)
            mine_v, their_v = ctx.reimpl.values[name], ctx.upstream.values[name]
            boxed_v = ctx.reimpl.values.get(Q.boxed(name))
            obj_boxed = boxed_fits[label]["objective"] if label in boxed_fits else None
            rows.append(
                {
                    "label": label,
                    "reimpl": mine_v,
                    "upstream": their_v,
                    "objective_reimpl": obj_mine,
                    "objective_upstream": obj_theirs,
                    "objective_gap": obj_theirs - obj_mine,
                    "bounds_active": active,
                    "nearest_inactive_bound": near,
                    "nearest_inactive_gap": gaps.get(near),
                    "reimpl_boxed": boxed_v,
                    "objective_reimpl_boxed": obj_boxed,
                    "authors_higher": obj_theirs - obj_mine > OBJECTIVE_GAP,
                    "box_closes": boxed_v is not None and abs(boxed_v - their_v) < abs(mine_v - their_v) / 2,
                    "optimiser_short": obj_boxed is not None and obj_theirs - obj_boxed > OBJECTIVE_GAP,
                    "short_by": (obj_theirs - obj_boxed) if obj_boxed is not None else None,
                }
            )
        return finding(
            "explained", rows=rows, box=list(p.box_check) if p.box_check else None, objective_gap=OBJECTIVE_GAP
        )

    # -- figures ----------------------------------------------------------------------------------------

    def plots(self, ctx: Context) -> dict:
        """Each benchmark's models as a density on a fixed grid (not the points), both arms' boundaries and the
        tau_override control's on one z grid, and the values at the evaluation point.

        ``density``: ``{"x": [z_lo, z_hi, nz], "y": [lo, hi, ny], "n", "inside", "rows"}``, ``rows[j]`` the
        counts of the ``j``-th score bin from the bottom, left to right, as space-separated integers without
        trailing zeros (a list of numbers would take a line each in the record); the curves are on
        ``numpy.linspace(*z_grid)``, rounded to 5 decimals. (The helpers are local so that this module does
        not import :mod:`harness.figures`: a change of drawing then redraws, it does not rerun.)
        """
        from ...stats.sigmoid import sigmoid_boundary

        p = ctx.params
        data = task_data(leaderboard_frame(ctx.tables, p), p)
        z_eval = math.log10(p.eval_x)
        paper = self._paper(ctx)
        ctl = next((c for c in ctx.controls if c.control == "tau_override" and c.reimpl.ran), None)
        z_all = np.concatenate([z for z, _ in data.values()])
        y_all = np.concatenate([y for _, y in data.values()])
        # the density grid: 0.1 in z, 0.02 in score; the curves on 81 points over the data and the budget
        z_lo = math.floor(min(z_all.min(), z_eval) * 10) / 10
        z_hi = math.ceil(max(z_all.max(), z_eval) * 10) / 10
        y_lo, y_hi = min(0.0, math.floor(y_all.min())), max(1.0, math.ceil(y_all.max()))
        bins = (int(round((z_hi - z_lo) / 0.1)), int(round((y_hi - y_lo) / 0.02)))
        zs = np.linspace(z_lo, z_hi, 81)

        def density(z, y):
            counts, _, _ = np.histogram2d(z, y, bins=bins, range=[[z_lo, z_hi], [y_lo, y_hi]])
            rows = []
            for row in counts.T.astype(int):
                nz = np.flatnonzero(row)
                rows.append(" ".join(str(c) for c in row[: nz[-1] + 1]) if nz.size else "")
            return {
                "x": [z_lo, z_hi, bins[0]],
                "y": [y_lo, y_hi, bins[1]],
                "n": int(z.size),
                "inside": int(counts.sum()),
                "rows": rows,
            }

        def curve(fit):
            if not fit or "params" not in fit:
                return None
            q = fit["params"]
            return [round(float(c), 5) for c in sigmoid_boundary(zs, q["y0"], q["L"], q["a"], q["beta"])]

        fits = {
            "reimpl": ctx.reimpl.details["fits"],
            "upstream": ctx.upstream.details.get("fits", {}) if ctx.upstream.ok else {},
            "control": ctx.reimpl.controls[ctl.id].details["fits"] if ctl else {},
        }
        ctl_values = ctx.reimpl.controls[ctl.id].values if ctl else {}
        tasks = {}
        for label, (z, y) in data.items():
            name, t = Q.boundary(label), paper.get(Q.boundary(label))
            tasks[label] = {
                "density": density(z, y),
                "curves": {arm: curve(f.get(label)) for arm, f in fits.items()},
                "at_eval": {
                    "reimpl": ctx.reimpl.values.get(name),
                    "upstream": ctx.upstream.values.get(name) if ctx.upstream.ok else None,
                    "control": ctl_values.get(name),
                    "paper": t.paper if t else None,
                    "paper_text": t.paper_text if t else None,
                },
            }
        return {
            "z_eval": z_eval,
            "budget": Q.budget_text(p.eval_x),
            "tau": p.tau,
            "z_grid": [z_lo, z_hi, 81],
            "control": {"id": ctl.id, "tau": ctl.params["tau"]} if ctl else None,
            "tasks": tasks,
        }


PROTOCOL = BoundaryAtBudget()
