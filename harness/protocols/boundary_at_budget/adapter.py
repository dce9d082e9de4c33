"""Authors' arm of protocol ``boundary_at_budget`` (Table 1: boundary at 1e24 FLOPs)."""

from __future__ import annotations

import math

import numpy as np

from ...authors.adapters.authors_sigmoid import CLI_FIT_ARGS, described, fit_at, load_tasks, own_setting, task_arrays
from ...authors.adapters.shared import unsupported
from . import quantities as Q


def _fit_task(sqo, x, y, *, tau, kappa, lam, continuation, z_eval):
    z, y = task_arrays(x, y)
    native, objective, ok, message, _ = fit_at(sqo, z, y, tau=tau, kappa=kappa, lam=lam, warm=continuation)
    fit = {
        **described(sqo, native, z, objective, gaps=True),
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
            raise unsupported(c)
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
