"""The verdict rule, written once: a claim's verdict and its reasons, from its judged targets and controls
(:mod:`harness.verdicts.judging`). docs/verdicts.md states it for reviewers; each reason names what decided it
(a state and the titles of its targets, or the ids of its controls), and the report words it from the record."""

from __future__ import annotations

from ..core.record import ControlOutcome, Reason, TargetOutcome, Verdict


def decide_verdict(
    reimpl, upstream, targets: list[TargetOutcome], controls: list[ControlOutcome], disagreements: list[dict]
) -> Verdict:
    """The first rule of docs/verdicts.md's table that applies decides, with its reasons."""
    if not reimpl.ok:
        return Verdict(verdict="could not run", reasons=[Reason(state="reimpl_could_not_run")])
    unmeasured = [t.title for t in targets if t.outcome == "unmeasured"]
    if unmeasured:
        return Verdict(verdict="inconclusive", reasons=[Reason(state="unmeasured", titles=unmeasured)])
    failed_head = [t for t in targets if t.role == "headline" and t.outcome == "fails"]
    rescued = [t for t in failed_head if t.judged_on == "reimpl" and upstream.ok and t.upstream.holds is True]
    unrescued = [t.title for t in failed_head if t not in rescued]
    if unrescued:
        return Verdict(verdict="not reproduced", reasons=[Reason(state="headline_missed", titles=unrescued)])
    reasons = []
    if rescued:
        reasons.append(Reason(state="rescued_by_authors", titles=[t.title for t in rescued]))
    failed_support = [t.title for t in targets if t.role == "supporting" and t.outcome == "fails"]
    if failed_support:
        reasons.append(Reason(state="supporting_missed", titles=failed_support))
    unbroken = [c.id for c in controls if c.reimpl.broke is not True]
    if unbroken:
        reasons.append(Reason(state="controls_unbroken", titles=unbroken))
    if disagreements:
        reasons.append(Reason(state="arms_disagree", titles=[d["title"] for d in disagreements]))
    if reasons:
        return Verdict(verdict="partially reproduced", reasons=reasons)
    return Verdict(verdict="reproduced", reasons=[Reason(state="all_hold")])
