"""Quantities of ``estimator_comparison``: every estimator's metrics and the gaps the claim draws."""

from __future__ import annotations

from ...core.quantities import Quantity, boxed

METRICS = ("pinball_id", "pinball_ood", "calibration_id", "calibration_ood")
ESTIMATORS = ("constant", "binwise", "ispline", "sigmoid")
ESTIMATOR_NAMES = {"constant": "Constant", "binwise": "Binwise", "ispline": "I-spline", "sigmoid": "sigmoid"}
METRIC_NAMES = {
    "pinball_id": "ID pinball loss",
    "pinball_ood": "OOD pinball loss",
    "calibration_id": "ID calibration error",
    "calibration_ood": "OOD calibration error",
}
#: A metric's kind (:class:`~harness.core.quantities.Quantity`): a calibration error, a mean |coverage - τ| over
#: bins, lies in [0, 1]; a pinball loss is a value.
KIND = {m: "fraction" if m.startswith("calibration") else "value" for m in METRICS}
#: The sigmoid's ID pinball advantage over the Constant.
ADVANTAGE_ID = "advantage.id"
#: The differences the claim draws: name -> (metric, minuend estimator, subtrahend estimator).
GAPS = {
    "gap.pinball_id": ("pinball_id", "sigmoid", "ispline"),
    "gap.pinball_ood": ("pinball_ood", "sigmoid", "ispline"),
    "gap.calibration_ood": ("calibration_ood", "ispline", "sigmoid"),
    ADVANTAGE_ID: ("pinball_id", "constant", "sigmoid"),
}


def metric(name: str, estimator: str) -> str:
    return f"{name}.{estimator}"


def gap_values(values: dict) -> dict[str, float]:
    """Every gap of :data:`GAPS` from the metrics in ``values`` (``metric(m, e)`` names)."""
    return {name: values[metric(m, a)] - values[metric(m, b)] for name, (m, a, b) in GAPS.items()}


def _gap_label(name: str) -> str:
    m, a, b = GAPS[name]
    return f"{METRIC_NAMES[m]}, {ESTIMATOR_NAMES[a]} minus {ESTIMATOR_NAMES[b]}"


def vocabulary(p: dict) -> dict[str, Quantity]:
    out = {}
    for e in ESTIMATORS:
        for m in METRICS:
            out[metric(m, e)] = Quantity(f"{METRIC_NAMES[m]} of the {ESTIMATOR_NAMES[e]}", kind=KIND[m])
    for name in GAPS:
        out[name] = Quantity(_gap_label(name))
    if p.get("box_check"):
        for m in METRICS:
            out[boxed(metric(m, "sigmoid"))] = Quantity(
                f"{METRIC_NAMES[m]} of the sigmoid inside the authors' box", "reimpl", KIND[m]
            )
        for name in GAPS:
            out[boxed(name)] = Quantity(f"{_gap_label(name)}, sigmoid inside the authors' box", "reimpl")
    return out


def control_vocabulary(kind: str, p: dict, c: dict) -> dict[str, Quantity]:
    if kind == "beta_zero":
        return {
            metric(m, "sigmoid"): Quantity(f"{METRIC_NAMES[m]} of the sigmoid with β = 0", kind=KIND[m])
            for m in METRICS
        }
    if kind == "shuffle_z":
        return {ADVANTAGE_ID: Quantity(f"{_gap_label(ADVANTAGE_ID)}, z shuffled, mean over shuffles")}
    return {}
