"""Judging targets and controls in each arm, and the verdict rule.

The verdict rule, written once (the README quotes it):

1. **could not run**: the independent re-implementation did not produce its
   measurements (the authors' arm alone is never enough).
2. **inconclusive**: some target's quantity was not measured, or is not a
   finite number, so the claim cannot be judged.
3. **not reproduced**: a *headline* target fails on the arm it is judged on
   (the re-implementation, or the authors' arm for a check of the authors'
   own code), and the authors' code does not rescue it (a target judged on
   the re-implementation is rescued when the authors' code meets it).
4. **partially reproduced**: a headline target is met by the authors' code
   but not by the re-implementation of the paper's equations (the published
   number depends on something the paper does not state), or every headline
   target holds but a *supporting* target fails, a destructive control did
   not break, or the two arms disagree with each other by more than a
   target's tolerance (or on whether a relation holds).
5. **reproduced**: otherwise: every target holds, every control broke, and
   the authors' code (where it ran) agrees with the re-implementation.

A target that the authors' code alone puts just outside its tolerance, while
the two arms agree within it, does not change the verdict; the report states
it, with the value.

Every reason for the verdict, and the common findings every report states
(the basis of the verdict, the agreement of the arms), are findings computed
here, never in a template.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING

from .decisions import ORDERING_STATES
from .record import (
    ArmControlOutcome,
    ArmTarget,
    ConditionOutcome,
    ConditionRow,
    ControlOutcome,
    Finding,
    TargetOutcome,
    Verdict,
    plain,
)
from .relations import TOL_SLACK, literal_decimals, relation_holds, target_holds

if TYPE_CHECKING:
    from .spec import ClaimSpec

__all__ = [
    "judge_targets",
    "judge_controls",
    "arm_disagreements",
    "decide_verdict",
    "resampling_finding",
    "authors_arm_finding",
    "common_findings",
    "requirement_text",
    "target_reading",
]


def _finite(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def requirement_text(relation: str, *, paper_text=None, tolerance_text=None, value_text=None, other_label=None) -> str:
    """The relation a target tests, in symbols: ``within 0.0005 of 0.828``, ``< 0.05``, ``|x| < 0.0002``."""
    if relation == "~":
        if tolerance_text is not None and float(tolerance_text) == 0:
            return f"= {paper_text}"
        return f"within {tolerance_text} of {paper_text}"
    rhs = other_label if other_label is not None else value_text
    if relation == "abs<":
        return f"magnitude < {rhs}"
    return f"{relation} {rhs}"


def _number_text(spec: ClaimSpec, path: tuple, value) -> str | None:
    if value is None:
        return None
    return spec.text_of(*path) or f"{value:g}"


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


def target_reading(t, values: dict | None, ok: bool = True) -> ArmTarget:
    """One arm's reading of the claim file's target ``t`` on measured ``values``: the one target rule
    (:func:`harness.relations.target_holds`), used by every judgement of a target (arms, multiverse)."""
    return _arm_reading(t, values, ok)


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
            "paper_text": _number_text(spec, ("targets", i, "paper"), t.paper),
            "tolerance_text": _number_text(spec, ("targets", i, "tolerance"), t.tolerance),
            "value_text": _number_text(spec, ("targets", i, "value"), t.value),
        }
        other_label = spec.label_of(t.other) if t.other else None
        out.append(
            TargetOutcome(
                quantity=t.quantity,
                quantity_label=q.label,
                title=t.label or q.label,
                role=t.role,
                relation=t.relation,
                requirement=requirement_text(t.relation, other_label=other_label, **texts),
                paper=t.paper,
                tolerance=t.tolerance,
                value=t.value,
                other=t.other,
                other_label=other_label,
                reason=t.reason,
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


def _judge_control_arm(spec: ClaimSpec, ctl, control_values: dict | None, baseline: dict) -> ArmControlOutcome:
    if control_values is None:
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
        what = {
            "value": "",
            "shift": "shift from the",
            "abs_shift": "size of the shift from the",
            "ratio": "ratio to the",
        }[cond.measure]
        ref_words = (
            ""
            if cond.measure == "value"
            else (" unperturbed run" if cond.reference == "baseline" else " paper's value")
        )
        op = "magnitude <" if cond.op == "abs<" else cond.op
        conditions.append(
            ConditionOutcome(
                measure=cond.measure,
                reference=cond.reference,
                op=cond.op,
                threshold=cond.value,
                requirement=f"{what}{ref_words} {op} {threshold}".strip(),
                rows=rows,
                holds=all(r.holds for r in rows),
            )
        )
    broke = all(c.holds for c in conditions)
    targets_failed = None
    if ctl.must_fail_targets:
        readings = [_arm_reading(t, control_values, True) for t in spec.claim.targets]
        targets_failed = all(r.holds is False for r in readings)
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
                id=ctl.id,
                control=ctl.control,
                params=spec.control_params[ctl.id].model_dump(mode="json"),
                changes=ctl.changes,
                must_fail_targets=ctl.must_fail_targets,
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
        if t.relation == "~" and abs(a.value - b.value) > t.tolerance + TOL_SLACK:
            out.append(
                {
                    "title": t.title,
                    "quantity": t.quantity,
                    "reimpl": a.value,
                    "upstream": b.value,
                    "difference": a.value - b.value,
                    "tolerance_text": t.tolerance_text,
                    "decimals": t.decimals,
                }
            )
        elif t.relation != "~" and a.holds is not None and b.holds is not None and a.holds != b.holds:
            out.append(
                {
                    "title": t.title,
                    "quantity": t.quantity,
                    "reimpl": a.value,
                    "upstream": b.value,
                    "difference": a.value - b.value,
                    "tolerance_text": None,
                    "decimals": t.decimals,
                }
            )
    return out


def _reason(state: str, **facts) -> Finding:
    return Finding(state=state, facts=plain(facts))


def _target_row(t: TargetOutcome, upstream) -> dict:
    """What the reasons say of one target: its value on the arm it is judged on, what was required, by how
    much it misses, and what the authors' arm says of it (``fails``, ``holds``, ``unmeasured``, ``not_run``,
    or ``judged_here`` for a check of the authors' code, which has no second arm)."""
    judged = t.upstream if t.judged_on == "upstream" else t.reimpl
    if t.judged_on == "upstream":
        theirs = "judged_here"
    elif not upstream.ok:
        theirs = "not_run"
    else:
        theirs = {True: "holds", False: "fails", None: "unmeasured"}[t.upstream.holds]
    return {
        "title": t.title,
        "quantity": t.quantity,
        "judged_on": t.judged_on,
        "value": judged.value,
        "other_value": judged.other_value,
        "upstream_value": t.upstream.value if t.judged_on == "reimpl" else None,
        "requirement": t.requirement,
        "beyond": judged.beyond,
        "decimals": t.decimals + 1,
        "upstream": theirs,
    }


