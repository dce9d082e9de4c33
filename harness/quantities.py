"""The vocabulary of quantities: every name a protocol can measure, built in one place.

A claim's targets and controls name quantities (``boundary.MATH Lvl 5``,
``gap.pinball_ood``, ``sweep.lam=0.001.max_dev``). Each protocol declares
which names it can measure for a claim's parameters, and this module is the
only place those names are spelled: the protocols, the adapters that run the
authors' code and the validation of claim files all call it. It uses the
standard library only, because the adapters import it inside the authors'
environment (the launcher loads this file as ``harness_quantities``).

Every quantity has a reader-facing ``label`` (what a report prints instead
of the internal name) and the ``arm`` that measures it:

``both``
    both the re-implementation and the authors' code report it;
``reimpl``
    only the re-implementation (a refit inside the authors' box, a larger
    permutation count, a power analysis);
``upstream``
    only the authors' arm: a check *of* the authors' code (their loss
    function, their source lines). A target on such a quantity is judged on
    the authors' value.

``vocabulary(protocol, params)`` gives ``{name: Quantity}`` for a protocol's
measurement; ``control_vocabulary(protocol, kind, params, control_params)``
for one control's measurement. ``params`` are plain dicts (a validated
model's ``model_dump()``).
"""

from __future__ import annotations

import math
from typing import NamedTuple

__all__ = [
    "Quantity",
    "vocabulary",
    "control_vocabulary",
    "PROTOCOL_NAMES",
    "budget_text",
    "setting_text",
    "setting_key",
    # name builders
    "boundary",
    "coverage",
    "alt_start_boundary",
    "boxed",
    "signed_coverage",
    "in_sample",
    "share_above",
    "binomial_p",
    "split",
    "bin_averaged",
    "n_validation",
    "metric",
    "sweep",
    "METRICS",
    "ESTIMATORS",
    "ESTIMATOR_NAMES",
    "METRIC_NAMES",
    "GAPS",
    "SWEEP_STATS",
    "HYPER_SYMBOLS",
]

PROTOCOL_NAMES = ("boundary_at_budget", "temporal_coverage", "estimator_comparison", "hyperparameters", "shift_test")


class Quantity(NamedTuple):
    label: str
    arm: str = "both"


# -- shared wording --------------------------------------------------------------------------------------

_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def budget_text(eval_x: float) -> str:
    """A compute budget given in units of 1e21 FLOPs, in words: ``10²⁴ FLOPs`` or ``3e+23 FLOPs``."""
    exponent = math.log10(eval_x) + 21
    if abs(exponent - round(exponent)) < 1e-9:
        return f"10{str(int(round(exponent))).translate(_SUPERSCRIPT)} FLOPs"
    return f"{eval_x * 1e21:.3g} FLOPs"


HYPER_SYMBOLS = {"tau": "τ", "kappa": "κ", "lam": "λ"}


def setting_key(setting: dict) -> str:
    """``tau=0.98,kappa=50,lam=0.001``: a full hyperparameter setting as one key."""
    return f"tau={setting['tau']:g},kappa={setting['kappa']:g},lam={setting['lam']:g}"


def setting_text(param: str, value: float) -> str:
    """``λ = 0.001`` for the sweep setting ``lam=0.001``."""
    return f"{HYPER_SYMBOLS.get(param, param)} = {value:g}"


# -- boundary_at_budget ----------------------------------------------------------------------------------


def boundary(label: str) -> str:
    return f"boundary.{label}"


def coverage(label: str) -> str:
    return f"coverage.{label}"


def alt_start_boundary(label: str) -> str:
    return f"alt_start.boundary.{label}"


def boxed(name: str) -> str:
    """The refit of quantity ``name`` inside the authors' optimiser box (re-implementation only)."""
    return f"boxed.{name}"


