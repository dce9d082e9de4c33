"""Authors' arm of protocol ``boundary_at_budget`` (Table 1: boundary at 1e24 FLOPs).

Runs inside the pinned checkout (see ``harness/authors/adapters/_launch.py``); imports
the authors' functions from it, and from the harness only its protocol's
quantity names and the shared driver :mod:`harness.authors.adapters.authors_sigmoid`.

Call path: the one their CLI takes for
``scripts/smooth_single_skill_frontier.py --sigmoid --split_mode none``
(``skill_frontier/core/sigmoid.py``: ``main`` -> ``fit_sigmoid_frontier``):

1. ``_load_xy_from_csv(csv, task_cols, compute_product_cols=(tokens, params),
   compute_multiplier=m)`` -> ``x``, ``Y`` (rows with a finite ``x > 0``); for
   scores in percent (``scale: percent``) ``csv`` is a copy of the table with
   the score columns divided by 100 (:func:`~harness.authors.adapters.authors_sigmoid.claim_table`).
2. Per task, as ``fit_sigmoid_frontier`` does: keep finite ``(x, y)``,
   ``z = log10(max(x, 1e-300))``, sort by ``np.argsort(z)``.
3. ``fit_sigmoid_enhanced(z, y, tau=tau, kappa_final=kappa, lambda_b=lam,
   n_zstar_grid=10, n_b_grid=10, n_random=100, seed=0)``: the arguments
   ``fit_sigmoid_frontier`` passes (not the function's own defaults).
   ``tau``, ``kappa``, ``lam`` come from the claim (their CLI: ``--tau``,
   ``kappa_final=50``, ``LAMBDA_B = 1e-3``); the claim's ``n_random`` and seed
   belong to the re-implementation and are not used here.
4. Cell = ``sigmoid_pred(params, log10(eval_x))``. Their CLI writes the curve
   clipped to [0, 1]; their box keeps ``0 <= y0 <= y0 + L <= 1``, so the clip
   never binds.

Cold start (``alt_start.*``, and the main fit when ``warm_start`` is false):
their optimiser without the tau/kappa continuation. ``fit_sigmoid_enhanced``
offers no argument that removes the continuation, so
:func:`harness.authors.adapters.authors_sigmoid.fit_one_stage` drives the module's own pieces
(``solve_y0_L_given_shape``, ``objective_and_grad``) with the same starts (``n_zstar_grid`` z* values plus
five quantiles of z, ``n_b_grid`` log-spaced slopes, ``n_random`` random
shapes from ``default_rng(seed)``, best 10 kept), the same box, constraint and
SLSQP options, and the box limits and ``maxiter`` read from
``fit_sigmoid_enhanced``'s signature -- but every step, the screening of the
starts included, at the final ``(tau, kappa)``. Nothing is monkeypatched.

Their own setting (``details.own_setting``, :func:`harness.authors.adapters.authors_sigmoid.own_setting`): the
(tau, kappa, lambda) their own code path fits this table with (their Epoch AI script's defaults for a table
with a compute column, their CLI's for the leaderboard), read from their code; where it is not the claim's,
each task is fitted there too, as their path does (with the continuation), and its cell reported
(``boundaries``), so that a value both arms miss at the claim's setting can be traced to the setting the
published one was made with.

Answer: ``values`` ``boundary.<label>`` (the cell), ``coverage.<label>``
(share of the fitted points with ``y <= q(z)``) and, with
``robustness_cold_start``, ``alt_start.boundary.<label>`` and
``alt_start.max_shift``. ``details.fits.<label>``: ``params`` in the
harness's ``(y0, L, a, beta)`` (``beta = exp(log b)``, ``a = -beta * z*``),
``params_native`` (their ``y0, L, z*, log b``), ``objective`` (their final
objective), ``bounds_active`` (limits of their box within ``ACTIVE_TOL``:
``z*=z_min``, ``z*=z_max``, ``beta=0.05``, ``beta=50``, ``y0=0``, ``L=0``,
``y0+L=1``), ``bound_gaps`` (the distance to each), ``n``, ``converged`` and
``message`` (SLSQP's last word on the winning start). Control
``tau_override``: the same values and fits at another ``tau``.
"""

from __future__ import annotations

import math

import numpy as np

from ...authors.adapters.authors_sigmoid import (
    ACTIVE_TOL,
    CLI_FIT_ARGS,
    bound_gaps,
    box,
    fit_one_stage,
    load_tasks,
    own_setting,
    task_arrays,
)
from . import quantities as Q


def _fit_task(sqo, x, y, *, tau, kappa, lam, continuation, z_eval):
    z, y = task_arrays(x, y)
    if continuation:
        res = sqo.fit_sigmoid_enhanced(z, y, tau=tau, kappa_final=kappa, lambda_b=lam, **CLI_FIT_ARGS)
        if not res.success or not np.all(np.isfinite(res.params)):
            raise RuntimeError(f"fit_sigmoid_enhanced failed: {res.info}")
        native, objective = res.params, res.objective
        last = res.info["trace"][-1]
        ok, message = last["ok"], last["msg"]
    else:
        objective, native, ok, message = fit_one_stage(sqo, z, y, tau=tau, kappa=kappa, lam=lam)
    y0, L, z_star, log_b = (float(v) for v in native)
    beta = math.exp(log_b)
    gaps = bound_gaps((y0, L, z_star, log_b), box(sqo, z))
    fit = {
        "params": {"y0": y0, "L": L, "a": -beta * z_star, "beta": beta},
        "params_native": {"y0": y0, "L": L, "z_star": z_star, "log_b": log_b},
        "objective": float(objective),
        "bounds_active": [name for name, gap in gaps.items() if abs(gap) <= ACTIVE_TOL],
        "bound_gaps": gaps,
        "n": int(z.size),
        "coverage": float(np.mean(y <= sqo.sigmoid_pred(native, z))),
        "converged": bool(ok),
        "message": message,
        "continuation": continuation,
    }
    return float(sqo.sigmoid_pred(native, z_eval)), fit


