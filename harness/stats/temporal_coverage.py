"""Out-of-period coverage of the sigmoid boundary (paper Section 3, Figure 2).

Does a boundary fitted on one period cover the models of the next? For every
task and rolling split (:mod:`harness.stats.splits`) the sigmoid boundary is
fitted on the training period and compared with the later models: signed
coverage error, in-sample signed coverage, pooled share above with an exact
binomial test and (given a cluster per row) a cluster-robust test, bin-averaged
variants, and drift/stable group means; the relabelling control permutes the
period labels among models.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from .binning import assign_to_bins, equal_mass_bins, equal_mass_left_edges
from .coverage import (
    binned_signed_coverage_error,
    count_above,
    exceedance_binomial_pvalue,
    exceedance_cluster_test,
    signed_coverage_error,
)
from .periods import Period
from .splits import fit_split_models, rolling_splits
from .splits import mean as _mean
from .splits import plain_params as _plain
from .splits import task_map as _task_map

__all__ = ["temporal_coverage", "relabelled_coverage"]


def _coverage_rows(splits, fits, *, tau, n_bins, min_bin_size, closing_group, binned=True, clusters=None):
    """Per-split coverage statistics of fitted boundaries (the bin-averaged ones ``None`` unless ``binned``), and
    per split the validation points' exceedances with their clusters (``None`` without ``clusters``)."""
    rows, exceed = [], []
    for s, m in zip(splits, fits):
        q_tr, q_va = m.predict(s.z_train), m.predict(s.z_val)
        exceed.append(None if clusters is None else (s.y_val > q_va, clusters[s.val_rows]))
        row = {
            **s.describe(),
            "n_above": count_above(s.y_val, q_va),
            "signed_coverage": signed_coverage_error(s.y_val, q_va, tau),
            "in_sample": signed_coverage_error(s.y_train, q_tr, tau),
            "bin_averaged": None,
            "bin_averaged_train_bins": None,
        }
        if binned:
            val_bins = equal_mass_bins(s.z_val, n_bins, min_bin_size, closing_group=closing_group)
            val_in_train_bins = assign_to_bins(
                s.z_val, equal_mass_left_edges(s.z_train, n_bins, min_bin_size, closing_group=closing_group)
            )
            row["bin_averaged"] = binned_signed_coverage_error(s.y_val, q_va, val_bins, tau)
            row["bin_averaged_train_bins"] = binned_signed_coverage_error(s.y_val, q_va, val_in_train_bins, tau)
        rows.append(row)
    return rows, exceed


def _cluster_codes(df, col) -> np.ndarray | None:
    """An integer cluster per row from column ``col``; a row without one is a cluster of its own."""
    if col is None:
        return None
    codes = pd.factorize(df[col])[0]
    alone = codes < 0
    codes[alone] = codes.max(initial=-1) + 1 + np.arange(alone.sum())
    return codes


def _mean_or_none(values) -> float | None:
    """The mean, ``None`` where a value was not computed (a variant left out)."""
    return None if any(v is None for v in values) else _mean(values)


def _summarise_coverage(rows, exceed, task_order, drift_tasks, *, exceed_rate, tested=True) -> dict[str, Any]:
    """Benchmark values (mean over splits, pooled share/tests; the binomial test ``None`` unless ``tested``) and
    group means."""
    per_task = {}
    for task in task_order:
        r = [row for row in rows if row["task"] == task]
        k, n = sum(x["n_above"] for x in r), sum(x["n_val"] for x in r)
        pairs = [e for row, e in zip(rows, exceed) if row["task"] == task and e is not None]
        clustered = {"p": None, "design_effect": None, "n_clusters": None}
        if pairs:
            above, clusters = (np.concatenate(x) for x in zip(*pairs))
            clustered = exceedance_cluster_test(above, clusters, exceed_rate)
        per_task[task] = {
            "group": "drift" if task in drift_tasks else "stable",
            "signed_coverage": _mean([x["signed_coverage"] for x in r]),
            "in_sample": _mean([x["in_sample"] for x in r]),
            "bin_averaged": _mean_or_none([x["bin_averaged"] for x in r]),
            "bin_averaged_train_bins": _mean_or_none([x["bin_averaged_train_bins"] for x in r]),
            "n_above": int(k),
            "n": int(n),
            "share_above": k / n,
            "binomial_p": exceedance_binomial_pvalue(k, n, exceed_rate) if tested else None,
            "cluster_p": clustered["p"],
            "design_effect": clustered["design_effect"],
            "n_clusters": clustered["n_clusters"],
        }
    drift = [t for t in task_order if t in drift_tasks]
    stable = [t for t in task_order if t not in drift_tasks]
    groups = {}
    for key in ("signed_coverage", "bin_averaged", "bin_averaged_train_bins", "in_sample"):
        d = _mean_or_none([per_task[t][key] for t in drift])
        s = _mean_or_none([per_task[t][key] for t in stable])
        groups[key] = {"drift": d, "stable": s, "separation": None if d is None or s is None else s - d}
    return {"tasks": per_task, "groups": groups}


