"""The findings every report states beside the verdict: its basis (targets and controls counted), how the two
arms compare, how the authors' arm fared, and how the claim's asserted orderings fare under resampling.

Computed here from the judged outcomes (:mod:`harness.verdicts.judging`), never in a template; a protocol's own
findings come from its folder. The multiverse's finding is made in :mod:`harness.resampling.multiverse_finding`;
its models are declared here, in the layer the checks can read.
"""

from __future__ import annotations

import re

from ..core.decisions import ORDERING_STATES
from ..core.record import ControlOutcome, Facts, Finding, Num, Row, TargetOutcome, declares

__all__ = [
    "common_findings",
    "MULTIVERSE_STATES",
    "Multiverse",
    "MultiverseNotRun",
    "resampling_finding",
    "authors_arm_finding",
    "OUTSIDE_THEIR_CODE",
    "MeasurementFacts",
]


@declares("resampling", "not_run")
class ResamplingNotRun(Facts):
    why: str | None


@declares("resampling", "supported", "contradicted", "inconclusive", "not_assessed", "mixed", "intervals_only")
class Resampling(Facts):
    n_comparisons: int
    one_comparison: bool
    comparisons: list[Row]
    supported: list[Row]
    contradicted: list[Row]
    inconclusive: list[Row]
    not_assessed: list[Row]
    n_supported: int
    n_contradicted: int
    n_inconclusive: int
    n_not_assessed: int
    carried: list[Row]
    close_calls: list[str]
    alpha: Num | None
    confidence: Num | None
    method: str | None
    n_resamples: int | None
    cluster_col: str | None
    calibration_state: str | None
    replicates: int | None


@declares("authors_arm", "ran")
class AuthorsArmRan(Facts):
    pass


@declares("authors_arm", "switched_off", "no_pin", "no_adapter", "outside", "crashed", "timed_out", "failed")
class AuthorsArmNotRan(Facts):
    exception: str | None
    words: str | None


class ReasonGroup(Facts):
    titles: list[str]
    reason: str | None


@declares("target_reasons", "grouped")
class TargetReasons(Facts):
    groups: list[ReasonGroup]
    n_targets: int


@declares("control_conditions", "summarised")
class ControlConditions(Facts):
    controls: list[Row]


@declares("basis", "counted")
class Basis(Facts):
    n_targets: int
    one: bool
    none_hold: bool
    n_holding: int
    n_unmeasured: int
    n_controls: int
    n_broke: int
    n_judged_on_upstream: int
    n_headline: int
    n_headline_holding: int
    n_supporting: int
    n_supporting_holding: int
    all_hold: bool
    n_not_holding: int
    upstream_status: str
    upstream_reason: str | None


@declares("agreement", "not_compared")
class NotCompared(Facts):
    upstream_status: str
    upstream_reason: str | None
    reimpl_status: str


@declares("agreement", "agree", "disagree", "nothing_shared")
class Agreement(Facts):
    n_compared: int
    one: bool
    n_with_tolerance: int
    n_relations: int
    largest_gap: Num | None
    largest_gap_title: str | None
    disagreements: list[Row]
    authors_only_outside: list[Row]
    reimpl_only_outside: list[Row]


@declares("measurement", "complete", "incomplete")
class MeasurementFacts(Facts):
    """Whether the re-implementation measured every quantity its protocol declares (the names it missed)."""

    missing: list[str]
    n_missing: int


#: The states of the ``multiverse`` finding.
MULTIVERSE_STATES = (
    "not_run",
    "holds_across_choices",
    "depends_on_choices",
    "holds_in_none",
    "within_noise",
    "values_only",
    "none_judged",
)


@declares("multiverse", "not_run")
class MultiverseNotRun(Facts):
    """Why the claim has no multiverse."""

    why: str


