"""Parameter schemas and helpers shared by the period protocols (``temporal_coverage``, ``estimator_comparison``):
fit on one period of upload dates, evaluate on the next."""

from __future__ import annotations

from pydantic import Field, field_validator

from ..core.schema import Count, Label
from ..parallel.fanout import Mapper
from ..stats.periods import assign_periods, validate_periods
from ..stats.splits import rolling_splits
from .base import Resampling
from .leaderboard import BoxParams, LeaderboardProtocol, leaderboard_frame, with_weights


class PeriodParams(BoxParams):
    """Which column dates a model, and the chronological periods (label, first month, last month)."""

    date_col: Label = Field(
        "Upload To Hub Date",
        description="column dating each model (read to the month), which puts it in a period; rows in no period "
        "are left out",
    )
    periods: list[tuple[Label, Label | None, Label | None]] = Field(
        min_length=2, description="(label, first month 'YYYY-MM' or null, last month or null), in order"
    )
    n_bins: Count = Field(
        10,
        ge=1,
        le=1000,
        description="K, the target number of equal-mass bins of z (models of equal z never split) of the binned "
        "statistics",
    )
    min_bin_size: Count = Field(
        30,
        ge=1,
        description="m, the fewest models in a bin: bins fill to `max(ceil(N / K), m)` models and a smaller bin is "
        "merged into its smaller neighbour",
    )

    @field_validator("periods")
    @classmethod
    def _periods_in_order(cls, periods):
        validate_periods(periods)  # raises ValueError with the reason
        return periods


def period_frame(tables, params):
    """Leaderboard rows with a compute proxy and a dated period (column ``period``)."""
    frame = leaderboard_frame(tables, params)
    # with weighting by base model, each period's fit weighs each base model one
    return with_weights(assign_periods(frame, date_col=params.date_col, periods=params.periods), params, ("period",))


def sigmoid_options(params) -> dict:
    return {"warm_start": params.warm_start, "n_random": params.n_random}


def boxed_options(params) -> dict:
    """The sigmoid inside the authors' box. Every start (the 3 x 3 grid and the random ones) is carried to the
    final stage: inside the box the warm-up stages can lead the best few starts into one basin and miss the box's
    optimum (measured on the GPQA and IFEval pairs of Table 2), which keeping all starts avoids."""
    return {**sigmoid_options(params), "n_keep": 9 + params.n_random, "box": tuple(params.box_check)}


def period_kwargs(params) -> dict:
    """The settings every fit and score of a period protocol shares."""
    return {
        "periods": params.periods,
        "tau": params.tau,
        "kappa": params.kappa,
        "n_bins": params.n_bins,
        "min_bin_size": params.min_bin_size,
        "map_fn": Mapper("fits of the splits"),
    }


def period_resampling(params, tables, cluster_col: str, fits, **design) -> Resampling:
    """The claim's bootstrap over the dated rows, every period resampled together: ``fits`` on a resample of
    the rows' ``frame``, with the claim's ``tasks`` and ``design`` (:meth:`Resampling.of_fits`)."""
    df = period_frame(tables, params)
    # the labels as plain strings: a resample's rows are taken from them quicker than from a string array
    frame = df[["z", "period", *params.tasks.values()]].astype({"period": object})
    return Resampling.of_fits(
        len(df),
        df[cluster_col].to_numpy(dtype=object),
        "the dated leaderboard rows (every period resampled together)",
        fits,
        {"frame": frame, "tasks": params.tasks, **design},
    )


def outside_box(df, params, fitted: list[dict]) -> list[dict]:
    """The free sigmoid fits that the authors' box would not allow."""
    lo, hi = params.box_check
    ranges = {
        (s.task, s.t): (float(s.z_train.min()), float(s.z_train.max()))
        for s in rolling_splits(df, params.tasks, periods=params.periods)
    }
    out = []
    for f in fitted:
        beta, a = f["params"]["beta"], f["params"]["a"]
        z_lo, z_hi = ranges[(f["task"], f["t"])]
        mid = -a / beta if beta > 0 else None
        if not lo <= beta <= hi or mid is None or not z_lo <= mid <= z_hi:
            out.append({"task": f["task"], "t": f["t"], "beta": beta, "midpoint": mid, "z_min": z_lo, "z_max": z_hi})
    return out


class PeriodProtocol(LeaderboardProtocol):
    """A protocol that fits on one period of upload dates and scores the fit on the next."""

    COLUMN_PARAMS = ("date_col",)

    def data_summary(self, params, tables) -> dict:
        """Rows per period and the rolling splits' sizes, for the report's setup."""
        out = super().data_summary(params, tables)
        dated = period_frame(tables, params)
        counts = dated["period"].value_counts()
        out["rows_dated"] = int(len(dated))
        out["periods"] = [
            {"label": label, "first": first, "last": last, "rows": int(counts.get(label, 0))}
            for label, first, last in params.periods
        ]
        first = next(iter(params.tasks))
        out["splits"] = [
            {k: v for k, v in s.describe().items() if k != "task"}
            for s in rolling_splits(dated, {first: params.tasks[first]}, periods=params.periods)
        ]
        return out

    def tail_support(self, params, tables, reimpl) -> dict:
        """What carries each split's sigmoid boundary (the report's tail table): the training models above it and
        the later models (those of the next period inside the overlap) above it."""
        from ..stats.sigmoid import sigmoid_boundary

        fitted = reimpl.details["fitted"]
        fits = {(f["task"], f["t"]): f["params"] for f in fitted if f.get("estimator", "sigmoid") == "sigmoid"}
        rows = []
        for s in rolling_splits(period_frame(tables, params), params.tasks, periods=params.periods):
            q = fits.get((s.task, s.t))
            if q is None:
                continue
            curve = (q["y0"], q["L"], q["a"], q["beta"])
            rows.append(
                {
                    "label": f"{s.task}, split {s.t} ({s.train_period} to {s.val_period})",
                    "above": int((s.y_train > sigmoid_boundary(s.z_train, *curve)).sum()),
                    "n": int(s.z_train.size),
                    "later_above": int((s.y_val > sigmoid_boundary(s.z_val, *curve)).sum()),
                    "later_n": int(s.z_val.size),
                }
            )
        return {"kind": "periods", "rows": rows}