def _by(rows: list[dict], key: str, value: str) -> list[str]:
    return [r["title"] for r in rows if r[key] == value]


def _groups(rows: list[dict]) -> list[dict]:
    """The failing targets grouped by what the authors' arm says of them, in a fixed order, each group with the
    range by which its targets miss their tolerance (``None`` for relations, which have none)."""
    out = []
    for case in ("fails", "not_run", "unmeasured", "judged_here"):
        members = [r for r in rows if r["upstream"] == case]
        if not members:
            continue
        beyond = [r["beyond"] for r in members if r["beyond"] is not None]
        out.append(
            {
                "case": case,
                "titles": [r["title"] for r in members],
                "one": len(members) == 1,
                "targets": members,
                "n": len(members),
                "beyond_min": min(beyond) if len(beyond) == len(members) else None,
                "beyond_max": max(beyond) if len(beyond) == len(members) else None,
            }
        )
    return out


def decide_verdict(
    reimpl, upstream, targets: list[TargetOutcome], controls: list[ControlOutcome], disagreements: list[dict]
) -> Verdict:
    """Apply the rule of this module's docstring; the reasons are findings."""
    if not reimpl.ok:
        return Verdict(verdict="could not run", reasons=[_reason("reimpl_could_not_run", reason=reimpl.reason)])
    unmeasured = [t for t in targets if t.outcome == "unmeasured"]
    if unmeasured:
        # which arm left each one unmeasured, so that the report can say why without naming raw quantities
        no_arm = [t for t in unmeasured if t.judged_on == "upstream" and not upstream.ok]
        return Verdict(
            verdict="inconclusive",
            reasons=[
                _reason(
                    "unmeasured",
                    titles=[t.title for t in unmeasured],
                    quantities=[t.quantity for t in unmeasured],
                    arms=[t.judged_on for t in unmeasured],
                    reimpl_titles=[t.title for t in unmeasured if t.judged_on == "reimpl"],
                    upstream_titles=[t.title for t in unmeasured if t.judged_on == "upstream" and t not in no_arm],
                    no_arm_titles=[t.title for t in no_arm],
                    upstream_status=upstream.status,
                )
            ],
        )
    failed_head = [t for t in targets if t.role == "headline" and t.outcome == "fails"]
    rescued = [t for t in failed_head if t.judged_on == "reimpl" and upstream.ok and t.upstream.holds is True]
    unrescued = [t for t in failed_head if t not in rescued]
    if unrescued:
        rows = [_target_row(t, upstream) for t in unrescued]
        return Verdict(
            verdict="not reproduced",
            reasons=[
                _reason(
                    "headline_missed",
                    titles=[t.title for t in unrescued],
                    arms=[t.judged_on for t in unrescued],
                    targets=rows,
                    both_fail=_by(rows, "upstream", "fails"),
                    upstream_not_run=_by(rows, "upstream", "not_run"),
                    upstream_unmeasured=_by(rows, "upstream", "unmeasured"),
                    judged_on_upstream=_by(rows, "upstream", "judged_here"),
                    groups=_groups(rows),
                    upstream_status=upstream.status,
                    n_targets=len(targets),
                    n_holding=sum(t.outcome == "holds" for t in targets),
                    n_other_failing=sum(t.outcome == "fails" for t in targets) - len(unrescued),
                )
            ],
        )
    reasons = []
    if rescued:
        reasons.append(
            _reason(
                "rescued_by_authors",
                titles=[t.title for t in rescued],
                targets=[_target_row(t, upstream) for t in rescued],
            )
        )
    failed_support = [t for t in targets if t.role == "supporting" and t.outcome == "fails"]
    if failed_support:
        reasons.append(
            _reason(
                "supporting_missed",
                titles=[t.title for t in failed_support],
                targets=[_target_row(t, upstream) for t in failed_support],
            )
        )
    unbroken = [c.id for c in controls if c.reimpl.broke is not True]
    if unbroken:
        reasons.append(_reason("controls_unbroken", ids=unbroken))
    if disagreements:
        reasons.append(
            _reason(
                "arms_disagree",
                titles=[d["title"] for d in disagreements],
                n_with_tolerance=sum(d["tolerance_text"] is not None for d in disagreements),
            )
        )
    if reasons:
        return Verdict(verdict="partially reproduced", reasons=reasons)
    return Verdict(
        verdict="reproduced",
        reasons=[
            _reason(
                "all_hold",
                n_targets=len(targets),
                n_controls=len(controls),
                n_headline=sum(t.role == "headline" for t in targets),
                n_supporting=sum(t.role == "supporting" for t in targets),
                all_headline=all(t.role == "headline" for t in targets),
                upstream_ran=upstream.ok,
            )
        ],
    )