def _boundary_vocabulary(p: dict) -> dict[str, Quantity]:
    at = budget_text(p["eval_x"])
    out = {}
    for label in p["tasks"]:
        out[boundary(label)] = Quantity(f"{label} boundary at {at}")
        out[coverage(label)] = Quantity(f"share of {label} scores on or below the fitted boundary")
    if p.get("robustness_cold_start"):
        for label in p["tasks"]:
            out[alt_start_boundary(label)] = Quantity(f"{label} boundary at {at}, other start")
        out["alt_start.max_shift"] = Quantity("largest change of a boundary under the other start")
    if p.get("box_check"):
        for label in p["tasks"]:
            out[boxed(boundary(label))] = Quantity(f"{label} boundary at {at}, inside the authors' box", "reimpl")
    return out


def _boundary_control(kind: str, p: dict, c: dict) -> dict[str, Quantity]:
    at = budget_text(p["eval_x"])
    out = {}
    for label in p["tasks"]:
        out[boundary(label)] = Quantity(f"{label} boundary at {at}")
        out[coverage(label)] = Quantity(f"share of {label} scores on or below the fitted boundary")
    return out


# -- temporal_coverage -----------------------------------------------------------------------------------


def signed_coverage(label: str) -> str:
    return f"signed_coverage.{label}"


def in_sample(label: str) -> str:
    return f"in_sample.{label}"


def share_above(label: str) -> str:
    return f"share_above.{label}"


def binomial_p(label: str) -> str:
    return f"binomial_p.{label}"


def split(t: int, label: str) -> str:
    return f"split{t}.{label}"


def bin_averaged(name: str) -> str:
    """The bin-averaged (paper-figure) counterpart of a signed-coverage quantity:
    ``bin_averaged.<label>`` for ``signed_coverage.<label>``, else ``bin_averaged.<name>``."""
    return f"bin_averaged.{name.removeprefix('signed_coverage.')}"


def n_validation(t: int) -> str:
    return f"n_validation.split{t}"


def _split_numbers(p: dict) -> list[int]:
    return list(range(1, len(p["periods"])))


def _temporal_core(p: dict, *, counts: bool, arm_extra: str = "both") -> dict[str, Quantity]:
    out = {}
    ts = _split_numbers(p)
    for label in p["tasks"]:
        out[signed_coverage(label)] = Quantity(f"{label} signed coverage error out of period")
        out[in_sample(label)] = Quantity(f"{label} signed coverage error in sample")
        out[share_above(label)] = Quantity(f"share of later {label} models above the earlier boundary")
        out[binomial_p(label)] = Quantity(f"binomial p-value of {label}'s exceedances")
        out[bin_averaged(signed_coverage(label))] = Quantity(f"{label} signed coverage error, averaged over bins")
        for t in ts:
            out[split(t, label)] = Quantity(f"{label} signed coverage error on split {t}")
            out[bin_averaged(split(t, label))] = Quantity(
                f"{label} signed coverage error on split {t}, averaged over bins", arm_extra
            )
    for group in ("drift", "stable"):
        out[f"group.{group}"] = Quantity(f"mean signed coverage error of the {group} group")
        out[bin_averaged(f"group.{group}")] = Quantity(
            f"mean signed coverage error of the {group} group, averaged over bins", arm_extra
        )
    out["separation"] = Quantity("stable minus drift signed coverage error")
    out[bin_averaged("separation")] = Quantity("stable minus drift, averaged over bins", arm_extra)
    if counts:
        for t in ts:
            out[n_validation(t)] = Quantity(f"later models scored on split {t}")
    return out


def _temporal_vocabulary(p: dict) -> dict[str, Quantity]:
    out = _temporal_core(p, counts=True, arm_extra="reimpl")
    if p.get("box_check"):
        for name, q in _temporal_core(p, counts=False).items():
            out[boxed(name)] = Quantity(f"{q.label}, inside the authors' box", "reimpl")
    return out


