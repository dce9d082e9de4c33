"""The authors' sigmoid fitter as their CLI path calls it, and the claim's table as their loaders read it, shared
by the adapters that fit their boundary. Runs inside the authors' environment; imports their modules lazily and
nothing of the harness but its neighbours. Every setting is read from their code at the pinned commit."""

from __future__ import annotations

import ast
import csv
import inspect
import math
import os
import textwrap
from functools import partial

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit

from .shared import OutsideTheirCodeError, require_columns, write_table

# fit_sigmoid_frontier's arguments to fit_sigmoid_enhanced (skill_frontier/core/sigmoid.py).
CLI_FIT_ARGS = {"n_zstar_grid": 10, "n_b_grid": 10, "n_random": 100, "seed": 0}
N_KEEP = 10  # starts carried into SLSQP by fit_sigmoid_enhanced
Z_QUANTILES = (0.15, 0.35, 0.5, 0.65, 0.85)  # extra z* starts of fit_sigmoid_enhanced
ACTIVE_TOL = 1e-8


def authors():
    """Their modules ``skill_frontier.core.sigmoid`` and ``sigmoid_quantile_optimizer``: ``(sig, sqo)``."""
    from skill_frontier.core import sigmoid as sig
    from skill_frontier.core import sigmoid_quantile_optimizer as sqo

    return sig, sqo


def box(sqo, z):
    """The box of ``fit_sigmoid_enhanced``: limits from its signature and from z."""
    defaults = {k: v.default for k, v in inspect.signature(sqo.fit_sigmoid_enhanced).parameters.items()}
    return {"z_min": float(z.min()), "z_max": float(z.max()), **{k: defaults[k] for k in ("b_min", "b_max", "maxiter")}}


def fit_one_stage(sqo, z, y, *, tau, kappa, lam):
    """Their starts, objective, box and SLSQP settings, one stage at (tau, kappa), answered as :func:`fit_at`."""
    limits = box(sqo, z)
    lb_min, lb_max = math.log(limits["b_min"]), math.log(limits["b_max"])
    rng = np.random.default_rng(CLI_FIT_ARGS["seed"])
    grid = np.linspace(limits["z_min"], limits["z_max"], CLI_FIT_ARGS["n_zstar_grid"])
    zstars = np.unique(np.concatenate([grid, np.quantile(z, Z_QUANTILES)]))
    slopes = np.exp(np.linspace(lb_min, lb_max, CLI_FIT_ARGS["n_b_grid"]))
    zs_rand = rng.uniform(limits["z_min"], limits["z_max"], size=CLI_FIT_ARGS["n_random"])
    b_rand = np.exp(rng.uniform(lb_min, lb_max, size=CLI_FIT_ARGS["n_random"]))
    shapes = [(zs, b) for zs in zstars for b in slopes] + list(zip(zs_rand, b_rand))
    objective = partial(sqo.objective_and_grad, z=z, y=y, tau=tau, kappa=kappa, lambda_b=lam)
    starts = []
    for zs, b in shapes:
        (y0, L), _, _ = sqo.solve_y0_L_given_shape(z, y, expit(b * (z - zs)), tau=tau, kappa=kappa)
        p = np.array([y0, L, zs, math.log(b)])
        starts.append((objective(p)[0], p))
    starts.sort(key=lambda t: t[0])

    bounds = [(0.0, 1.0), (0.0, 1.0), (limits["z_min"], limits["z_max"]), (lb_min, lb_max)]
    cons = [{"type": "ineq", "fun": lambda p: 1.0 - p[0] - p[1], "jac": lambda p: np.array([-1.0, -1.0, 0.0, 0.0])}]
    slsqp, fits = {"maxiter": limits["maxiter"], "ftol": 1e-9, "disp": False}, []
    for _, p0 in starts[:N_KEEP]:
        res = minimize(objective, p0, jac=True, method="SLSQP", bounds=bounds, constraints=cons, options=slsqp)
        y0 = float(np.clip(res.x[0], 0.0, 1.0))
        p = np.clip(res.x, [0.0, 0.0, limits["z_min"], lb_min], [1.0, 1.0 - y0, limits["z_max"], lb_max])
        fits.append((p, objective(p)[0], bool(res.success), str(res.message)))
    return min(fits, key=lambda fit: fit[1])  # the first fit of the lowest objective


