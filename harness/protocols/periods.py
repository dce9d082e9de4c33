"""Parameter schemas and helpers shared by the period protocols (``temporal_coverage``, ``estimator_comparison``):
fit on one period of upload dates, evaluate on the next."""

from __future__ import annotations

from pydantic import Field, field_validator

from ..core.quantities import boxed as boxed_name
from ..core.schema import Count, Label
from ..stats.periods import assign_periods, validate_periods
from ..stats.splits import rolling_splits
from .leaderboard import BoxParams, leaderboard_frame, leaderboard_summary, with_weights


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


def period_summary(tables, params) -> dict:
    """Rows per period and the rolling splits' sizes, for the report's setup."""
    out = leaderboard_summary(tables, params)
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


def sigmoid_options(params) -> dict:
    return {"warm_start": params.warm_start, "n_random": params.n_random}


def boxed_options(params) -> dict:
    """The sigmoid inside the authors' box. Every start is carried to the final stage: inside the box the
    warm-up stages can lead the best few starts into one basin and miss the box's optimum (measured on the
    GPQA and IFEval pairs of Table 2), which keeping all starts avoids."""
    n_starts = 9 + params.n_random  # the deterministic 3 x 3 grid plus the random starts
    return {
        "warm_start": params.warm_start,
        "n_random": params.n_random,
        "n_keep": n_starts,
        "box": tuple(params.box_check),
    }


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


def box_explanation(mine: dict, theirs: dict, names) -> dict:
    """Per value name with a ``boxed.`` counterpart: mine, boxed, authors' and the two gaps."""
    out = {}
    for name in names:
        b = boxed_name(name)
        if b not in mine or mine.get(name) is None or theirs.get(name) is None:
            continue
        gap, boxed_gap = mine[name] - theirs[name], mine[b] - theirs[name]
        out[name] = {
            "reimpl": mine[name],
            "boxed": mine[b],
            "upstream": theirs[name],
            "gap": gap,
            "boxed_gap": boxed_gap,
            "closed": (1.0 - abs(boxed_gap) / abs(gap)) if gap else None,
        }
    return out


def split_tail_support(tables, params, fits: dict) -> dict:
    """What carries each split's boundary (the report's tail table): for every rolling split with a fitted
    sigmoid ``fits[(task, t)]`` (``y0, L, a, beta``), the training models above it and the later models (those
    of the next period inside the overlap) above it."""
    from ..stats.sigmoid import sigmoid_boundary

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
