"""Rolling period splits and the fitting of one estimator per split (paper Section 3).

Fit on ``P_t`` only, evaluate on ``P_{t+1}`` restricted to the overlap of the
two z ranges (t = 1, 2, 3 for four periods); see :mod:`harness.stats.periods`.
Every function takes a DataFrame with a ``z`` column, the task score columns
and a period-label column (:func:`harness.stats.periods.assign_periods`).
Randomness comes from an explicit ``numpy.random.Generator``; each fit gets
its own child generator (``rng.spawn``) in a fixed order, so results do not
depend on how the fits are spread (``map_fn``: the caller's fan-out, serial by
default).

Performance note: the fits are many small optimisation problems. A
multi-threaded BLAS makes each of them slower by 10-50x on a loaded two-core
machine; the callers limit BLAS to one thread (threadpoolctl), and so does
every task of the harness's fan-out layer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .baselines import BinwiseQuantileRegressor, ConstantQuantileRegressor, LossMinimisingConstantRegressor
from .ispline import ISplineQuantileRegressor
from .ispline import fit_together as fit_isplines_together
from .leaderboard import weight_column
from .periods import Period, overlap_interval, rolling_pairs
from .sigmoid import SigmoidQuantileRegressor
from .sigmoid import fit_together as fit_sigmoids_together

__all__ = ["RollingSplit", "rolling_splits", "fit_split_models", "run_fit_jobs", "task_map", "mean", "plain_params"]


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
    val_rows: np.ndarray | None = None  # the validation points' row positions in the frame
    w_train: np.ndarray | None = None  # the training rows' weights in the fit (None: one each)

    def describe(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "t": self.t,
            "train": self.train_period,
            "val": self.val_period,
            "n_train": int(self.z_train.size),
            "n_val": int(self.z_val.size),
            "n_val_before_overlap": self.n_val_before_overlap,
            "overlap": [float(self.overlap[0]), float(self.overlap[1])],
        }


def task_map(tasks: Mapping[str, str] | Sequence[str]) -> dict[str, str]:
    if isinstance(tasks, Mapping):
        return {str(k): str(v) for k, v in tasks.items()}
    return {str(c): str(c) for c in tasks}


def rolling_splits(
    df: pd.DataFrame,
    tasks: Mapping[str, str] | Sequence[str],
    *,
    period_col: str = "period",
    periods: Sequence[Period],
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
        With a weight column beside a score column (:func:`harness.stats.leaderboard.weight_column`), the
        training rows carry its weights. The validation arrays are already restricted to the overlap
        ``[max(min z_tr, min z_va), min(max z_tr, max z_va)]`` (inclusive).
    """
    task_cols = task_map(tasks)
    missing = [c for c in [z_col, period_col, *task_cols.values()] if c not in df.columns]
    if missing:
        raise KeyError(f"columns {missing} are not in the frame")
    z_all = df[z_col].to_numpy(dtype=float)
    period = df[period_col].to_numpy(dtype=object)
    pairs = rolling_pairs(periods)
    # each period's rows once, not once per task and pair: the labels coded once (by hashing), then compared as
    # integers (a label absent from the frame has no rows)
    codes, labels = pd.factorize(period)
    code_of = {label: k for k, label in enumerate(labels.tolist())}
    rows_of = {p: codes == code_of.get(p, -2) for p in dict.fromkeys(p for _, a, b in pairs for p in (a, b))}
    z_ok = np.isfinite(z_all)
    out = []
    for label, col in task_cols.items():
        y_col = df[col]
        # a column of doubles is its own numeric reading
        y_all = (y_col if y_col.dtype == np.float64 else pd.to_numeric(y_col, errors="coerce")).to_numpy(dtype=float)
        w_all = df[weight_column(col)].to_numpy(dtype=float) if weight_column(col) in df.columns else None
        ok = np.isfinite(y_all) & z_ok
        scored = {p: (ok & rows).nonzero()[0] for p, rows in rows_of.items()}  # each period's rows, in row order
        for t, p_tr, p_va in pairs:
            tr, va = scored[p_tr], scored[p_va]
            if tr.size < 4 or va.size < 1:
                raise ValueError(f"{label}: period {p_tr} has {tr.size} and {p_va} has {va.size} scored rows")
            z_tr, z_va = z_all[tr], z_all[va]
            lo, hi = overlap_interval(z_tr, z_va)
            keep = va[(z_va >= lo) & (z_va <= hi)]
            w_tr = None if w_all is None else w_all[tr]
            out.append(
                RollingSplit(
                    label, t, p_tr, p_va, z_tr, y_all[tr], z_all[keep], y_all[keep], int(va.size), (lo, hi), keep, w_tr
                )
            )
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
_TOGETHER = {"sigmoid": fit_sigmoids_together, "ispline": fit_isplines_together}