def fit_at(sqo, z, y, *, tau, kappa, lam, warm: bool, where: str = ""):
    """Their continuation (``warm``: ``fit_sigmoid_enhanced`` with ``fit_sigmoid_frontier``'s arguments; a failed
    fit is an error) or :func:`fit_one_stage`: ``(native, objective, ok, message, their stages' trace or None)``."""
    if not warm:
        return *fit_one_stage(sqo, z, y, tau=tau, kappa=kappa, lam=lam), None
    res = sqo.fit_sigmoid_enhanced(z, y, tau=tau, kappa_final=kappa, lambda_b=lam, **CLI_FIT_ARGS)
    if not res.success or not np.all(np.isfinite(res.params)):
        raise RuntimeError(f"fit_sigmoid_enhanced failed{where}: {res.info}")
    trace = res.info["trace"]
    return res.params, res.objective, trace[-1]["ok"], trace[-1]["msg"], trace


def described(sqo, native, z, objective, *, gaps: bool = False) -> dict:
    """A fit's parameters (as the harness writes them and in their units), objective and the limits of their
    box it sits on (with the distance from each if ``gaps``)."""
    y0, L, z_star, log_b = (float(v) for v in native)
    beta, limits = math.exp(log_b), box(sqo, z)
    distance = {  # from each limit of their box (z* and log b in their own units)
        "z*=z_min": z_star - limits["z_min"],
        "z*=z_max": limits["z_max"] - z_star,
        f"beta={limits['b_min']:g}": log_b - math.log(limits["b_min"]),
        f"beta={limits['b_max']:g}": math.log(limits["b_max"]) - log_b,
        "y0=0": y0,
        "L=0": L,
        "y0+L=1": 1.0 - y0 - L,
    }
    out = {
        "params": {"y0": y0, "L": L, "a": -beta * z_star, "beta": beta},
        "params_native": {"y0": y0, "L": L, "z_star": z_star, "log_b": log_b},
        "objective": float(objective),
        "bounds_active": [name for name, gap in distance.items() if abs(gap) <= ACTIVE_TOL],
    }
    return out | ({"bound_gaps": distance} if gaps else {})


def task_arrays(x, y):
    """``fit_sigmoid_frontier``'s preparation: finite ``(x, y)``, ``z = log10(max(x, 1e-300))``, sorted by z."""
    m = np.isfinite(x) & np.isfinite(y)
    z = np.log10(np.maximum(x[m], 1e-300))
    order = np.argsort(z)
    return z[order], y[m][order]


def load_tasks(request: dict):
    """Their optimiser module and the claim's table as their code loads it: ``(sqo, labels, x, Y)``: the compute
    proxy by their CLI's loader ``_load_xy_from_csv``; a column of compute (``params.compute``) as their Epoch AI
    script reads it (:func:`_compute_column`)."""
    p = request["params"]
    sig, sqo = authors()
    table = claim_table(request)
    labels, columns = list(p["tasks"]), list(p["tasks"].values())
    if p.get("compute"):
        x, Y = _compute_column(table, p["compute"], columns)
        return sqo, labels, x, Y
    prod, mult = (p["tokens_col"], p["params_col"]), float(p["multiplier"])
    x, Y, kept = sig._load_xy_from_csv(table, task_cols=columns, compute_product_cols=prod, compute_multiplier=mult)
    if kept != columns:
        raise ValueError(f"{table}: the authors' loader kept columns {kept}, the claim asks for {columns}")
    return sqo, labels, x, Y


