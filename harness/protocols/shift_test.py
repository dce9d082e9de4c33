"""Protocol ``shift_test``: cross-benchmark shift test (paper Section 5.2.2, Equation 3).

Values (``measure``): ``n_merged``, ``n_support``, ``n_pre``, ``n_post``,
``slope``, ``gamma``, ``se``, ``t``, ``p_value``, ``r2``, ``odds_ratio``
(``exp(gamma)``), ``null_mean`` (centre of the stratified permutation null),
``upper95`` (one-sided 95% upper bound ``gamma + z_0.95 * se``),
``p_classical`` (one-sided t-test of gamma = 0, n - 3 degrees of freedom).
Details: the support limits, the Monte Carlo error of ``p`` and a table of
``gamma`` and ``p`` against the clip ``eps``.

Controls: ``inflate_post`` (add ``shift`` to logit(AIME) of every
post-release model; values ``gamma``, ``p_value``, ``gamma_rise``) and
``relabel_groups`` (the release label shuffled over the support ``n_draws``
times; values ``gamma_mean``, ``gamma_sd``).
"""

from __future__ import annotations

import copy
import math

from pydantic import Field
from scipy.stats import norm
from scipy.stats import t as student_t

from ..stats.shift import eps_sensitivity, inflation_control, merge_aa_exports, relabel_control, shift_test
from ..errors import DataError
from .base import Measurement, Protocol, ProtocolParams, register


class ShiftParams(ProtocolParams):
    math_table: str = "aa_math500"
    aime_table: str = "aa_aime2025"
    key: str = "model_id"
    x_col: str = "math_500_pct"
    y_col: str = "aime_2025_pct"
    date_col: str = "release_date"
    cutoff: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$", description="release date of the later benchmark")
    eps: float = Field(1e-6, gt=0, lt=0.5)
    n_bins: int = Field(10, ge=1)
    n_perm: int = Field(2000, ge=1)
    eps_grid: list[float] = Field(default_factory=lambda: [1e-6, 1e-4, 1e-3, 1e-2], min_length=1)
    n_perm_precise: int = Field(0, ge=0, description="a second, larger permutation count for the p-value's limit (0: skip)")


class InflatePost(ProtocolParams):
    shift: float


class RelabelGroups(ProtocolParams):
    n_draws: int = Field(200, ge=2)


def _merged(params: ShiftParams, tables):
    try:
        return merge_aa_exports(tables.frame(params.math_table), tables.frame(params.aime_table), cutoff=params.cutoff,
                                key=params.key, x_col=params.x_col, y_col=params.y_col, date_col=params.date_col)
    except ValueError as exc:  # a column the claim names is missing, or duplicate keys
        files = ", ".join(str(tables.root / tables.entry(t).path) for t in (params.math_table, params.aime_table))
        raise DataError(f"{files}: {exc} (claim params math_table/aime_table/key/x_col/y_col/date_col)") from None


def _arrays(params, tables):
    m = _merged(params, tables)
    return m[params.x_col].to_numpy(float), m[params.y_col].to_numpy(float), m["post"].to_numpy(bool)


@register
class ShiftTest(Protocol):
    name = "shift_test"
    Params = ShiftParams
    controls = {"inflate_post": InflatePost, "relabel_groups": RelabelGroups}
    requires_inputs = ("aa_math500", "aa_aime2025")
    template = "shift_test.md.j2"
    adapter = "shift_test.py"
    summary = "regress logit(later benchmark) on logit(earlier benchmark) and a post-release indicator"

    def data_summary(self, params: ShiftParams, tables):
        m = _merged(params, tables)
        return {"aa_math500_rows": int(len(tables.frame(params.math_table))),
                "aa_aime2025_rows": int(len(tables.frame(params.aime_table))), "merged_rows": int(len(m))}

    def measure(self, params: ShiftParams, tables, rng):
        x, y, post = _arrays(params, tables)
        kw = {"n_bins": params.n_bins, "n_perm": params.n_perm}
        start = copy.deepcopy(rng)  # the eps table reuses the test's stream: rows differ by eps only
        res = shift_test(x, y, post, rng=rng, eps=params.eps, **kw)
        values = {"n_merged": res["n_merged"], "n_support": res["n"], "n_pre": res["n_pre"], "n_post": res["n_post"],
                  "slope": res["slope"], "gamma": res["gamma"], "se": res["se"], "t": res["t"],
                  "p_value": res["p_value"], "r2": res["r2"], "odds_ratio": math.exp(res["gamma"]),
                  "null_mean": res["null_mean"], "upper95": res["gamma"] + norm.ppf(0.95) * res["se"],
                  # The textbook alternative: one-sided t-test of gamma = 0 with n - 3 degrees of freedom.
                  "p_classical": float(student_t.sf(res["t"], res["n"] - 3))}
        if params.n_perm_precise:
            precise = shift_test(x, y, post, rng=copy.deepcopy(start), eps=params.eps, n_bins=params.n_bins,
                                 n_perm=params.n_perm_precise)
            values["p_value_precise"] = precise["p_value"]
            values["null_mean_precise"] = precise["null_mean"]
        details = {"test": res, "eps_sensitivity": eps_sensitivity(x, y, post, rng=start, eps_grid=params.eps_grid, **kw)}
        return Measurement(values, details)

    def control(self, kind, cparams, params: ShiftParams, tables, rng, baseline):
        x, y, post = _arrays(params, tables)
        if kind == "inflate_post":
            res = inflation_control(x, y, post, rng=rng, shift=cparams.shift, eps=params.eps,
                                    n_bins=params.n_bins, n_perm=params.n_perm)
            return Measurement({"gamma": res["gamma"], "p_value": res["p_value"],
                                "gamma_rise": res["gamma"] - baseline.values["gamma"]}, {"test": res})
        res = relabel_control(x, y, post, rng=rng, n_draws=cparams.n_draws, eps=params.eps)
        res.pop("gammas")
        return Measurement({"gamma_mean": res["mean"], "gamma_sd": res["sd"]}, res)
