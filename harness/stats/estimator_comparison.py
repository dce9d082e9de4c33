"""Table 2: the sigmoid boundary against Constant, Binwise and I-spline baselines (paper Section 3.1.1).

Every estimator is fitted on one period and scored in distribution (the
training period) and out of distribution (the next period, within the
overlap of the two z ranges): mean smoothed pinball loss and calibration
error, equal-weight means over the task-period pairs; the shuffled-z control
and the I-spline's knot-count sensitivity.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ._ties import Ties
from .binning import equal_mass_bins
from .coverage import calibration_error
from .periods import Period
from .pinball import smoothed_pinball_loss
from .splits import _TAKES_RNG, RollingSplit, fit_split_models, rolling_splits
from .splits import mean as _mean
from .splits import plain_params as _plain
from .splits import run_fit_jobs as _run_jobs
from .splits import task_map as _task_map

__all__ = [
    "evaluate_split",
    "split_bins",
    "baseline_comparison",
    "estimator_table",
    "shuffled_z_advantage",
    "ispline_knot_sensitivity",
    "ESTIMATORS",
]

#: Estimator keys of :func:`baseline_comparison` and their Table 2 names.
ESTIMATORS: dict[str, str] = {
    "constant": "Constant",
    "binwise": "Binwise",
    "ispline": "I-spline",
    "sigmoid": "Sigmoid",
    "constant_loss_min": "Loss-minimising constant (beta = 0)",
}


def evaluate_split(
    split: RollingSplit,
    model,
    *,
    tau: float,
    kappa: float,
    n_bins: int = 10,
    min_bin_size: int = 30,
    closing_group: str = "next",
    bins: tuple[np.ndarray, np.ndarray] | None = None,
) -> dict[str, float]:
    """ID/OOD mean smoothed pinball and calibration error of one fitted model.

    ``model`` is anything with ``predict(z)``. ID = the training period, with
    bins built on the training z; OOD = the overlap validation set, with bins
    rebuilt on its z. Returns ``pinball_id``, ``pinball_ood``,
    ``calibration_id``, ``calibration_ood``, ``n_bins_id``, ``n_bins_ood``.
    ``bins``: the split's :func:`split_bins` at these settings, when the caller
    evaluates several models on it (they do not depend on the model).
    """
    z_tr = split.z_train
    q_tr, q_va = _predicted(model, z_tr), _predicted(model, split.z_val)
    if bins is None:
        bins = split_bins(split, n_bins=n_bins, min_bin_size=min_bin_size, closing_group=closing_group)
    bins_tr, bins_va = bins
    return {
        "pinball_id": float(np.mean(smoothed_pinball_loss(split.y_train - q_tr, tau, kappa))),
        "pinball_ood": float(np.mean(smoothed_pinball_loss(split.y_val - q_va, tau, kappa))),
        "calibration_id": calibration_error(split.y_train, q_tr, bins_tr, tau),
        "calibration_ood": calibration_error(split.y_val, q_va, bins_va, tau),
        "n_bins_id": int(bins_tr.max()) + 1,
        "n_bins_ood": int(bins_va.max()) + 1,
    }


def _predicted(model, z: np.ndarray) -> np.ndarray:
    """``model.predict(z)``, computed once per distinct ``z`` (a prediction is its point's ``z``'s): the fits of a
    resample's tasks share their rows, and many rows share a ``z``."""
    order, ties = Ties.sorted(z)
    q = np.empty(z.size)
    q[order] = ties.spread(model.predict(ties.values))
    return q


_METRICS = ("pinball_id", "pinball_ood", "calibration_id", "calibration_ood")


def split_bins(
    split: RollingSplit, *, n_bins: int = 10, min_bin_size: int = 30, closing_group: str = "next"
) -> tuple[np.ndarray, np.ndarray]:
    """The equal-mass bins of a split's training z and of its validation z (those of :func:`evaluate_split`)."""
    return (
        equal_mass_bins(split.z_train, n_bins, min_bin_size, closing_group=closing_group),
        equal_mass_bins(split.z_val, n_bins, min_bin_size, closing_group=closing_group),
    )


def _table(rows: list[dict[str, Any]], keys: Sequence[str]) -> dict[str, dict[str, float]]:
    """Equal-weight mean over task-period pairs of every metric, per estimator."""
    return {
        k: {m: _mean([r[m] for r in rows if r["estimator"] == k]) for m in _METRICS}
        for k in keys
        if any(r["estimator"] == k for r in rows)
    }