def resampling_finding(robustness) -> Finding:
    """How the claim's asserted orderings fare under resampling, in the words the report leads with.

    The state is the orderings' common label (:func:`harness.stats.methods.ordering_state`), ``mixed`` when they
    differ: ``supported`` (the one-sided bound excludes 0 on the claimed side, and the coverage study measured
    that decision's error within its limit), ``contradicted``, ``inconclusive`` (neither bound excludes 0, or one
    base model carries the difference), ``not_assessed`` (no study, or the decision's measured error above the
    limit); ``intervals_only``: the claim asserts no ordering; ``not_run``: no resampling. A *close call* is an
    ordering whose measured error lies within two of its Monte Carlo standard errors of the limit: a study of
    the same size could have put it on the other side.
    """
    if robustness is None or robustness.state == "not run":
        why = None if robustness is None else robustness.facts.get("why")
        return _reason("not_run", why=why)
    f = robustness.facts
    comps = f.get("comparisons", [])
    keys = (
        "label",
        "state",
        "decision",
        "side",
        "holds_full",
        "difference",
        "lower",
        "upper",
        "bound",
        "bound_against",
        "error",
        "error_mc_se",
        "limit",
        "detectable",
        "margin",
        "carried_by",
    )
    rows = [{k: c.get(k) for k in keys} for c in comps]
    for r in rows:
        e, se, lim = r["error"], r["error_mc_se"], r["limit"]
        r["close_call"] = bool(e is not None and lim is not None and abs(e - lim) <= 2.0 * (se or 0.0))
    by_state = {s: [r for r in rows if r["state"] == s] for s in ORDERING_STATES}
    state = "intervals_only" if not comps else robustness.state.replace(" ", "_")
    return _reason(
        state,
        n_comparisons=len(rows),
        one_comparison=len(rows) == 1,
        comparisons=rows,
        **{s.replace(" ", "_"): by_state[s] for s in ORDERING_STATES},
        **{"n_" + s.replace(" ", "_"): len(by_state[s]) for s in ORDERING_STATES},
        carried=[r for r in rows if r["carried_by"]],
        close_calls=[r["label"] for r in rows if r["close_call"]],
        alpha=f.get("alpha"),
        confidence=None if f.get("alpha") is None else 1.0 - f["alpha"],
        method=f.get("method"),
        n_resamples=f.get("n_resamples"),
        cluster_col=f.get("cluster_col"),
        calibration_state=(f.get("calibration") or {}).get("state"),
        replicates=(f.get("calibration") or {}).get("replicates"),
    )


