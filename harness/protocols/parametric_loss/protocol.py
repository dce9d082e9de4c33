"""Protocol ``parametric_loss``: Hoffmann et al.'s parametric loss fitted to training runs, and what follows."""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from pydantic import Field, field_validator, model_validator

from ...core.errors import DataError
from ...core.schema import Count, Label, Number
from ...stats import chinchilla as ch
from ..base import Choice, Measurement, Protocol, ProtocolParams
from . import CARD
from .quantities import BATCHES, PARAMS, natural

Theta = list[Number]
#: Why a setting of the bootstrap is an analysis choice.
_HOW_MADE = "how the interval is made, not what it estimates"


class LossParams(ProtocolParams):
    table: Label = Field(description="name in `data/lock.yaml` of the table of training runs")
    n_col: Label = Field("Model Size", description="column of a run's parameter count N")
    flop_col: Label = Field("Training FLOP", description="column of a run's training compute C in FLOP (D = C/(6N))")
    loss_col: Label = Field("loss", description="column of a run's final loss")
    exclude_highest: Count = Field(5, ge=0, le=50, description="runs with the highest loss left out")
    y_col: Label = Field("y", description="column of a run's SVG coordinate on the figure's model-size axis")
    delta: Number = Field(1e-3, gt=0, le=1, description="the Huber loss's δ, on log losses")
    y_axis: Literal["extracted", "corrected"] = Field(
        "extracted",
        description="model sizes as the table has them (`extracted`), or read again from `y_col` on a log axis "
        "through `corrected_ticks` (`corrected`)",
    )
    corrected_ticks: Theta = Field(
        default_factory=list,
        description="`[svg_0, N_0, svg_1, N_1]`: two ticks of the model-size axis, their SVG coordinates and values",
    )
    tex: Theta = Field(
        min_length=5, max_length=5, description="Hoffmann et al.'s TeX-source estimates (log A, log B, log E, α, β)"
    )
    printed: Theta = Field(
        min_length=5, max_length=5, description="Hoffmann et al.'s printed estimates (A, B, E, α, β)"
    )
    interval_a: Theta = Field(
        min_length=2, max_length=2, description="Hoffmann et al.'s interval for a = β/(α+β): (lower, upper)"
    )
    compute: Number = Field(gt=0, description="training compute (FLOP) at which tokens per parameter are read")

    grid: bool = Field(False, description="fit by Hoffmann et al.'s method (their grid of starts, sum and mean)")
    n_boot: Count = Field(0, ge=0, le=20_000, description="bootstrap resamples of the runs (0: no bootstrap)")
    boot_start: Literal["tex", "fit"] = Field(
        "tex", description="where each resample's fit starts: Hoffmann et al.'s TeX values, or the refit"
    )
    boot_gtol: Number = Field(1e-5, gt=0, le=1, description="BFGS's gradient tolerance in each resample")
    interval: Literal["percentile", "normal"] = Field(
        "percentile", description="the bootstrap interval: percentiles, or normal with the bootstrap standard error"
    )
    level: Number = Field(0.8, gt=0, lt=1, description="the bootstrap interval's coverage")

    @field_validator("corrected_ticks")
    @classmethod
    def _two_ticks(cls, ticks):
        if ticks and (len(ticks) != 4 or ticks[0] == ticks[2] or min(ticks[1], ticks[3]) <= 0):
            raise ValueError(f"must be [svg_0, N_0, svg_1, N_1] with two SVG coordinates apart and N > 0, got {ticks}")
        return ticks

    @model_validator(mode="after")
    def _ticks_given(self):
        if self.y_axis == "corrected" and not self.corrected_ticks:
            raise ValueError("y_axis 'corrected' needs corrected_ticks: [svg_0, N_0, svg_1, N_1]")
        return self


class ShuffleLosses(ProtocolParams):
    n_boot: Count = Field(0, ge=0, le=20_000, description="bootstrap resamples under the control")


class PlantLaw(ProtocolParams):
    noise_sd: Number = Field(gt=0, le=1, description="standard deviation of the log-loss noise")
    n_boot: Count = Field(0, ge=0, le=20_000, description="bootstrap resamples under the control")


class LossScale(ProtocolParams):
    factor: Number = Field(gt=0, description="the mean Huber loss is multiplied by this before L-BFGS-B")


class RoundPrinted(ProtocolParams):
    digits: Count = Field(ge=1, le=12, description="significant digits the TeX values are rounded to")


def _log_axis(svg, ticks) -> np.ndarray:
    """Data values of SVG coordinates on a logarithmic axis through two ticks ``(svg_0, value_0, svg_1, value_1)``:
    ``value_0 (value_1/value_0) ** ((svg - svg_0) / (svg_1 - svg_0))``, as the extraction notebook's ``LogScale``
    reads N off the figure's y axis."""
    s0, v0, s1, v1 = ticks
    return v0 * (v1 / v0) ** ((np.asarray(svg, dtype=float) - s0) / (s1 - s0))