def _estimator_options(
    tau, kappa, lam, ispline_lam, n_intervals, n_bins, min_bin_size, closing_group, sigmoid_options, ispline_options
):
    return {
        "constant": {"tau": tau},
        "constant_loss_min": {"tau": tau, "kappa": kappa},
        "binwise": {
            "tau": tau,
            "kappa": kappa,
            "n_bins": n_bins,
            "min_bin_size": min_bin_size,
            "closing_group": closing_group,
        },
        "sigmoid": {"tau": tau, "kappa": kappa, "lam": lam, **dict(sigmoid_options or {})},
        "ispline": {
            "tau": tau,
            "kappa": kappa,
            "lam": ispline_lam,
            "n_intervals": n_intervals,
            **dict(ispline_options or {}),
        },
    }


def baseline_comparison(
    df: pd.DataFrame,
    tasks: Mapping[str, str] | Sequence[str],
    *,
    rng: np.random.Generator,
    period_col: str = "period",
    periods: Sequence[Period],
    tau: float,
    kappa: float,
    lam: float,
    ispline_lam: float = 1e-4,
    n_intervals: int = 3,
    n_bins: int = 10,
    min_bin_size: int = 30,
    closing_group: str = "next",
    sigmoid_options: Mapping[str, Any] | None = None,
    ispline_options: Mapping[str, Any] | None = None,
    n_shuffles: int = 1,
    map_fn: Callable | None = None,
    inits: Mapping[str, Mapping[tuple[str, int], Mapping[str, float]]] | None = None,
    estimators: Sequence[str] | None = None,
) -> dict[str, Any]:
    """Table 2: four estimators on every task-period pair, plus the two controls.

    Parameters
    ----------
    df : DataFrame
        ``z``, the score columns, and ``period_col``.
    tasks : mapping label -> column, or sequence of columns
    rng : numpy.random.Generator
        Random starts of the sigmoid and I-spline fits, and the z shuffles.
    tau, kappa, lam : float
        Loss settings; ``lam`` is the sigmoid's ridge on ``beta**2``.
    ispline_lam : float
        I-spline ridge on ``sum w_j**2``.
    n_intervals : int
        I-spline knot intervals (quantiles of training z).
    n_bins, min_bin_size : int
        Equal-mass bins of the Binwise estimator and of the calibration error.
    closing_group : {"next", "same"}
        Binning reading, see :mod:`harness.stats.binning`.
    n_shuffles : int
        Shuffled-z refits of the sigmoid (0 to skip).
    map_fn : callable, optional
        ``map_fn(fn, items) -> [fn(item) for item in items]``, in item order: how the independent fits
        are spread (the caller's fan-out); one after the other when omitted.
    inits : mapping, optional
        ``{"sigmoid" | "ispline": {(task, t): params}}``: start those fits of the real
        splits from these parameters (one solve; a bootstrap resample starts from the
        full-sample fits). When every sigmoid and I-spline fit is started so and there
        are no shuffles, no fit draws from a generator: none is spawned, ``rng`` is left as given.
    estimators : sequence of str, optional
        Fit and score only these keys of :data:`ESTIMATORS` (default: all), as a bootstrap that reads only
        some of them does. Every estimator's generators are still spawned, in the same order, so the fits
        made are those of a full run; the table, ``per_pair`` and ``fitted`` hold only these, and an
        advantage whose constant or sigmoid is left out is ``None``.

    Returns
    -------
    dict
        ``per_pair``: one record per (task, t, estimator) with ``pinball_id``,
        ``pinball_ood``, ``calibration_id``, ``calibration_ood``,
        ``n_bins_id``, ``n_bins_ood``, ``n_train``, ``n_val`` and the split info.
        ``table``: ``{estimator: {metric: equal-weight mean over pairs}}`` for
        ``constant, binwise, ispline, sigmoid`` and the ``beta = 0`` control
        ``constant_loss_min``. ``n_pairs``.
        ``shuffled_z``: ``{"n", "advantage_real", "advantage_shuffled" (mean over
        shuffles), "advantage_shuffled_each", "advantage_vs_loss_min_real",
        "advantage_vs_loss_min_shuffled", "sigmoid_shuffled": {metric: mean}}``
        where *advantage* is the mean over pairs of
        ``pinball_id(constant) - pinball_id(sigmoid)``.
        ``fitted``: per pair, the sigmoid and I-spline parameters.

    Notes
    -----
    Pinball is the mean smoothed loss at ``kappa`` (the Table 2 convention);
    calibration error is the mean over non-empty bins of ``|coverage_b - tau|``,
    with ID bins built on the training z and OOD bins on the overlap
    validation z. Predictions are the exact fitted ``q(z)``.
    The shuffled-z control permutes ``z`` among the models of each training
    period (one permutation per period, shared by all tasks), refits the
    sigmoid, and evaluates ID on the shuffled training data; the constant
    does not depend on z so its ID loss is unchanged.
    """
    task_cols = _task_map(tasks)
    splits = rolling_splits(df, task_cols, period_col=period_col, periods=periods)
    opts = _estimator_options(
        tau, kappa, lam, ispline_lam, n_intervals, n_bins, min_bin_size, closing_group, sigmoid_options, ispline_options
    )

    shuffled_sets = _shuffled_training_sets(
        df, task_cols, splits, rng, n_shuffles, period_col=period_col, periods=periods
    )

    kinds = ("constant", "constant_loss_min", "binwise", "ispline", "sigmoid")
    made = kinds if estimators is None else tuple(k for k in kinds if k in estimators)
    unknown = sorted(set(estimators or ()) - set(kinds))
    if unknown:
        raise ValueError(f"unknown estimators {unknown}; known: {list(kinds)}")
    jobs_spec = [(k, splits) for k in kinds]
    jobs_spec += [("sigmoid", sh) for sh in shuffled_sets]
    starts = {k: [(inits or {}).get(k, {}).get((s.task, s.t)) for s in splits] for k in kinds}
    # a generator is drawn from only by a sigmoid or I-spline fit without a start
    draws = bool(shuffled_sets) or any(None in starts[k] for k in _TAKES_RNG if k in made)
    jobs, owners = [], []
    for i, (kind, sp) in enumerate(jobs_spec):
        if sp is splits and kind not in made:
            # spawned for every estimator, fitted or not, so the streams stay put: the seeds alone, unused
            if draws:
                rng.bit_generator.seed_seq.spawn(len(sp))
            continue
        children = rng.spawn(len(sp)) if draws else [None] * len(sp)
        starts_here = starts[kind] if sp is splits else [None] * len(sp)
        jobs += [(kind, opts[kind], s.z_train, s.y_train, g, st) for s, g, st in zip(sp, children, starts_here)]
        owners += [i] * len(sp)
    fits = _run_jobs(jobs, map_fn)
    fits_by_spec = [[f for f, o in zip(fits, owners) if o == i] for i in range(len(jobs_spec))]

    per_pair = []
    ev = {"n_bins": n_bins, "min_bin_size": min_bin_size, "closing_group": closing_group}
    bins = _shared_bins(splits, ev)  # the estimators share the real splits' bins
    for (kind, sp), fs in zip(jobs_spec[:5], fits_by_spec[:5]):
        if kind in made:
            per_pair += _evaluated(sp, fs, kind, bins, tau=tau, kappa=kappa, **ev)
    table = _table(per_pair, [k for k in ESTIMATORS if k in made])

    def id_pinball(kind):
        return np.array([r["pinball_id"] for r in per_pair if r["estimator"] == kind])

    def advantage(kind, sigmoid_rows):
        if kind not in made or sigmoid_rows.size == 0:
            return None
        return float(np.mean(id_pinball(kind) - sigmoid_rows))

    adv_real = advantage("constant", id_pinball("sigmoid"))
    adv_lm_real = advantage("constant_loss_min", id_pinball("sigmoid"))
    sh_rows = [
        _evaluated(
            sp,
            fs,
            "sigmoid",
            tau=tau,
            kappa=kappa,
            n_bins=n_bins,
            min_bin_size=min_bin_size,
            closing_group=closing_group,
        )
        for sp, fs in zip(shuffled_sets, fits_by_spec[5:])
    ]
    # the constants do not depend on z: their ID losses on shuffled data equal the real ones
    adv_sh = [advantage("constant", np.array([r["pinball_id"] for r in rows])) for rows in sh_rows]
    adv_lm_sh = [advantage("constant_loss_min", np.array([r["pinball_id"] for r in rows])) for rows in sh_rows]
    fitted = []
    for kind in (k for k in ("sigmoid", "ispline") if k in made):
        for s, m in zip(splits, fits_by_spec[[k for k, _ in jobs_spec].index(kind)]):
            fitted.append(
                {
                    "task": s.task,
                    "t": s.t,
                    "estimator": kind,
                    "params": _plain(m.params_),
                    "objective": float(m.objective_),
                    "converged": bool(m.converged_),
                }
            )
    return {
        "n_pairs": len(splits),
        "per_pair": per_pair,
        "table": table,
        "shuffled_z": {
            "n": len(sh_rows),
            "advantage_real": adv_real,
            "advantage_shuffled": _mean(adv_sh) if adv_sh and None not in adv_sh else None,
            "advantage_shuffled_each": adv_sh,
            "advantage_vs_loss_min_real": adv_lm_real,
            "advantage_vs_loss_min_shuffled": _mean(adv_lm_sh) if adv_lm_sh and None not in adv_lm_sh else None,
            "sigmoid_shuffled": {m: _mean([r[m] for rows in sh_rows for r in rows]) for m in _METRICS}
            if sh_rows
            else {},
        },
        "fitted": fitted,
    }