def _fit_job(job):
    """``(kind, options, z, y, rng[, init[, weights]])``: one fitted estimator; ``init`` (the sigmoid and the
    I-spline) starts a single solve from given parameters; ``weights`` (the sigmoid alone) weigh the rows."""
    kind, options, z, y, rng, *rest = job
    init, w = (rest + [None, None])[:2]
    kwargs = dict(options)
    if kind in _TAKES_RNG:
        kwargs["rng"] = rng
    model = _FACTORIES[kind](**kwargs)
    if w is not None:
        if kind != "sigmoid":
            raise ValueError(f"weighted rows are fitted by the sigmoid alone, not by {kind!r}")
        return model.fit(z, y, init=init, weights=w)
    return model.fit(z, y, init=init) if init is not None else model.fit(z, y)


def run_fit_jobs(jobs: list, map_fn: Callable | None = None) -> list:
    """Fit every job, through ``map_fn`` (in job order; serial when omitted). Serially, the sigmoid and I-spline
    jobs started from given parameters, unweighted, that share their kind, options and ``z`` (the tasks of a
    resample scored on the same rows) are fitted together (:func:`harness.stats.sigmoid.fit_together`)."""
    if map_fn is not None:
        return list(map_fn(_fit_job, jobs))
    out, together = [None] * len(jobs), {}
    for i, (kind, options, z, _, _, *rest) in enumerate(jobs):
        init, w = (rest + [None, None])[:2]
        if kind in _TOGETHER and init is not None and w is None:
            together.setdefault((kind, repr(sorted(options.items())), z.tobytes()), []).append(i)
    for (kind, *_), ids in together.items():
        models = [_FACTORIES[kind](**jobs[i][1], rng=jobs[i][4]) for i in ids]
        fits = _TOGETHER[kind](models, jobs[ids[0]][2], [jobs[i][3] for i in ids], [jobs[i][5] for i in ids])
        for i, m in zip(ids, fits):
            out[i] = m
    return [m if m is not None else _fit_job(job) for m, job in zip(out, jobs)]


def fit_split_models(
    splits: Sequence[RollingSplit],
    kind: str,
    options: Mapping[str, Any],
    *,
    rng: np.random.Generator,
    map_fn: Callable | None = None,
    inits: Sequence[Mapping[str, float] | None] | None = None,
) -> list:
    """Fit one estimator per split on its training period.

    ``kind`` is one of ``"sigmoid", "ispline", "constant", "constant_loss_min",
    "binwise"``; ``options`` are its keyword arguments (without ``rng``). Child
    generators are spawned from ``rng`` in split order, one per split.
    ``inits`` (sigmoid and I-spline): per split, parameters to start a single solve from
    (a bootstrap resample starts from the full-sample fit); with every split's given, no
    generator is spawned (``rng`` is left as given). Returns the fitted
    estimators, in split order.
    """
    if kind not in _FACTORIES:
        raise ValueError(f"unknown estimator {kind!r}; known: {sorted(_FACTORIES)}")
    inits = list(inits) if inits is not None else [None] * len(splits)
    # a fit started from given parameters draws no start: with every fit so, none is spawned
    children = rng.spawn(len(splits)) if None in inits else [None] * len(splits)
    jobs = [(kind, dict(options), s.z_train, s.y_train, g, i, s.w_train) for s, g, i in zip(splits, children, inits)]
    return run_fit_jobs(jobs, map_fn)


def mean(values) -> float:
    return float(np.mean(np.asarray(values, dtype=float)))


def plain_params(params: Mapping[str, Any]) -> dict[str, Any]:
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
