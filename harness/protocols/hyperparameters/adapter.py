"""Authors' arm of protocol ``hyperparameters`` (claim 004: tau, kappa, lambda of Section 2.1)."""

from __future__ import annotations

import math

import numpy as np

from ...authors import audit
from ...authors.adapters import authors_sigmoid as H
from ...authors.adapters.shared import unsupported
from ...stats import losscheck
from . import quantities as Q
from .quantities import setting_key


def _fit_task(sqo, z, y, *, tau, kappa, lam, warm, z_eval):
    """One task's fit at one setting: its coverage, and what the record keeps of it (:data:`_KEPT`)."""
    where = f" at tau={tau}, kappa={kappa}, lam={lam}"
    native, objective, ok, _, trace = H.fit_at(sqo, z, y, tau=tau, kappa=kappa, lam=lam, warm=warm, where=where)
    fit = H.described(sqo, native, z, objective)
    return {
        "boundary": float(sqo.sigmoid_pred(native, z_eval)),
        "coverage": float(np.mean(y <= sqo.sigmoid_pred(native, z))),
        "beta": fit["params"]["beta"],
        "bounds_active": fit["bounds_active"],
        "stages": [[float(s["tau"]), float(s["kappa"])] for s in trace] if trace else [[float(tau), float(kappa)]],
        "converged": bool(ok),
    }


def _summary(fits, claimed_fits, reference, beta_task):
    bnd = {k: f["boundary"] for k, f in fits.items()}
    return {
        "coverage_mean": float(np.mean([f["coverage"] for f in fits.values()])),
        "max_dev": float(max(abs(bnd[k] - v) for k, v in reference.items())),
        "max_shift": float(max(abs(bnd[k] - claimed_fits[k]["boundary"]) for k in bnd)),
        "mean_boundary": float(np.mean(list(bnd.values()))),
        "beta": fits[beta_task]["beta"],
    }


#: What the record keeps of each task's fit: what the report and the tests rest on.
_KEPT = ("boundary", "beta", "bounds_active", "stages", "converged")


def _setting_details(s, fits, b_min_name):
    finals = {tuple(f["stages"][-1]) for f in fits.values()}
    final = finals.pop() if len(finals) == 1 else None
    return {
        **s,
        "final_stage": list(final) if final is not None else "differs by task",
        "final_stage_is_setting": all(f["stages"][-1] == [s["tau"], s["kappa"]] for f in fits.values()),
        "n_tasks_beta_at_min": sum(b_min_name in f["bounds_active"] for f in fits.values()),
        "fits": {k: {x: f[x] for x in _KEPT} for k, f in fits.items()},
    }


def check_code(request: dict, sqo) -> tuple[dict, dict]:
    """Checks of the authors' code itself: the cited source lines, and their loss function."""
    p = request["params"]
    cited = audit.audit_source_lines(request["checkout"], p.get("source_audit", []))
    grid = losscheck.residual_grid(n=int(p["loss_grid_points"]))
    loss = losscheck.check_loss_function(
        lambda u, tau, kappa: sqo.smooth_pinball_loss(u, tau=tau, kappa=kappa), float(p["tau"]), float(p["kappa"]), grid
    )
    loss["function"] = f"{sqo.__name__}.smooth_pinball_loss"
    values = {
        "audit.n": float(cited["n"]),
        "audit.n_failed": float(cited["n"] - cited["n_found"]),
        **{name: loss[name.removeprefix("loss.")] for name in Q.LOSS},
    }
    return values, {"audit": cited, "loss": loss}


def _claimed(p: dict) -> dict:
    return {"tau": float(p["tau"]), "kappa": float(p["kappa"]), "lam": float(p["lam"])}


def _distinct_settings(request: dict) -> list[dict]:
    """Every setting the claim needs, once each, in the order they are first met: the claimed one, the sweep
    rows (tau, kappa, lam grids), the controls'."""
    p = request["params"]
    claimed = _claimed(p)
    wanted = [claimed] + [{**claimed, param: float(v)} for param in ("tau", "kappa", "lam") for v in p[f"{param}_grid"]]
    for ctl in request.get("controls", []):
        if ctl["control"] != "tau_override":
            raise unsupported(ctl)
        wanted.append({**claimed, "tau": float(ctl["params"]["tau"])})
    out: dict[str, dict] = {}
    for s in wanted:
        out.setdefault(setting_key(s), s)
    return list(out.values())


def parts(request: dict) -> list[dict]:
    """One request per distinct setting (every task fitted at it) and one for the checks of their code; each
    answered by :func:`run` and cached on its own. Plain dict work, nothing of the authors'."""
    own = [{**request, "part": {"setting": setting_key(s)}} for s in _distinct_settings(request)]
    return [*own, {**request, "part": {"code": "checks"}}]


