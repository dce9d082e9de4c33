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

Every reason for the verdict is a finding computed here, never in a template.
The targets and controls are judged in :mod:`harness.verdicts.judging`; the findings
every report states beside the verdict (its basis, the agreement of the arms,
the authors' arm, the resampling) in :mod:`harness.verdicts.common_findings`.
"""

from __future__ import annotations

from typing import Literal

from ..core.record import ControlOutcome, Facts, TargetOutcome, Verdict, declares

__all__ = ["decide_verdict"]


class TargetRow(Facts):
    """What a reason says of one target: its value on the arm it is judged on, what was required, by how much
    it misses (``None`` for a relation), and what the authors' arm says of it (``fails``, ``holds``,
    ``unmeasured``, ``not_run``, or ``judged_here`` for a check of the authors' code)."""

    title: str
    quantity: str
    judged_on: Literal["reimpl", "upstream"]
    value: int | float | None
    other_value: int | float | None
    upstream_value: int | float | None
    requirement: str
    beyond: int | float | None
    decimals: int
    upstream: Literal["fails", "holds", "unmeasured", "not_run", "judged_here"]


class TargetGroup(Facts):
    """The failing targets on which the authors' arm says the same (``case``), with the range they miss by."""

    case: Literal["fails", "not_run", "unmeasured", "judged_here"]
    titles: list[str]
    one: bool
    targets: list[TargetRow]
    n: int
    beyond_min: int | float | None
    beyond_max: int | float | None


@declares("verdict", "reimpl_could_not_run")
class CouldNotRun(Facts):
    reason: str | None


@declares("verdict", "unmeasured")
class Unmeasured(Facts):
    titles: list[str]
    quantities: list[str]
    arms: list[str]
    reimpl_titles: list[str]
    upstream_titles: list[str]
    no_arm_titles: list[str]
    upstream_status: str


@declares("verdict", "headline_missed")
class HeadlineMissed(Facts):
    titles: list[str]
    arms: list[str]
    targets: list[TargetRow]
    both_fail: list[str]
    upstream_not_run: list[str]
    upstream_unmeasured: list[str]
    judged_on_upstream: list[str]
    groups: list[TargetGroup]
    upstream_status: str
    n_targets: int
    n_holding: int
    n_other_failing: int


@declares("verdict", "rescued_by_authors", "supporting_missed")
class TargetsNamed(Facts):
    titles: list[str]
    targets: list[TargetRow]


@declares("verdict", "controls_unbroken")
class ControlsUnbroken(Facts):
    ids: list[str]


@declares("verdict", "arms_disagree")
class ArmsDisagree(Facts):
    titles: list[str]
    n_with_tolerance: int


@declares("verdict", "all_hold")
class AllHold(Facts):
    n_targets: int
    n_controls: int
    n_headline: int
    n_supporting: int
    all_headline: bool
    upstream_ran: bool


def _target_row(t: TargetOutcome, upstream) -> TargetRow:
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
    return TargetRow(
        title=t.title,
        quantity=t.quantity,
        judged_on=t.judged_on,
        value=judged.value,
        other_value=judged.other_value,
        upstream_value=t.upstream.value if t.judged_on == "reimpl" else None,
        requirement=t.requirement,
        beyond=judged.beyond,
        decimals=t.decimals + 1,
        upstream=theirs,
    )


def _by(rows: list[TargetRow], value: str) -> list[str]:
    return [r.title for r in rows if r.upstream == value]


def _groups(rows: list[TargetRow]) -> list[TargetGroup]:
    """The failing targets grouped by what the authors' arm says of them, in a fixed order, each group with the
    range by which its targets miss their tolerance (``None`` for relations, which have none)."""
    out = []
    for case in ("fails", "not_run", "unmeasured", "judged_here"):
        members = [r for r in rows if r.upstream == case]
        if not members:
            continue
        beyond = [r.beyond for r in members if r.beyond is not None]
        out.append(
            TargetGroup(
                case=case,
                titles=[r.title for r in members],
                one=len(members) == 1,
                targets=members,
                n=len(members),
                beyond_min=min(beyond) if len(beyond) == len(members) else None,
                beyond_max=max(beyond) if len(beyond) == len(members) else None,
            )
        )
    return out


def decide_verdict(
    reimpl, upstream, targets: list[TargetOutcome], controls: list[ControlOutcome], disagreements: list[dict]
) -> Verdict:
    """Apply the rule of this module's docstring; the reasons are findings."""
    if not reimpl.ok:
        return Verdict(
            verdict="could not run", reasons=[CouldNotRun(reason=reimpl.reason).stated("reimpl_could_not_run")]
        )
    unmeasured = [t for t in targets if t.outcome == "unmeasured"]
    if unmeasured:
        # which arm left each one unmeasured, so that the report can say why without naming raw quantities
        no_arm = [t for t in unmeasured if t.judged_on == "upstream" and not upstream.ok]
        return Verdict(
            verdict="inconclusive",
            reasons=[
                Unmeasured(
                    titles=[t.title for t in unmeasured],
                    quantities=[t.quantity for t in unmeasured],
                    arms=[t.judged_on for t in unmeasured],
                    reimpl_titles=[t.title for t in unmeasured if t.judged_on == "reimpl"],
                    upstream_titles=[t.title for t in unmeasured if t.judged_on == "upstream" and t not in no_arm],
                    no_arm_titles=[t.title for t in no_arm],
                    upstream_status=upstream.status,
                ).stated("unmeasured")
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
                HeadlineMissed(
                    titles=[t.title for t in unrescued],
                    arms=[t.judged_on for t in unrescued],
                    targets=rows,
                    both_fail=_by(rows, "fails"),
                    upstream_not_run=_by(rows, "not_run"),
                    upstream_unmeasured=_by(rows, "unmeasured"),
                    judged_on_upstream=_by(rows, "judged_here"),
                    groups=_groups(rows),
                    upstream_status=upstream.status,
                    n_targets=len(targets),
                    n_holding=sum(t.outcome == "holds" for t in targets),
                    n_other_failing=sum(t.outcome == "fails" for t in targets) - len(unrescued),
                ).stated("headline_missed")
            ],
        )
    reasons = []
    if rescued:
        reasons.append(
            TargetsNamed(
                titles=[t.title for t in rescued],
                targets=[_target_row(t, upstream) for t in rescued],
            ).stated("rescued_by_authors")
        )
    failed_support = [t for t in targets if t.role == "supporting" and t.outcome == "fails"]
    if failed_support:
        reasons.append(
            TargetsNamed(
                titles=[t.title for t in failed_support],
                targets=[_target_row(t, upstream) for t in failed_support],
            ).stated("supporting_missed")
        )
    unbroken = [c.id for c in controls if c.reimpl.broke is not True]
    if unbroken:
        reasons.append(ControlsUnbroken(ids=unbroken).stated("controls_unbroken"))
    if disagreements:
        reasons.append(
            ArmsDisagree(
                titles=[d["title"] for d in disagreements],
                n_with_tolerance=sum(d["tolerance_text"] is not None for d in disagreements),
            ).stated("arms_disagree")
        )
    if reasons:
        return Verdict(verdict="partially reproduced", reasons=reasons)
    return Verdict(
        verdict="reproduced",
        reasons=[
            AllHold(
                n_targets=len(targets),
                n_controls=len(controls),
                n_headline=sum(t.role == "headline" for t in targets),
                n_supporting=sum(t.role == "supporting" for t in targets),
                all_headline=all(t.role == "headline" for t in targets),
                upstream_ran=upstream.ok,
            ).stated("all_hold")
        ],
    )
