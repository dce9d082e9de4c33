"""Protocol ``boundary_at_budget``: each benchmark's boundary at one compute budget (Table 1)."""

from __future__ import annotations

import math

import numpy as np
from pydantic import Field

from ...core.schema import Number
from ...parallel.fanout import Mapper
from ...stats.sigmoid import SigmoidQuantileRegressor, fit_many, sigmoid_boundary, sigmoid_objective
from ..base import Choice, Context, Measurement, Resampling
from ..leaderboard import (
    DATA_CHOICES,
    ESTIMATOR_CHOICES,
    BoxParams,
    EstimatorParams,
    LeaderboardParams,
    LeaderboardProtocol,
    TauOverride,
    budget_tail_support,
    leaderboard_frame,
    resampled_task,
    task_data,
    task_rows,
    task_weights,
)
from . import CARD
from . import quantities as Q

#: Two optima whose objectives differ by less than this are the same optimum (the optimisers' own tolerances are
#: about 1e-9 on these objectives).
OBJECTIVE_GAP = 1e-7
#: The authors' continuation in kappa (skill_frontier/core/sigmoid_quantile_optimizer.py, lines 201-202 at the
#: pinned commit): ``[10, 25, kappa_final]``, keeping a stage only where kappa rises, so that a kappa at or
#: below 25 is never reached and their last stage runs at 25. In tau every stage is kept up to tau itself.
AUTHORS_KAPPA_STAGES = (10.0, 25.0)
#: The settings the authors' code path may read otherwise than the claim (their arm's ``own_setting``).
_OWN = ("tau", "kappa", "lam")


def _vector(q: dict) -> list[float]:
    """A fit's parameters in the order the objective takes them."""
    return [q[k] for k in ("y0", "L", "a", "beta")]


def _closer(value: float | None, target: float, gap: float) -> bool:
    """Whether ``value`` lies more than half the way from a value ``gap`` away from ``target`` to it."""
    return value is not None and abs(value - target) < gap / 2


def _authors_last_stage(fit: dict, p) -> tuple[float, float]:
    """The (tau, kappa) of the authors' last stage: from their trace where their arm reports it, else from their
    schedule (:data:`AUTHORS_KAPPA_STAGES`) when they warm up, else the claim's own setting."""
    stages = fit.get("stages")
    if stages:
        return float(stages[-1][0]), float(stages[-1][1])
    if not fit.get("continuation", p.warm_start):
        return p.tau, p.kappa
    kappas = [AUTHORS_KAPPA_STAGES[0]]
    for k in [*AUTHORS_KAPPA_STAGES[1:], p.kappa]:
        if k > kappas[-1] + 1e-12:
            kappas.append(k)
    return p.tau, kappas[-1]


class BoundaryParams(LeaderboardParams, EstimatorParams, BoxParams):
    eval_x: Number = Field(gt=0, description="compute budget in units of 1e21 FLOPs")
    robustness_cold_start: bool = Field(
        True,
        description="also refit every task from the other start (cold when `warm_start`, warm when not) and report "
        "the largest shift of a boundary",
    )
    kappa_check: Number | None = Field(
        None,
        gt=0,
        le=1e6,
        description="also refit every boundary at this κ, everything else as claimed: a large κ is nearly the sharp "
        "check loss, whose minimiser leaves about 1 - tau of the models above it",
    )


def _fit_task(job) -> tuple[float, dict]:
    """One task's boundary: ``(its value at z_eval, its fit)``; a task of the fan-out layer."""
    z, y, w, options, rng, z_eval = job
    model = SigmoidQuantileRegressor(rng=rng, **options).fit(z, y, weights=w)
    fit = {
        "params": model.params_,
        "objective": model.objective_,
        "converged": model.converged_,
        "coverage": float(np.mean(y <= model.predict(z))),
        "n": int(z.size),
    }
    return float(model.predict(z_eval)), fit


def _fit_all(data, weights, params, rng, z_eval, **overrides):
    """Every task's boundary, each from its own generator spawned from ``rng`` (in task order)."""
    options = params.estimator(**overrides)
    jobs = [(z, y, weights[k], options, g, z_eval) for ((k, (z, y)), g) in zip(data.items(), rng.spawn(len(data)))]
    out = Mapper("fits of the tasks")(_fit_task, jobs)
    return {k: v for k, (v, _) in zip(data, out)}, {k: f for k, (_, f) in zip(data, out)}


