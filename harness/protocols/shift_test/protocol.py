"""Protocol ``shift_test``: cross-benchmark shift test (paper Section 5.2.2, Equation 3)."""

from __future__ import annotations

import copy
import math

import numpy as np
from pydantic import Field, field_validator, model_validator

from ...core.errors import DataError, ProtocolError
from ...core.schema import Count, IsoDate, Label, Number
from ...stats.permutation import side_margin
from ...stats.power import shift_test_power
from ...stats.shift import eps_sensitivity, inflation_control, merge_aa_exports, relabel_control, shift_test
from ..base import Choice, Context, Measurement, Protocol, ProtocolParams
from . import CARD

#: A specification's power: fewer data sets and permutations than the claim's own.
MULTIVERSE_POWER = {"n_replicates": 400, "n_perm": 200}
#: The largest Monte Carlo s.e. of a power from that many data sets (a proportion's, at 1/2).
MULTIVERSE_POWER_SE = 0.5 / math.sqrt(MULTIVERSE_POWER["n_replicates"])


class PowerParams(ProtocolParams):
    """The measured power of the test: planted shifts on a grid, fresh data and permutations per replicate."""

    shifts: list[Number] = Field(min_length=2, description="planted shifts (logits), increasing")
    n_replicates: Count = Field(
        200, ge=20, le=100_000, description="R, simulated data sets (residual bootstrap of the fitted model) per shift"
    )
    n_perm: Count = Field(
        1000, ge=99, le=100_000, description="fresh permutations of the release labels in each replicate's test"
    )
    target: Number = Field(
        0.8, gt=0, lt=1, description="the power the minimal detectable shift (`power.min_detectable`) must reach"
    )

    @field_validator("shifts")
    @classmethod
    def _increasing(cls, shifts):
        if any(b <= a for a, b in zip(shifts, shifts[1:])) or shifts[0] < 0:
            raise ValueError(f"shifts must be non-negative and strictly increasing, got {shifts}")
        return shifts


class ShiftParams(ProtocolParams):
    math_table: Label = Field(
        description="name in `data/lock.yaml` of the input table of the earlier benchmark's (MATH-500) scores"
    )
    aime_table: Label = Field(
        description="name in `data/lock.yaml` of the input table of the later benchmark's (AIME-2025) scores and "
        "the release dates"
    )
    key: Label = Field(
        "model_id", description="column naming a model in both tables (once in each), on which they are joined"
    )
    x_col: Label = Field(description="column of the earlier benchmark's score in `math_table`, in percent")
    y_col: Label = Field(description="column of the later benchmark's score in `aime_table`, in percent")
    date_col: Label = Field(
        description="column of a model's release date in `aime_table`; a model dated on or after `cutoff` is "
        "post-release"
    )
    cutoff: IsoDate = Field(pattern=r"^\d{4}-\d{2}-\d{2}$", description="release date of the later benchmark")
    eps: Number = Field(
        gt=0, lt=0.5, description="scores, as fractions, are clipped to [eps, 1 - eps] before the logit"
    )
    n_bins: Count = Field(
        ge=1,
        le=1000,
        description="quantile strata of logit(earlier benchmark) on the support, within which the release labels "
        "are permuted (fewer when quantile edges tie)",
    )
    n_perm: Count = Field(
        ge=1,
        le=1_000_000,
        description="permutations of the release labels; the p-value is `(1 + #{gamma_perm >= gamma}) / (n_perm + 1)`",
    )
    alpha: Number = Field(gt=0, lt=1, description="significance level the claim reads its p-value against")
    n_perm_max: Count = Field(
        ge=1,
        le=10_000_000,
        description="cap on the permutations of a p-value within its Monte Carlo error of `alpha`: more are drawn, "
        "doubling the count, until its side of `alpha` is settled or this many are drawn (then: undecided)",
    )
    eps_grid: list[Number] = Field(
        min_length=1, description="clips (each in (0, 0.5)) at which the test is rerun for the eps sensitivity table"
    )
    n_perm_precise: Count = Field(
        0, ge=0, le=10_000_000, description="a second, larger permutation count for the p-value's limit (0: skip)"
    )
    power: PowerParams | None = Field(
        None, description="measure the test's power at planted shifts (left out: power is not measured)"
    )

    @field_validator("eps_grid")
    @classmethod
    def _eps(cls, grid):
        if any(not 0 < e < 0.5 for e in grid):
            raise ValueError(f"eps_grid values must lie in (0, 0.5), got {grid}")
        return grid

    @model_validator(mode="after")
    def _cap_above_the_count(self):
        if self.n_perm_max < self.n_perm:
            raise ValueError(f"n_perm_max must be at least n_perm ({self.n_perm}), got {self.n_perm_max}")
        return self