def _temporal_control(kind: str, p: dict, c: dict) -> dict[str, Quantity]:
    out = {"separation": Quantity("stable minus drift signed coverage error, mean over relabellings")}
    for label in p["tasks"]:
        out[signed_coverage(label)] = Quantity(f"{label} signed coverage error out of period, mean over relabellings")
    return out


# -- estimator_comparison --------------------------------------------------------------------------------

METRICS = ("pinball_id", "pinball_ood", "calibration_id", "calibration_ood")
ESTIMATORS = ("constant", "binwise", "ispline", "sigmoid")
ESTIMATOR_NAMES = {"constant": "Constant", "binwise": "Binwise", "ispline": "I-spline", "sigmoid": "sigmoid"}
METRIC_NAMES = {
    "pinball_id": "ID pinball loss",
    "pinball_ood": "OOD pinball loss",
    "calibration_id": "ID calibration error",
    "calibration_ood": "OOD calibration error",
}
#: The differences the claim draws: name -> (metric, minuend estimator, subtrahend estimator).
GAPS = {
    "gap.pinball_id": ("pinball_id", "sigmoid", "ispline"),
    "gap.pinball_ood": ("pinball_ood", "sigmoid", "ispline"),
    "gap.calibration_ood": ("calibration_ood", "ispline", "sigmoid"),
    "advantage.id": ("pinball_id", "constant", "sigmoid"),
}


def metric(name: str, estimator: str) -> str:
    return f"{name}.{estimator}"


def _gap_label(name: str) -> str:
    m, a, b = GAPS[name]
    return f"{METRIC_NAMES[m]}, {ESTIMATOR_NAMES[a]} minus {ESTIMATOR_NAMES[b]}"


def _estimator_vocabulary(p: dict) -> dict[str, Quantity]:
    out = {}
    for e in ESTIMATORS:
        for m in METRICS:
            out[metric(m, e)] = Quantity(f"{METRIC_NAMES[m]} of the {ESTIMATOR_NAMES[e]}")
    for name in GAPS:
        out[name] = Quantity(_gap_label(name))
    if p.get("box_check"):
        for m in METRICS:
            out[boxed(metric(m, "sigmoid"))] = Quantity(
                f"{METRIC_NAMES[m]} of the sigmoid inside the authors' box", "reimpl"
            )
        for name in GAPS:
            out[boxed(name)] = Quantity(f"{_gap_label(name)}, sigmoid inside the authors' box", "reimpl")
    return out


def _estimator_control(kind: str, p: dict, c: dict) -> dict[str, Quantity]:
    if kind == "beta_zero":
        return {metric(m, "sigmoid"): Quantity(f"{METRIC_NAMES[m]} of the sigmoid with β = 0") for m in METRICS}
    if kind == "shuffle_z":
        return {"advantage.id": Quantity(f"{_gap_label('advantage.id')}, z shuffled, mean over shuffles")}
    return {}


# -- hyperparameters -------------------------------------------------------------------------------------

SWEEP_STATS = {
    "max_dev": "largest gap to the reference",
    "coverage_mean": "mean coverage",
    "max_shift": "largest shift from the claimed setting",
    "beta": "fitted slope",
}


def sweep(param: str, value: float, stat: str) -> str:
    """``sweep.lam=0.001.max_dev``: a statistic of one one-at-a-time setting."""
    return f"sweep.{param}={value:g}.{stat}"