#: An exception as a one-line reason gives it (:func:`harness.record.one_line_reason`): its type, then its message.
_EXCEPTION = re.compile(
    r"(?:^|[:;] )((?:[A-Za-z_][\w]*\.)*([A-Z][A-Za-z0-9_]*(?:Error|Exception|Exit|Interrupt|Failure))): ?"
)
#: The adapters' error for a claim their code cannot take (``harness.adapters.errors``): its message is worded.
OUTSIDE_THEIR_CODE = "OutsideTheirCodeError"


def authors_arm_finding(upstream) -> Finding:
    """How the authors' arm fared, worded for the report; its raw one-line reason (the arm's own, in the record)
    goes only to a folded block (an exception's text never reaches the report's prose).

    ``ran``; ``switched_off`` (``--no-upstream``, or the arm off for this run); ``no_pin`` (the claim names no
    upstream); ``no_adapter`` (the protocol has none); ``outside`` (the adapter found the claim outside what
    their code can do: ``words`` is its own worded message, up to its first colon); ``crashed`` (their code,
    or the adapter driving it, stopped with an exception: ``exception`` is its type); ``timed_out``;
    ``failed`` (anything else: a checkout, the sandbox, an answer of the wrong shape).
    """
    reason = upstream.reason
    if upstream.ok:
        return _reason("ran")
    text = reason or ""
    facts = {"exception": None, "words": None}
    if upstream.status == "not run":
        state = (
            "no_pin" if "no upstream pin" in text else ("no_adapter" if "has no adapter" in text else "switched_off")
        )
        return _reason(state, **facts)
    if "did not finish within" in text:
        return _reason("timed_out", **facts)
    m = _EXCEPTION.search(text)
    if m and m.group(2) == OUTSIDE_THEIR_CODE:
        message = text[m.end() :]
        facts.update(exception=m.group(2), words=message.split(": ", 1)[0].split(" (full text")[0].rstrip(" .;"))
        return _reason("outside", **facts)
    if m:
        return _reason("crashed", **{**facts, "exception": m.group(2)})
    return _reason("failed", **facts)


def _reason_groups(targets: list[TargetOutcome]) -> list[dict]:
    """The targets' reasons with identical text said once, in the order of first appearance."""
    groups: dict[str, list[str]] = {}
    for t in targets:
        groups.setdefault(t.reason, []).append(t.title)
    return [{"titles": titles, "reason": reason} for reason, titles in groups.items()]


