"""The verdict rule: a claim's verdict and its reasons, from its judged targets and controls.

The verdict rule, written once (docs/verdicts.md states it for reviewers):

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

Each reason names what decided it (a state and the titles of its targets, or
the ids of its controls); the report's words and numbers for it come from the
record's targets (:mod:`harness.rendering.results`). The targets and controls
are judged in :mod:`harness.verdicts.judging`.
"""

from __future__ import annotations

from ..core.record import ControlOutcome, Reason, TargetOutcome, Verdict


def decide_verdict(
    reimpl, upstream, targets: list[TargetOutcome], controls: list[ControlOutcome], disagreements: list[dict]
) -> Verdict:
    """Apply the rule of this module's docstring; the first rule that applies decides, with its reasons."""
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