def _hyper_vocabulary(p: dict) -> dict[str, Quantity]:
    out = {
        "claimed.max_dev": Quantity("largest gap to the reference at the claimed setting"),
        "claimed.coverage_mean": Quantity("mean coverage at the claimed setting"),
        "claimed.mean_boundary": Quantity("mean boundary at the claimed setting"),
        "others.min_max_dev": Quantity("smallest largest-gap to the reference among the other settings"),
        "others.n_within": Quantity("other settings within reach of the reference"),
        "audit.n": Quantity("source lines audited", "upstream"),
        "audit.n_failed": Quantity("cited source lines that do not say what the claim expects", "upstream"),
        "loss.literal_max_gap": Quantity("largest gap between the authors' loss and the printed formula", "upstream"),
        "loss.sharp_sup_gap": Quantity("largest gap between the authors' loss and the sharp check loss", "upstream"),
        "loss.sharp_rel_error": Quantity("relative gap between that largest gap and log(2)/κ", "upstream"),
    }
    grids = {"tau": p["tau_grid"], "kappa": p["kappa_grid"], "lam": p["lam_grid"]}
    for param, values in grids.items():
        for v in values:
            at = setting_text(param, v)
            for stat, words in SWEEP_STATS.items():
                who = f" of {p['beta_task']}" if stat == "beta" else ""
                out[sweep(param, v, stat)] = Quantity(f"{words}{who} at {at}")
    return out


def _hyper_control(kind: str, p: dict, c: dict) -> dict[str, Quantity]:
    return {
        "claimed.max_dev": Quantity("largest gap to the reference under the control"),
        "claimed.coverage_mean": Quantity("mean coverage under the control"),
        "claimed.mean_boundary": Quantity("mean boundary under the control"),
    }


# -- shift_test ------------------------------------------------------------------------------------------

_SHIFT = {
    "n_merged": "models in both exports",
    "n_support": "models in the common support",
    "n_pre": "models released before the cutoff",
    "n_post": "models released on or after the cutoff",
    "slope": "slope on logit(earlier benchmark)",
    "gamma": "post-release shift γ",
    "se": "standard error of γ",
    "t": "t statistic of γ",
    "p_value": "one-sided permutation p-value",
    "r2": "R²",
    "odds_ratio": "odds ratio exp(γ)",
    "null_mean": "centre of the permutation null",
    "upper95": "one-sided 95% upper bound on γ",
}


def _shift_vocabulary(p: dict) -> dict[str, Quantity]:
    out = {k: Quantity(v) for k, v in _SHIFT.items()}
    out["p_classical"] = Quantity("one-sided t-test p-value", "reimpl")
    if p.get("n_perm_precise"):
        out["p_value_precise"] = Quantity(f"permutation p-value from {p['n_perm_precise']} permutations", "reimpl")
        out["null_mean_precise"] = Quantity(f"centre of the null from {p['n_perm_precise']} permutations", "reimpl")
    if p.get("power"):
        out["power.at_observed"] = Quantity("power of the test at the observed shift", "reimpl")
        out["power.min_detectable"] = Quantity("smallest shift detected with the target power", "reimpl")
    return out


def _shift_control(kind: str, p: dict, c: dict) -> dict[str, Quantity]:
    if kind == "inflate_post":
        return {
            "gamma": Quantity("post-release shift γ with the planted shift"),
            "p_value": Quantity("one-sided permutation p-value with the planted shift"),
        }
    if kind == "relabel_groups":
        return {
            "gamma_mean": Quantity("mean γ over random relabellings"),
            "gamma_sd": Quantity("standard deviation of γ over random relabellings"),
        }
    return {}


# -- entry points ----------------------------------------------------------------------------------------

_VOCABULARIES = {
    "boundary_at_budget": (_boundary_vocabulary, _boundary_control),
    "temporal_coverage": (_temporal_vocabulary, _temporal_control),
    "estimator_comparison": (_estimator_vocabulary, _estimator_control),
    "hyperparameters": (_hyper_vocabulary, _hyper_control),
    "shift_test": (_shift_vocabulary, _shift_control),
}


def vocabulary(protocol: str, params: dict) -> dict[str, Quantity]:
    """Every quantity ``protocol`` measures for these parameters: ``{name: Quantity(label, arm)}``."""
    return _VOCABULARIES[protocol][0](params)


def control_vocabulary(protocol: str, kind: str, params: dict, control_params: dict) -> dict[str, Quantity]:
    """Every quantity one control of kind ``kind`` measures."""
    return _VOCABULARIES[protocol][1](kind, params, control_params)
