"""Protocol ``estimator_comparison``: the sigmoid boundary against three baselines (Section 3.1.1, Table 2).

On every task and rolling pair (fit on ``P_t``, evaluate in distribution on
``P_t`` and out of distribution on ``P_{t+1}`` within the overlap of the two z
ranges) four estimators are fitted on the training period:

* ``constant``: ``np.quantile(y_train, tau)`` (not loss-minimising);
* ``binwise``: the loss-minimising constant of each training equal-mass bin;
* ``ispline``: ``y0 + L * sigmoid(a0 + sum_j w_j I_j(z))``, ``w_j >= 0``, cubic
  I-spline basis on ``ispline_intervals`` quantile intervals of the training z,
  ridge ``ispline_lam`` on the weights;
* ``sigmoid``: the paper's ``y0 + L * sigmoid(a + beta z)``.

Values (equal-weight means over the task-period pairs; names from
:mod:`harness.core.quantities`): ``<metric>.<estimator>`` for the metrics
``pinball_id``, ``pinball_ood`` (mean smoothed pinball loss at kappa),
``calibration_id``, ``calibration_ood`` (mean over equal-mass bins of
``|coverage_b - tau|``; ID bins from the training z, OOD bins rebuilt on the
overlap validation z); ``gap.pinball_id`` and ``gap.pinball_ood``
(``sigmoid - ispline``), ``gap.calibration_ood`` (``ispline - sigmoid``),
``advantage.id`` (``constant - sigmoid`` on ID pinball); with ``box_check``,
``boxed.<name>`` for every value that involves the sigmoid.

Controls: ``beta_zero`` (the sigmoid replaced by its ``beta = 0`` fit, the
loss-minimising constant) and ``shuffle_z`` (z permuted within each training
period, the sigmoid refitted; ``advantage.id``, mean over the shuffles).
"""

from __future__ import annotations

from pydantic import Field, field_validator

from ...core.relations import target_holds, within_tolerance
from ...core.schema import Count, Number
from ...parallel.fanout import Mapper
from ...stats.estimator_comparison import (
    baseline_comparison,
    estimator_table,
    ispline_knot_sensitivity,
    shuffled_z_advantage,
)
from ..base import Choice, Context, Measurement, Protocol, ProtocolParams
from ..leaderboard import DATA_CHOICES, ESTIMATOR_CHOICES, EstimatorParams, LeaderboardParams, leaderboard_columns
from ..periods import (
    PeriodParams,
    box_explanation,
    boxed_options,
    outside_box,
    period_frame,
    period_summary,
    sigmoid_options,
    split_tail_support,
)
from . import CARD
from . import findings as F
from . import quantities as Q

__all__ = ["EstimatorComparisonParams", "BetaZero", "ShuffleZ", "EstimatorComparison"]

METRICS, ESTIMATORS = Q.METRICS, Q.ESTIMATORS


class EstimatorComparisonParams(LeaderboardParams, EstimatorParams, PeriodParams):
    ispline_intervals: Count = Field(3, ge=1, le=50, description="quantile intervals of the training z for the knots")
    ispline_lam: Number = Field(1e-4, ge=0, description="ridge on the I-spline weights")
    knot_grid: list[Count] = Field(
        default_factory=lambda: [2, 3, 4, 5, 6],
        min_length=1,
        description="knot counts (distinct, 1 to 50) the I-spline is also fitted at; an OOD loss gap no larger "
        "than the spread of its OOD pinball loss over them is a tie",
    )
    n_shuffles: Count = Field(5, ge=1, le=1000, description="shuffles of shuffle_z when its own params omit it")

    @field_validator("knot_grid")
    @classmethod
    def _positive(cls, grid):
        if any(k < 1 or k > 50 for k in grid) or len(set(grid)) != len(grid):
            raise ValueError(f"knot_grid must be distinct integers from 1 to 50, got {grid}")
        return grid


class BetaZero(ProtocolParams):
    pass


class ShuffleZ(ProtocolParams):
    n_shuffles: Count | None = Field(None, ge=1, le=1000, description="shuffles (default: the protocol's n_shuffles)")


def _gaps(t: dict[str, dict[str, float]]) -> dict[str, float]:
    """The gaps of :data:`Q.GAPS` whose two estimators are in the table ``t``."""
    return {name: t[a][m] - t[b][m] for name, (m, a, b) in Q.GAPS.items() if a in t and b in t}