def temporal_coverage(
    df: pd.DataFrame,
    tasks: Mapping[str, str] | Sequence[str],
    *,
    drift_tasks: Sequence[str],
    rng: np.random.Generator,
    period_col: str = "period",
    periods: Sequence[Period],
    tau: float,
    kappa: float,
    lam: float,
    sigmoid_options: Mapping[str, Any] | None = None,
    n_bins: int = 10,
    min_bin_size: int = 30,
    closing_group: str = "next",
    exceed_rate: float = 0.02,
    n_relabellings: int = 5,
    map_fn: Callable | None = None,
    inits: Mapping[tuple[str, int], Mapping[str, float]] | None = None,
    binned: bool = True,
    cluster_col: str | None = None,
    tested: bool = True,
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
        Null rate of the exceedance tests (``1 - tau``).
    n_relabellings : int
        Random permutations of the period labels among models (0 to skip).
    map_fn : callable, optional
        ``map_fn(fn, items) -> [fn(item) for item in items]``, in item order: how the independent fits
        are spread (the caller's fan-out); one after the other when omitted.
    inits : mapping, optional
        ``{(task, t): params}``: start each fit of the real periods from these
        parameters (one solve; a bootstrap resample starts from the full-sample fits).
    binned : bool
        ``False`` leaves the bin-averaged variants out (``None`` wherever they would be), for a bootstrap
        that reads none of them.
    cluster_col : str, optional
        The column naming each row's cluster (a base model; a row without one is its own) for the
        cluster-robust exceedance test; left out, that test is not run (``None`` wherever it would be).
    tested : bool
        ``False`` leaves the binomial tests out (``binomial_p`` ``None``), likewise.

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
        (``sum n_above / sum n``), ``binomial_p``, and from
        :func:`harness.stats.coverage.exceedance_cluster_test` ``cluster_p``, ``design_effect``, ``n_clusters``.
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
    splits. Share above and both exceedance tests pool the validation models over splits.
    The relabelling control permutes the period column among all rows
    (keeping the period sizes) and recomputes the benchmark values.
    """
    task_cols = _task_map(tasks)
    options = _coverage_checks(task_cols, drift_tasks, tau, kappa, lam, sigmoid_options)
    kw = {
        "tau": tau,
        "n_bins": n_bins,
        "min_bin_size": min_bin_size,
        "closing_group": closing_group,
        "exceed_rate": exceed_rate,
        "binned": binned,
        "tested": tested,
    }
    frames = [df] + _relabelled_frames(df, period_col, rng, n_relabellings)
    results, fitted = _coverage_runs(
        frames,
        task_cols,
        drift_tasks,
        options,
        rng=rng,
        period_col=period_col,
        periods=periods,
        map_fn=map_fn,
        inits=inits,
        clusters=_cluster_codes(df, cluster_col),
        **kw,
    )
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
    periods: Sequence[Period],
    tau: float,
    kappa: float,
    lam: float,
    sigmoid_options: Mapping[str, Any] | None = None,
    n_bins: int = 10,
    min_bin_size: int = 30,
    closing_group: str = "next",
    exceed_rate: float = 0.02,
    map_fn: Callable | None = None,
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
    results, _ = _coverage_runs(
        frames,
        task_cols,
        drift_tasks,
        options,
        rng=rng,
        period_col=period_col,
        periods=periods,
        map_fn=map_fn,
        tau=tau,
        n_bins=n_bins,
        min_bin_size=min_bin_size,
        closing_group=closing_group,
        exceed_rate=exceed_rate,
    )
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


def _coverage_runs(
    frames,
    task_cols,
    drift_tasks,
    options,
    *,
    rng,
    period_col,
    periods,
    map_fn,
    tau,
    n_bins,
    min_bin_size,
    closing_group,
    exceed_rate,
    inits=None,
    binned=True,
    clusters=None,
    tested=True,
):
    """All frames' sigmoid fits in one batch; ``[(rows, summary), ...]`` and the first frame's fits."""
    all_splits = [rolling_splits(f, task_cols, period_col=period_col, periods=periods) for f in frames]
    flat = [s for sp in all_splits for s in sp]
    first = len(all_splits[0])
    starts = [(inits or {}).get((s.task, s.t)) if i < first else None for i, s in enumerate(flat)]
    fits = fit_split_models(flat, "sigmoid", options, rng=rng, map_fn=map_fn, inits=starts)
    results, start = [], 0
    for sp in all_splits:
        rows, exceed = _coverage_rows(
            sp,
            fits[start : start + len(sp)],
            tau=tau,
            n_bins=n_bins,
            min_bin_size=min_bin_size,
            closing_group=closing_group,
            binned=binned,
            clusters=clusters,
        )
        start += len(sp)
        summary = _summarise_coverage(
            rows, exceed, list(task_cols), set(drift_tasks), exceed_rate=exceed_rate, tested=tested
        )
        results.append((rows, summary))
    fitted = [
        {
            "task": s.task,
            "t": s.t,
            "params": _plain(m.params_),
            "objective": float(m.objective_),
            "converged": bool(m.converged_),
        }
        for s, m in zip(all_splits[0], fits[: len(all_splits[0])])
    ]
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