def run(request: dict) -> dict:
    """The answer to one part (``request["part"]``) of :func:`parts`."""
    part = request["part"]
    if "code" in part:
        _, sqo = H.authors()
        values, details = check_code(request, sqo)
        return {"values": values, "details": details, "controls": {}}
    p = request["params"]
    (s,) = [x for x in _distinct_settings(request) if setting_key(x) == part["setting"]]
    sqo, labels, x, Y = H.load_tasks(request)
    data = {label: H.task_arrays(x, Y[:, j]) for j, label in enumerate(labels)}
    z_eval, warm = math.log10(float(p["eval_x"])), bool(p["warm_start"])
    fits = {label: _fit_task(sqo, z, y, warm=warm, z_eval=z_eval, **s) for label, (z, y) in data.items()}
    limits = H.box(sqo, next(iter(data.values()))[0])
    details = {"fits": fits, "b_min": limits["b_min"], "b_max": limits["b_max"], "n_rows": int(x.size)}
    return {"values": {}, "details": details, "controls": {}}


def combine(request: dict, answers: list[dict]) -> dict:
    """The claim's answer from its parts' answers (in :func:`parts` order)."""
    p = request["params"]
    settings = _distinct_settings(request)
    # every setting is fitted once: the claimed one, the sweep's, the controls'
    fits_at = {setting_key(s): a["details"]["fits"] for s, a in zip(settings, answers)}
    code = answers[len(settings)]
    first = answers[0]["details"]
    b_min_name, b_max_name = f"beta={first['b_min']:g}", f"beta={first['b_max']:g}"
    reference = {k: float(v) for k, v in p["reference"].items()}
    z_eval, warm = math.log10(float(p["eval_x"])), bool(p["warm_start"])

    claimed = _claimed(p)
    claimed_fits = fits_at[setting_key(claimed)]
    swept = {setting_key(claimed)}
    n_tasks = len(claimed_fits)
    c = _summary(claimed_fits, claimed_fits, reference, p["beta_task"])
    values = {Q.claimed(stat): c[stat] for stat in Q.CLAIMED_STATS}
    others, n_within = [], 0
    for param in ("tau", "kappa", "lam"):
        for v in p[f"{param}_grid"]:
            s = {**claimed, param: float(v)}
            swept.add(setting_key(s))
            row = _summary(fits_at[setting_key(s)], claimed_fits, reference, p["beta_task"])
            for stat in ("max_dev", "coverage_mean", "max_shift", "beta"):
                values[Q.sweep(param, float(v), stat)] = row[stat]
            if float(v) != claimed[param]:
                others.append(row["max_dev"])
                n_within += int(row["max_dev"] <= float(p["within"]))
    if not others:
        raise ValueError("the sweep grids hold no setting other than the claimed one; others.min_max_dev is undefined")
    values[Q.others("min_max_dev")] = min(others)
    values[Q.others("n_within")] = float(n_within)
    values.update(code["values"])

    controls = {}
    for ctl in request.get("controls", []):
        s = {**claimed, "tau": float(ctl["params"]["tau"])}
        reused = setting_key(s) in swept
        swept.add(setting_key(s))
        c_fits = fits_at[setting_key(s)]
        summary = _summary(c_fits, c_fits, reference, p["beta_task"])
        controls[ctl["id"]] = {
            "values": {Q.claimed(stat): summary[stat] for stat in ("coverage_mean", "max_dev", "mean_boundary")},
            "details": {
                "setting": setting_key(s),
                "reused_sweep_fit": reused,
                **_setting_details(s, c_fits, b_min_name),
            },
        }

    settings_details = {setting_key(s): _setting_details(s, fits_at[setting_key(s)], b_min_name) for s in settings}
    details = {
        "claimed": setting_key(claimed),
        "settings": settings_details,
        "quirks": {
            "final_stage_not_setting": sorted(
                k for k, d in settings_details.items() if not d["final_stage_is_setting"]
            ),
            "all_tasks_beta_at_min": sorted(
                k for k, d in settings_details.items() if d["n_tasks_beta_at_min"] == n_tasks
            ),
            "beta_bound": b_min_name,
            "beta_max_bound": b_max_name,
        },
        "n_fits": len(settings) * n_tasks,
        "n_rows": first["n_rows"],
        "warm_start": warm,
        "fit_args": dict(H.CLI_FIT_ARGS),
        "z_eval": z_eval,
        "helper": H.__name__.rpartition(".")[2],
        **code["details"],
    }
    return {"values": values, "details": details, "controls": controls}