def _condition_summaries(controls: list[ControlOutcome]) -> list[dict]:
    """Per control and condition: how many of its quantities meet it in each arm, and the range measured."""
    out = []
    for c in controls:
        rows = []
        for i, cond in enumerate(c.reimpl.conditions):
            measured = [r.measured for r in cond.rows if r.measured is not None]
            theirs = c.upstream.conditions[i] if c.upstream.ran and i < len(c.upstream.conditions) else None
            rows.append(
                {
                    "requirement": cond.requirement,
                    "label": cond.rows[0].quantity_label if cond.rows else None,
                    "n": len(cond.rows),
                    "n_met": sum(r.holds for r in cond.rows),
                    "one": len(cond.rows) == 1,
                    "all_met": cond.holds,
                    "lo": min(measured) if measured else None,
                    "hi": max(measured) if measured else None,
                    "single": measured[0] if len(measured) == 1 else None,
                    "unmet": [r.quantity_label for r in cond.rows if not r.holds],
                    "upstream_n_met": sum(r.holds for r in theirs.rows) if theirs else None,
                    "upstream_all_met": theirs.holds if theirs else None,
                }
            )
        out.append(
            {
                "id": c.id,
                "ran": c.reimpl.ran,
                "broke": c.reimpl.broke,
                "upstream_ran": c.upstream.ran,
                "upstream_broke": c.upstream.broke,
                "conditions": rows,
                "multi": any(not r["one"] for r in rows),
                "must_fail_targets": c.must_fail_targets,
                "targets_failed": c.reimpl.targets_failed,
            }
        )
    return out


def common_findings(
    reimpl,
    upstream,
    targets: list[TargetOutcome],
    controls: list[ControlOutcome],
    disagreements: list[dict],
    robustness=None,
) -> dict[str, Finding]:
    """Findings every report states: the basis of the verdict, how the two arms compare, and how the asserted
    orderings fare under resampling."""
    out = {
        "resampling": resampling_finding(robustness),
        "authors_arm": authors_arm_finding(upstream),
        "target_reasons": _reason("grouped", groups=_reason_groups(targets), n_targets=len(targets)),
        "control_conditions": _reason("summarised", controls=_condition_summaries(controls)),
        "basis": _reason(
            "counted",
            n_targets=len(targets),
            one=len(targets) == 1,
            none_hold=not any(t.outcome == "holds" for t in targets),
            n_holding=sum(t.outcome == "holds" for t in targets),
            n_unmeasured=sum(t.outcome == "unmeasured" for t in targets),
            n_controls=len(controls),
            n_broke=sum(c.reimpl.broke is True for c in controls),
            n_judged_on_upstream=sum(t.judged_on == "upstream" for t in targets),
            n_headline=sum(t.role == "headline" for t in targets),
            n_headline_holding=sum(t.role == "headline" and t.outcome == "holds" for t in targets),
            n_supporting=sum(t.role == "supporting" for t in targets),
            n_supporting_holding=sum(t.role == "supporting" and t.outcome == "holds" for t in targets),
            all_hold=all(t.outcome == "holds" for t in targets),
            n_not_holding=sum(t.outcome != "holds" for t in targets),
            upstream_status=upstream.status,
            upstream_reason=upstream.reason,
        ),
    }
    if not (reimpl.ok and upstream.ok):
        out["agreement"] = _reason(
            "not_compared",
            upstream_status=upstream.status,
            upstream_reason=upstream.reason,
            reimpl_status=reimpl.status,
        )
        return out
    both = [t for t in targets if t.reimpl.value is not None and t.upstream.value is not None]
    gaps = [(abs(t.reimpl.value - t.upstream.value), t) for t in both]
    largest = max(gaps, key=lambda g: g[0]) if gaps else None
    # one decimal more than the targets' tables: these values sit at a tolerance's edge
    authors_only = [
        {
            "title": t.title,
            "upstream": t.upstream.value,
            "reimpl": t.reimpl.value,
            "requirement": t.requirement,
            "beyond": t.upstream.beyond,
            "decimals": t.decimals + 1,
        }
        for t in targets
        if t.reimpl.holds is True and t.upstream.holds is False
    ]
    reimpl_only = [
        {
            "title": t.title,
            "headline": t.role == "headline",
            "upstream": t.upstream.value,
            "reimpl": t.reimpl.value,
            "requirement": t.requirement,
            "beyond": t.reimpl.beyond,
            "decimals": t.decimals + 1,
        }
        for t in targets
        if t.reimpl.holds is False and t.upstream.holds is True
    ]
    with_tol = [t for t in both if t.relation == "~"]
    out["agreement"] = _reason(
        "disagree" if disagreements else ("agree" if both else "nothing_shared"),
        n_compared=len(both),
        one=len(both) == 1,
        n_with_tolerance=len(with_tol),
        n_relations=len(both) - len(with_tol),
        largest_gap=largest[0] if largest else None,
        largest_gap_title=largest[1].title if largest else None,
        disagreements=disagreements,
        authors_only_outside=authors_only,
        reimpl_only_outside=reimpl_only,
    )
    return out