@declares("multiverse", *MULTIVERSE_STATES[1:])
class Multiverse(Facts):
    """The claim across its analysis specifications, stated by
    :func:`harness.resampling.multiverse_finding.multiverse_finding` (declared here, with the findings every
    report states, so that the checks read it typed): the tally of the distinct ones (``n`` counts every analysis
    specification), the choices, the assertions and value targets, the curve, the other estimands shown apart,
    and the curve under the null where the record holds it."""

    n: int
    n_distinct: int
    k: int
    fails: int
    unsettled: int
    undetermined: int
    n_ran: int
    n_failed: int
    n_excluded: int
    left_out: list[str]
    n_choices: int
    n_assertions: int
    few_assertions: bool
    few_targets: bool
    n_targets: int
    paper_reading: str | None
    paper_ran: bool
    flips: list[str]
    n_flips: int
    depends_on: list[str]
    alone: bool
    inert: list[str]
    n_inert: int
    choices: list[Row]
    assertions: list[Row]
    targets: list[Row]
    n_moving: int
    widest: Row | None
    curve: str
    curve_label: str
    curve_lo: Num | None
    curve_hi: Num | None
    n_curve: int
    paper_curve: Num | None
    paper_rank: int | None
    paper_position: str | None
    at_edge: bool
    has_interval: bool
    estimands: list[Row]
    n_estimands: int
    joint_null: Row | None
    failed: list[Row]


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
        return ResamplingNotRun(why=why).stated("not_run")
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
    return Resampling(
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
    ).stated(state)


#: An exception as a one-line reason gives it (:func:`harness.core.record.one_line_reason`): its type, then its message.
_EXCEPTION = re.compile(
    r"(?:^|[:;] )((?:[A-Za-z_][\w]*\.)*([A-Z][A-Za-z0-9_]*(?:Error|Exception|Exit|Interrupt|Failure))): ?"
)
#: The adapters' error for a claim their code cannot take (``harness.authors.adapters.errors``): its message is worded.
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
        return AuthorsArmRan().stated("ran")
    text = reason or ""
    facts = {"exception": None, "words": None}
    if upstream.status == "not run":
        state = (
            "no_pin" if "no upstream pin" in text else ("no_adapter" if "has no adapter" in text else "switched_off")
        )
        return AuthorsArmNotRan(**facts).stated(state)
    if "did not finish within" in text:
        return AuthorsArmNotRan(**facts).stated("timed_out")
    m = _EXCEPTION.search(text)
    if m and m.group(2) == OUTSIDE_THEIR_CODE:
        message = text[m.end() :]
        facts.update(exception=m.group(2), words=message.split(": ", 1)[0].split(" (full text")[0].rstrip(" .;"))
        return AuthorsArmNotRan(**facts).stated("outside")
    if m:
        return AuthorsArmNotRan(**{**facts, "exception": m.group(2)}).stated("crashed")
    return AuthorsArmNotRan(**facts).stated("failed")


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


def _outside(t: TargetOutcome, arm, **extra) -> dict:
    """A target that one arm (``arm``) puts outside its requirement while the other meets it; one decimal more
    than the targets' tables, as these values sit at a tolerance's edge."""
    return {
        "title": t.title,
        **extra,
        "upstream": t.upstream.value,
        "reimpl": t.reimpl.value,
        "requirement": t.requirement,
        "beyond": arm.beyond,
        "decimals": t.decimals + 1,
    }


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
        "target_reasons": TargetReasons(groups=_reason_groups(targets), n_targets=len(targets)).stated("grouped"),
        "control_conditions": ControlConditions(controls=_condition_summaries(controls)).stated("summarised"),
        "basis": Basis(
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
        ).stated("counted"),
    }
    if not (reimpl.ok and upstream.ok):
        out["agreement"] = NotCompared(
            upstream_status=upstream.status,
            upstream_reason=upstream.reason,
            reimpl_status=reimpl.status,
        ).stated("not_compared")
        return out
    both = [t for t in targets if t.reimpl.value is not None and t.upstream.value is not None]
    gaps = [(abs(t.reimpl.value - t.upstream.value), t) for t in both]
    largest = max(gaps, key=lambda g: g[0]) if gaps else None
    authors_only = [_outside(t, t.upstream) for t in targets if t.reimpl.holds is True and t.upstream.holds is False]
    reimpl_only = [
        _outside(t, t.reimpl, headline=t.role == "headline")
        for t in targets
        if t.reimpl.holds is False and t.upstream.holds is True
    ]
    with_tol = [t for t in both if t.relation == "~"]
    out["agreement"] = Agreement(
        n_compared=len(both),
        one=len(both) == 1,
        n_with_tolerance=len(with_tol),
        n_relations=len(both) - len(with_tol),
        largest_gap=largest[0] if largest else None,
        largest_gap_title=largest[1].title if largest else None,
        disagreements=disagreements,
        authors_only_outside=authors_only,
        reimpl_only_outside=reimpl_only,
    ).stated("disagree" if disagreements else ("agree" if both else "nothing_shared"))
    return out