def _boundary_fits(indices, rng, *, z, Y, W, labels, inits, options, z_eval) -> tuple[dict, dict]:
    """Every task's boundary refitted on the rows ``indices`` from ``inits`` and read off at ``z_eval``, and
    the fits' parameters (``inits`` in kind). ``W``: the rows' weights (``None``: one each)."""
    rows, counts = np.unique(indices, return_counts=True)
    tasks = [resampled_task(z, Y, W, rows, counts, j) for j in range(len(labels))]
    models = [SigmoidQuantileRegressor(rng=rng, **options) for _ in labels]
    models = fit_many(models, tasks, [inits[k] for k in labels])
    out = {Q.boundary(k): float(m.predict(z_eval)) for k, m in zip(labels, models)}
    return out, {k: m.params_ for k, m in zip(labels, models)}


def _boundary_values(cells: dict, fits: dict, prefix: str = "") -> dict:
    """The flat value names of each task's boundary and its fit's coverage (``prefix``: the boxed fits')."""
    out = {prefix + Q.boundary(k): v for k, v in cells.items()}
    out.update({prefix + Q.coverage(k): f["coverage"] for k, f in fits.items()})
    return out


class BoundaryAtBudget(LeaderboardProtocol):
    card = CARD
    Params = BoundaryParams
    controls = {"tau_override": TauOverride}
    CHOICES = {
        **ESTIMATOR_CHOICES,
        **DATA_CHOICES,
        "eval_x": Choice(
            "the compute budget the boundary is read at",
            "estimand",
            "the claim names the budget (its table is at one compute); another budget is another number",
        ),
    }

    def multiverse_params(self, params: BoundaryParams) -> dict:
        return {"robustness_cold_start": False, "box_check": None, "kappa_check": None}

    def measure(self, params: BoundaryParams, tables, rng):
        frame = leaderboard_frame(tables, params)
        data, weights = task_data(frame, params), task_weights(frame, params)
        z_eval = math.log10(params.eval_x)
        cells, fits = _fit_all(data, weights, params, rng, z_eval)
        values = _boundary_values(cells, fits)
        z_all = next(iter(data.values()))[0]
        details = {"fits": fits, "n_at_or_above_eval": int(np.sum(z_all >= z_eval))}
        if params.robustness_cold_start:
            alt, alt_fits = _fit_all(data, weights, params, rng, z_eval, warm_start=not params.warm_start)
            values.update({Q.alt_start_boundary(k): v for k, v in alt.items()})
            values["alt_start.max_shift"] = max(abs(alt[k] - cells[k]) for k in cells)
            details["alt_start_fits"] = alt_fits
        if params.box_check is not None:
            boxed, boxed_fits = _fit_all(data, weights, params, rng, z_eval, box=tuple(params.box_check))
            values.update({Q.boxed(Q.boundary(k)): v for k, v in boxed.items()})
            details["boxed_fits"] = boxed_fits
        if params.kappa_check is not None:
            sharp, sharp_fits = _fit_all(data, weights, params, rng, z_eval, kappa=params.kappa_check)
            values.update(_boundary_values(sharp, sharp_fits, Q.sharp("")))
        return Measurement(values, details)

    def control(self, kind, cparams: TauOverride, params: BoundaryParams, tables, rng, baseline):
        frame = leaderboard_frame(tables, params)
        data, weights = task_data(frame, params), task_weights(frame, params)
        cells, fits = _fit_all(data, weights, params, rng, math.log10(params.eval_x), tau=cparams.tau)
        return Measurement(_boundary_values(cells, fits), {"fits": fits})

    def tail_support(self, params: BoundaryParams, tables, reimpl) -> dict:
        """What carries each boundary: the models above it, at or above the budget, and above it there."""
        fits = {label: f["params"] for label, f in reimpl.details["fits"].items()}
        return budget_tail_support(tables, params, fits, name=Q.boundary)

    def resampling(self, params: BoundaryParams, tables, reimpl, *, cluster_col: str, quantities=None):
        frame = leaderboard_frame(tables, params)
        # the tasks whose boundary is read (all when none is named): the others are not refitted
        labels = [k for k in params.tasks if quantities is None or Q.boundary(k) in quantities] or list(params.tasks)
        design = {
            **task_rows(frame, params, labels),
            "inits": {k: f["params"] for k, f in reimpl.details["fits"].items()},
            "options": params.estimator(n_random=0),  # each resample starts from the full-sample optimum
            "z_eval": math.log10(params.eval_x),
        }
        clusters = frame[cluster_col].to_numpy(dtype=object)
        return Resampling.of_fits(
            len(frame), clusters, "the leaderboard rows with a compute proxy", _boundary_fits, design
        )

    # -- evidence: what the report rests on beyond the arms' values, measured when the claim runs ---------

    def evidence(self, ctx: Context, rng: np.random.Generator) -> dict:
        """Why the authors' values differ from the re-implementation's and move with their start, and the
        re-implementation refitted at the authors' own setting where both arms miss a published value."""
        if not ctx.upstream.ok:
            return {}
        p = ctx.params
        data = task_data(leaderboard_frame(ctx.tables, p), p)
        rng_arms, rng_own = rng.spawn(2)
        out = {"arms": self._arms(ctx, data, rng_arms)}
        alt = ctx.upstream.details.get("alt_start_fits")
        if p.robustness_cold_start and alt:
            out["their_starts"] = self._their_starts(ctx, data, alt)
        own = self._own_setting_refits(ctx, data, rng_own)
        if own:
            out["own_setting"] = own
        return out

    def _arms(self, ctx: Context, data, rng) -> list[dict]:
        """Both optima on one objective, benchmark by benchmark, with the cause of their difference:
        ``different_data`` (the optima cannot be scored on one objective), ``same_optimum`` (within
        :data:`OBJECTIVE_GAP`), ``setting`` (the refit at their last stage's (tau, kappa) moves more than half the
        way to their value), ``box`` (the refit inside their box does), ``optimiser_short`` (inside their box the
        re-implementation still reaches a lower objective), else ``unexplained``."""
        p, kw = ctx.params, ctx.params.loss()
        mine_fits, their_fits = ctx.reimpl.details["fits"], ctx.upstream.details.get("fits", {})
        boxed_fits = ctx.reimpl.details.get("boxed_fits", {})
        rows = []
        for label, (z, y) in data.items():
            fit = their_fits.get(label, {})
            if not fit.get("params"):
                continue
            obj_mine = sigmoid_objective(_vector(mine_fits[label]["params"]), z, y, **kw)
            obj_theirs = sigmoid_objective(_vector(fit["params"]), z, y, **kw)
            stage = _authors_last_stage(fit, p)
            differs = not (math.isclose(stage[0], p.tau) and math.isclose(stage[1], p.kappa))
            at_stage = None
            if differs:
                model = SigmoidQuantileRegressor(rng=rng, **p.estimator(tau=stage[0], kappa=stage[1])).fit(z, y)
                at_stage = float(model.predict(math.log10(p.eval_x)))
            their_cov = float(np.mean(y <= sigmoid_boundary(z, *_vector(fit["params"]))))
            same_data = fit.get("n", z.size) == z.size and (
                fit.get("coverage") is None or abs(their_cov - fit["coverage"]) <= 2.0 / z.size
            )
            name = Q.boundary(label)
            mine_v, their_v = ctx.reimpl.values[name], ctx.upstream.values[name]
            boxed_v = ctx.reimpl.values.get(Q.boxed(name))
            obj_boxed = boxed_fits[label]["objective"] if label in boxed_fits else None
            gap = abs(mine_v - their_v)
            if not same_data:
                cause = "different_data"
            elif obj_theirs - obj_mine <= OBJECTIVE_GAP:
                cause = "same_optimum"
            elif differs and _closer(at_stage, their_v, gap):
                cause = "setting"
            elif _closer(boxed_v, their_v, gap):
                cause = "box"
            elif not differs and obj_boxed is not None and obj_theirs - obj_boxed > OBJECTIVE_GAP:
                cause = "optimiser_short"
            else:
                cause = "unexplained"
            rows.append(
                {
                    "label": label,
                    "cause": cause,
                    "objective_reimpl": obj_mine,
                    "objective_upstream": obj_theirs,
                    "objective_reimpl_boxed": obj_boxed,
                    "bounds_active": list(fit.get("bounds_active", [])),
                    "authors_tau": stage[0],
                    "authors_kappa": stage[1],
                    "reimpl_at_authors_setting": at_stage,
                }
            )
        return rows

    def _their_starts(self, ctx: Context, data, alt: dict) -> list[dict]:
        """Why the authors' two starts give different values, benchmark by benchmark: ``setting``: their warm
        start's last stage ran at another (tau, kappa) than the claim's (their schedule,
        :data:`AUTHORS_KAPPA_STAGES`) while the cold start fits the claim's; ``stopped``: both fit the claim's
        setting and one start's optimum is more than :data:`OBJECTIVE_GAP` above the other's on the shared
        objective (``short``: which start); ``flat``: both reach the same objective, at different points."""
        p, kw = ctx.params, ctx.params.loss()
        fits, rows = ctx.upstream.details.get("fits", {}), []
        for label, (z, y) in data.items():
            if label not in alt or label not in fits:
                continue
            warm, cold = (fits[label], alt[label]) if p.warm_start else (alt[label], fits[label])
            stage = _authors_last_stage({**warm, "continuation": True}, p)
            row = {"label": label, "authors_kappa": stage[1], "short": None}
            if not (math.isclose(stage[0], p.tau) and math.isclose(stage[1], p.kappa)):
                row["cause"] = "setting"
            else:
                obj_warm = sigmoid_objective(_vector(warm["params"]), z, y, **kw)
                obj_cold = sigmoid_objective(_vector(cold["params"]), z, y, **kw)
                if abs(obj_warm - obj_cold) <= OBJECTIVE_GAP:
                    row["cause"] = "flat"
                else:
                    row["cause"], row["short"] = "stopped", "warm" if obj_warm > obj_cold else "cold"
            rows.append(row)
        return rows

    def _own_setting_refits(self, ctx: Context, data, rng) -> dict:
        """The re-implementation refitted at the setting the authors' code path reads (their arm's
        ``details.own_setting``), for every published value both arms miss, where that setting differs from the
        claim's: ``{label: {"reimpl", "boxed"}}`` (``boxed``: inside their box, ``None`` without ``box_check``)."""
        own, p = ctx.upstream.details.get("own_setting"), ctx.params
        same = own and all(math.isclose(float(own[k]), float(getattr(p, k)), rel_tol=1e-12) for k in _OWN)
        if not own or not own.get("boundaries") or same:
            return {}
        options = p.estimator(**{k: float(own[k]) for k in _OWN})
        z_eval, out = math.log10(p.eval_x), {}
        for t in ctx.targets:
            if not (t.quantity.startswith("boundary.") and t.reimpl.holds is False and t.upstream.holds is False):
                continue
            z, y = data[t.quantity.partition(".")[2]]
            mine = float(SigmoidQuantileRegressor(rng=rng, **options).fit(z, y).predict(z_eval))
            boxed = None
            if p.box_check is not None:
                boxed = float(
                    SigmoidQuantileRegressor(rng=rng, **options, box=tuple(p.box_check)).fit(z, y).predict(z_eval)
                )
            out[t.quantity.partition(".")[2]] = {"reimpl": mine, "boxed": boxed}
        return out

    # -- figures ----------------------------------------------------------------------------------------

    def plots(self, ctx: Context) -> dict:
        """Each benchmark's models as counts on one grid of z and score (not the points), bottom row first, and
        the grid's extent, over the data and the budget."""
        p = ctx.params
        data = task_data(leaderboard_frame(ctx.tables, p), p)
        z_eval = math.log10(p.eval_x)
        z_all = np.concatenate([z for z, _ in data.values()])
        y_all = np.concatenate([y for _, y in data.values()])
        # the grid: 0.1 in z, 0.02 in score
        z_lo = math.floor(min(z_all.min(), z_eval) * 10) / 10
        z_hi = math.ceil(max(z_all.max(), z_eval) * 10) / 10
        y_lo, y_hi = min(0.0, math.floor(y_all.min())), max(1.0, math.ceil(y_all.max()))
        bins = (int(round((z_hi - z_lo) / 0.1)), int(round((y_hi - y_lo) / 0.02)))
        grid = {"bins": bins, "range": [[z_lo, z_hi], [y_lo, y_hi]]}
        return {
            "extent": [z_lo, z_hi, y_lo, y_hi],
            "densities": {label: np.histogram2d(z, y, **grid)[0].T.astype(int) for label, (z, y) in data.items()},
        }


PROTOCOL = BoundaryAtBudget()