def _estimators_read(quantities) -> list[str] | None:
    """The estimators the values ``quantities`` are of (a gap is of two): all (``None``) when ``quantities`` is,
    or names a value that is neither an estimator's metric nor a gap."""
    if quantities is None:
        return None
    out = set()
    for name in quantities:
        metric, _, estimator = name.partition(".")
        if name in Q.GAPS:
            out.update(Q.GAPS[name][1:])
        elif metric in METRICS and estimator in ESTIMATORS:
            out.add(estimator)
        else:
            return None
    return [e for e in ESTIMATORS if e in out]


def _eval_kwargs(params) -> dict:
    return {
        "periods": params.periods,
        "tau": params.tau,
        "kappa": params.kappa,
        "n_bins": params.n_bins,
        "min_bin_size": params.min_bin_size,
        "map_fn": Mapper("fits of the splits"),
    }


def _sign_word(x: float | None, positive: str, negative: str) -> str | None:
    return None if x is None else (positive if x > 0 else negative)


def _inits(fitted: list[dict]) -> dict:
    """``{"sigmoid" | "ispline": {(task, t): params}}`` from the ``fitted`` records of a comparison."""
    return {
        kind: {(f["task"], f["t"]): f["params"] for f in fitted if f["estimator"] == kind}
        for kind in ("sigmoid", "ispline")
    }


def _table_on(indices, rng, *, frame, tasks, inits, kwargs, estimators=None) -> tuple[dict, dict]:
    """Table 2 on the rows ``indices``, each sigmoid and I-spline fit started from ``inits``: its values, and
    the fits' parameters (``inits`` in kind). ``estimators``: only theirs (default: every estimator's)."""
    df = frame.iloc[indices].reset_index(drop=True)
    res = baseline_comparison(df, tasks, rng=rng, n_shuffles=0, inits=inits, estimators=estimators, **kwargs)
    table = res["table"]
    out = {Q.metric(m, e): table[e][m] for e in ESTIMATORS if e in table for m in METRICS}
    out.update(_gaps(table))
    return out, _inits(res["fitted"])


