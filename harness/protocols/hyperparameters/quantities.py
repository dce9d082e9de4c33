"""Quantities of ``hyperparameters``: one-at-a-time sweeps of τ, κ, λ against a reference."""

from __future__ import annotations

from ...core.quantities import SCORE, Quantity, number_text

HYPER_SYMBOLS = {"tau": "τ", "kappa": "κ", "lam": "λ"}
SWEEP_STATS = {
    "max_dev": "largest gap to the reference",
    "coverage_mean": "mean coverage",
    "max_shift": "largest shift from the claimed setting",
    "beta": "fitted slope",
}
CLAIMED_STATS = ("max_dev", "coverage_mean", "mean_boundary")
#: Checks of the authors' code itself (their cited source lines, their loss function): name -> label.
AUDIT = {
    "audit.n": "source lines audited",
    "audit.n_failed": "cited source lines that do not say what the claim expects",
}
LOSS = {
    "loss.literal_max_gap": "largest gap between the authors' loss and the printed formula",
    "loss.sharp_sup_gap": "largest gap between the authors' loss and the sharp check loss",
    "loss.sharp_rel_error": "relative gap between that largest gap and log(2)/κ",
}


def setting_key(setting: dict) -> str:
    """``tau=0.98,kappa=50,lam=0.001``: a full hyperparameter setting as one key."""
    return f"tau={setting['tau']:g},kappa={setting['kappa']:g},lam={setting['lam']:g}"


def setting_text(param: str, value: float) -> str:
    """``λ = 0.001`` for the sweep setting ``lam=0.001``."""
    return f"{HYPER_SYMBOLS.get(param, param)} = {number_text(value)}"


def sweep(param: str, value: float, stat: str) -> str:
    """``sweep.lam=0.001.max_dev``: a statistic of one one-at-a-time setting."""
    return f"sweep.{param}={value:g}.{stat}"


def claimed(stat: str) -> str:
    """``claimed.max_dev``: a statistic of the claimed setting."""
    return f"claimed.{stat}"


def others(stat: str) -> str:
    """``others.min_max_dev`` or ``others.n_within``: a statistic over the settings other than the claimed one."""
    return f"others.{stat}"


def vocabulary(p: dict) -> dict[str, Quantity]:
    out = {
        claimed("max_dev"): Quantity("largest gap to the reference at the claimed setting"),
        claimed("coverage_mean"): Quantity("mean coverage at the claimed setting", kind="fraction"),
        claimed("mean_boundary"): Quantity("mean boundary at the claimed setting", bounds=SCORE),
        others("min_max_dev"): Quantity("smallest largest-gap to the reference among the other settings"),
        others("n_within"): Quantity("other settings within reach of the reference", kind="count"),
    }
    out.update({name: Quantity(label, "upstream", "count") for name, label in AUDIT.items()})
    out.update({name: Quantity(label, "upstream") for name, label in LOSS.items()})
    grids = {"tau": p["tau_grid"], "kappa": p["kappa_grid"], "lam": p["lam_grid"]}
    for param, values in grids.items():
        for v in values:
            at = setting_text(param, v)
            for stat, words in SWEEP_STATS.items():
                who = f" of {p['beta_task']}" if stat == "beta" else ""
                kind = "fraction" if stat == "coverage_mean" else "value"
                out[sweep(param, v, stat)] = Quantity(f"{words}{who} at {at}", kind=kind)
    return out


def control_vocabulary(kind: str, p: dict, c: dict) -> dict[str, Quantity]:
    return {
        claimed("max_dev"): Quantity("largest gap to the reference under the control"),
        claimed("coverage_mean"): Quantity("mean coverage under the control", kind="fraction"),
        claimed("mean_boundary"): Quantity("mean boundary under the control", bounds=SCORE),
    }
