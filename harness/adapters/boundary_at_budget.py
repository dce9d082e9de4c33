"""Authors' arm of protocol ``boundary_at_budget`` (Table 1: boundary at 1e24 FLOPs).

Runs inside the pinned checkout (see ``_launch.py``); imports the authors'
functions from it, and from the harness only the shared quantity names
(``harness_quantities``, see ``_launch.py``).

Call path: the one their CLI takes for
``scripts/smooth_single_skill_frontier.py --sigmoid --split_mode none``
(``skill_frontier/core/sigmoid.py``: ``main`` -> ``fit_sigmoid_frontier``):

1. ``_load_xy_from_csv(csv, task_cols, compute_product_cols=(tokens, params),
   compute_multiplier=m)`` -> ``x``, ``Y`` (rows with a finite ``x > 0``).
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
offers no argument that removes the continuation, so :func:`_fit_one_stage`
drives the module's own pieces (``solve_y0_L_given_shape``,
``objective_and_grad``) with the same starts (``n_zstar_grid`` z* values plus
five quantiles of z, ``n_b_grid`` log-spaced slopes, ``n_random`` random
shapes from ``default_rng(seed)``, best 10 kept), the same box, constraint and
SLSQP options, and the box limits and ``maxiter`` read from
``fit_sigmoid_enhanced``'s signature -- but every step, the screening of the
starts included, at the final ``(tau, kappa)``. Nothing is monkeypatched.

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

import inspect
import math

import harness_quantities as Q
import numpy as np

# fit_sigmoid_frontier's arguments to fit_sigmoid_enhanced (skill_frontier/core/sigmoid.py).
CLI_FIT_ARGS = {"n_zstar_grid": 10, "n_b_grid": 10, "n_random": 100, "seed": 0}
N_KEEP = 10  # starts carried into SLSQP by fit_sigmoid_enhanced
Z_QUANTILES = (0.15, 0.35, 0.5, 0.65, 0.85)  # extra z* starts of fit_sigmoid_enhanced
ACTIVE_TOL = 1e-8


def _authors():
    from skill_frontier.core import sigmoid as sig
    from skill_frontier.core import sigmoid_quantile_optimizer as sqo

    return sig, sqo


def _box(sqo, z):
    """The box of ``fit_sigmoid_enhanced``: limits from its signature and from z."""
    defaults = inspect.signature(sqo.fit_sigmoid_enhanced).parameters
    b_min, b_max = defaults["b_min"].default, defaults["b_max"].default
    return {
        "z_min": float(z.min()),
        "z_max": float(z.max()),
        "b_min": b_min,
        "b_max": b_max,
        "maxiter": defaults["maxiter"].default,
    }


def _fit_one_stage(sqo, z, y, *, tau, kappa, lam):
    """Their starts, objective, box and SLSQP settings, one stage at (tau, kappa)."""
    from scipy.optimize import minimize
    from scipy.special import expit

    box = _box(sqo, z)
    lb_min, lb_max = math.log(box["b_min"]), math.log(box["b_max"])
    rng = np.random.default_rng(CLI_FIT_ARGS["seed"])
    zstars = np.unique(
        np.concatenate(
            [np.linspace(box["z_min"], box["z_max"], CLI_FIT_ARGS["n_zstar_grid"]), np.quantile(z, Z_QUANTILES)]
        )
    )
    slopes = np.exp(np.linspace(lb_min, lb_max, CLI_FIT_ARGS["n_b_grid"]))
    shapes = [(zs, b) for zs in zstars for b in slopes]
    zs_rand = rng.uniform(box["z_min"], box["z_max"], size=CLI_FIT_ARGS["n_random"])
    b_rand = np.exp(rng.uniform(lb_min, lb_max, size=CLI_FIT_ARGS["n_random"]))
    shapes += list(zip(zs_rand, b_rand))

    def objective(p):
        return sqo.objective_and_grad(p, z, y, tau=tau, kappa=kappa, lambda_b=lam)

    starts = []
    for zs, b in shapes:
        (y0, L), _, _ = sqo.solve_y0_L_given_shape(z, y, expit(b * (z - zs)), tau=tau, kappa=kappa)
        p = np.array([y0, L, zs, math.log(b)])
        starts.append((objective(p)[0], p))
    starts.sort(key=lambda t: t[0])

    bounds = [(0.0, 1.0), (0.0, 1.0), (box["z_min"], box["z_max"]), (lb_min, lb_max)]
    cons = [{"type": "ineq", "fun": lambda p: 1.0 - p[0] - p[1], "jac": lambda p: np.array([-1.0, -1.0, 0.0, 0.0])}]
    best = None
    for _, p0 in starts[:N_KEEP]:
        res = minimize(
            objective,
            p0,
            jac=True,
            method="SLSQP",
            bounds=bounds,
            constraints=cons,
            options={"maxiter": box["maxiter"], "ftol": 1e-9, "disp": False},
        )
        y0 = float(np.clip(res.x[0], 0.0, 1.0))
        p = np.array(
            [
                y0,
                float(np.clip(res.x[1], 0.0, 1.0 - y0)),
                float(np.clip(res.x[2], box["z_min"], box["z_max"])),
                float(np.clip(res.x[3], lb_min, lb_max)),
            ]
        )
        obj = objective(p)[0]
        if best is None or obj < best[0]:
            best = (obj, p, bool(res.success), str(res.message))
    return best


def bound_gaps(native, box) -> dict[str, float]:
    """Distance of the optimum from each limit of their box (z* and log b in their own units)."""
    y0, L, z_star, log_b = native
    return {
        "z*=z_min": z_star - box["z_min"],
        "z*=z_max": box["z_max"] - z_star,
        f"beta={box['b_min']:g}": log_b - math.log(box["b_min"]),
        f"beta={box['b_max']:g}": math.log(box["b_max"]) - log_b,
        "y0=0": y0,
        "L=0": L,
        "y0+L=1": 1.0 - y0 - L,
    }


def _fit_task(sqo, x, y, *, tau, kappa, lam, continuation, z_eval):
    m = np.isfinite(x) & np.isfinite(y)
    z = np.log10(np.maximum(x[m], 1e-300))
    order = np.argsort(z)
    z, y = z[order], y[m][order]
    if continuation:
        res = sqo.fit_sigmoid_enhanced(z, y, tau=tau, kappa_final=kappa, lambda_b=lam, **CLI_FIT_ARGS)
        if not res.success or not np.all(np.isfinite(res.params)):
            raise RuntimeError(f"fit_sigmoid_enhanced failed: {res.info}")
        native, objective = res.params, res.objective
        last = res.info["trace"][-1]
        ok, message = last["ok"], last["msg"]
    else:
        objective, native, ok, message = _fit_one_stage(sqo, z, y, tau=tau, kappa=kappa, lam=lam)
    y0, L, z_star, log_b = (float(v) for v in native)
    beta = math.exp(log_b)
    gaps = bound_gaps((y0, L, z_star, log_b), _box(sqo, z))
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


def load_tasks(request: dict):
    """Their optimiser module and the claim's table as their CLI loads it: ``(sqo, labels, x, Y)``."""
    p = request["params"]
    sig, sqo = _authors()
    table = request["tables"][p.get("table", "oll")]
    labels, columns = list(p["tasks"]), list(p["tasks"].values())
    x, Y, kept = sig._load_xy_from_csv(
        table,
        task_cols=columns,
        compute_product_cols=(p["tokens_col"], p["params_col"]),
        compute_multiplier=float(p["multiplier"]),
    )
    if kept != columns:
        raise ValueError(f"{table}: the authors' loader kept columns {kept}, the claim asks for {columns}")
    return sqo, labels, x, Y


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
    if p.get("robustness_cold_start"):
        alt, alt_fits = _fit_all(sqo, x, Y, labels, tau=float(p["tau"]), continuation=not warm, **kw)
        values.update({Q.alt_start_boundary(k): v for k, v in alt.items()})
        values["alt_start.max_shift"] = max(abs(alt[k] - cells[k]) for k in cells)
        details["alt_start_fits"] = alt_fits

    controls = {}
    for c in request.get("controls", []):
        if c["control"] != "tau_override":
            raise ValueError(f"control '{c['id']}': kind '{c['control']}' is not supported by this adapter")
        c_cells, c_fits = _fit_all(sqo, x, Y, labels, tau=float(c["params"]["tau"]), continuation=warm, **kw)
        controls[c["id"]] = {"values": _values(c_cells, c_fits), "details": {"fits": c_fits}}
    return {"values": values, "details": details, "controls": controls}