class InflatePost(ProtocolParams):
    shift: Number = Field(ge=-20, le=20, description="added to logit(later benchmark) of every post-release model")


class RelabelGroups(ProtocolParams):
    n_draws: Count = Field(
        200,
        ge=2,
        le=100_000,
        description="random relabellings of the release groups over the support (no strata, group sizes kept)",
    )


def _merged(params: ShiftParams, tables):
    try:
        return merge_aa_exports(
            tables.frame(params.math_table),
            tables.frame(params.aime_table),
            cutoff=params.cutoff,
            key=params.key,
            x_col=params.x_col,
            y_col=params.y_col,
            date_col=params.date_col,
        )
    except ValueError as exc:  # a column the claim names is missing, or duplicate keys
        files = ", ".join(tables.entry(t).path for t in (params.math_table, params.aime_table))
        raise DataError(f"{files}: {exc} (claim params math_table/aime_table/key/x_col/y_col/date_col)") from None


def _merged_problems(params: ShiftParams, m) -> list[str]:
    """What the merged tables ``m`` cannot be tested on: a score column not in percent, or a cutoff that leaves
    one release group empty (said by :func:`_arrays` before a run and by ``validate --data``)."""
    problems = []
    for param, col in (("x_col", params.x_col), ("y_col", params.y_col)):  # read as percentages (pct / 100)
        lo, hi = float(m[col].min()), float(m[col].max())
        if len(m) and not (lo >= 0 and 1 < hi <= 100):
            problems.append(
                f"params.{param}: column {col!r} must hold percentages from 0 to 100, but its values run from "
                f"{lo:g} to {hi:g}" + (" (fractions? name the column of percentages)" if hi <= 1 else "")
            )
    n_post = int(m["post"].sum())
    if n_post in (0, len(m)):
        dates = m[params.date_col]
        span = f" (their dates run from {dates.min():%Y-%m-%d} to {dates.max():%Y-%m-%d})" if len(m) else ""
        problems.append(
            f"params.cutoff: {params.cutoff} must split the {len(m)} models found in both tables into two release "
            f"groups, some dated before it and some on or after it, but {n_post} are on or after it{span}"
        )
    return problems


def _arrays(params, tables):
    m = _merged(params, tables)
    problems = _merged_problems(params, m)
    if problems:
        where = ", ".join(tables.entry(t).path for t in (params.math_table, params.aime_table))
        raise DataError(f"{where}: " + "; ".join(problems))
    return m[params.x_col].to_numpy(float), m[params.y_col].to_numpy(float), m["post"].to_numpy(bool)


def _test_kw(params: ShiftParams) -> dict:
    """The test's settings besides the clip: its strata, its permutations and their refinement at alpha."""
    return {"n_bins": params.n_bins, "n_perm": params.n_perm, "alpha": params.alpha, "n_perm_max": params.n_perm_max}


def _permutations(test: dict) -> dict:
    """What a p-value's decision at alpha rests on (:func:`harness.stats.permutation.refined_p_value`)."""
    return {k: test[k] for k in ("n_perm", "n_perm_ge", "p_value_mc_se", "decision")}