def _shared_bins(splits, ev) -> list[tuple[np.ndarray, np.ndarray]]:
    """:func:`split_bins` of every split, made once per distinct pair of training and validation ``z`` (the
    tasks scored on the same models share them)."""
    made, out = {}, []
    for s in splits:
        key = (s.z_train.tobytes(), s.z_val.tobytes())
        if key not in made:
            made[key] = split_bins(s, **ev)
        out.append(made[key])
    return out


def _evaluated(splits, fits, kind, bins=None, **kw) -> list[dict[str, Any]]:
    """``evaluate_split`` of every fitted model, with the split's description and the estimator's key; ``bins``,
    one :func:`split_bins` per split, when several estimators are evaluated on the same splits."""
    bins = bins or [None] * len(splits)
    return [
        {**s.describe(), "estimator": kind, **evaluate_split(s, m, bins=b, **kw)} for s, m, b in zip(splits, fits, bins)
    ]


def _shuffled_training_sets(df, task_cols, splits, rng, n_shuffles, *, period_col, periods) -> list[list[RollingSplit]]:
    """``n_shuffles`` copies of ``splits`` whose training z is permuted within each training period.

    One permutation per training period, shared by every task; the validation
    sets are the real ones (only the training z is shuffled).
    """
    out = []
    row_period = df[period_col].to_numpy(dtype=object)
    z_all = df["z"].to_numpy(dtype=float)
    for _ in range(int(n_shuffles)):
        z_perm = z_all.copy()
        for p in dict.fromkeys(s.train_period for s in splits):
            rows = np.flatnonzero(row_period == p)
            z_perm[rows] = z_all[rng.permutation(rows)]
        shuffled = df.copy()
        shuffled["z"] = z_perm
        by_key = {(s.task, s.t): s for s in rolling_splits(shuffled, task_cols, period_col=period_col, periods=periods)}
        out.append(
            [
                RollingSplit(
                    s.task,
                    s.t,
                    s.train_period,
                    s.val_period,
                    by_key[(s.task, s.t)].z_train,
                    by_key[(s.task, s.t)].y_train,
                    s.z_val,
                    s.y_val,
                    s.n_val_before_overlap,
                    s.overlap,
                )
                for s in splits
            ]
        )
    return out