def _fit_all(sqo, x, Y, labels, *, z_eval, **kw):
    cells, fits = {}, {}
    for j, label in enumerate(labels):
        cells[label], fits[label] = _fit_task(sqo, x, Y[:, j], z_eval=z_eval, **kw)
    return cells, fits


def _values(cells, fits):
    out = {Q.boundary(k): v for k, v in cells.items()}
    out.update({Q.coverage(k): fits[k]["coverage"] for k in cells})
    return out


def run(request: dict) -> dict:
    p = request["params"]
    sqo, labels, x, Y = load_tasks(request)
    z_eval = math.log10(float(p["eval_x"]))
    kw = {"kappa": float(p["kappa"]), "lam": float(p["lam"]), "z_eval": z_eval}
    warm = bool(p["warm_start"])

    cells, fits = _fit_all(sqo, x, Y, labels, tau=float(p["tau"]), continuation=warm, **kw)
    values = _values(cells, fits)
    details = {
        "fits": fits,
        "z_eval": z_eval,
        "warm_start": warm,
        "n_rows": int(x.size),
        "fit_args": {"tau": float(p["tau"]), "kappa_final": kw["kappa"], "lambda_b": kw["lam"], **CLI_FIT_ARGS},
    }
    own = own_setting(request)
    if any(not math.isclose(own[k], float(p[k]), rel_tol=1e-12) for k in ("tau", "kappa", "lam")):
        at_own = {"kappa": own["kappa"], "lam": own["lam"], "z_eval": z_eval}
        own_cells, _ = _fit_all(sqo, x, Y, labels, tau=own["tau"], continuation=True, **at_own)
        own["boundaries"] = own_cells
    details["own_setting"] = own
    if p.get("robustness_cold_start"):
        alt, alt_fits = _fit_all(sqo, x, Y, labels, tau=float(p["tau"]), continuation=not warm, **kw)
        values.update({Q.alt_start_boundary(k): v for k, v in alt.items()})
        values[Q.ALT_START_MAX_SHIFT] = max(abs(alt[k] - cells[k]) for k in cells)
        details["alt_start_fits"] = alt_fits

    controls = {}
    for c in request.get("controls", []):
        if c["control"] != "tau_override":
            raise ValueError(f"control '{c['id']}': kind '{c['control']}' is not supported by this adapter")
        c_cells, c_fits = _fit_all(sqo, x, Y, labels, tau=float(c["params"]["tau"]), continuation=warm, **kw)
        controls[c["id"]] = {"values": _values(c_cells, c_fits), "details": {"fits": c_fits}}
    return {"values": values, "details": details, "controls": controls}


# -- one request per benchmark ---------------------------------------------------------------------------------


def parts(request: dict) -> list[dict]:
    """One request per benchmark (its fits: the claim's, the other start's, every control's): each is a claim
    of one task, answered by :func:`run` and cached on its own. Plain dict work, nothing of the authors'."""
    tasks = request["params"]["tasks"]
    return [{**request, "params": {**request["params"], "tasks": {label: col}}} for label, col in tasks.items()]


def combine(request: dict, answers: list[dict]) -> dict:
    """The claim's answer from its benchmarks' (in :func:`parts` order), as :func:`run` on all tasks gives it."""
    labels = list(request["params"]["tasks"])
    one = dict(zip(labels, answers))
    cells = {k: a["values"][Q.boundary(k)] for k, a in one.items()}
    fits = {k: a["details"]["fits"][k] for k, a in one.items()}
    values = _values(cells, fits)
    first = answers[0]["details"]
    details = {
        "fits": fits,
        "z_eval": first["z_eval"],
        "warm_start": first["warm_start"],
        "n_rows": max(a["details"]["n_rows"] for a in answers),
        "fit_args": first["fit_args"],
        "own_setting": dict(first["own_setting"]),
    }
    if "boundaries" in first["own_setting"]:
        details["own_setting"]["boundaries"] = {k: a["details"]["own_setting"]["boundaries"][k] for k, a in one.items()}
    if request["params"].get("robustness_cold_start"):
        values.update({Q.alt_start_boundary(k): a["values"][Q.alt_start_boundary(k)] for k, a in one.items()})
        values[Q.ALT_START_MAX_SHIFT] = max(a["values"][Q.ALT_START_MAX_SHIFT] for a in answers)
        details["alt_start_fits"] = {k: a["details"]["alt_start_fits"][k] for k, a in one.items()}
    controls = {}
    for c in request.get("controls", []):
        c_cells = {k: a["controls"][c["id"]]["values"][Q.boundary(k)] for k, a in one.items()}
        c_fits = {k: a["controls"][c["id"]]["details"]["fits"][k] for k, a in one.items()}
        controls[c["id"]] = {"values": _values(c_cells, c_fits), "details": {"fits": c_fits}}
    return {"values": values, "details": details, "controls": controls}