def _runs(params: LossParams, tables) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(log N, log D, log L)`` of the runs kept, in table order."""
    frame = tables.frame(params.table)
    cols = [params.n_col, params.flop_col, params.loss_col]
    x = frame[cols].to_numpy(dtype=float)
    if not np.all(np.isfinite(x)) or np.any(x <= 0):
        raise DataError(f"{params.table}: columns {cols} must hold finite positive numbers in every row")
    n, c, loss = x.T
    if params.y_axis == "corrected":  # the extraction's axis calibration, read again
        n = _log_axis(frame[params.y_col].to_numpy(dtype=float), params.corrected_ticks)
    keep = ch.keep_below_highest(loss, params.exclude_highest)
    return np.log(n[keep]), np.log(c[keep] / (6 * n[keep])), np.log(loss[keep])


def _theta_of(printed) -> np.ndarray:
    a, b, e, alpha, beta = printed
    return np.array([math.log(a), math.log(b), math.log(e), alpha, beta])


def _interval(samples, level: float, how: str) -> tuple[float, float]:
    """The bootstrap interval of ``samples``: their percentiles, or normal about their mean with their s.d."""
    if how == "percentile":
        lo, hi = np.percentile(samples, [50 * (1 - level), 50 * (1 + level)])
        return float(lo), float(hi)
    from scipy.stats import norm

    mean, half = float(np.mean(samples)), norm.ppf(0.5 + level / 2) * float(np.std(samples, ddof=1))
    return mean - half, mean + half


def _width(samples, level: float, how: str) -> float:
    lo, hi = _interval(samples, level, how)
    return hi - lo


def _measure(params: LossParams, runs, rng, *, printed, n_boot: int, scale: float = 1.0, profile=False) -> Measurement:
    log_n, log_d, log_l = runs
    delta, tex = params.delta, np.asarray(params.tex, dtype=float)
    fit = ch.fit_likelihood(log_n, log_d, log_l, delta=delta, start=tex)
    values = natural("fit", fit.theta) | {"fit.loglik": fit.loglik, "n_runs": len(log_l)}
    if profile:  # B held 10% either side of the refit's, the rest refitted: how flat the ridge is
        start = np.append(fit.theta, fit.log_scale)
        drops = [
            fit.loglik
            - ch.profile_loglik(log_n, log_d, log_l, index=1, value=fit.theta[1] + step, start=start, delta=delta)
            for step in (math.log(0.9), math.log(1.1))
        ]
        values["profile.B"] = max(drops)
    details = {"fit": {"converged": fit.converged, "iterations": fit.nit, "message": fit.message}}
    for which, theta in (("tex", tex), ("printed", printed)):
        ll, _ = ch.loglik_at(theta, log_n, log_d, log_l, delta=delta)
        lr, p = ch.likelihood_ratio(fit.loglik, ll, df=5)
        values |= {f"loglik.{which}": ll, f"lr.{which}": lr, f"p.{which}": p}
    if fit.theta[3] > 0 and fit.theta[4] > 0:  # a law whose loss falls with N and D has an optimal allocation
        mid = sum(params.interval_a) / 2
        values["ratio.fit"] = float(ch.tokens_per_parameter(fit.theta, params.compute))
        values["ratio.tex"] = float(ch.tokens_per_parameter(tex, params.compute))
        values["ratio.printed"] = float(ch.tokens_per_parameter(printed, params.compute))
        values["ratio.reported"] = float(ch.tokens_per_parameter(tex, params.compute, a_share=mid))
    shift = np.exp(ch.log_law(printed, log_n, log_d) - ch.log_law(tex, log_n, log_d)) - 1
    values |= {"bias.mean": float(np.mean(shift)), "bias.max": float(np.max(np.abs(shift)))}
    if params.grid:
        values |= _grid(log_n, log_d, log_l, delta, scale, details)
    if n_boot:
        values |= _bootstrap(params, runs, rng, n_boot, fit.theta, details)
    return Measurement(values, details)


def _grid(log_n, log_d, log_l, delta, scale, details) -> dict[str, float]:
    summed = ch.fit_grid(log_n, log_d, log_l, delta=delta, reduce="sum")
    mean = ch.fit_grid(log_n, log_d, log_l, delta=delta, reduce="mean", scale=scale)
    at_mean = ch.huber_objective(mean.theta, log_n, log_d, log_l, delta=delta)[0]
    details["grid"] = {"starts": len(summed.starts), "converged": int(summed.success.sum())}
    return natural("grid", summed.theta) | {
        "grid.objective": summed.objective,
        "grid.iterations": float(np.median(summed.nit)),
        "mean.iterations": float(np.median(mean.nit)),
        "mean.excess": float(at_mean - summed.objective),
    }


def _bootstrap(params: LossParams, runs, rng, n_boot: int, fitted, details) -> dict[str, float]:
    log_n, log_d, log_l = runs
    start = np.asarray(params.tex if params.boot_start == "tex" else fitted, dtype=float)
    boot = ch.bootstrap_fits(
        log_n, log_d, log_l, start=start, n_boot=n_boot, rng=rng, delta=params.delta, gtol=params.boot_gtol
    )
    named = [natural("b", t) for t in boot.thetas]
    out = {f"se.{k}": float(np.std([d[f"b.{k}"] for d in named], ddof=1)) for k in PARAMS}
    shares = np.array([d["b.a"] for d in named])
    lo, hi = _interval(shares, params.level, params.interval)
    target = params.interval_a[1] - params.interval_a[0]
    ratios = ch.tokens_per_parameter(boot.thetas, params.compute)
    r_lo, r_hi = _interval(ratios, params.level, params.interval)
    details["bootstrap"] = {"converged": int(boot.success.sum()), "n": n_boot}
    # The Monte Carlo error of the runs needed: the spread of the same statistic over BATCHES disjoint batches of
    # the resamples, divided by sqrt(BATCHES) (batch means; each batch's interval is a little noisier than the whole's).
    batches = [
        ch.required_runs(_width(b, params.level, params.interval), target, len(log_l))
        for b in np.array_split(shares, BATCHES)
    ]
    return out | {
        "width.a": hi - lo,
        "required_runs": ch.required_runs(hi - lo, target, len(log_l)),
        "mc.required_runs": float(np.std(batches, ddof=1) / math.sqrt(BATCHES)),
        "ratio.lo": r_lo,
        "ratio.hi": r_hi,
    }


class ParametricLoss(Protocol):
    card = CARD
    Params = LossParams
    controls = {
        "shuffle_losses": ShuffleLosses,
        "plant_law": PlantLaw,
        "loss_scale": LossScale,
        "round_printed": RoundPrinted,
    }
    CHOICES = {
        "exclude_highest": Choice(
            "runs with the highest loss left out", "analysis", "which runs are outliers is the analyst's call", "data"
        ),
        "delta": Choice("the Huber loss's δ", "analysis", "a robustness setting of the fit"),
        "y_axis": Choice(
            "the calibration of the figure's model-size axis",
            "analysis",
            "the extraction's reading of the figure",
            "data",
        ),
        "interval": Choice("the bootstrap interval's definition", "analysis", _HOW_MADE),
        "boot_start": Choice("where each resample's fit starts", "analysis", _HOW_MADE),
        "boot_gtol": Choice("BFGS's tolerance in each resample", "analysis", _HOW_MADE),
        "level": Choice("the interval's coverage", "estimand", "another coverage is another interval"),
    }

    def columns(self, params: LossParams):
        cols = {"n_col": params.n_col, "flop_col": params.flop_col, "loss_col": params.loss_col}
        return [("table", params.table, cols | ({"y_col": params.y_col} if params.y_axis == "corrected" else {}))]

    def data_summary(self, params: LossParams, tables):
        return {"rows": int(len(tables.frame(params.table))), "kept": int(len(_runs(params, tables)[0]))}

    def multiverse_params(self, params: LossParams) -> dict:
        return {"grid": False}

    def measure(self, params: LossParams, tables, rng):
        printed = _theta_of(params.printed)
        return _measure(params, _runs(params, tables), rng, printed=printed, n_boot=params.n_boot, profile=True)

    def control(self, kind, cparams, params: LossParams, tables, rng, baseline):
        log_n, log_d, log_l = _runs(params, tables)
        printed, n_boot, scale = _theta_of(params.printed), getattr(cparams, "n_boot", 0), 1.0
        if kind == "shuffle_losses":
            log_l = rng.permutation(log_l)
            shuffled = _measure(params, (log_n, log_d, log_l), rng, printed=printed, n_boot=n_boot)
            shuffled.values = {k: v for k, v in shuffled.values.items() if not k.startswith("ratio.")}
            return shuffled
        elif kind == "plant_law":
            log_l = ch.simulate(params.tex, log_n, log_d, noise_sd=cparams.noise_sd, rng=rng)
        elif kind == "loss_scale":
            scale = cparams.factor
        else:  # the printed values replaced by the TeX values to ``digits`` significant digits
            a, b, e, alpha, beta = params.tex
            printed = _theta_of([float(f"{v:.{cparams.digits}g}") for v in (*map(math.exp, (a, b, e)), alpha, beta)])
        return _measure(params, (log_n, log_d, log_l), rng, printed=printed, n_boot=n_boot, scale=scale)


PROTOCOL = ParametricLoss()
