"""Comparing measurements with the paper, checking controls, and the verdict rule.

The verdict rule, written once (the README quotes it):

1. **could not run**: the independent re-implementation did not produce its
   measurements (the authors' arm alone is never enough).
2. **inconclusive**: some target's quantity was not measured, or is not a
   finite number, so the claim cannot be judged.
3. **not reproduced**: a *headline* target is outside its tolerance (or its
   relation fails) in the re-implementation, and the authors' code does not
   rescue it (it did not run, or misses the target too).
4. **partially reproduced**: a headline target is met by the authors' code but
   not by the re-implementation of the paper's equations (the published number
   depends on something the paper does not state), or every headline target
   holds but a *supporting* target fails, a destructive control did not break,
   or the two arms disagree with each other by more than a target's tolerance
   (or on whether a relation holds).
5. **reproduced**: otherwise: every target holds in the re-implementation,
   every control broke, and the authors' code (where it ran) agrees with it.

A target that the authors' code alone puts just outside its tolerance, while
the two arms agree within it, does not change the verdict; the report states
it, with the value.
"""

from __future__ import annotations

import math
import operator
from typing import Any

from .spec import Claim, Condition, Control, Target

__all__ = ["VERDICTS", "check_relation", "evaluate_targets", "evaluate_control", "decide_verdict", "arm_disagreements"]

VERDICTS = ("reproduced", "partially reproduced", "not reproduced", "inconclusive", "could not run")

_OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
        "abs<": lambda a, b: abs(a) < b}


def _finite(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def check_relation(op: str, left: float, right: float) -> bool:
    return bool(_OPS[op](left, right))


def _target_holds(t: Target, values: dict[str, float] | None) -> tuple[float | None, bool | None]:
    """(measured value, whether the target holds) for one arm; ``None`` where unmeasured."""
    if values is None:
        return None, None
    v = values.get(t.quantity)
    if not _finite(v):
        return None, None
    if t.relation == "~":
        return v, abs(v - t.paper) <= t.tolerance + 1e-12
    rhs = t.value if t.other is None else values.get(t.other)
    if not _finite(rhs):
        return v, None
    return v, check_relation(t.relation, v, rhs)


def evaluate_targets(claim: Claim, reimpl: dict | None, upstream: dict | None) -> list[dict[str, Any]]:
    """One row per target with both arms' values and whether each holds."""
    rows = []
    for t in claim.targets:
        mine, ok = _target_holds(t, reimpl)
        theirs, ok_up = _target_holds(t, upstream)
        rows.append({
            "name": t.quantity, "label": t.label or t.quantity, "relation": t.relation, "role": t.role,
            "paper": t.paper, "tolerance": t.tolerance, "value": t.value, "other": t.other, "reason": t.reason,
            "reimpl": mine, "upstream": theirs, "within": ok, "within_upstream": ok_up,
            "other_reimpl": (reimpl or {}).get(t.other) if t.other else None,
            "other_upstream": (upstream or {}).get(t.other) if t.other else None,
            "delta_reimpl": (mine - t.paper) if (mine is not None and t.relation == "~") else None,
            "delta_upstream": (theirs - t.paper) if (theirs is not None and t.relation == "~") else None,
        })
    return rows


def _condition_rows(cond: Condition, control: dict, baseline: dict, paper: dict) -> list[dict]:
    rows = []
    for q in cond.quantities:
        v = control.get(q)
        ref = baseline.get(q) if cond.reference == "baseline" else paper.get(q)
        if not _finite(v) or (cond.measure != "value" and not _finite(ref)):
            rows.append({"quantity": q, "control": v, "reference": ref, "measured": None, "holds": False,
                         "why": "not measured"})
            continue
        measured = {"value": lambda: v, "shift": lambda: v - ref, "abs_shift": lambda: abs(v - ref),
                    "ratio": lambda: v / ref if ref else math.inf}[cond.measure]()
        rows.append({"quantity": q, "control": v, "reference": ref, "measured": measured,
                     "holds": check_relation(cond.op, measured, cond.value)})
    return rows


def evaluate_control(ctl: Control, claim: Claim, control_values: dict | None, baseline: dict) -> dict[str, Any]:
    """Whether one control broke the result as its claim file says it must."""
    paper = {t.quantity: t.paper for t in claim.targets if t.relation == "~"}
    if control_values is None:
        return {"broke": None, "conditions": [], "targets_failed": None}
    conditions = []
    for cond in ctl.must:
        rows = _condition_rows(cond, control_values, baseline, paper)
        conditions.append({"measure": cond.measure, "reference": cond.reference, "op": cond.op, "value": cond.value,
                           "rows": rows, "holds": all(r["holds"] for r in rows)})
    broke = all(c["holds"] for c in conditions)
    targets_failed = None
    if ctl.must_fail_targets:
        rows = evaluate_targets(claim, control_values, None)
        targets_failed = all(r["within"] is False for r in rows)
        broke = broke and targets_failed
    return {"broke": broke, "conditions": conditions, "targets_failed": targets_failed}


def arm_disagreements(claim: Claim, target_rows: list[dict]) -> list[dict[str, Any]]:
    """Targets on which the two arms differ by more than the target's tolerance."""
    out = []
    for t, row in zip(claim.targets, target_rows):
        a, b = row["reimpl"], row["upstream"]
        if a is None or b is None:
            continue
        tol = t.tolerance if t.tolerance is not None else 0.0
        if t.relation == "~" and abs(a - b) > tol:
            out.append({"quantity": t.quantity, "label": row["label"], "reimpl": a, "upstream": b,
                        "difference": a - b, "tolerance": tol})
        elif t.relation != "~" and row["within"] is not None and row["within_upstream"] is not None \
                and row["within"] != row["within_upstream"]:
            out.append({"quantity": t.quantity, "label": row["label"], "reimpl": a, "upstream": b,
                        "difference": a - b, "tolerance": None})
    return out


def decide_verdict(reimpl_ok: bool, target_rows: list[dict], control_rows: list[dict],
                   upstream_ran: bool, disagreements: list[dict] = ()) -> tuple[str, list[str]]:
    """Apply the rule in this module's docstring; return the verdict and its reasons."""
    if not reimpl_ok:
        return "could not run", ["the re-implementation did not produce its measurements"]
    unmeasured = [r["label"] for r in target_rows if r["within"] is None]
    if unmeasured:
        return "inconclusive", [f"not measured: {', '.join(unmeasured)}"]
    failed_head = [r for r in target_rows if r["role"] == "headline" and r["within"] is False]
    unrescued = [r["label"] for r in failed_head if not (upstream_ran and r["within_upstream"] is True)]
    if unrescued:
        return "not reproduced", [f"outside tolerance in the re-implementation: {', '.join(unrescued)}"]
    reasons = []
    if failed_head:
        reasons.append("met by the authors' code but not by the re-implementation: "
                       + ", ".join(r["label"] for r in failed_head))
    failed_support = [r["label"] for r in target_rows if r["role"] == "supporting" and r["within"] is False]
    if failed_support:
        reasons.append(f"supporting targets outside tolerance: {', '.join(failed_support)}")
    unbroken = [c["id"] for c in control_rows if c["broke"] is not True]
    if unbroken:
        reasons.append(f"controls that did not break: {', '.join(unbroken)}")
    if disagreements:
        reasons.append("the two arms disagree beyond tolerance on: " + ", ".join(d["label"] for d in disagreements))
    if reasons:
        return "partially reproduced", reasons
    return "reproduced", ["every target holds, every control broke" +
                          (", and the authors' code agrees" if upstream_ran else "")]
