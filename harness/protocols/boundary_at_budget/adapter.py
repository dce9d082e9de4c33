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


def _values(cells, fits):
    out = {Q.boundary(k): v for k, v in cells.items()}
    out.update({Q.coverage(k): fits[k]["coverage"] for k in cells})
    return out


def parts(request: dict) -> list[dict]:
    """One request per benchmark: a claim of that task alone, answered by :func:`run` and cached on its own.
    Plain dict work, nothing of the authors'."""
    tasks = request["params"]["tasks"]
    return [{**request, "params": {**request["params"], "tasks": {label: col}}} for label, col in tasks.items()]


def run(request: dict) -> dict:
    """One benchmark of :func:`parts`: its fit at the claim's setting, at their own code's setting when that is
    another, from the other start (``robustness_cold_start``) and at each control's tau, as ``(boundary, fit)``."""
    p = request["params"]
    sqo, _, x, Y = load_tasks(request)
    z_eval, warm = math.log10(float(p["eval_x"])), bool(p["warm_start"])

    def fit(tau, continuation=warm, kappa=float(p["kappa"]), lam=float(p["lam"])):
        return _fit_task(sqo, x, Y[:, 0], tau=tau, kappa=kappa, lam=lam, continuation=continuation, z_eval=z_eval)

    own = own_setting(request)
    details = {"claimed": fit(float(p["tau"])), "n_rows": int(x.size), "own_setting": own}
    if any(not math.isclose(own[k], float(p[k]), rel_tol=1e-12) for k in ("tau", "kappa", "lam")):
        details["own_boundary"] = fit(own["tau"], True, own["kappa"], own["lam"])[0]
    if p.get("robustness_cold_start"):
        details["alt_start"] = fit(float(p["tau"]), not warm)
    details["controls"] = {}
    for c in request.get("controls", []):
        if c["control"] != "tau_override":
            raise unsupported(c)
        details["controls"][c["id"]] = fit(float(c["params"]["tau"]))
    return {"values": {}, "details": details, "controls": {}}


def combine(request: dict, answers: list[dict]) -> dict:
    """The claim's answer from its benchmarks' (in :func:`parts` order)."""
    p = request["params"]
    one = {label: a["details"] for label, a in zip(p["tasks"], answers)}
    cells, fits = {k: d["claimed"][0] for k, d in one.items()}, {k: d["claimed"][1] for k, d in one.items()}
    values = _values(cells, fits)
    first = answers[0]["details"]
    details = {
        "fits": fits,
        "z_eval": math.log10(float(p["eval_x"])),
        "warm_start": bool(p["warm_start"]),
        "n_rows": max(d["n_rows"] for d in one.values()),
        "fit_args": {
            "tau": float(p["tau"]),
            "kappa_final": float(p["kappa"]),
            "lambda_b": float(p["lam"]),
            **CLI_FIT_ARGS,
        },
        "own_setting": dict(first["own_setting"]),
    }
    if "own_boundary" in first:
        details["own_setting"]["boundaries"] = {k: d["own_boundary"] for k, d in one.items()}
    if p.get("robustness_cold_start"):
        alt = {k: d["alt_start"][0] for k, d in one.items()}
        values.update({Q.alt_start_boundary(k): v for k, v in alt.items()})
        values[Q.ALT_START_MAX_SHIFT] = max(abs(alt[k] - cells[k]) for k in cells)
        details["alt_start_fits"] = {k: d["alt_start"][1] for k, d in one.items()}
    controls = {}
    for c in request.get("controls", []):
        c_cells = {k: d["controls"][c["id"]][0] for k, d in one.items()}
        c_fits = {k: d["controls"][c["id"]][1] for k, d in one.items()}
        controls[c["id"]] = {"values": _values(c_cells, c_fits), "details": {"fits": c_fits}}
    return {"values": values, "details": details, "controls": controls}
