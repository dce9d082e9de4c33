"""Temporal (fit on one period, test on the next) statistics of the paper's Section 3.

Two analyses share the rolling splits of :mod:`harness.stats.periods`: fit on
``P_t`` only, evaluate on ``P_{t+1}`` restricted to the overlap of the two z
ranges (t = 1, 2, 3 for the four default periods).

* :func:`temporal_coverage` -- Figure 2 / the claim that MATH Lvl 5 and
  IFEval boundaries are non-stationary: out-of-period signed coverage error of
  the sigmoid boundary, in-sample signed coverage, pooled share above with an
  exact binomial test, bin-averaged variants, drift/stable group means, and a
  relabelling control (periods permuted among models).
* :func:`baseline_comparison` -- Table 2: Constant, Binwise, I-spline and
  Sigmoid estimators, ID/OOD smoothed pinball loss and calibration error,
  equal-weight means over the task-period pairs, with the ``beta = 0`` and
  shuffled-z controls; :func:`ispline_knot_sensitivity` varies the I-spline
  knot count.

Every function takes a DataFrame with a ``z`` column, the task score columns
and a period-label column (see :func:`harness.stats.periods.assign_periods`),
and returns plain dicts/lists of Python floats, ints and strings, ready for a
JSON record. Randomness comes from an explicit ``numpy.random.Generator``;
each fit gets its own child generator (``rng.spawn``) in a fixed order, so
results do not depend on ``n_jobs``.

Performance note: the fits are many small L-BFGS-B problems. A multi-threaded
BLAS makes each of them slower by 10-50x on a loaded two-core machine; the
callers (the CLI, the test suite) limit BLAS to one thread with threadpoolctl,
and the worker processes of ``n_jobs`` are forked from them, so they inherit
that limit. Use ``n_jobs`` for parallelism.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .baselines import BinwiseQuantileRegressor, ConstantQuantileRegressor, LossMinimisingConstantRegressor
from .binning import assign_to_bins, equal_mass_bins, equal_mass_left_edges
from .coverage import (
    binned_signed_coverage_error,
    calibration_error,
    count_above,
    exceedance_binomial_pvalue,
    signed_coverage_error,
)
from .ispline import ISplineQuantileRegressor
from .periods import OLL_PERIODS, Period, overlap_interval, rolling_pairs
from .pinball import smoothed_pinball_loss
from .sigmoid import SigmoidQuantileRegressor

__all__ = [
    "RollingSplit",
    "rolling_splits",
    "evaluate_split",
    "fit_split_models",
    "temporal_coverage",
    "relabelled_coverage",
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


# ----------------------------------------------------------------------------- splits
@dataclass(frozen=True, eq=False)
class RollingSplit:
    """One task on one rolling pair: all of ``P_t``, and ``P_{t+1}`` within the overlap."""

    task: str
    t: int
    train_period: str
    val_period: str
    z_train: np.ndarray
    y_train: np.ndarray
    z_val: np.ndarray
    y_val: np.ndarray
    n_val_before_overlap: int
    overlap: tuple[float, float]

    def describe(self) -> dict[str, Any]:
        return {"task": self.task, "t": self.t, "train": self.train_period, "val": self.val_period,
                "n_train": int(self.z_train.size), "n_val": int(self.z_val.size),
                "n_val_before_overlap": self.n_val_before_overlap,
                "overlap": [float(self.overlap[0]), float(self.overlap[1])]}


def _task_map(tasks: Mapping[str, str] | Sequence[str]) -> dict[str, str]:
    if isinstance(tasks, Mapping):
        return {str(k): str(v) for k, v in tasks.items()}
    return {str(c): str(c) for c in tasks}


def rolling_splits(
    df: pd.DataFrame,
    tasks: Mapping[str, str] | Sequence[str],
    *,
    period_col: str = "period",
    periods: Sequence[Period] = OLL_PERIODS,
    z_col: str = "z",
) -> list[RollingSplit]:
    """Rolling splits for every task, ordered by task then ``t``.

    Parameters
    ----------
    df : DataFrame
        Columns ``z_col``, ``period_col`` and the score columns.
    tasks : mapping label -> column, or sequence of columns (label = column)
        Rows with a missing score are dropped for that task only.
    periods : sequence of (label, first month, last month)
        Only the labels and their order are used here.

    Returns
    -------
    list of RollingSplit
        The validation arrays are already restricted to the overlap
        ``[max(min z_tr, min z_va), min(max z_tr, max z_va)]`` (inclusive).
    """
    task_cols = _task_map(tasks)
    missing = [c for c in [z_col, period_col, *task_cols.values()] if c not in df.columns]
    if missing:
        raise KeyError(f"columns {missing} are not in the frame")
    z_all = df[z_col].to_numpy(dtype=float)
    period = df[period_col].to_numpy(dtype=object)
    out = []
    for label, col in task_cols.items():
        y_all = pd.to_numeric(df[col], errors="coerce").to_numpy(dtype=float)
        ok = np.isfinite(y_all) & np.isfinite(z_all)
        for t, p_tr, p_va in rolling_pairs(periods):
            tr, va = ok & (period == p_tr), ok & (period == p_va)
            if tr.sum() < 4 or va.sum() < 1:
                raise ValueError(f"{label}: period {p_tr} has {tr.sum()} and {p_va} has {va.sum()} scored rows")
            lo, hi = overlap_interval(z_all[tr], z_all[va])
            keep = va & (z_all >= lo) & (z_all <= hi)
            out.append(RollingSplit(label, t, p_tr, p_va, z_all[tr], y_all[tr], z_all[keep], y_all[keep],
                                    int(va.sum()), (lo, hi)))
    return out


# ----------------------------------------------------------------------------- fitting
_FACTORIES = {
    "sigmoid": SigmoidQuantileRegressor,
    "ispline": ISplineQuantileRegressor,
    "constant": ConstantQuantileRegressor,
    "constant_loss_min": LossMinimisingConstantRegressor,
    "binwise": BinwiseQuantileRegressor,
}
_TAKES_RNG = {"sigmoid", "ispline"}


def _fit_job(job):
    kind, options, z, y, rng = job
    kwargs = dict(options)
    if kind in _TAKES_RNG:
        kwargs["rng"] = rng
    return _FACTORIES[kind](**kwargs).fit(z, y)


def _run_jobs(jobs: list, n_jobs: int) -> list:
    if n_jobs is None or n_jobs <= 1 or len(jobs) < 2:
        return [_fit_job(j) for j in jobs]
    with ProcessPoolExecutor(max_workers=int(n_jobs)) as pool:
        return list(pool.map(_fit_job, jobs, chunksize=max(1, len(jobs) // (4 * int(n_jobs)))))


def fit_split_models(
    splits: Sequence[RollingSplit],
    kind: str,
    options: Mapping[str, Any],
    *,
    rng: np.random.Generator,
    n_jobs: int = 1,
) -> list:
    """Fit one estimator per split on its training period.

    ``kind`` is one of ``"sigmoid", "ispline", "constant", "constant_loss_min",
    "binwise"``; ``options`` are its keyword arguments (without ``rng``). Child
    generators are spawned from ``rng`` in split order, one per split.
    Returns the fitted estimators, in split order.
    """
    if kind not in _FACTORIES:
        raise ValueError(f"unknown estimator {kind!r}; known: {sorted(_FACTORIES)}")
    children = rng.spawn(len(splits))
    jobs = [(kind, dict(options), s.z_train, s.y_train, g) for s, g in zip(splits, children)]
    return _run_jobs(jobs, n_jobs)


def _mean(values) -> float:
    return float(np.mean(np.asarray(values, dtype=float)))


def _plain(params: Mapping[str, Any]) -> dict[str, Any]:
    """Fitted parameters as JSON-ready Python scalars and lists."""
    out = {}
    for k, v in params.items():
        if isinstance(v, (list, tuple, np.ndarray)):
            out[k] = [float(x) for x in v]
        elif isinstance(v, (int, np.integer)) and not isinstance(v, bool):
            out[k] = int(v)
        else:
            out[k] = float(v)
    return out


# ----------------------------------------------------------------------------- claim 001
def _coverage_rows(splits, fits, *, tau, n_bins, min_bin_size, closing_group) -> list[dict[str, Any]]:
    """Per-split coverage statistics of fitted boundaries."""
    rows = []
    for s, m in zip(splits, fits):
        q_tr, q_va = m.predict(s.z_train), m.predict(s.z_val)
        val_bins = equal_mass_bins(s.z_val, n_bins, min_bin_size, closing_group=closing_group)
        val_in_train_bins = assign_to_bins(s.z_val, equal_mass_left_edges(s.z_train, n_bins, min_bin_size,
                                                                          closing_group=closing_group))
        rows.append({
            **s.describe(),
            "n_above": count_above(s.y_val, q_va),
            "signed_coverage": signed_coverage_error(s.y_val, q_va, tau),
            "in_sample": signed_coverage_error(s.y_train, q_tr, tau),
            "bin_averaged": binned_signed_coverage_error(s.y_val, q_va, val_bins, tau),
            "bin_averaged_train_bins": binned_signed_coverage_error(s.y_val, q_va, val_in_train_bins, tau),
        })
    return rows


def _summarise_coverage(rows, task_order, drift_tasks, *, exceed_rate) -> dict[str, Any]:
    """Benchmark values (mean over splits, pooled share/test) and group means."""
    per_task = {}
    for task in task_order:
        r = [row for row in rows if row["task"] == task]
        k, n = sum(x["n_above"] for x in r), sum(x["n_val"] for x in r)
        per_task[task] = {
            "group": "drift" if task in drift_tasks else "stable",
            "signed_coverage": _mean([x["signed_coverage"] for x in r]),
            "in_sample": _mean([x["in_sample"] for x in r]),
            "bin_averaged": _mean([x["bin_averaged"] for x in r]),
            "bin_averaged_train_bins": _mean([x["bin_averaged_train_bins"] for x in r]),
            "n_above": int(k),
            "n": int(n),
            "share_above": k / n,
            "binomial_p": exceedance_binomial_pvalue(k, n, exceed_rate),
        }
    drift = [t for t in task_order if t in drift_tasks]
    stable = [t for t in task_order if t not in drift_tasks]
    groups = {}
    for key in ("signed_coverage", "bin_averaged", "bin_averaged_train_bins", "in_sample"):
        d = _mean([per_task[t][key] for t in drift])
        s = _mean([per_task[t][key] for t in stable])
        groups[key] = {"drift": d, "stable": s, "separation": s - d}
    return {"tasks": per_task, "groups": groups}


def temporal_coverage(
    df: pd.DataFrame,
    tasks: Mapping[str, str] | Sequence[str],
    *,
    drift_tasks: Sequence[str],
    rng: np.random.Generator,
    period_col: str = "period",
    periods: Sequence[Period] = OLL_PERIODS,
    tau: float = 0.98,
    kappa: float = 50.0,
    lam: float = 1e-3,
    sigmoid_options: Mapping[str, Any] | None = None,
    n_bins: int = 10,
    min_bin_size: int = 30,
    closing_group: str = "next",
    exceed_rate: float = 0.02,
    n_relabellings: int = 5,
    n_jobs: int = 1,
) -> dict[str, Any]:
    """Out-of-period coverage of the sigmoid boundary, with the relabelling control.

    Parameters
    ----------
    df : DataFrame
        ``z``, the score columns, and ``period_col``.
    tasks : mapping label -> column, or sequence of columns
    drift_tasks : sequence of labels
        The group claimed to drift (e.g. IFEval, MATH Lvl 5); the rest are "stable".
    rng : numpy.random.Generator
        Source of the fits' random starts and of the relabellings.
    tau, kappa, lam : float
        Sigmoid estimator settings; ``sigmoid_options`` adds or overrides
        other keyword arguments of :class:`SigmoidQuantileRegressor`.
    n_bins, min_bin_size : int
        Equal-mass bins of the bin-averaged variants.
    closing_group : {"next", "same"}
        Binning reading, see :mod:`harness.stats.binning`.
    exceed_rate : float
        Null rate of the binomial test (``1 - tau``).
    n_relabellings : int
        Random permutations of the period labels among models (0 to skip).
    n_jobs : int
        Worker processes for the fits.

    Returns
    -------
    dict
        ``splits``: one record per (task, t) with ``n_train``, ``n_val``,
        ``n_above``, ``signed_coverage``, ``in_sample``, ``bin_averaged``
        (bins rebuilt on the overlap validation z), ``bin_averaged_train_bins``
        (bins of the training period, validation points placed by
        :func:`harness.stats.binning.assign_to_bins`; the convention of the
        paper's Figure 2), ``overlap``.
        ``tasks``: per label ``group``, ``signed_coverage`` (mean over splits of
        the pooled-over-models value), ``in_sample``, ``bin_averaged``,
        ``bin_averaged_train_bins``, ``n_above``, ``n``, ``share_above``
        (``sum n_above / sum n``), ``binomial_p``.
        ``groups``: for ``signed_coverage``, ``bin_averaged``,
        ``bin_averaged_train_bins`` and ``in_sample``,
        ``{"drift", "stable", "separation" = stable - drift}``.
        ``relabelling``: ``{"n", "separation_mean", "separation": [...],
        "signed_coverage_mean": {label: ...}, "signed_coverage": [{label: ...}, ...]}``.
        ``fitted``: per (task, t) the sigmoid ``params``, ``objective``, ``converged``.

    Notes
    -----
    Signed coverage error per split is ``mean(y_val <= q) - tau`` over the
    overlap validation models; the benchmark value is the mean over the
    splits. Share above and the binomial test pool the counts over splits.
    The relabelling control permutes the period column among all rows
    (keeping the period sizes) and recomputes the benchmark values.
    """
    task_cols = _task_map(tasks)
    options = _coverage_checks(task_cols, drift_tasks, tau, kappa, lam, sigmoid_options)
    kw = {"tau": tau, "n_bins": n_bins, "min_bin_size": min_bin_size, "closing_group": closing_group,
          "exceed_rate": exceed_rate}
    frames = [df] + _relabelled_frames(df, period_col, rng, n_relabellings)
    results, fitted = _coverage_runs(frames, task_cols, drift_tasks, options, rng=rng, period_col=period_col,
                                     periods=periods, n_jobs=n_jobs, **kw)
    rows, summary = results[0]
    return {"splits": rows, **summary, "fitted": fitted, "relabelling": _relabelling_summary(results[1:], task_cols)}


def relabelled_coverage(
    df: pd.DataFrame,
    tasks: Mapping[str, str] | Sequence[str],
    *,
    drift_tasks: Sequence[str],
    rng: np.random.Generator,
    n_relabellings: int,
    period_col: str = "period",
    periods: Sequence[Period] = OLL_PERIODS,
    tau: float = 0.98,
    kappa: float = 50.0,
    lam: float = 1e-3,
    sigmoid_options: Mapping[str, Any] | None = None,
    n_bins: int = 10,
    min_bin_size: int = 30,
    closing_group: str = "next",
    exceed_rate: float = 0.02,
    n_jobs: int = 1,
) -> dict[str, Any]:
    """The relabelling control alone: :func:`temporal_coverage` on period labels permuted among models.

    Each relabelling permutes the period column among all rows (so every
    period keeps its size) and reruns the whole analysis. Arguments as in
    :func:`temporal_coverage`.

    Returns
    -------
    dict
        ``n``, ``separation`` (one per relabelling), ``separation_mean``,
        ``signed_coverage`` (per relabelling ``{label: value}``),
        ``signed_coverage_mean`` (``{label: mean over relabellings}``),
        ``groups`` (per relabelling, the ``signed_coverage`` group means).
    """
    if int(n_relabellings) < 1:
        raise ValueError(f"n_relabellings must be at least 1, got {n_relabellings}")
    task_cols = _task_map(tasks)
    options = _coverage_checks(task_cols, drift_tasks, tau, kappa, lam, sigmoid_options)
    frames = _relabelled_frames(df, period_col, rng, n_relabellings)
    results, _ = _coverage_runs(frames, task_cols, drift_tasks, options, rng=rng, period_col=period_col,
                                periods=periods, n_jobs=n_jobs, tau=tau, n_bins=n_bins, min_bin_size=min_bin_size,
                                closing_group=closing_group, exceed_rate=exceed_rate)
    out = _relabelling_summary(results, task_cols)
    out["groups"] = [s["groups"]["signed_coverage"] for _, s in results]
    return out


def _coverage_checks(task_cols, drift_tasks, tau, kappa, lam, sigmoid_options) -> dict[str, Any]:
    unknown = sorted(set(drift_tasks) - set(task_cols))
    if unknown:
        raise ValueError(f"drift tasks {unknown} are not among the tasks {list(task_cols)}")
    return {"tau": tau, "kappa": kappa, "lam": lam, **dict(sigmoid_options or {})}


def _relabelled_frames(df, period_col, rng, n) -> list[pd.DataFrame]:
    labels = df[period_col].to_numpy(dtype=object)
    frames = []
    for _ in range(int(n)):
        shuffled = df.copy()
        shuffled[period_col] = rng.permutation(labels)
        frames.append(shuffled)
    return frames


def _coverage_runs(frames, task_cols, drift_tasks, options, *, rng, period_col, periods, n_jobs, tau, n_bins,
                   min_bin_size, closing_group, exceed_rate):
    """All frames' sigmoid fits in one batch; ``[(rows, summary), ...]`` and the first frame's fits."""
    all_splits = [rolling_splits(f, task_cols, period_col=period_col, periods=periods) for f in frames]
    flat = [s for sp in all_splits for s in sp]
    fits = fit_split_models(flat, "sigmoid", options, rng=rng, n_jobs=n_jobs)
    results, start = [], 0
    for sp in all_splits:
        rows = _coverage_rows(sp, fits[start:start + len(sp)], tau=tau, n_bins=n_bins, min_bin_size=min_bin_size,
                              closing_group=closing_group)
        start += len(sp)
        results.append((rows, _summarise_coverage(rows, list(task_cols), set(drift_tasks), exceed_rate=exceed_rate)))
    fitted = [{"task": s.task, "t": s.t, "params": _plain(m.params_), "objective": float(m.objective_),
               "converged": bool(m.converged_)} for s, m in zip(all_splits[0], fits[:len(all_splits[0])])]
    return results, fitted


def _relabelling_summary(results, task_cols) -> dict[str, Any]:
    relabelled = [s for _, s in results]
    seps = [s["groups"]["signed_coverage"]["separation"] for s in relabelled]
    per = [{t: s["tasks"][t]["signed_coverage"] for t in task_cols} for s in relabelled]
    return {
        "n": len(relabelled),
        "separation": seps,
        "separation_mean": _mean(seps) if seps else None,
        "signed_coverage": per,
        "signed_coverage_mean": {t: _mean([p[t] for p in per]) for t in task_cols} if per else {},
    }


# ----------------------------------------------------------------------------- claim 003
def evaluate_split(
    split: RollingSplit,
    model,
    *,
    tau: float = 0.98,
    kappa: float = 50.0,
    n_bins: int = 10,
    min_bin_size: int = 30,
    closing_group: str = "next",
) -> dict[str, float]:
    """ID/OOD mean smoothed pinball and calibration error of one fitted model.

    ``model`` is anything with ``predict(z)``. ID = the training period, with
    bins built on the training z; OOD = the overlap validation set, with bins
    rebuilt on its z. Returns ``pinball_id``, ``pinball_ood``,
    ``calibration_id``, ``calibration_ood``, ``n_bins_id``, ``n_bins_ood``.
    """
    z_tr = split.z_train
    q_tr, q_va = model.predict(z_tr), model.predict(split.z_val)
    bins_tr = equal_mass_bins(z_tr, n_bins, min_bin_size, closing_group=closing_group)
    bins_va = equal_mass_bins(split.z_val, n_bins, min_bin_size, closing_group=closing_group)
    return {
        "pinball_id": float(np.mean(smoothed_pinball_loss(split.y_train - q_tr, tau, kappa))),
        "pinball_ood": float(np.mean(smoothed_pinball_loss(split.y_val - q_va, tau, kappa))),
        "calibration_id": calibration_error(split.y_train, q_tr, bins_tr, tau),
        "calibration_ood": calibration_error(split.y_val, q_va, bins_va, tau),
        "n_bins_id": int(bins_tr.max()) + 1,
        "n_bins_ood": int(bins_va.max()) + 1,
    }


_METRICS = ("pinball_id", "pinball_ood", "calibration_id", "calibration_ood")


def _table(rows: list[dict[str, Any]], keys: Sequence[str]) -> dict[str, dict[str, float]]:
    """Equal-weight mean over task-period pairs of every metric, per estimator."""
    return {k: {m: _mean([r[m] for r in rows if r["estimator"] == k]) for m in _METRICS}
            for k in keys if any(r["estimator"] == k for r in rows)}


def _estimator_options(tau, kappa, lam, ispline_lam, n_intervals, n_bins, min_bin_size, closing_group,
                       sigmoid_options, ispline_options):
    return {
        "constant": {"tau": tau},
        "constant_loss_min": {"tau": tau, "kappa": kappa},
        "binwise": {"tau": tau, "kappa": kappa, "n_bins": n_bins, "min_bin_size": min_bin_size,
                    "closing_group": closing_group},
        "sigmoid": {"tau": tau, "kappa": kappa, "lam": lam, **dict(sigmoid_options or {})},
        "ispline": {"tau": tau, "kappa": kappa, "lam": ispline_lam, "n_intervals": n_intervals,
                    **dict(ispline_options or {})},
    }


def baseline_comparison(
    df: pd.DataFrame,
    tasks: Mapping[str, str] | Sequence[str],
    *,
    rng: np.random.Generator,
    period_col: str = "period",
    periods: Sequence[Period] = OLL_PERIODS,
    tau: float = 0.98,
    kappa: float = 50.0,
    lam: float = 1e-3,
    ispline_lam: float = 1e-4,
    n_intervals: int = 3,
    n_bins: int = 10,
    min_bin_size: int = 30,
    closing_group: str = "next",
    sigmoid_options: Mapping[str, Any] | None = None,
    ispline_options: Mapping[str, Any] | None = None,
    n_shuffles: int = 1,
    n_jobs: int = 1,
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
    n_jobs : int
        Worker processes for the fits.

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
    opts = _estimator_options(tau, kappa, lam, ispline_lam, n_intervals, n_bins, min_bin_size, closing_group,
                              sigmoid_options, ispline_options)

    shuffled_sets = _shuffled_training_sets(df, task_cols, splits, rng, n_shuffles, period_col=period_col,
                                            periods=periods)

    jobs_spec = [(k, splits) for k in ("constant", "constant_loss_min", "binwise", "ispline", "sigmoid")]
    jobs_spec += [("sigmoid", sh) for sh in shuffled_sets]
    jobs, owners = [], []
    for i, (kind, sp) in enumerate(jobs_spec):
        children = rng.spawn(len(sp))
        jobs += [(kind, opts[kind], s.z_train, s.y_train, g) for s, g in zip(sp, children)]
        owners += [i] * len(sp)
    fits = _run_jobs(jobs, n_jobs)
    fits_by_spec = [[f for f, o in zip(fits, owners) if o == i] for i in range(len(jobs_spec))]

    per_pair = []
    for (kind, sp), fs in zip(jobs_spec[:5], fits_by_spec[:5]):
        per_pair += _evaluated(sp, fs, kind, tau=tau, kappa=kappa, n_bins=n_bins, min_bin_size=min_bin_size,
                               closing_group=closing_group)
    table = _table(per_pair, list(ESTIMATORS))

    def id_pinball(kind):
        return np.array([r["pinball_id"] for r in per_pair if r["estimator"] == kind])

    adv_real = float(np.mean(id_pinball("constant") - id_pinball("sigmoid")))
    adv_lm_real = float(np.mean(id_pinball("constant_loss_min") - id_pinball("sigmoid")))
    sh_rows = [_evaluated(sp, fs, "sigmoid", tau=tau, kappa=kappa, n_bins=n_bins, min_bin_size=min_bin_size,
                          closing_group=closing_group) for sp, fs in zip(shuffled_sets, fits_by_spec[5:])]
    # the constants do not depend on z: their ID losses on shuffled data equal the real ones
    adv_sh = [float(np.mean(id_pinball("constant") - np.array([r["pinball_id"] for r in rows]))) for rows in sh_rows]
    adv_lm_sh = [float(np.mean(id_pinball("constant_loss_min") - np.array([r["pinball_id"] for r in rows])))
                 for rows in sh_rows]
    fitted = []
    for kind in ("sigmoid", "ispline"):
        for s, m in zip(splits, fits_by_spec[[k for k, _ in jobs_spec].index(kind)]):
            fitted.append({"task": s.task, "t": s.t, "estimator": kind, "params": _plain(m.params_),
                           "objective": float(m.objective_), "converged": bool(m.converged_)})
    return {
        "n_pairs": len(splits),
        "per_pair": per_pair,
        "table": table,
        "shuffled_z": {
            "n": len(sh_rows),
            "advantage_real": adv_real,
            "advantage_shuffled": _mean(adv_sh) if adv_sh else None,
            "advantage_shuffled_each": adv_sh,
            "advantage_vs_loss_min_real": adv_lm_real,
            "advantage_vs_loss_min_shuffled": _mean(adv_lm_sh) if adv_lm_sh else None,
            "sigmoid_shuffled": {m: _mean([r[m] for rows in sh_rows for r in rows]) for m in _METRICS}
            if sh_rows else {},
        },
        "fitted": fitted,
    }


def _evaluated(splits, fits, kind, **kw) -> list[dict[str, Any]]:
    """``evaluate_split`` of every fitted model, with the split's description and the estimator's key."""
    return [{**s.describe(), "estimator": kind, **evaluate_split(s, m, **kw)} for s, m in zip(splits, fits)]


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
        out.append([RollingSplit(s.task, s.t, s.train_period, s.val_period, by_key[(s.task, s.t)].z_train,
                                 by_key[(s.task, s.t)].y_train, s.z_val, s.y_val, s.n_val_before_overlap, s.overlap)
                    for s in splits])
    return out


def estimator_table(
    df: pd.DataFrame,
    tasks: Mapping[str, str] | Sequence[str],
    kind: str,
    options: Mapping[str, Any],
    *,
    rng: np.random.Generator,
    period_col: str = "period",
    periods: Sequence[Period] = OLL_PERIODS,
    tau: float = 0.98,
    kappa: float = 50.0,
    n_bins: int = 10,
    min_bin_size: int = 30,
    closing_group: str = "next",
    n_jobs: int = 1,
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
    fits = fit_split_models(splits, kind, options, rng=rng, n_jobs=n_jobs)
    rows = _evaluated(splits, fits, kind, tau=tau, kappa=kappa, n_bins=n_bins, min_bin_size=min_bin_size,
                      closing_group=closing_group)
    fitted = [{"task": s.task, "t": s.t, "params": _plain(m.params_),
               "objective": float(m.objective_) if hasattr(m, "objective_") else None}
              for s, m in zip(splits, fits)]
    return {"table": {m: _mean([r[m] for r in rows]) for m in _METRICS}, "per_pair": rows, "fitted": fitted}


def shuffled_z_advantage(
    df: pd.DataFrame,
    tasks: Mapping[str, str] | Sequence[str],
    *,
    rng: np.random.Generator,
    n_shuffles: int,
    period_col: str = "period",
    periods: Sequence[Period] = OLL_PERIODS,
    tau: float = 0.98,
    kappa: float = 50.0,
    lam: float = 1e-3,
    sigmoid_options: Mapping[str, Any] | None = None,
    n_bins: int = 10,
    min_bin_size: int = 30,
    closing_group: str = "next",
    n_jobs: int = 1,
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
    const = [evaluate_split(s, m, **ev)["pinball_id"]
             for s, m in zip(splits, fit_split_models(splits, "constant", {"tau": tau}, rng=rng))]
    sets = _shuffled_training_sets(df, task_cols, splits, rng, n_shuffles, period_col=period_col, periods=periods)
    options = {"tau": tau, "kappa": kappa, "lam": lam, **dict(sigmoid_options or {})}
    flat = [s for sp in sets for s in sp]
    fits = fit_split_models(flat, "sigmoid", options, rng=rng, n_jobs=n_jobs)
    n = len(splits)
    rows = [_evaluated(sp, fits[i * n:(i + 1) * n], "sigmoid", **ev) for i, sp in enumerate(sets)]
    each = [float(np.mean(np.array(const) - np.array([r["pinball_id"] for r in rs]))) for rs in rows]
    return {"n": len(sets), "advantage_each": each, "advantage_mean": _mean(each),
            "sigmoid_shuffled": {m: _mean([r[m] for rs in rows for r in rs]) for m in _METRICS}}


def ispline_knot_sensitivity(
    df: pd.DataFrame,
    tasks: Mapping[str, str] | Sequence[str],
    *,
    rng: np.random.Generator,
    n_intervals_grid: Sequence[int] = (2, 3, 4, 5, 6),
    period_col: str = "period",
    periods: Sequence[Period] = OLL_PERIODS,
    tau: float = 0.98,
    kappa: float = 50.0,
    ispline_lam: float = 1e-4,
    n_bins: int = 10,
    min_bin_size: int = 30,
    closing_group: str = "next",
    ispline_options: Mapping[str, Any] | None = None,
    n_jobs: int = 1,
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
    fits = _run_jobs(jobs, n_jobs)
    rows = []
    for i, k in enumerate(n_intervals_grid):
        fs = fits[i * len(splits):(i + 1) * len(splits)]
        ms = [evaluate_split(s, m, tau=tau, kappa=kappa, n_bins=n_bins, min_bin_size=min_bin_size,
                             closing_group=closing_group) for s, m in zip(splits, fs)]
        rows.append({"n_intervals": int(k), **{m: _mean([x[m] for x in ms]) for m in _METRICS}})
    return {"rows": rows}
