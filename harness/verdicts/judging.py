"""Judging a claim's targets and controls on each arm, and comparing the arms: the outcomes the verdict rule
(:mod:`harness.verdicts.verdict`) reads."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ..core.record import ArmControlOutcome, ArmTarget, ConditionOutcome, ConditionRow, ControlOutcome, TargetOutcome
from ..core.relations import literal_decimals, relation_holds, target_holds, within_tolerance

if TYPE_CHECKING:
    from ..claimfiles.spec import ClaimSpec


def _finite(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _symbol(relation: str) -> str:
    return "magnitude <" if relation == "abs<" else relation


def requirement_text(relation: str, *, paper_text=None, tolerance_text=None, value_text=None, other_label=None) -> str:
    """The relation a target tests, in symbols: ``within 0.0005 of 0.828``, ``< 0.05``, ``|x| < 0.0002``."""
    if relation == "~":
        if tolerance_text is not None and float(tolerance_text) == 0:
            return f"= {paper_text}"
        return f"within {tolerance_text} of {paper_text}"
    return f"{_symbol(relation)} {other_label if other_label is not None else value_text}"


def _number_text(spec: ClaimSpec, path: tuple, value) -> str | None:
    return None if value is None else (spec.text_of(*path) or f"{value:g}")


def _arm_reading(t, values: dict | None, ok: bool) -> ArmTarget:
    if not ok or values is None:
        return ArmTarget()
    v = values.get(t.quantity)
    if not _finite(v):
        return ArmTarget()
    if t.relation == "~":
        delta = v - t.paper
        holds = target_holds("~", v, paper=t.paper, tolerance=t.tolerance)
        return ArmTarget(value=v, holds=holds, delta=delta, beyond=None if holds else abs(delta) - t.tolerance)
    rhs = t.value if t.other is None else values.get(t.other)
    if not _finite(rhs):
        return ArmTarget(value=v)
    return ArmTarget(value=v, other_value=rhs if t.other else None, holds=target_holds(t.relation, v, rhs=rhs))


def judge_targets(spec: ClaimSpec, reimpl, upstream) -> list[TargetOutcome]:
    """One outcome per target: both arms' readings and the outcome on the arm it is judged on."""
    out = []
    for i, t in enumerate(spec.claim.targets):
        q = spec.vocabulary[t.quantity]
        judged_on = "upstream" if q.arm == "upstream" else "reimpl"
        mine = _arm_reading(t, reimpl.values, reimpl.ok)
        theirs = _arm_reading(t, upstream.values, upstream.ok)
        judged = theirs if judged_on == "upstream" else mine
        texts = {
            f"{k}_text": _number_text(spec, ("targets", i, k), getattr(t, k)) for k in ("paper", "tolerance", "value")
        }
        other_label = spec.label_of(t.other) if t.other else None
        out.append(
            TargetOutcome(
                **t.model_dump(
                    include={"quantity", "role", "relation", "paper", "tolerance", "value", "other", "reason"}
                ),
                quantity_label=q.label,
                title=t.label or q.label,
                requirement=requirement_text(t.relation, other_label=other_label, **texts),
                other_label=other_label,
                judged_on=judged_on,
                decimals=max(4, literal_decimals(texts["paper_text"]) + 1) if t.relation == "~" else 4,
                reimpl=mine,
                upstream=theirs,
                outcome="unmeasured" if judged.holds is None else ("holds" if judged.holds else "fails"),
                **texts,
            )
        )
    return out


def _measured(measure: str, v: float, ref: float | None) -> float | None:
    if measure == "value":
        return v
    if not _finite(ref):
        return None
    if measure == "shift":
        return v - ref
    if measure == "abs_shift":
        return abs(v - ref)
    return v / ref if ref else None  # ratio


_MEASURE_WORDS = {
    "value": "",
    "shift": "shift from the",
    "abs_shift": "size of the shift from the",
    "ratio": "ratio to the",
}
_REFERENCE_WORDS = {"baseline": " unperturbed run", "paper": " paper's value"}


def _judge_control_arm(spec: ClaimSpec, ctl, control_values: dict | None, baseline: dict) -> ArmControlOutcome:
    """How one arm fared under a control: not run when the arm gave no answer to it, or measured none of the
    quantities its conditions name (the authors' code may lack what the control changes)."""
    named = {q for cond in ctl.must for q in cond.quantities}
    if control_values is None or (named and not named & control_values.keys()):
        return ArmControlOutcome(ran=False)
    paper = {t.quantity: t.paper for t in spec.claim.targets if t.relation == "~"}
    conditions = []
    for i, cond in enumerate(ctl.must):
        rows = []
        for q in cond.quantities:
            v = control_values.get(q)
            ref = baseline.get(q) if cond.reference == "baseline" else paper.get(q)
            measured = _measured(cond.measure, v, ref) if _finite(v) else None
            rows.append(
                ConditionRow(
                    quantity=q,
                    quantity_label=spec.label_of(q),
                    control_value=v if _finite(v) else None,
                    reference_value=ref if (cond.measure != "value" and _finite(ref)) else None,
                    measured=measured,
                    holds=measured is not None and relation_holds(cond.op, measured, cond.value),
                )
            )
        idx = spec.claim.controls.index(ctl)
        threshold = spec.text_of("controls", idx, "must", i, "value") or f"{cond.value:g}"
        what = _MEASURE_WORDS[cond.measure] + (_REFERENCE_WORDS[cond.reference] if cond.measure != "value" else "")
        conditions.append(
            ConditionOutcome(
                **cond.model_dump(include={"measure", "reference", "op"}),
                threshold=cond.value,
                requirement=f"{what} {_symbol(cond.op)} {threshold}".strip(),
                rows=rows,
                holds=all(r.holds for r in rows),
            )
        )
    broke = all(c.holds for c in conditions)
    targets_failed = None
    if ctl.must_fail_targets:
        targets_failed = all(_arm_reading(t, control_values, True).holds is False for t in spec.claim.targets)
        broke = broke and targets_failed
    return ArmControlOutcome(ran=True, broke=broke, conditions=conditions, targets_failed=targets_failed)


def judge_controls(spec: ClaimSpec, reimpl, upstream) -> list[ControlOutcome]:
    """Whether each control broke the result as the claim file says it must, in each arm."""
    out = []
    for ctl in spec.claim.controls:
        arms = {}
        for name, arm in (("reimpl", reimpl), ("upstream", upstream)):
            cv = arm.controls.get(ctl.id) if arm.ok else None
            arms[name] = _judge_control_arm(spec, ctl, cv.values if cv is not None else None, arm.values)
        out.append(
            ControlOutcome(
                **ctl.model_dump(include={"id", "control", "changes", "must_fail_targets"}),
                params=spec.control_params[ctl.id].model_dump(mode="json"),
                **arms,
            )
        )
    return out


def arm_disagreements(targets: list[TargetOutcome]) -> list[dict]:
    """Targets on which the two arms differ by more than the target's tolerance, or on a relation's truth."""
    out = []
    for t in targets:
        a, b = t.reimpl, t.upstream
        if a.value is None or b.value is None:
            continue
        beyond = t.relation == "~" and not within_tolerance(a.value - b.value, t.tolerance)
        differ = t.relation != "~" and a.holds is not None and b.holds is not None and a.holds != b.holds
        if beyond or differ:
            out.append({"title": t.title, "quantity": t.quantity, "difference": a.value - b.value})
    return out