def estimator_table(
    df: pd.DataFrame,
    tasks: Mapping[str, str] | Sequence[str],
    kind: str,
    options: Mapping[str, Any],
    *,
    rng: np.random.Generator,
    period_col: str = "period",
    periods: Sequence[Period],
    tau: float,
    kappa: float,
    n_bins: int = 10,
    min_bin_size: int = 30,
    closing_group: str = "next",
    map_fn: Callable | None = None,
) -> dict[str, Any]:
    """One estimator's row of Table 2 (e.g. a variant of the sigmoid, or the ``beta = 0`` fit).

    ``kind`` and ``options`` as in :func:`fit_split_models` (``options``
    without ``rng``); ``tau``/``kappa`` are the evaluation's loss settings.

    Returns
    -------
    dict
        ``table``: ``{metric: equal-weight mean over the pairs}``;
        ``per_pair``: the records of :func:`evaluate_split` with the split info;
        ``fitted``: per pair the fitted ``params`` (and ``objective`` where the
        estimator has one).
    """
    task_cols = _task_map(tasks)
    splits = rolling_splits(df, task_cols, period_col=period_col, periods=periods)
    fits = fit_split_models(splits, kind, options, rng=rng, map_fn=map_fn)
    rows = _evaluated(
        splits, fits, kind, tau=tau, kappa=kappa, n_bins=n_bins, min_bin_size=min_bin_size, closing_group=closing_group
    )
    fitted = [
        {
            "task": s.task,
            "t": s.t,
            "params": _plain(m.params_),
            "objective": float(m.objective_) if hasattr(m, "objective_") else None,
        }
        for s, m in zip(splits, fits)
    ]
    return {"table": {m: _mean([r[m] for r in rows]) for m in _METRICS}, "per_pair": rows, "fitted": fitted}


