"""Protocol ``estimator_comparison``: the sigmoid boundary against three baselines (Section 3.1.1, Table 2)."""

from __future__ import annotations

from pydantic import Field, field_validator

from ...core.schema import Count, Number
from ...stats.estimator_comparison import (
    baseline_comparison,
    estimator_table,
    ispline_knot_sensitivity,
    shuffled_z_advantage,
)
from ..base import Choice, Measurement, ProtocolParams
from ..leaderboard import DATA_CHOICES, ESTIMATOR_CHOICES, EstimatorParams, LeaderboardParams
from ..periods import (
    PeriodParams,
    PeriodProtocol,
    boxed_options,
    outside_box,
    period_frame,
    period_kwargs,
    period_resampling,
    sigmoid_options,
)
from . import CARD
from . import quantities as Q

METRICS, ESTIMATORS = Q.METRICS, Q.ESTIMATORS
#: Why a setting of the I-spline is an analysis choice.
_LEFT_OPEN = "a setting of the comparison estimator, which Appendix B.3 leaves open"


class EstimatorComparisonParams(LeaderboardParams, EstimatorParams, PeriodParams):
    ispline_intervals: Count = Field(3, ge=1, le=50, description="quantile intervals of the training z for the knots")
    ispline_lam: Number = Field(1e-4, ge=0, description="ridge on the I-spline weights")
    knot_grid: list[Count] = Field(
        default_factory=lambda: [2, 3, 4, 5, 6],
        min_length=1,
        description="knot counts (distinct, 1 to 50) the I-spline is also fitted at, to show whether each asserted "
        "ordering holds at every one",
    )
    n_shuffles: Count = Field(5, ge=1, le=1000, description="shuffles of shuffle_z when its own params omit it")

    @field_validator("weighting")
    @classmethod
    def _rows(cls, weighting):
        if weighting != "rows":
            raise ValueError(
                f"the I-spline and the baselines take no weights: weighting must be 'rows', got {weighting!r}"
            )
        return weighting

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


def _table_values(t: dict[str, dict[str, float]]) -> dict[str, float]:
    """Table 2's values from a comparison's table ``t`` (``{estimator: {metric: value}}``): the metrics of each
    estimator it holds, then the gaps of :data:`Q.GAPS` whose two estimators it holds."""
    out = {Q.metric(m, e): t[e][m] for e in ESTIMATORS if e in t for m in METRICS}
    return out | {name: t[a][m] - t[b][m] for name, (m, a, b) in Q.GAPS.items() if a in t and b in t}


def _pair_gaps(per_pair: list[dict]) -> list[dict]:
    """Every gap of :data:`Q.GAPS` on each task-period pair alone (Table 2's cells are their means)."""
    by: dict[tuple, dict] = {}
    for r in per_pair:
        by.setdefault((r["task"], r["t"]), {}).update({Q.metric(m, r["estimator"]): r[m] for m in METRICS})
    return [{"task": task, "t": t, **Q.gap_values(v)} for (task, t), v in by.items()]


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


def _inits(fitted: list[dict]) -> dict:
    """``{"sigmoid" | "ispline": {(task, t): params}}`` from the ``fitted`` records of a comparison."""
    return {
        kind: {(f["task"], f["t"]): f["params"] for f in fitted if f["estimator"] == kind}
        for kind in ("sigmoid", "ispline")
    }


def _comparison(params: EstimatorComparisonParams, **options) -> dict:
    """The settings of the comparison's fits: the sigmoid's, the I-spline's, the periods' (``options`` replace or add
    some)."""
    kw = {"lam": params.lam, "ispline_lam": params.ispline_lam, "n_intervals": params.ispline_intervals}
    return {**kw, "sigmoid_options": sigmoid_options(params), **period_kwargs(params), **options}


def _table_on(indices, rng, *, frame, tasks, inits, kwargs, estimators=None) -> tuple[dict, dict]:
    """Table 2 on the rows ``indices``, each sigmoid and I-spline fit started from ``inits``: its values, and
    the fits' parameters (``inits`` in kind). ``estimators``: only theirs (default: every estimator's)."""
    df = frame.iloc[indices].reset_index(drop=True)
    res = baseline_comparison(df, tasks, rng=rng, n_shuffles=0, inits=inits, estimators=estimators, **kwargs)
    return _table_values(res["table"]), _inits(res["fitted"])