def _compute_column(table: str, compute: dict, columns: list[str]):
    """Compute in FLOPs divided by their ``X_TICK_MULTIPLIER`` (checked to be the harness's 1e21 FLOPs), numbers
    read with their ``_safe_float``, rows with a finite ``x > 0`` (``scripts/epoch_ai/...sigmoid_frontiers.py``)."""
    from scripts.epoch_ai import fit_benchmarks_runs_sigmoid_frontiers as epoch

    per_unit = {"FLOPs": float(epoch.X_TICK_MULTIPLIER), "1e21 FLOPs": 1.0}[compute["unit"]]
    if compute["unit"] == "FLOPs" and per_unit != 1e21:
        raise OutsideTheirCodeError(
            f"their Epoch AI script's compute unit is not the harness's: X_TICK_MULTIPLIER is {per_unit:g}, "
            "not 1e21 FLOPs"
        )
    with open(table, newline="", encoding="utf-8-sig") as fh:
        rows = list(csv.DictReader(fh))
    if rows:
        require_columns(table, rows[0], [compute["column"], *columns])
    x = np.array([epoch._safe_float(r[compute["column"]]) for r in rows], float) / per_unit
    Y = np.array([[epoch._safe_float(r[c]) for c in columns] for r in rows], float).reshape(len(rows), len(columns))
    keep = np.isfinite(x) & (x > 0)
    return x[keep], Y[keep]


def claim_table(request: dict) -> str:
    """The path of the claim's table as the authors' code must read it: the table itself, or, for scores in
    percent (``params.scale``), a copy in the run's scratch folder with every score column divided by 100
    (an empty or unparsable cell kept as it is; every other cell as written)."""
    p = request["params"]
    table = request["tables"][p.get("table", "oll")]
    if p.get("scale", "fraction") != "percent":
        return table
    columns = set(p["tasks"].values())
    out = os.path.join(os.getcwd(), "scaled", os.path.basename(table))
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(table, newline="", encoding="utf-8-sig") as fh:
        reader = csv.DictReader(fh)
        headers, rows = list(reader.fieldnames or []), list(reader)
    write_table(out, headers, ({k: (_divided(v) if k in columns else v) for k, v in r.items()} for r in rows))
    return out


def _divided(cell: str) -> str:
    """A score cell in percent as a fraction, written so that it reads back as the same float."""
    try:
        return repr(float(cell) / 100.0) if cell not in (None, "", "nan", "NaN") else cell
    except ValueError:
        return cell


def _argument_defaults(function, names: tuple[str, ...]) -> dict[str, tuple[float, int]]:
    """The literal ``default`` of each ``p.add_argument(name, ...)`` in ``function``'s source, with its line in
    the function's file: ``{name: (default, line)}``."""
    lines, first = inspect.getsourcelines(function)
    tree = ast.parse(textwrap.dedent("".join(lines)))
    out = {}
    calls = (n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "attr", None) == "add_argument")
    for node in calls:
        if node.args and isinstance(node.args[0], ast.Constant) and node.args[0].value in names:
            for kw in node.keywords:
                if kw.arg == "default":
                    out[node.args[0].value] = (float(ast.literal_eval(kw.value)), first + node.lineno - 1)
    return out


def own_setting(request: dict) -> dict:
    """The setting the authors' own code path fits the claim's table with, read from their code (never assumed):
    their Epoch AI script's ``--tau``, ``--kappa``, ``--lambda_b`` defaults for a compute column, else their CLI's
    ``--tau`` default, ``fit_sigmoid_frontier``'s ``kappa_final`` default and the module's ``LAMBDA_B``."""
    sig, _ = authors()
    if request["params"].get("compute"):
        from scripts.epoch_ai import fit_benchmarks_runs_sigmoid_frontiers as module

        flags = {"tau": "--tau", "kappa": "--kappa", "lam": "--lambda_b"}
        found = _argument_defaults(module.main, tuple(flags.values()))
        path, at = "epoch_script", {name: found[flag] for name, flag in flags.items()}
    else:
        module, path = sig, "cli"
        kappa = float(inspect.signature(sig.fit_sigmoid_frontier).parameters["kappa_final"].default)
        lines, first = inspect.getsourcelines(sig.fit_sigmoid_frontier)
        lam_line = 1 + next(i for i, src in enumerate(inspect.findsource(sig)[0]) if src.startswith("DEFAULT_LAMBDA_B"))
        at = {  # {name: (value, line)}
            "tau": _argument_defaults(sig.main, ("--tau",))["--tau"],
            "kappa": (kappa, first + next(i for i, line in enumerate(lines) if "kappa_final" in line)),
            "lam": (float(sig.LAMBDA_B), lam_line),
        }
    where = {name: f"{module.__name__.replace('.', '/')}.py:{line}" for name, (_, line) in at.items()}
    return {**{name: value for name, (value, _) in at.items()}, "where": where, "path": path}