def _power_kept(study: dict) -> dict:
    """What the report of a power study (:func:`harness.stats.power.shift_test_power`) reads: the curve, the power
    and the interval's coverage at the fitted shift, the minimal detectable shift and its range."""
    at = ("shift", "power", "mc_se", "coverage", "coverage_mc_se")
    return {
        "curve": {k: study["curve"][k] for k in ("shifts", "power", "mc_se")},
        "at_observed": {k: study["at_observed"][k] for k in at},
        "minimal_shift": {k: study["minimal_shift"][k] for k in ("shift", "max_power")},
        "minimal_shift_range": study["minimal_shift_range"],
    }


class ShiftTest(Protocol):
    card = CARD
    Params = ShiftParams
    controls = {"inflate_post": InflatePost, "relabel_groups": RelabelGroups}
    CHOICES = {
        "cutoff": Choice(
            "the release date that splits models into before and after",
            "estimand",
            "the claim defines the post-release group by the later benchmark's release; another date tests another "
            "group of models",
        ),
        "n_bins": Choice(
            "the bins of the earlier score that the test stratifies by",
            "analysis",
            "the strata of the permutation test: a device of the test, not named by the claim",
        ),
        "eps": Choice(
            "the clip of proportions before the logit",
            "analysis",
            "a numerical convention for scores of 0 or 100% on the logit scale, not named by the claim",
        ),
    }
    INTERVALS = {"gamma": ("gamma_lo", "gamma_hi")}

    def data_problems(self, params, tables):
        try:
            return _merged_problems(params, _merged(params, tables))
        except DataError as exc:  # a key named twice in a table
            return [str(exc)]

    JOINT_NULL = {"effect": "gamma", "p_value": "p_value"}

    def columns(self, params: ShiftParams):
        return [
            ("math_table", params.math_table, {"key": params.key, "x_col": params.x_col}),
            ("aime_table", params.aime_table, {"key": params.key, "y_col": params.y_col, "date_col": params.date_col}),
        ]

    def data_summary(self, params: ShiftParams, tables):
        m = _merged(params, tables)
        return {
            "earlier_rows": int(len(tables.frame(params.math_table))),
            "later_rows": int(len(tables.frame(params.aime_table))),
            "merged_rows": int(len(m)),
        }

    #: A null claim's specifications each report their power: a test that cannot detect the shift at a
    #: specification says nothing there by being not significant.
    MULTIVERSE_REPORTS = {
        "power.at_observed": "at each specification's own γ; {n_replicates} data sets and {n_perm} permutations each, "
        "a Monte Carlo s.e. of at most {se:g}".format(**MULTIVERSE_POWER, se=MULTIVERSE_POWER_SE)
    }

    def multiverse_params(self, params: ShiftParams) -> dict:
        pw = params.power and {**params.power.model_dump(), **MULTIVERSE_POWER}
        return {"n_perm_precise": 0, "power": pw, "eps_grid": [params.eps]}

    def decision_margin(self, params: ShiftParams, quantity: str, threshold: float) -> float | None:
        """A permutation p-value's side of a level is settled beyond its :func:`~harness.stats.permutation.side_margin`
        from ``n`` permutations. At ``alpha`` the p-value was
        refined until settled or ``n_perm_max`` (:func:`harness.stats.permutation.refined_p_value`), so ``n`` is
        ``n_perm_max``: its margin is the smallest, and reads each p-value as the refinement decided it."""
        if quantity != "p_value" or not 0 < threshold < 1:
            return None
        n = params.n_perm_max if math.isclose(threshold, params.alpha) else params.n_perm
        return side_margin(threshold, n)

    def joint_null(self, params: ShiftParams, specifications: list, tables, rng, n: int) -> dict:
        """Data sets under the claim's own null: the release label permuted within the claim's strata of its
        common support (the test's own scheme), every specification's test run on each."""
        from ...stats.specification_null import shift_specification_null

        x, y, post = _arrays(params, tables)
        specs = [{"eps": s.eps, "n_bins": s.n_bins, "n_perm": s.n_perm} for s in specifications]
        paper = {"eps": params.eps, "n_bins": params.n_bins}
        return shift_specification_null(x, y, post, paper=paper, specs=specs, n_datasets=n, rng=rng, alpha=params.alpha)

    def measure(self, params: ShiftParams, tables, rng):
        x, y, post = _arrays(params, tables)
        kw = _test_kw(params)
        from scipy.stats import norm  # here: scipy.stats costs a second to import, and a warm build needs none
        from scipy.stats import t as student_t

        start = copy.deepcopy(rng)  # the eps table reuses the test's stream: rows differ by eps only
        res = shift_test(x, y, post, rng=rng, eps=params.eps, interval_alpha=params.alpha, **kw)
        values = {"n_merged": res["n_merged"], "n_support": res["n"]}
        values |= {k: res[k] for k in ("n_pre", "n_post", "slope", "gamma", "se", "t", "p_value", "gamma_lo")}
        values |= {k: res[k] for k in ("gamma_hi", "r2")} | {"odds_ratio": math.exp(res["gamma"])}
        values |= {
            "null_mean": res["null_mean"],
            "upper95": res["gamma"] + norm.ppf(0.95) * res["se"],
            # The textbook alternative: one-sided t-test of gamma = 0 with n - 3 degrees of freedom.
            "p_classical": float(student_t.sf(res["t"], res["n"] - 3)),
        }
        details = {"n_bins_used": res["n_bins_used"], "permutations": {"run": _permutations(res)}}
        if params.n_perm_precise:
            precise = shift_test(
                x, y, post, rng=copy.deepcopy(start), eps=params.eps, **{**kw, "n_perm": params.n_perm_precise}
            )
            values["p_value_precise"] = precise["p_value"]
            values["null_mean_precise"] = precise["null_mean"]
            details["permutations"]["precise"] = _permutations(precise)
        details["eps_sensitivity"] = [
            {k: r[k] for k in ("eps", "n", "gamma", "se", "p_value", "n_perm")}
            for r in eps_sensitivity(x, y, post, rng=start, eps_grid=params.eps_grid, **kw)
        ]
        if params.power is not None:
            pkw = {**params.power.model_dump(), "eps": params.eps, "n_bins": params.n_bins, "alpha": params.alpha}
            main = shift_test_power(x, y, post, rng=rng, mean_model="linear", **pkw)
            strata = shift_test_power(x, y, post, rng=rng, mean_model="strata", **pkw)
            values["power.at_observed"] = main["at_observed"]["power"]
            values["power.min_detectable"] = main["minimal_shift"]["shift"]
            details["power"] = {"linear": _power_kept(main), "strata": _power_kept(strata)}
        return Measurement(values, details)

    def control(self, kind, cparams, params: ShiftParams, tables, rng, baseline):
        x, y, post = _arrays(params, tables)
        if kind == "inflate_post":
            res = inflation_control(x, y, post, rng=rng, shift=cparams.shift, eps=params.eps, **_test_kw(params))
            details = {"null_mean": res["null_mean"], "permutations": _permutations(res)}
            return Measurement({"gamma": res["gamma"], "p_value": res["p_value"]}, details)
        res = relabel_control(x, y, post, rng=rng, n_draws=cparams.n_draws, eps=params.eps)
        return Measurement({"gamma_mean": res["mean"], "gamma_sd": res["sd"]})

    # -- figures ----------------------------------------------------------------------------------------

    def plots(self, ctx: Context) -> dict:
        """The permutation null: the test rerun on the measurement's own stream (that of
        :func:`harness.build.runner._generators`), so that its histogram is the recorded test's."""
        p = ctx.params
        x, y, post = _arrays(p, ctx.tables)
        stream = np.random.default_rng(np.random.SeedSequence(ctx.spec.claim.seed).spawn(1)[0])
        test = shift_test(x, y, post, rng=stream, eps=p.eps, **_test_kw(p))
        if test["p_value"] != ctx.reimpl.values["p_value"]:
            raise ProtocolError(
                f"the permutation null redrawn for the figure gives p = {test['p_value']!r}, the measurement "
                f"{ctx.reimpl.values['p_value']!r}: the figure's stream is not the measurement's"
            )
        return {"null": test["null_histogram"]}


PROTOCOL = ShiftTest()