class EstimatorComparison(PeriodProtocol):
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
            "the knot rule of the I-spline (quantile intervals of the training z)", "analysis", _LEFT_OPEN
        ),
        "ispline_lam": Choice("the ridge on the I-spline's weights", "analysis", _LEFT_OPEN),
        # weighting is left out: the I-spline and the baselines take no weights
        "scores": DATA_CHOICES["scores"],
    }

    def multiverse_params(self, params: EstimatorComparisonParams) -> dict:
        return {"box_check": None, "knot_grid": [params.ispline_intervals]}

    def measure(self, params: EstimatorComparisonParams, tables, rng):
        df, period = period_frame(tables, params), period_kwargs(params)
        res = baseline_comparison(df, params.tasks, rng=rng, n_shuffles=0, **_comparison(params))
        table = res["table"]
        values = _table_values(table)

        # the I-spline row at every other knot count (the claimed count is the row above)
        others = [k for k in params.knot_grid if k != params.ispline_intervals]
        ks = {"rows": []}
        if others:
            ks = ispline_knot_sensitivity(
                df, params.tasks, rng=rng, n_intervals_grid=others, ispline_lam=params.ispline_lam, **period
            )
        by_k = {r["n_intervals"]: r for r in ks["rows"]} | {params.ispline_intervals: table["ispline"]}
        details = {
            # the sigmoid and I-spline fits: the starts of the bootstrap's refits and what the tail table reads
            "fitted": [{k: f[k] for k in ("task", "t", "estimator", "params")} for f in res["fitted"]],
            "pair_gaps": _pair_gaps(res["per_pair"]),
            # the I-spline's four metrics at every knot count of the grid (the claimed one is the table's)
            "knot_rows": [{"n_intervals": k, **{m: by_k[k][m] for m in METRICS}} for k in sorted(by_k)],
        }
        if params.box_check is not None:
            boxed = estimator_table(
                df, params.tasks, "sigmoid", {**params.loss(), **boxed_options(params)}, rng=rng, **period
            )
            # the sigmoid's metrics refitted in the box, then the gaps with the sigmoid so refitted
            sigmoid = {Q.metric(m, "sigmoid") for m in METRICS}
            bt = _table_values({**table, "sigmoid": boxed["table"]})
            values.update({Q.boxed(k): x for k, x in bt.items() if k in sigmoid or k in Q.GAPS})
            free = [f for f in res["fitted"] if f["estimator"] == "sigmoid"]
            mine_pp = {(r["task"], r["t"]): r for r in res["per_pair"] if r["estimator"] == "sigmoid"}
            box_pp = {(r["task"], r["t"]): r for r in boxed["per_pair"]}
            outside = outside_box(df, params, free)
            for o in outside:
                key = (o["task"], o["t"])
                o.update({m: mine_pp[key][m] for m in ("pinball_id", "pinball_ood")})
                o.update({f"boxed_{m}": box_pp[key][m] for m in ("pinball_id", "pinball_ood")})
            details["boxed"] = {"box": list(params.box_check), "free_fits_outside": outside}
        return Measurement(values, details)

    def control(self, kind, cparams, params: EstimatorComparisonParams, tables, rng, baseline):
        df, period = period_frame(tables, params), period_kwargs(params)
        if kind == "beta_zero":
            loss = {"tau": params.tau, "kappa": params.kappa}  # β = 0: the sigmoid is a constant, the loss's minimiser
            res = estimator_table(df, params.tasks, "constant_loss_min", loss, rng=rng, **period)
            return Measurement({Q.metric(m, "sigmoid"): res["table"][m] for m in METRICS})
        n = cparams.n_shuffles or params.n_shuffles
        res = shuffled_z_advantage(
            df, params.tasks, rng=rng, n_shuffles=n, lam=params.lam, sigmoid_options=sigmoid_options(params), **period
        )
        return Measurement(
            {"advantage.id": res["advantage_mean"]},
            {"n": res["n"], "advantage_each": res["advantage_each"], "sigmoid_shuffled": res["sigmoid_shuffled"]},
        )

    def resampling(self, params: EstimatorComparisonParams, tables, reimpl, *, cluster_col: str, quantities=None):
        # each resample's fits start from the claim's (no random starts), one after the other
        kwargs = _comparison(params, sigmoid_options={"n_random": 0}, ispline_options={"n_random": 0}, map_fn=None)
        # the estimators no read value is of are not fitted on a resample
        estimators = _estimators_read(quantities)
        design = {} if estimators is None else {"estimators": estimators}
        inits = _inits(reimpl.details["fitted"])
        return period_resampling(params, tables, cluster_col, _table_on, inits=inits, kwargs=kwargs, **design)


PROTOCOL = EstimatorComparison()
