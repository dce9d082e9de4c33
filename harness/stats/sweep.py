"""One-at-a-time sweeps of the boundary estimator's hyperparameters (claim on Section 2.1).

Each setting changes one of ``tau``, ``kappa``, ``lam`` and holds the other
two at the claimed values; every task's sigmoid boundary is refitted on the
full data with :class:`~harness.stats.sigmoid.SigmoidQuantileRegressor` and
summarised by

* the boundary at ``z_eval`` (``z = 3`` is 1e24 FLOPs),
* the mean empirical coverage, ``mean_tasks( mean_i 1{y_i <= q(z_i)} )``,
* the largest ``|q(z_eval) - reference|`` over tasks (reference values are
  passed in, e.g. the paper's Table 1),
* the largest ``|q(z_eval) - q_claimed(z_eval)|`` over tasks,
* the fitted slope ``beta`` of every task.

Our estimator's warm-up stages are capped at the target ``(tau, kappa)``, so
a setting's final stage is always at that setting (``kappa = 10`` is a true
``kappa = 10`` fit), and ``beta`` is only constrained to be positive, so large
``lam`` shows where the ridge really drives the slope.

The fit at the claimed setting is done once and reused wherever a sweep
passes through it; every other (setting, task) fit gets its own child
generator spawned from ``rng`` in a fixed order, so results do not depend on
the order in which fits run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from .sigmoid import SigmoidQuantileRegressor

__all__ = ["hyperparameter_sweep", "fit_setting"]


#: Generators needed per task for each choice of starts.
_STARTS = {"warm": 1, "cold": 1, "best": 2}


def _fit_one(z, y, w, tau, kappa, lam, options, rngs, z_eval, starts):
    """Fit one task (weights ``w``, ``None``: one each); with ``starts="best"`` fit warm and cold and keep the lower
    objective."""
    modes = {"warm": (True,), "cold": (False,), "best": (True, False)}[starts]
    models = [
        SigmoidQuantileRegressor(tau=tau, kappa=kappa, lam=lam, rng=g, warm_start=ws, **options).fit(z, y, weights=w)
        for ws, g in zip(modes, rngs)
    ]
    objectives = {("warm" if ws else "cold"): m.objective_ for ws, m in zip(modes, models)}
    i = int(np.argmin([m.objective_ for m in models]))
    model = models[i]
    return {
        "boundary": float(model.predict(z_eval)),
        "coverage": float(np.mean(y <= model.predict(z))),
        "params": {k: float(v) for k, v in model.params_.items()},
        "objective": model.objective_,
        "objectives_by_start": objectives,
        "start": "warm" if modes[i] else "cold",
        "converged": model.converged_,
        "n_iter": sum(m.n_iter_ for m in models),
    }


def fit_setting(
    data: Mapping[str, tuple[np.ndarray, np.ndarray]],
    *,
    tau: float,
    kappa: float,
    lam: float,
    rngs: Sequence[np.random.Generator],
    z_eval: float,
    estimator_options: Mapping | None = None,
    starts: str = "warm",
    weights: Mapping[str, np.ndarray | None] | None = None,
) -> dict:
    """Fit every task at one ``(tau, kappa, lam)`` (each task's rows weighted by ``weights[task]`` where given).

    Parameters
    ----------
    data : mapping
        ``{task: (z, y)}``.
    rngs : sequence of Generator
        One per task and start, in the order of ``data`` (two per task,
        warm then cold, when ``starts="best"``).
    estimator_options : mapping, optional
        Further keyword options of ``SigmoidQuantileRegressor`` (``n_random``,
        ``n_keep``); ``warm_start`` is set by ``starts``.
    starts : {"warm", "cold", "best"}
        Warm-up through the easier stages, a direct ("cold") solve of the
        final stage, or both with the lower final objective kept.

    Returns
    -------
    dict
        ``{task: {boundary, coverage, params, objective, objectives_by_start,
        start, converged, n_iter}}``.
    """
    if starts not in _STARTS:
        raise ValueError(f"starts must be one of {list(_STARTS)}, got {starts!r}")
    opts = dict(estimator_options or {})
    if "warm_start" in opts:
        raise ValueError("set warm/cold starts with `starts`, not estimator_options['warm_start']")
    per = _STARTS[starts]
    if len(rngs) != per * len(data):
        raise ValueError(f"need {per * len(data)} generators ({per} per task), got {len(rngs)}")
    return {
        label: _fit_one(
            np.asarray(z, float),
            np.asarray(y, float),
            (weights or {}).get(label),
            tau,
            kappa,
            lam,
            opts,
            rngs[per * j : per * (j + 1)],
            z_eval,
            starts,
        )
        for j, (label, (z, y)) in enumerate(data.items())
    }


def _fit_setting_job(job) -> dict:
    data, weights, setting, rngs, z_eval, estimator_options, starts = job
    return fit_setting(
        data, rngs=rngs, z_eval=z_eval, estimator_options=estimator_options, starts=starts, weights=weights, **setting
    )


def _serial_map(fn, items):
    return [fn(item) for item in items]


def _summarise(param, value, setting, fits, claimed_fits, reference, beta_task):
    bnd = {k: f["boundary"] for k, f in fits.items()}
    cov = {k: f["coverage"] for k, f in fits.items()}
    out = {
        "param": param,
        "value": None if value is None else float(value),
        **{k: float(v) for k, v in setting.items()},
        "boundary": bnd,
        "coverage": cov,
        "coverage_mean": float(np.mean(list(cov.values()))),
        "coverage_minus_tau": float(np.mean(list(cov.values())) - setting["tau"]),
        "max_dev_reference": None,
        "max_shift_vs_claimed": float(max(abs(bnd[k] - claimed_fits[k]["boundary"]) for k in bnd)),
        "beta": {k: f["params"]["beta"] for k, f in fits.items()},
        "params": {k: f["params"] for k, f in fits.items()},
        "beta_task": beta_task,
        "beta_of_task": fits[beta_task]["params"]["beta"] if beta_task in fits else None,
        "objective": {k: f["objective"] for k, f in fits.items()},
        "converged": {k: f["converged"] for k, f in fits.items()},
        "start": {k: f["start"] for k, f in fits.items()},
    }
    if reference is not None:
        out["max_dev_reference"] = float(max(abs(bnd[k] - reference[k]) for k in reference))
    return out


def hyperparameter_sweep(
    data: Mapping[str, tuple[np.ndarray, np.ndarray]],
    *,
    rng: np.random.Generator,
    reference: Mapping[str, float] | None = None,
    claimed: Mapping[str, float],
    grids: Mapping[str, Sequence[float]],
    z_eval: float,
    beta_task: str,
    estimator_options: Mapping | None = None,
    starts: str = "warm",
    map_fn: Callable | None = None,
    weights: Mapping[str, np.ndarray | None] | None = None,
) -> dict:
    """One-at-a-time sweeps of ``tau``, ``kappa``, ``lam`` around ``claimed``.

    Parameters
    ----------
    data : mapping
        ``{task: (z, y)}`` on the full data.
    weights : mapping, optional
        ``{task: w}``: each task's rows' weights in the fits (``None``: one each); the coverage is the rows'.
    rng : numpy.random.Generator
        Parent of one spawned child generator per fit.
    reference : mapping, optional
        ``{task: value}`` to compare the boundaries at ``z_eval`` with (the
        paper's Table 1). Tasks must be keys of ``data``.
    claimed, grids : mapping
        The claimed values and, per hyperparameter, the values to try.
    beta_task : str
        Task whose fitted slope is reported as ``beta_of_task``.
    estimator_options : mapping, optional
        ``n_random``, ``n_keep`` of ``SigmoidQuantileRegressor``.
    starts : {"warm", "cold", "best"}
        See :func:`fit_setting`. ``"best"`` doubles the cost and shows where
        the warm-up path misses the final stage's minimum.
    map_fn : callable, optional
        ``map_fn(fn, items) -> [fn(item) for item in items]`` in item order: how the settings' fits are
        spread (the caller's fan-out); one after the other when omitted.

    Returns
    -------
    dict
        ``claimed`` (the summary of the claimed setting), ``sweeps``
        (``{param: [summary per value]}``), ``n_fits`` (distinct fits run). A summary holds ``param, value, tau, kappa,
        lam, boundary{task}, coverage{task}, coverage_mean,
        coverage_minus_tau, max_dev_reference, max_shift_vs_claimed,
        beta{task}, params{task}, beta_task, beta_of_task, objective{task},
        converged{task}, start{task}``.

    Notes
    -----
    Coverage counts ``y <= q(z)`` (ties covered), per task over all its
    points, then averages over tasks with equal weight.
    """
    if reference is not None:
        unknown = sorted(set(reference) - set(data))
        if unknown:
            raise ValueError(f"reference tasks {unknown} are not in the data {sorted(data)}")
    unknown = sorted(set(grids) - set(claimed))
    if unknown:
        raise ValueError(f"grid names {unknown} are not hyperparameters {sorted(claimed)}")
    claimed = {k: float(v) for k, v in claimed.items()}
    settings = [(p, float(v), {**claimed, p: float(v)}) for p in grids for v in grids[p]]
    distinct = [claimed]
    for _, _, s in settings:
        if s not in distinct:
            distinct.append(s)
    if starts not in _STARTS:
        raise ValueError(f"starts must be one of {list(_STARTS)}, got {starts!r}")
    per = _STARTS[starts] * len(data)
    children = rng.spawn(len(distinct) * per)
    jobs = [
        (data, weights, s, children[i * per : (i + 1) * per], z_eval, estimator_options, starts)
        for i, s in enumerate(distinct)
    ]
    fits = list((map_fn or _serial_map)(_fit_setting_job, jobs))
    claimed_fits = fits[0]
    by_setting = {tuple(sorted(s.items())): f for s, f in zip(distinct, fits)}
    sweeps: dict[str, list] = {p: [] for p in grids}
    for p, v, s in settings:
        f = by_setting[tuple(sorted(s.items()))]
        sweeps[p].append(_summarise(p, v, s, f, claimed_fits, reference, beta_task))
    return {
        "claimed": _summarise("claimed", None, claimed, claimed_fits, claimed_fits, reference, beta_task),
        "sweeps": sweeps,
        "n_fits": len(distinct) * per,
        "starts": starts,
    }
