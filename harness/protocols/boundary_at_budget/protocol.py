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

import numpy as np
from pydantic import Field

from ...core.relations import target_holds, within_tolerance
from ...core.schema import Number
from ...parallel.fanout import Mapper
from ...stats.sigmoid import SigmoidQuantileRegressor, sigmoid_boundary, sigmoid_objective
from ..base import Choice, Context, Measurement, Protocol
from ..leaderboard import (
    DATA_CHOICES,
    ESTIMATOR_CHOICES,
    BoxParams,
    EstimatorParams,
    LeaderboardParams,
    TauOverride,
    budget_tail_support,
    leaderboard_columns,
    leaderboard_frame,
    leaderboard_summary,
    task_data,
)
from . import CARD
from . import findings as F
from . import quantities as Q

__all__ = ["BoundaryParams", "BoundaryAtBudget", "THIN_TAIL_SHARE", "OBJECTIVE_GAP", "AUTHORS_KAPPA_STAGES"]

#: The evaluation point rests on a thin upper tail when fewer than this share of the models lie at or above it.
THIN_TAIL_SHARE = 0.2
#: Two optima whose objectives differ by less than this are the same optimum for the report (the optimisers'
#: own tolerances are about 1e-9 on these objectives).
OBJECTIVE_GAP = 1e-7
#: Without a tolerance to judge the other start against, half a unit of the fourth decimal the tables print.
PRINTED = 0.5e-4
#: The authors' continuation in kappa (skill_frontier/core/sigmoid_quantile_optimizer.py, lines 201-202 at the
#: pinned commit): ``[10, 25, kappa_final]``, keeping a stage only where kappa rises, so that a kappa at or
#: below 25 is never reached and their last stage runs at 25. In tau every stage is kept up to tau itself.
AUTHORS_KAPPA_STAGES = (10.0, 25.0)

_BOUND_WORDS = {
    "z*=z_min": "midpoint at the lowest z",
    "z*=z_max": "midpoint at the highest z",
    "y0=0": "floor at 0",
    "L=0": "flat curve",
    "y0+L=1": "top at 1",
}


def _bound_words(name: str) -> str:
    """A limit of the authors' box in words (``beta=0.05`` is the slope at 0.05)."""
    if name.startswith("beta="):
        return f"slope at {name.partition('=')[2]}"
    return _BOUND_WORDS.get(name, name)


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


def _boundary_fits(indices, rng, *, z, Y, labels, inits, options, z_eval) -> tuple[dict, dict]:
    """Every task's boundary refitted on the rows ``indices`` from ``inits`` and read off at ``z_eval``, and
    the fits' parameters (``inits`` in kind)."""
    from ...stats.sigmoid import SigmoidQuantileRegressor

    rows, counts = np.unique(indices, return_counts=True)  # a row drawn k times is fitted once, counted k times
    zi, out, params = z[rows], {}, {}
    for j, label in enumerate(labels):
        yi = Y[rows, j]
        keep = np.isfinite(yi)
        model = SigmoidQuantileRegressor(rng=rng, **options).fit(
            zi[keep], yi[keep], init=inits[label], counts=counts[keep]
        )
        out[Q.boundary(label)], params[label] = float(model.predict(z_eval)), model.params_
    return out, params


def _boundary_values(cells: dict, fits: dict, prefix: str = "") -> dict:
    """The flat value names of each task's boundary and its fit's coverage (``prefix``: the boxed fits')."""
    out = {prefix + Q.boundary(k): v for k, v in cells.items()}
    out.update({prefix + Q.coverage(k): f["coverage"] for k, f in fits.items()})
    return out