def shuffled_z_advantage(
    df: pd.DataFrame,
    tasks: Mapping[str, str] | Sequence[str],
    *,
    rng: np.random.Generator,
    n_shuffles: int,
    period_col: str = "period",
    periods: Sequence[Period],
    tau: float,
    kappa: float,
    lam: float,
    sigmoid_options: Mapping[str, Any] | None = None,
    n_bins: int = 10,
    min_bin_size: int = 30,
    closing_group: str = "next",
    map_fn: Callable | None = None,
) -> dict[str, Any]:
    """The shuffled-z control alone: the sigmoid's in-sample advantage over the Constant with z permuted.

    z is permuted among the models of each training period (one permutation
    per period, shared by the tasks), the sigmoid is refitted on every pair,
    and the advantage is the mean over pairs of
    ``pinball_id(constant) - pinball_id(sigmoid)``, ID being the (shuffled)
    training data. The Constant does not depend on z, so its ID loss is the
    real one.

    Returns
    -------
    dict
        ``n``, ``advantage_each`` (one per shuffle), ``advantage_mean``,
        ``sigmoid_shuffled`` (``{metric: mean over shuffles and pairs}``).
    """
    if int(n_shuffles) < 1:
        raise ValueError(f"n_shuffles must be at least 1, got {n_shuffles}")
    task_cols = _task_map(tasks)
    splits = rolling_splits(df, task_cols, period_col=period_col, periods=periods)
    ev = {"tau": tau, "kappa": kappa, "n_bins": n_bins, "min_bin_size": min_bin_size, "closing_group": closing_group}
    const = [
        evaluate_split(s, m, **ev)["pinball_id"]
        for s, m in zip(splits, fit_split_models(splits, "constant", {"tau": tau}, rng=rng))
    ]
    sets = _shuffled_training_sets(df, task_cols, splits, rng, n_shuffles, period_col=period_col, periods=periods)
    options = {"tau": tau, "kappa": kappa, "lam": lam, **dict(sigmoid_options or {})}
    flat = [s for sp in sets for s in sp]
    fits = fit_split_models(flat, "sigmoid", options, rng=rng, map_fn=map_fn)
    n = len(splits)
    rows = [_evaluated(sp, fits[i * n : (i + 1) * n], "sigmoid", **ev) for i, sp in enumerate(sets)]
    each = [float(np.mean(np.array(const) - np.array([r["pinball_id"] for r in rs]))) for rs in rows]
    return {
        "n": len(sets),
        "advantage_each": each,
        "advantage_mean": _mean(each),
        "sigmoid_shuffled": {m: _mean([r[m] for rs in rows for r in rs]) for m in _METRICS},
    }


def ispline_knot_sensitivity(
    df: pd.DataFrame,
    tasks: Mapping[str, str] | Sequence[str],
    *,
    rng: np.random.Generator,
    n_intervals_grid: Sequence[int] = (2, 3, 4, 5, 6),
    period_col: str = "period",
    periods: Sequence[Period],
    tau: float,
    kappa: float,
    ispline_lam: float = 1e-4,
    n_bins: int = 10,
    min_bin_size: int = 30,
    closing_group: str = "next",
    ispline_options: Mapping[str, Any] | None = None,
    map_fn: Callable | None = None,
) -> dict[str, Any]:
    """The I-spline row of Table 2 for each knot count.

    Returns
    -------
    dict
        ``{"rows": [{"n_intervals", "pinball_id", "pinball_ood", "calibration_id",
        "calibration_ood"}, ...]}`` (equal-weight means over the pairs).
    """
    task_cols = _task_map(tasks)
    splits = rolling_splits(df, task_cols, period_col=period_col, periods=periods)
    jobs = []
    for k in n_intervals_grid:
        opts = {"tau": tau, "kappa": kappa, "lam": ispline_lam, "n_intervals": int(k), **dict(ispline_options or {})}
        jobs += [("ispline", opts, s.z_train, s.y_train, g) for s, g in zip(splits, rng.spawn(len(splits)))]
    fits = _run_jobs(jobs, map_fn)
    rows = []
    ev = {"n_bins": n_bins, "min_bin_size": min_bin_size, "closing_group": closing_group}
    bins = [split_bins(s, **ev) for s in splits]  # shared by the knot counts
    for i, k in enumerate(n_intervals_grid):
        fs = fits[i * len(splits) : (i + 1) * len(splits)]
        ms = [evaluate_split(s, m, tau=tau, kappa=kappa, bins=b, **ev) for s, m, b in zip(splits, fs, bins)]
        rows.append({"n_intervals": int(k), **{m: _mean([x[m] for x in ms]) for m in _METRICS}})
    return {"rows": rows}