class EstimatorComparison(Protocol):
    card = CARD
    Params = EstimatorComparisonParams
    controls = {"beta_zero": BetaZero, "shuffle_z": ShuffleZ}
    CHOICES = {
        **ESTIMATOR_CHOICES,
        "n_bins": Choice(
            "the equal-mass bins of the Binwise estimator and of the calibration error",
            "analysis",
            "a discretisation of the comparison the claim does not name (calibration error is a mean over bins)",
        ),
        "ispline_intervals": Choice(
            "the knot rule of the I-spline (quantile intervals of the training z)",
            "analysis",
            "a setting of the comparison estimator, which Appendix B.3 leaves open",
        ),
        "ispline_lam": Choice(
            "the ridge on the I-spline's weights",
            "analysis",
            "a setting of the comparison estimator, which Appendix B.3 leaves open",
        ),
        **DATA_CHOICES,
    }
    FINDINGS = F.FINDINGS

    def columns(self, params):
        return leaderboard_columns(params, date_col=params.date_col)

    def data_summary(self, params, tables):
        return period_summary(tables, params)

    def multiverse_params(self, params: EstimatorComparisonParams) -> dict:
        return {"box_check": None, "knot_grid": [params.ispline_intervals]}

    def measure(self, params: EstimatorComparisonParams, tables, rng):
        df = period_frame(tables, params)
        res = baseline_comparison(
            df,
            params.tasks,
            rng=rng,
            lam=params.lam,
            ispline_lam=params.ispline_lam,
            n_intervals=params.ispline_intervals,
            sigmoid_options=sigmoid_options(params),
            n_shuffles=0,
            **_eval_kwargs(params),
        )
        table = res["table"]
        values = {Q.metric(m, e): table[e][m] for e in ESTIMATORS for m in METRICS}
        values.update(_gaps(table))

        # the I-spline row at every other knot count (the claimed count is the row above)
        others = [k for k in params.knot_grid if k != params.ispline_intervals]
        ks = (
            ispline_knot_sensitivity(
                df,
                params.tasks,
                rng=rng,
                n_intervals_grid=others,
                ispline_lam=params.ispline_lam,
                **_eval_kwargs(params),
            )
            if others
            else {"rows": []}
        )
        by_k = {r["n_intervals"]: r for r in ks["rows"]}
        by_k[params.ispline_intervals] = {"n_intervals": params.ispline_intervals, **table["ispline"]}
        rows = []
        for k in sorted(by_k):
            g = _gaps({**table, "ispline": by_k[k]})
            rows.append(
                {
                    **by_k[k],
                    "claimed": k == params.ispline_intervals,
                    **{name: g[name] for name in ("gap.pinball_id", "gap.pinball_ood", "gap.calibration_ood")},
                }
            )
        details = {
            "n_pairs": res["n_pairs"],
            "table": table,
            "per_pair": res["per_pair"],
            "fitted": res["fitted"],
            "knot_rows": rows,
        }
        if params.box_check is not None:
            boxed = estimator_table(
                df,
                params.tasks,
                "sigmoid",
                {**params.loss(), **boxed_options(params)},
                rng=rng,
                **_eval_kwargs(params),
            )
            bt = {**table, "sigmoid": boxed["table"]}
            values.update({Q.boxed(Q.metric(m, "sigmoid")): boxed["table"][m] for m in METRICS})
            values.update({Q.boxed(k): x for k, x in _gaps(bt).items()})
            free = [f for f in res["fitted"] if f["estimator"] == "sigmoid"]
            mine_pp = {(r["task"], r["t"]): r for r in res["per_pair"] if r["estimator"] == "sigmoid"}
            box_pp = {(r["task"], r["t"]): r for r in boxed["per_pair"]}
            outside = outside_box(df, params, free)
            for o in outside:
                key = (o["task"], o["t"])
                o.update({m: mine_pp[key][m] for m in METRICS})
                o.update({f"boxed_{m}": box_pp[key][m] for m in METRICS})
            details["boxed"] = {
                "box": list(params.box_check),
                "n_keep": boxed_options(params)["n_keep"],
                "per_pair": boxed["per_pair"],
                "fitted": boxed["fitted"],
                "free_fits_outside": outside,
            }
        return Measurement(values, details)

    def control(self, kind, cparams, params: EstimatorComparisonParams, tables, rng, baseline):
        df = period_frame(tables, params)
        if kind == "beta_zero":
            res = estimator_table(
                df,
                params.tasks,
                "constant_loss_min",
                {"tau": params.tau, "kappa": params.kappa},
                rng=rng,
                **_eval_kwargs(params),
            )
            return Measurement(
                {Q.metric(m, "sigmoid"): res["table"][m] for m in METRICS},
                {"table": res["table"], "fitted": res["fitted"]},
            )
        n = cparams.n_shuffles or params.n_shuffles
        res = shuffled_z_advantage(
            df,
            params.tasks,
            rng=rng,
            n_shuffles=n,
            lam=params.lam,
            sigmoid_options=sigmoid_options(params),
            **_eval_kwargs(params),
        )
        return Measurement(
            {"advantage.id": res["advantage_mean"]},
            {"n": res["n"], "advantage_each": res["advantage_each"], "sigmoid_shuffled": res["sigmoid_shuffled"]},
        )

    def tail_support(self, params: EstimatorComparisonParams, tables, reimpl) -> dict:
        """What carries each split's sigmoid boundary: the training models above it, and the later ones."""
        fits = {(f["task"], f["t"]): f["params"] for f in reimpl.details["fitted"] if f["estimator"] == "sigmoid"}
        return split_tail_support(tables, params, fits)

    def resampling(self, params: EstimatorComparisonParams, tables, reimpl, *, cluster_col: str, quantities=None):
        from ..base import Resampling

        df = period_frame(tables, params)
        keep = ["z", "period", *params.tasks.values()]
        inits = _inits(reimpl.details["fitted"])
        kwargs = {
            "lam": params.lam,
            "ispline_lam": params.ispline_lam,
            "n_intervals": params.ispline_intervals,
            "sigmoid_options": {"n_random": 0},
            "ispline_options": {"n_random": 0},
            **_eval_kwargs(params),
            "map_fn": None,
        }
        # the estimators no read value is of are not fitted on a resample
        design = dict(frame=df[keep], tasks=params.tasks, inits=inits, kwargs=kwargs)
        estimators = _estimators_read(quantities)
        if estimators is not None:
            design["estimators"] = estimators
        return Resampling.of_fits(
            len(df),
            df[cluster_col].to_numpy(dtype=object),
            "the dated leaderboard rows (every period resampled together)",
            _table_on,
            design,
        )

    # -- findings ---------------------------------------------------------------------------------------

    def findings(self, ctx: Context) -> dict:
        v, uv = ctx.reimpl.values, (ctx.upstream.values if ctx.upstream.ok else {})
        cells = {t.quantity: t for t in ctx.targets if t.relation == "~"}
        pv = {name: t.paper for name, t in cells.items()}
        # the differences the claim draws, computed from the paper's own cells where it prints both
        for name, (m, a, b) in Q.GAPS.items():
            if Q.metric(m, a) in pv and Q.metric(m, b) in pv:
                pv[name] = pv[Q.metric(m, a)] - pv[Q.metric(m, b)]
        out = {
            "summary": self._summary(ctx, v, uv, cells),
            "table": self._table(ctx, v, uv, cells),
            "comparisons": self._comparisons(ctx, v, uv, pv),
            "ood_reading": self._ood_reading(ctx, v, uv, pv),
            "knots": self._knots(ctx, v),
        }
        if ctx.params.box_check is not None:
            out["box"] = self._box(ctx, v, uv, cells, pv)
        for c in ctx.controls:
            if not c.reimpl.ran:
                continue
            if c.control == "beta_zero":
                out["beta_zero"] = self._beta_zero(ctx, c, v)
            elif c.control == "shuffle_z":
                out["shuffle_z"] = self._shuffle_z(ctx, c, v)
        return out

    def _summary(self, ctx, v, uv, cells):
        def paper(name):
            return cells[name].paper_text if name in cells else None

        missed = [
            {
                "title": t.title,
                "role": t.role,
                "value": t.reimpl.value,
                "requirement": t.requirement,
                "beyond": t.reimpl.beyond,
                "decimals": t.decimals + 1,
            }
            for t in ctx.targets
            if t.outcome == "fails"
        ]
        facts = {
            "n_pairs": ctx.reimpl.details["n_pairs"],
            "n_tasks": len(ctx.params.tasks),
            "n_splits": len(ctx.data["splits"]),
            "missed": missed,
        }
        for m in ("pinball_id", "pinball_ood"):
            for e in ("sigmoid", "ispline"):
                name = Q.metric(m, e)
                facts[f"{m}_{e}"] = v[name]
                facts[f"{m}_{e}_paper"] = paper(name)
                facts[f"{m}_{e}_upstream"] = uv.get(name)
        facts["has_paper"] = any(
            facts[f"{m}_{e}_paper"] is not None for m in ("pinball_id", "pinball_ood") for e in ("sigmoid", "ispline")
        )
        if ctx.params.box_check is not None:
            sig = {name: t for name, t in cells.items() if name.endswith(".sigmoid")}
            facts["boxed_pinball_id"] = v[Q.boxed(Q.metric("pinball_id", "sigmoid"))]
            facts["boxed_pinball_ood"] = v[Q.boxed(Q.metric("pinball_ood", "sigmoid"))]
            facts["n_boxed_cells"] = len(sig)
            facts["boxed_missed"] = [
                t.title
                for name, t in sig.items()
                if not target_holds("~", v[Q.boxed(name)], paper=t.paper, tolerance=t.tolerance)
            ]
            facts["boxed_rescues"] = [
                t.title
                for name, t in sig.items()
                if t.reimpl.holds is False and target_holds("~", v[Q.boxed(name)], paper=t.paper, tolerance=t.tolerance)
            ]
        return F.Summary.of("measured", **facts)

    def _table(self, ctx, v, uv, cells):
        rows = [
            {
                "estimator": Q.ESTIMATOR_NAMES[e].capitalize() if e == "sigmoid" else Q.ESTIMATOR_NAMES[e],
                **{m: v[Q.metric(m, e)] for m in METRICS},
                **{f"{m}_upstream": uv.get(Q.metric(m, e)) for m in METRICS},
                **{
                    f"{m}_paper": cells[Q.metric(m, e)].paper_text if Q.metric(m, e) in cells else None for m in METRICS
                },
            }
            for e in ESTIMATORS
        ]
        cell_rows = [
            {
                "title": t.title,
                "role": t.role,
                "delta_reimpl": t.reimpl.delta,
                "delta_upstream": t.upstream.delta,
                "tolerance_text": t.tolerance_text,
                "holds": t.reimpl.holds,
            }
            for t in cells.values()
        ]
        return F.Table.of(
            "measured",
            rows=rows,
            cells=cell_rows,
            n_cells=len(cells),
            all_holding=bool(cells) and all(t.reimpl.holds is True for t in cells.values()),
            n_holding=sum(t.reimpl.holds is True for t in cells.values()),
            n_holding_upstream=sum(t.upstream.holds is True for t in cells.values()),
        )

    def _comparisons(self, ctx, v, uv, pv):
        rows = [
            {
                "title": t.title,
                "reimpl": t.reimpl.value,
                "upstream": t.upstream.value,
                "paper": pv.get(t.quantity),
                "requirement": t.requirement,
                "holds": t.reimpl.holds,
                "holds_upstream": t.upstream.holds,
            }
            for t in ctx.targets
            if t.relation != "~"
        ]
        return F.Comparisons.of(
            "measured",
            rows=rows,
            ood_gap=v["gap.pinball_ood"],
            ood_gap_upstream=uv.get("gap.pinball_ood"),
            ood_gap_paper=pv.get("gap.pinball_ood"),
        )

    def _ood_reading(self, ctx, v, uv, pv):
        """What "generalizing better out of distribution" can mean here.

        The state is whether the sigmoid's OOD calibration error is below the I-spline's. ``loss_reading``
        says how the OOD pinball losses compare: ``tie`` when their gap is no larger than what the I-spline's
        own unpinned knot count moves its OOD loss by over the claim's ``knot_grid`` (the paper cannot have
        told the two apart), else ``behind`` or ``ahead``. ``n_pairs_better``: the task-period pairs on which
        the sigmoid's OOD calibration error is the lower, of ``n_pairs``.
        """
        g, c = v["gap.pinball_ood"], v["gap.calibration_ood"]
        knots = ctx.reimpl.details["knot_rows"]
        spread = max(r["pinball_ood"] for r in knots) - min(r["pinball_ood"] for r in knots)
        loss_reading = "tie" if abs(g) <= spread else ("behind" if g > 0 else "ahead")
        pairs = ctx.reimpl.details["per_pair"]
        by = {(r["task"], r["t"], r["estimator"]): r for r in pairs}
        keys = sorted({(r["task"], r["t"]) for r in pairs})
        better = [k for k in keys if by[(*k, "sigmoid")]["calibration_ood"] < by[(*k, "ispline")]["calibration_ood"]]
        facts = {
            "loss_gap": abs(g),
            "loss_signed": g,
            "loss_reading": loss_reading,
            "knot_spread": spread,
            "n_knot_counts": len(knots),
            "loss_word": _sign_word(g, "behind", "ahead of"),
            "loss_gap_upstream": None if uv.get("gap.pinball_ood") is None else abs(uv["gap.pinball_ood"]),
            "loss_word_upstream": _sign_word(uv.get("gap.pinball_ood"), "behind", "ahead of"),
            "loss_gap_paper": None if pv.get("gap.pinball_ood") is None else abs(pv["gap.pinball_ood"]),
            "loss_word_paper": _sign_word(pv.get("gap.pinball_ood"), "behind", "ahead of"),
            "calibration_gap": abs(c),
            "calibration_signed": c,
            "calibration_word": _sign_word(c, "leads", "trails"),
            "calibration_upstream": uv.get("gap.calibration_ood"),
            "calibration_paper": pv.get("gap.calibration_ood"),
            "n_pairs": len(keys),
            "n_pairs_better": len(better),
        }
        return F.OodReading.of("better_calibrated" if c > 0 else "not_better_calibrated", **facts)

    def _box(self, ctx, v, uv, cells, pv):
        boxed = ctx.reimpl.details["boxed"]
        n_pairs = ctx.reimpl.details["n_pairs"]
        rows = []
        for m in METRICS:
            name = Q.metric(m, "sigmoid")
            t = cells.get(name)
            bv = v[Q.boxed(name)]
            rows.append(
                {
                    "title": t.title if t else ctx.spec.label_of(name),
                    "reimpl": v[name],
                    "boxed": bv,
                    "upstream": uv.get(name),
                    "paper_text": t.paper_text if t else None,
                    "boxed_within": target_holds("~", bv, paper=t.paper, tolerance=t.tolerance) if t else None,
                }
            )
        gap_rows = [
            {
                "title": ctx.spec.label_of(n),
                "reimpl": v[n],
                "boxed": v[Q.boxed(n)],
                "upstream": uv.get(n),
                "paper": pv.get(n),
            }
            for n in ("gap.pinball_id", "gap.pinball_ood", "gap.calibration_ood")
        ]
        outside = boxed["free_fits_outside"]
        largest = max(outside, key=lambda o: abs(o["pinball_ood"] - o["boxed_pinball_ood"]), default=None)
        change = abs(largest["pinball_ood"] - largest["boxed_pinball_ood"]) if largest else None
        shift = abs(v[Q.metric("pinball_ood", "sigmoid")] - v[Q.boxed(Q.metric("pinball_ood", "sigmoid"))])
        t_ood = cells.get(Q.metric("pinball_ood", "sigmoid"))
        facts = {
            "box": boxed["box"],
            "n_keep": boxed["n_keep"],
            "n_pairs": n_pairs,
            "rows": rows,
            "gap_rows": gap_rows,
            "outside": outside,
            "largest": None
            if largest is None
            else {
                "task": largest["task"],
                "t": largest["t"],
                "midpoint": largest["midpoint"],
                "change": change,
                "per_mean": change / n_pairs,
            },
            "total_shift": shift,
            "ood_cell_tolerance": t_ood.tolerance_text if t_ood else None,
            "ood_cell_moves_beyond_tolerance": bool(t_ood and not within_tolerance(shift, t_ood.tolerance)),
        }
        if uv:
            names = [Q.metric(m, "sigmoid") for m in METRICS]
            expl = box_explanation(v, uv, names)
            facts["arms"] = [{"title": ctx.spec.label_of(n), **e} for n, e in expl.items()]
            isp = [
                abs(v[Q.metric(m, "ispline")] - uv[Q.metric(m, "ispline")])
                for m in METRICS
                if uv.get(Q.metric(m, "ispline")) is not None
            ]
            facts["ispline_arm_gap"] = max(isp) if isp else None
        return F.Box.of("measured", **facts)

    def _beta_zero(self, ctx, c, v):
        cv = ctx.reimpl.controls[c.id].values
        rows = [
            {
                "metric": Q.METRIC_NAMES[m],
                "sigmoid": v[Q.metric(m, "sigmoid")],
                "beta_zero": cv[Q.metric(m, "sigmoid")],
                "change": cv[Q.metric(m, "sigmoid")] - v[Q.metric(m, "sigmoid")],
                "constant": v[Q.metric(m, "constant")],
            }
            for m in METRICS
        ]
        return F.BetaZero.of(
            "measured",
            id=c.id,
            rows=rows,
            calibration_ood=cv[Q.metric("calibration_ood", "sigmoid")],
            calibration_ood_constant=v[Q.metric("calibration_ood", "constant")],
        )

    def _shuffle_z(self, ctx, c, v):
        cv, cd = ctx.reimpl.controls[c.id].values, ctx.reimpl.controls[c.id].details
        facts = {
            "id": c.id,
            "n": cd["n"],
            "real": v["advantage.id"],
            "shuffled": cv["advantage.id"],
            "smallest": min(cd["advantage_each"]),
            "largest": max(cd["advantage_each"]),
            "ratio": cv["advantage.id"] / v["advantage.id"] if v["advantage.id"] else None,
            "level": None,
        }
        bz = next((x for x in ctx.controls if x.control == "beta_zero" and x.reimpl.ran), None)
        if bz is not None:
            level = ctx.reimpl.controls[bz.id].values[Q.metric("pinball_id", "sigmoid")]
            shuffled = v[Q.metric("pinball_id", "constant")] - cv["advantage.id"]
            facts.update(
                level=level,
                shuffled_sigmoid=shuffled,
                shuffled_ahead=level - shuffled,
                real_ahead=level - v[Q.metric("pinball_id", "sigmoid")],
            )
        return F.ShuffleZ.of("measured", **facts)

    def _knots(self, ctx, v):
        rows = ctx.reimpl.details["knot_rows"]
        words = {
            "gap.pinball_id": "the sigmoid's ID pinball loss is above the I-spline's",
            "gap.pinball_ood": "the sigmoid's OOD pinball loss is above the I-spline's",
            "gap.calibration_ood": "the sigmoid is better calibrated OOD than the I-spline",
        }
        orderings = []
        for name, what in words.items():
            positive_at = [r["n_intervals"] for r in rows if r[name] > 0]
            state = "always" if len(positive_at) == len(rows) else ("never" if not positive_at else "changes")
            orderings.append({"name": name, "what": what, "state": state, "positive_at": positive_at})
        ids = [r["pinball_id"] for r in rows]
        oods = [r["calibration_ood"] for r in rows]
        return F.Knots.of(
            "measured",
            spread_exceeds_gap=max(ids) - min(ids) > abs(v["gap.pinball_id"]),
            rows=rows,
            counts=[r["n_intervals"] for r in rows],
            orderings=orderings,
            id_min=min(ids),
            id_max=max(ids),
            ood_cal_min=min(oods),
            ood_cal_max=max(oods),
            id_spread=max(ids) - min(ids),
            id_gap=v["gap.pinball_id"],
        )

    # -- figures ----------------------------------------------------------------------------------------

    def plots(self, ctx: Context) -> dict:
        """Each estimator's four metrics for both arms and the paper, and the sigmoid under each control."""
        v, uv = ctx.reimpl.values, (ctx.upstream.values if ctx.upstream.ok else {})
        paper = {t.quantity: t.paper for t in ctx.targets if t.relation == "~"}
        rows = [
            {
                "label": Q.ESTIMATOR_NAMES[e][0].upper() + Q.ESTIMATOR_NAMES[e][1:],
                "kind": "estimator",
                "reimpl": {m: v[Q.metric(m, e)] for m in METRICS},
                "upstream": {m: uv.get(Q.metric(m, e)) for m in METRICS} if uv else None,
                "paper": {m: paper.get(Q.metric(m, e)) for m in METRICS},
            }
            for e in ESTIMATORS
        ]
        for c in ctx.controls:
            if not c.reimpl.ran:
                continue
            cv, cd = ctx.reimpl.controls[c.id].values, ctx.reimpl.controls[c.id].details
            cu = ctx.upstream.controls[c.id].values if (ctx.upstream.ok and c.id in ctx.upstream.controls) else None
            if c.control == "beta_zero":
                rows.append(
                    {
                        "label": "Sigmoid, β = 0",
                        "kind": c.control,
                        "id": c.id,
                        "reimpl": {m: cv.get(Q.metric(m, "sigmoid")) for m in METRICS},
                        "upstream": {m: cu.get(Q.metric(m, "sigmoid")) for m in METRICS} if cu else None,
                    }
                )
            elif c.control == "shuffle_z":
                # the shuffled sigmoid's ID loss is the Constant's minus the advantage (advantage.id's definition)
                mine = cd.get("sigmoid_shuffled") or {
                    "pinball_id": v[Q.metric("pinball_id", "constant")] - cv["advantage.id"]
                }
                theirs = None
                if cu and cu.get("advantage.id") is not None and uv.get(Q.metric("pinball_id", "constant")) is not None:
                    theirs = {"pinball_id": uv[Q.metric("pinball_id", "constant")] - cu["advantage.id"]}
                rows.append(
                    {
                        "label": "Sigmoid, z shuffled",
                        "kind": c.control,
                        "id": c.id,
                        "n": cd.get("n"),
                        "reimpl": {m: mine.get(m) for m in METRICS},
                        "upstream": {m: theirs.get(m) for m in METRICS} if theirs else None,
                    }
                )
        # the differences that decide the verdict: each headline cell's distance from the paper, in units of
        # its tolerance, in both arms and (with box_check) for the re-implementation refitted in the box
        cells = [
            {
                "title": t.title,
                "reimpl": t.reimpl.delta / t.tolerance if t.reimpl.delta is not None and t.tolerance else None,
                "upstream": t.upstream.delta / t.tolerance if t.upstream.delta is not None and t.tolerance else None,
                "boxed": (
                    (v[Q.boxed(t.quantity)] - t.paper) / t.tolerance
                    if t.tolerance and v.get(Q.boxed(t.quantity)) is not None
                    else None
                ),
                "tolerance_text": t.tolerance_text,
            }
            for t in ctx.targets
            if t.relation == "~" and t.role == "headline"
        ]
        return {
            "tau": ctx.params.tau,
            "kappa": ctx.params.kappa,
            "n_pairs": ctx.reimpl.details["n_pairs"],
            "rows": rows,
            "cells": cells,
        }


PROTOCOL = EstimatorComparison()