class BoundaryAtBudget(Protocol):
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
    FINDINGS = F.FINDINGS

    def columns(self, params: BoundaryParams):
        return leaderboard_columns(params)

    def data_summary(self, params: BoundaryParams, tables):
        return leaderboard_summary(tables, params)

    def multiverse_params(self, params: BoundaryParams) -> dict:
        return {"robustness_cold_start": False, "box_check": None}

    def measure(self, params: BoundaryParams, tables, rng):
        data = task_data(leaderboard_frame(tables, params), params)
        z_eval = math.log10(params.eval_x)
        cells, fits = _fit_all(data, params, rng, z_eval)
        values = _boundary_values(cells, fits)
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
        return Measurement(_boundary_values(cells, fits), {"fits": fits})

    def tail_support(self, params: BoundaryParams, tables, reimpl) -> dict:
        """What carries each boundary: the models above it, at or above the budget, and above it there."""
        data = task_data(leaderboard_frame(tables, params), params)
        fits = {label: f["params"] for label, f in reimpl.details["fits"].items()}
        return budget_tail_support(data, fits, math.log10(params.eval_x), name=Q.boundary)

    def resampling(self, params: BoundaryParams, tables, reimpl, *, cluster_col: str, quantities=None):
        from ..base import Resampling

        frame = leaderboard_frame(tables, params)
        # the tasks whose boundary is read (all when none is named): the others are not refitted
        labels = [k for k in params.tasks if quantities is None or Q.boundary(k) in quantities] or list(params.tasks)
        Y = np.column_stack([frame[params.tasks[k]].to_numpy(dtype=float) for k in labels])
        options = params.estimator(n_random=0)  # each resample starts from the full-sample optimum
        design = dict(
            z=frame["z"].to_numpy(dtype=float),
            Y=Y,
            labels=labels,
            inits={k: f["params"] for k, f in reimpl.details["fits"].items()},
            options=options,
            z_eval=math.log10(params.eval_x),
        )
        return Resampling.of_fits(
            len(frame),
            frame[cluster_col].to_numpy(dtype=object),
            "the leaderboard rows with a compute proxy",
            _boundary_fits,
            design,
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
        out["own_setting"] = self._own_setting(ctx)
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
        tau_ctl = next((c for c in ctx.controls if c.control == "tau_override" and c.reimpl.ran), None)
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
        return F.Result.of(
            "measured",
            budget=Q.budget_text(p.eval_x),
            eval_x=p.eval_x,
            z_eval=math.log10(p.eval_x),
            n_models=ctx.data["oll_rows_with_compute"],
            n_tasks=len(p.tasks),
            rows=rows,
            n_paper=len(paper),
            one_paper=len(paper) == 1,
            all_paper=len(paper) == len(p.tasks),
            largest_reimpl=max(deltas) if deltas else None,
            largest_upstream=max(deltas_up) if deltas_up else None,
            tolerances=tolerances,
            n_holding_reimpl=sum(t.reimpl.holds is True for t in paper.values()),
            n_holding_upstream=sum(t.upstream.holds is True for t in paper.values()),
            all_holding_reimpl=bool(paper) and all(t.reimpl.holds is True for t in paper.values()),
            all_holding_upstream=bool(paper) and all(t.upstream.holds is True for t in paper.values()),
            control_id=tau_ctl.id if tau_ctl else None,
            control_tau=tau_ctl.params["tau"] if tau_ctl else None,
        )

    def _eval_support(self, ctx: Context):
        """Where the evaluation point sits in the data, and how many models stand behind the boundary there.

        ``beyond`` / ``below``: outside every model's z. Inside the data, ``edge_models`` = 1/(1 - tau) is how many
        models it takes for one of them, on average, to lie above a tau-quantile; with fewer than that at or
        above the point (``n_at_or_above < edge_models``) the boundary there rests on no model above it. Where
        the point is also in the top :data:`THIN_TAIL_SHARE` of the data, that is because it sits at the
        **upper edge** (``edge``); where it is not, the point is well inside the data and the table is simply
        small (``small_table``: in a table of 65 models a third of them at or above z = 4 are still fewer than
        the 50 a 0.98-quantile needs; the same holds of nearly every point of such a table). With at least
        that many: a thin upper tail (``upper_tail``, under :data:`THIN_TAIL_SHARE` of the models) or
        ``inside``. ``expected_above`` is how many of the models at or above the point a tau-quantile leaves
        above it on average, ``n_at_or_above * (1 - tau)``; ``expected_above_all`` the same for the whole table.
        """
        z_eval, d = math.log10(ctx.params.eval_x), ctx.data
        n_above = ctx.reimpl.details["n_at_or_above_eval"]
        n = d["oll_rows_with_compute"]
        tau = ctx.params.tau
        edge = 1.0 / (1.0 - tau)
        facts = {
            "z_eval": z_eval,
            "z_min": d["z_min"],
            "z_max": d["z_max"],
            "n_at_or_above": n_above,
            "n_models": n,
            "share": n_above / n,
            "thin_share": THIN_TAIL_SHARE,
            "edge_models": edge,
            "edge_models_count": math.ceil(edge - 1e-9),
            "expected_above": n_above * (1.0 - tau),
            "expected_above_all": n * (1.0 - tau),
            "small_table": n < edge,
            "tau": tau,
        }
        if z_eval > d["z_max"]:
            return F.EvalSupport.of("beyond", **facts)
        if z_eval < d["z_min"]:
            return F.EvalSupport.of("below", **facts)
        if n_above < edge:
            return F.EvalSupport.of("edge" if n_above / n < THIN_TAIL_SHARE else "small_table", **facts)
        return F.EvalSupport.of("upper_tail" if n_above / n < THIN_TAIL_SHARE else "inside", **facts)

    def _start_robustness(self, ctx: Context):
        """How far the other start moves the boundaries, against the smallest tolerance, or, for a claim without
        one, against the precision the report prints (:data:`PRINTED`); and, where the authors' values move
        beyond it, why (:meth:`_authors_start_causes`), so that the report names the cause it measured."""
        p = ctx.params
        if not p.robustness_cold_start:
            return F.StartRobustnessNotRun.of("not_run")
        tols = sorted(((t.tolerance, t.tolerance_text) for t in self._paper(ctx).values()), key=lambda x: x[0])
        tol, tol_text = tols[0] if tols else (PRINTED, None)
        mine = ctx.reimpl.values[Q.ALT_START_MAX_SHIFT]
        theirs = ctx.upstream.values.get(Q.ALT_START_MAX_SHIFT) if ctx.upstream.ok else None
        upstream_within = None if theirs is None else within_tolerance(theirs, tol)
        causes = self._authors_start_causes(ctx, tol) if upstream_within is False else []
        return F.StartRobustness.of(
            "measured",
            alternative="cold" if p.warm_start else "warm",
            reimpl_shift=mine,
            upstream_shift=theirs,
            tolerance=tol,
            tolerance_text=tol_text,
            against="tolerance" if tols else "printed",
            reimpl_within=within_tolerance(mine, tol),
            upstream_within=upstream_within,
            upstream_causes=causes,
            objective_gap=OBJECTIVE_GAP,
        )

    def _authors_start_causes(self, ctx: Context, tol: float) -> list[dict]:
        """Why the authors' values move with the start, benchmark by benchmark, grouped by cause:

        ``setting``: their warm start's last stage ran at another (tau, kappa) than the claim's (their schedule,
        :data:`AUTHORS_KAPPA_STAGES`), while their cold start fits the claim's: the two starts fit different
        objectives; ``stopped``: both fit the claim's setting, and one start's optimum has an objective more
        than :data:`OBJECTIVE_GAP` above the other's on the shared objective (``short``: which start stopped
        short); ``flat``: both reach the same objective within :data:`OBJECTIVE_GAP`, at different points.
        """
        p, up = ctx.params, ctx.upstream
        fits, alt = up.details.get("fits", {}), up.details.get("alt_start_fits", {})
        data = task_data(leaderboard_frame(ctx.tables, p), p)
        order, kw = ("y0", "L", "a", "beta"), p.loss()
        groups: dict[tuple, dict] = {}
        for label, (z, y) in data.items():
            main_v, alt_v = up.values.get(Q.boundary(label)), up.values.get(Q.alt_start_boundary(label))
            if main_v is None or alt_v is None or within_tolerance(main_v - alt_v, tol) or label not in alt:
                continue
            warm, cold = (fits[label], alt[label]) if p.warm_start else (alt[label], fits[label])
            stage = _authors_last_stage({**warm, "continuation": True}, p)
            if not (math.isclose(stage[0], p.tau) and math.isclose(stage[1], p.kappa)):
                key = ("setting", stage[1])
            else:
                obj_warm = sigmoid_objective([warm["params"][k] for k in order], z, y, **kw)
                obj_cold = sigmoid_objective([cold["params"][k] for k in order], z, y, **kw)
                if abs(obj_warm - obj_cold) <= OBJECTIVE_GAP:
                    key = ("flat", None)
                else:
                    key = ("stopped", "warm" if obj_warm > obj_cold else "cold")
            g = groups.setdefault(key, {"cause": key[0], "labels": [], "shift": 0.0})
            g["labels"].append(label)
            g["shift"] = max(g["shift"], abs(main_v - alt_v))
            if key[0] == "setting":
                g["authors_kappa"] = key[1]
            if key[0] == "stopped":
                g["short"] = key[1]
        return list(groups.values())

    def _control_shifts(self, ctx: Context):
        """How far each control moves the boundaries: from the paper's values where the targets give them, else
        from the re-implementation's own unperturbed values."""
        paper = self._paper(ctx)
        rows = []
        for c in ctx.controls:
            if not c.reimpl.ran:
                continue
            vals = ctx.reimpl.controls[c.id].values
            if paper:
                shifts = [abs(vals[name] - t.paper) for name, t in paper.items() if vals.get(name) is not None]
            else:
                base = ctx.reimpl.values
                shifts = [
                    abs(vals[Q.boundary(k)] - base[Q.boundary(k)])
                    for k in ctx.params.tasks
                    if vals.get(Q.boundary(k)) is not None
                ]
            rows.append(
                {
                    "id": c.id,
                    "tau": c.params.get("tau"),
                    "n": len(shifts),
                    "from_paper": bool(paper),
                    "mean": float(np.mean(shifts)) if shifts else None,
                    "min": min(shifts, default=None),
                    "max": max(shifts, default=None),
                }
            )
        return F.ControlShifts.of("measured", controls=rows)

    def _own_setting(self, ctx: Context):
        """Where both arms miss a published value, the cause it can measure: the setting the authors' own code
        path fits this table with (read from their code by their arm, ``details.own_setting``), refitted.

        ``not_reported``: their arm did not run or did not report it; ``same``: it is the claim's own setting;
        ``no_common_miss``: it differs, but no published value is missed by both arms; ``closes``: it differs,
        and refitted there (both arms, and the re-implementation inside the authors' box where the claim
        measures it) every published value both arms miss at the claim's setting comes back within its
        tolerance in at least one of them (``closed``; the authors' code may stay a hair outside where it does
        at the claim's own setting too); ``does_not_close``: some does not.
        """
        own = ctx.upstream.details.get("own_setting") if ctx.upstream.ok else None
        if not own:
            return F.OwnSettingNotReported.of("not_reported")
        p = ctx.params
        names = ("tau", "kappa", "lam")
        changed = [k for k in names if not math.isclose(float(own[k]), float(getattr(p, k)), rel_tol=1e-12)]
        where: dict[str, list[str]] = {}  # the file and lines that state each changed value, file by file
        for k in changed:
            file, _, line = own["where"][k].rpartition(":")
            where.setdefault(file, []).append(line)
        facts = {
            "tau": own["tau"],
            "kappa": own["kappa"],
            "lam": own["lam"],
            "changed": [{"name": k, "own": own[k], "claim": getattr(p, k), "where": own["where"][k]} for k in changed],
            "where": [{"file": f, "lines": lines} for f, lines in where.items()],
            "path": own.get("path"),
        }
        if not changed:
            return F.OwnSetting.of("same", **facts)
        paper = self._paper(ctx)
        missed = [t for t in paper.values() if t.reimpl.holds is False and t.upstream.holds is False]
        if not missed or not own.get("boundaries"):
            return F.OwnSetting.of("no_common_miss", **facts)
        data = task_data(leaderboard_frame(ctx.tables, p), p)
        rng = np.random.default_rng(ctx.spec.seed)
        z_eval = math.log10(p.eval_x)
        options = p.estimator(tau=own["tau"], kappa=own["kappa"], lam=own["lam"])
        rows = []
        for t in missed:
            label = t.quantity.partition(".")[2]
            z, y = data[label]
            mine = float(SigmoidQuantileRegressor(rng=rng, **options).fit(z, y).predict(z_eval))
            boxed = None
            if p.box_check is not None:  # and inside their box, where the claim measures it
                model = SigmoidQuantileRegressor(rng=rng, **options, box=tuple(p.box_check)).fit(z, y)
                boxed = float(model.predict(z_eval))
            theirs = own["boundaries"][label]
            rows.append(
                {
                    "label": label,
                    "title": t.title,
                    "paper": t.paper,
                    "paper_text": t.paper_text,
                    "tolerance": t.tolerance,
                    "reimpl": t.reimpl.value,
                    "upstream": t.upstream.value,
                    "reimpl_at_own": mine,
                    "upstream_at_own": theirs,
                    "upstream_gap": abs(theirs - t.paper),
                    "reimpl_gap": abs(mine - t.paper),
                    "upstream_within": target_holds("~", theirs, paper=t.paper, tolerance=t.tolerance),
                    "reimpl_within": target_holds("~", mine, paper=t.paper, tolerance=t.tolerance),
                    "reimpl_boxed_at_own": boxed,
                    "reimpl_boxed_gap": None if boxed is None else abs(boxed - t.paper),
                    "reimpl_boxed_within": None
                    if boxed is None
                    else target_holds("~", boxed, paper=t.paper, tolerance=t.tolerance),
                }
            )
        for r in rows:
            r["closed"] = r["upstream_within"] or r["reimpl_within"] or bool(r["reimpl_boxed_within"])
        closes = all(r["closed"] for r in rows)
        return F.OwnSettingRefit.of(
            "closes" if closes else "does_not_close",
            **facts,
            rows=rows,
            titles=[r["title"] for r in rows],
            one=len(rows) == 1,
            n_rows=len(rows),
            n_closed=sum(r["closed"] for r in rows),
            n_upstream_within=sum(r["upstream_within"] for r in rows),
            n_reimpl_within=sum(r["reimpl_within"] for r in rows),
            largest_miss=max(max(abs(r["reimpl"] - r["paper"]), abs(r["upstream"] - r["paper"])) for r in rows),
            smallest_miss=min(min(abs(r["reimpl"] - r["paper"]), abs(r["upstream"] - r["paper"])) for r in rows),
            upstream_gap=max(r["upstream_gap"] for r in rows),
            reimpl_gap=max(r["reimpl_gap"] for r in rows),
            reimpl_within=all(r["reimpl_within"] for r in rows),
            boxed=p.box_check is not None,
            reimpl_boxed_gap=None if p.box_check is None else max(r["reimpl_boxed_gap"] for r in rows),
            n_reimpl_boxed_within=None if p.box_check is None else sum(r["reimpl_boxed_within"] for r in rows),
        )

    def _explanation(self, ctx: Context):
        """Why the arms' values differ, benchmark by benchmark: both optima scored on one objective, the setting
        the authors' code actually fitted (their schedule of stages), and the re-implementation refitted inside
        the authors' box. Each row gets one ``cause``:

        ``same_optimum``: their optimum's objective is within :data:`OBJECTIVE_GAP` of the re-implementation's;
        ``setting``: their last stage ran at another (tau, kappa) than the claim's, and the re-implementation
        refitted there moves more than half the way to their value; ``box``: the refit inside their box does;
        ``optimiser_short``: at the claim's own setting, even inside their box the re-implementation reaches a
        lower objective than theirs; ``unexplained``: none of these (``box_measured`` says whether the box was
        tried: without ``box_check`` it was not). Before any of these, ``different_data``: their fit is not of
        the re-implementation's data (another number of points, or their curve covers another share of these
        points than of theirs, as when one arm reads the scores on another scale), so the two optima cannot be
        scored on one objective.
        """
        p = ctx.params
        data = task_data(leaderboard_frame(ctx.tables, p), p)
        kw = p.loss()
        mine_fits, their_fits = ctx.reimpl.details["fits"], ctx.upstream.details.get("fits", {})
        boxed_fits = ctx.reimpl.details.get("boxed_fits", {})
        rng = np.random.default_rng(ctx.spec.seed)
        rows = []
        for label, (z, y) in data.items():
            theirs = their_fits.get(label, {}).get("params")
            if not theirs:
                continue
            order = ("y0", "L", "a", "beta")
            obj_mine = sigmoid_objective([mine_fits[label]["params"][k] for k in order], z, y, **kw)
            obj_theirs = sigmoid_objective([theirs[k] for k in order], z, y, **kw)
            fit = their_fits[label]
            stage = _authors_last_stage(fit, p)
            active = fit.get("bounds_active", [])
            name = Q.boundary(label)
            mine_v, their_v = ctx.reimpl.values[name], ctx.upstream.values[name]
            boxed_v = ctx.reimpl.values.get(Q.boxed(name))
            obj_boxed = boxed_fits[label]["objective"] if label in boxed_fits else None
            differs = not (math.isclose(stage[0], p.tau) and math.isclose(stage[1], p.kappa))
            at_stage = None
            if differs:
                model = SigmoidQuantileRegressor(rng=rng, **p.estimator(tau=stage[0], kappa=stage[1])).fit(z, y)
                at_stage = float(model.predict(math.log10(p.eval_x)))
            gap = abs(mine_v - their_v)
            # the same data? their fit's points and its coverage of them, against the re-implementation's data
            their_cov = float(np.mean(y <= sigmoid_boundary(z, *(theirs[k] for k in order))))
            same_data = fit.get("n", z.size) == z.size and (
                fit.get("coverage") is None or abs(their_cov - fit["coverage"]) <= 2.0 / z.size
            )
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
                    "reimpl": mine_v,
                    "upstream": their_v,
                    "difference": mine_v - their_v,
                    "objective_reimpl": obj_mine,
                    "objective_upstream": obj_theirs,
                    "objective_gap": obj_theirs - obj_mine,
                    "bounds_active": [_bound_words(b) for b in active],
                    "authors_tau": stage[0],
                    "authors_kappa": stage[1],
                    "setting_differs": differs,
                    "reimpl_at_authors_setting": at_stage,
                    "at_setting_gap": None if at_stage is None else abs(at_stage - their_v),
                    "reimpl_boxed": boxed_v,
                    "objective_reimpl_boxed": obj_boxed,
                    "short_by": (obj_theirs - obj_boxed) if obj_boxed is not None else None,
                    "box_measured": boxed_v is not None,
                    "n_upstream": fit.get("n"),
                    "n_reimpl": int(z.size),
                    "coverage_upstream": fit.get("coverage"),
                    "coverage_of_theirs_here": their_cov,
                    "cause": cause,
                }
            )
        differing = [r for r in rows if r["cause"] not in ("same_optimum", "different_data")]
        by_setting = [r for r in differing if r["cause"] == "setting"]
        setting = None
        if by_setting:
            setting = {
                "labels": [r["label"] for r in by_setting],
                "all": len(by_setting) == len(rows),
                "one": len(by_setting) == 1,
                "kappas": sorted({r["authors_kappa"] for r in by_setting}),
                "largest_gap": max(r["at_setting_gap"] for r in by_setting),
                "largest_difference": max(abs(r["difference"]) for r in by_setting),
            }
        return F.Explanation.of(
            "explained",
            rows=rows,
            differing=[r for r in differing if r["cause"] != "setting"],
            setting=setting,
            n_differing=len(differing),
            different_data=[r["label"] for r in rows if r["cause"] == "different_data"],
            box_measured=p.box_check is not None,
            box=list(p.box_check) if p.box_check else None,
            objective_gap=OBJECTIVE_GAP,
            kappa_stages=list(AUTHORS_KAPPA_STAGES),
            warm_start=p.warm_start,
        )

    # -- figures ----------------------------------------------------------------------------------------

    def plots(self, ctx: Context) -> dict:
        """Each benchmark's models as a density on a fixed grid (not the points), both arms' boundaries and the
        tau_override control's on one z grid, and the values at the evaluation point.

        ``density``: ``{"x": [z_lo, z_hi, nz], "y": [lo, hi, ny], "n", "inside", "rows"}``, ``rows[j]`` the
        counts of the ``j``-th score bin from the bottom, left to right, as space-separated integers without
        trailing zeros (a list of numbers would take a line each in the record); the curves are on
        ``numpy.linspace(*z_grid)``, rounded to 5 decimals. (The helpers are local so that this module does
        not import :mod:`harness.rendering.figures`: a change of drawing then redraws, it does not rerun.)
        """

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
            "has_paper": bool(paper),
            "tasks": tasks,
        }


PROTOCOL = BoundaryAtBudget()
