"""What each finding asserts about its record, checked before a report is rendered.

A finding is a named fact in one of its declared states, with the numbers it
rests on; a template words it. A state says something about the rest of the
record: ``power: underpowered`` says that the test did not reject,
``headline_missed`` that the authors' arm ran and was judged before it is
said not to meet a target, ``eval_support: upper_tail`` that fewer than a
fifth of the models lie at or above the evaluation point. Each such
assertion is declared here (the findings every report states) or in a
protocol's folder (``harness/protocols/<name>/invariants.py``, standard
library only, so that rendering stays light), as a small function of the
record: it returns the numbers it compared and whether they agree.

:func:`check_record` runs every declaration that applies to a record and
raises :class:`InvariantError` naming each finding whose state contradicts
the record's numbers. :func:`harness.rendering.render.render_report` calls it first, so
no report is rendered from a record whose findings contradict it: a failure
is a bug in the harness (a finding computed from the wrong number, a state
that ignores another finding), never a sentence for a reviewer.

This module imports nothing heavy: the record, the registry's cards.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from ..core.errors import HarnessError
from ..core.record import Finding, Record, typed_facts

__all__ = [
    "InvariantError",
    "Invariant",
    "Invariants",
    "View",
    "Stated",
    "stated",
    "COMMON",
    "check_record",
    "problems",
    "same",
    "REL_TOL",
]

#: Two numbers that should be the same number agree to this relative tolerance (they are copies, not
#: recomputations, so anything larger is a finding computed from another number).
REL_TOL = 1e-9


class InvariantError(HarnessError):
    """A record whose findings contradict its own numbers: a bug in the harness, not a result."""


@dataclass(frozen=True)
class Stated:
    """A finding as the checks read it: its state, and its facts as the model its producer declares
    (:func:`harness.core.record.declares`: checked fields, read as attributes), or as recorded where none
    is declared."""

    state: str
    facts: Any


def stated(name: str, f: Finding, protocol: str | None = None) -> Stated:
    """``f``, the finding ``name`` (``verdict.<state>`` for a verdict's reason) of a record of ``protocol``, as the
    checks read it."""
    from ..claimfiles.registry import PROTOCOLS
    from . import common_findings, verdict  # noqa: F401  (the models they declare)

    if protocol in PROTOCOLS:
        PROTOCOLS[protocol].findings()  # the protocol's own models
    return Stated(f.state, typed_facts(name.split(".")[0], f.state, f.facts, protocol))


Check = Callable[["View", Stated], "tuple[bool, dict] | None"]


@dataclass(frozen=True)
class Invariant:
    """``finding`` in one of ``states`` (every state when ``None``) asserts ``asserts`` about the record.

    ``check(view, finding)`` returns ``(holds, numbers)``, the numbers it compared by name, or ``None``
    when the record has nothing to compare (an arm that did not run, say).
    """

    finding: str
    states: tuple[str, ...] | None
    asserts: str
    check: Check

    def applies(self, state: str) -> bool:
        return self.states is None or state in self.states


@dataclass
class Invariants:
    """A set of declarations: ``@INVARIANTS.asserts("power", "underpowered", "the test did not reject")``."""

    items: list[Invariant] = field(default_factory=list)

    def asserts(self, finding: str, states: str | Iterable[str] | None, asserts: str):
        shown = (states,) if isinstance(states, str) else (None if states is None else tuple(states))

        def register(check: Check) -> Check:
            self.items.append(Invariant(finding, shown, asserts, check))
            return check

        return register

    def declared(self) -> set[tuple[str, str | None]]:
        """``(finding, state)`` pairs with a declaration (``state`` None: every state)."""
        return {(i.finding, s) for i in self.items for s in (i.states or (None,))}


def same(a, b, rel: float = REL_TOL) -> bool:
    """Whether two recorded numbers are the same number (both missing counts as the same)."""
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, bool) or isinstance(b, bool):
        return a == b
    return math.isclose(float(a), float(b), rel_tol=rel, abs_tol=1e-15)


class View:
    """The record as the invariants read it."""

    def __init__(self, record: Record):
        self.record = record
        self.params = record.claim.params

    def value(self, name: str, arm: str = "reimpl"):
        return getattr(self.record.arms, arm).values.get(name)

    def control_value(self, control_id: str, name: str, arm: str = "reimpl"):
        c = getattr(self.record.arms, arm).controls.get(control_id)
        return None if c is None else c.values.get(name)

    def ok(self, arm: str) -> bool:
        return getattr(self.record.arms, arm).ok

    def finding(self, name: str) -> Stated | None:
        f = self.record.findings.get(name)
        return None if f is None else stated(name, f, self.record.claim.protocol)

    def targets(self, title: str | None = None, quantity: str | None = None):
        return [
            t
            for t in self.record.targets
            if (title is None or t.title == title) and (quantity is None or t.quantity == quantity)
        ]

    def control(self, control_id: str):
        return next((c for c in self.record.controls if c.id == control_id), None)

    @property
    def n_models(self):
        return self.record.data.get("oll_rows_with_compute")


# -- the findings every report states ---------------------------------------------------------------------

COMMON = Invariants()


@COMMON.asserts("verdict.headline_missed", None, "each named target is a headline that fails on its judged arm")
def _headline_missed(v: View, f: Stated):
    bad = []
    for row in f.facts.targets:
        ts = v.targets(title=row.title)
        if not any(t.role == "headline" and t.outcome == "fails" for t in ts):
            bad.append(row.title)
        if row.upstream == "fails" and not (v.ok("upstream") and any(t.upstream.holds is False for t in ts)):
            bad.append(f"{row.title} (said to fail in the authors' arm)")
        if row.upstream == "not_run" and v.ok("upstream") and row.judged_on == "reimpl":
            bad.append(f"{row.title} (authors' arm said not to have run)")
    return not bad, {"contradicted": bad}


@COMMON.asserts("verdict.rescued_by_authors", None, "the authors' arm ran and meets each named target")
def _rescued(v: View, f: Stated):
    ok = v.ok("upstream") and all(
        any(t.upstream.holds is True and t.reimpl.holds is False for t in v.targets(title=title))
        for title in f.facts.titles
    )
    return ok, {"titles": f.facts.titles, "authors_arm": v.record.arms.upstream.status}


@COMMON.asserts("verdict.all_hold", None, "every target holds and every control broke")
def _all_hold(v: View, f: Stated):
    targets = [t.title for t in v.record.targets if t.outcome != "holds"]
    controls = [c.id for c in v.record.controls if c.reimpl.broke is not True]
    agrees = f.facts.upstream_ran == v.ok("upstream")
    return not targets and not controls and agrees, {"not holding": targets, "not broken": controls}


@COMMON.asserts("verdict.unmeasured", None, "each named target was not measured on its judged arm")
def _unmeasured(v: View, f: Stated):
    bad = [title for title in f.facts.titles if not any(t.outcome == "unmeasured" for t in v.targets(title=title))]
    return not bad, {"measured after all": bad}


@COMMON.asserts("verdict.arms_disagree", None, "the agreement finding lists a disagreement for each named target")
def _arms_disagree(v: View, f: Stated):
    a = v.finding("agreement")
    listed = {d["title"] for d in (a.facts.disagreements if a and a.state != "not_compared" else [])}
    missing = [t for t in f.facts.titles if t not in listed]
    return not missing and a is not None and a.state == "disagree", {"not listed": missing}


@COMMON.asserts("basis", "counted", "its counts are the record's counts of targets and controls")
def _basis(v: View, f: Stated):
    r = v.record
    want = {
        "n_targets": len(r.targets),
        "n_holding": sum(t.outcome == "holds" for t in r.targets),
        "n_controls": len(r.controls),
        "n_broke": sum(c.reimpl.broke is True for c in r.controls),
    }
    got = {k: getattr(f.facts, k) for k in want}
    return got == want, {"stated": got, "in the record": want}


@COMMON.asserts("agreement", "not_compared", "one of the arms did not run")
def _not_compared(v: View, f: Stated):
    return not (v.ok("reimpl") and v.ok("upstream")), {"authors' arm": v.record.arms.upstream.status}


@COMMON.asserts("authors_arm", "ran", "the authors' arm ran")
def _authors_arm_ran(v: View, f: Stated):
    return v.ok("upstream"), {"authors' arm": v.record.arms.upstream.status}


@COMMON.asserts(
    "authors_arm",
    ("switched_off", "no_pin", "no_adapter", "outside", "crashed", "timed_out", "failed"),
    "the authors' arm did not run, in the status the state words",
)
def _authors_arm_not_run(v: View, f: Stated):
    up = v.record.arms.upstream
    want = "not run" if f.state in ("switched_off", "no_pin", "no_adapter") else "could not run"
    return up.status == want, {"authors' arm": up.status, "state": f.state}


@COMMON.asserts("agreement", ("agree", "disagree", "nothing_shared"), "both arms ran")
def _compared(v: View, f: Stated):
    return v.ok("reimpl") and v.ok("upstream"), {"authors' arm": v.record.arms.upstream.status}


@COMMON.asserts("agreement", "agree", "no target's arms differ by more than its tolerance")
def _agree(v: View, f: Stated):
    return not f.facts.disagreements, {"disagreements": [d["title"] for d in f.facts.disagreements]}


@COMMON.asserts("agreement", ("agree", "disagree"), "the largest gap is the largest over the targets both arms measure")
def _largest_gap(v: View, f: Stated):
    gaps = [
        abs(t.reimpl.value - t.upstream.value)
        for t in v.record.targets
        if t.reimpl.value is not None and t.upstream.value is not None
    ]
    want = max(gaps) if gaps else None
    return same(f.facts.largest_gap, want), {"stated": f.facts.largest_gap, "in the record": want}


@COMMON.asserts(
    "resampling",
    None,
    "each ordering's label follows its one-sided bounds, the measured error of that decision against its limit and "
    "the influence of single base models; the claim's state is their common label",
)
def _resampling(v: View, f: Stated):
    from ..core.decisions import decide, ordering_state

    r = v.record.robustness
    if r is None or r.state == "not run":
        return f.state == "not_run", {"robustness": None if r is None else r.state}
    comps = r.facts.get("comparisons", [])
    want_each = []
    for c in comps:
        side = -1 if c["side"] == "below" else 1
        decision = None if c["lower"] is None or c["upper"] is None else decide(c["lower"], c["upper"], side)
        carried = bool(
            c["margin"] is not None
            and c["influence"]["largest"] is not None
            and c["influence"]["largest"] > c["margin"]
            and decision in ("supported", "contradicted")
        )
        want_each.append(ordering_state(decision, c["error"], c["error_against"], c["limit"], carried))
    if not comps:
        want = "intervals_only"
    else:
        want = (want_each[0] if len(set(want_each)) == 1 else "mixed").replace(" ", "_")
    stated = [c["state"] for c in comps]
    return f.state == want and stated == want_each, {"stated": stated, "expected": want_each, "state": want}


def _mv_reading(a: dict, values: dict):
    left = values.get(a["left"])
    right = values.get(a["right"]) if isinstance(a["right"], str) else a["right"]
    if left is None or right is None:
        return None
    if a["margin"] is not None and abs(left - right) <= a["margin"]:
        return "unsettled"
    ops = {"<": left < right, "<=": left <= right, ">": left > right, ">=": left >= right, "abs<": abs(left) < right}
    return "holds" if ops[a["relation"]] else "fails"


def _mv_same(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(
        (x is None and b[k] is None)
        or (x is not None and b[k] is not None and abs(x - b[k]) <= 1e-12 * max(abs(x), abs(b[k])))
        for k, x in a.items()
    )


def _mv_expected_state(n_assertions: int, k: int, fails: int, unsettled: int) -> str:
    if not n_assertions:
        return "values_only"
    if k + fails + unsettled == 0:
        return "none_judged"
    if not fails:
        return "holds_across_choices" if k else "within_noise"
    return "depends_on_choices" if k else "holds_in_none"


@COMMON.asserts(
    "multiverse",
    None,
    "each specification's reading is its values against the claim's assertions, k of n counts distinct results, "
    "the state follows from them, a choice flips the claim only where changing it alone turns a settled reading "
    "over, the curve's null p-values are the share of null data sets at least as far, and the paper's position is "
    "its rank",
)
def _multiverse(v: View, f: Stated):
    mv = v.record.multiverse
    if mv is None:
        return f.state == "not_run", {"multiverse": None}
    x, bad = f.facts, []
    for s in mv.specifications:
        if s.status == "ok":
            want = [_mv_reading(a, s.values) for a in mv.assertions]
            whole = (
                None
                if (not want or None in want)
                else ("fails" if "fails" in want else ("unsettled" if "unsettled" in want else "holds"))
            )
            if list(s.readings) != want or s.reading != whole:
                bad.append("a specification's reading")
                break
    ran = [s for s in mv.specifications if s.status == "ok" and not s.estimand]
    reps = []
    for s in ran:
        if not any(_mv_same(r.values, s.values) for r in reps):
            reps.append(s)
    k, fails = sum(r.reading == "holds" for r in reps), sum(r.reading == "fails" for r in reps)
    unsettled = sum(r.reading == "unsettled" for r in reps)
    if (x.k, x.n_distinct, x.fails, x.unsettled) != (k, len(reps), fails, unsettled):
        bad.append("k of n distinct")
    want_state = _mv_expected_state(len(mv.assertions), k, fails, unsettled)
    if f.state != want_state:
        bad.append("state")
    (paper,) = [s for s in mv.specifications if s.paper]
    for c in x.choices:
        name = c["name"]
        alone = [
            s
            for s in ran
            if s.choices[name] != paper.choices[name]
            and all(s.choices[o] == paper.choices[o] for o in s.choices if o != name)
        ]
        flips = paper.status == "ok" and any({s.reading, paper.reading} == {"holds", "fails"} for s in alone)
        if flips != c["flips"] or (name in x.flips) != flips:
            bad.append(f"flip of {name}")
    jn, jf = mv.joint_null, x.joint_null
    if (jn is None) != (jf is None):
        bad.append("joint null")
    elif jn is not None:
        shares = [n / jn["n_specifications"] for n in jn["null_significant"]]
        share = jn["observed_significant"] / jn["n_specifications"]
        p_share = (1 + sum(z >= share - 1e-12 for z in shares)) / (len(shares) + 1)
        p_median = (
            1
            + sum(z >= jn["observed_median"] - 1e-12 * max(1.0, abs(jn["observed_median"])) for z in jn["null_median"])
        ) / (len(shares) + 1)
        if not (same(p_share, jf["p_share"]) and same(p_median, jf["p_median"])):
            bad.append("joint null p-values")
    curve = sorted(s.curve for s in ran if s.curve is not None)
    if x.paper_rank is not None and sum(c < paper.curve for c in curve) + 1 != x.paper_rank:
        bad.append("paper's rank")
    return not bad, {"k": k, "n_distinct": len(reps), "expected": want_state, "contradicted": bad}


@COMMON.asserts("target_reasons", "grouped", "every target's reason is said once, under its own title")
def _target_reasons(v: View, f: Stated):
    titles = [t for g in f.facts.groups for t in g.titles]
    want = [t.title for t in v.record.targets]
    reasons = {t.title: t.reason for t in v.record.targets}
    wrong = [t for g in f.facts.groups for t in g.titles if reasons.get(t) != g.reason]
    return sorted(titles) == sorted(want) and not wrong, {"grouped": len(titles), "targets": len(want)}


@COMMON.asserts("control_conditions", "summarised", "each condition's counts are its rows' in the record")
def _control_conditions(v: View, f: Stated):
    bad = []
    for row in f.facts.controls:
        c = v.control(row["id"])
        if c is None or row["broke"] != c.reimpl.broke:
            bad.append(row["id"])
            continue
        for k, cond in zip(row["conditions"], c.reimpl.conditions):
            if k["n"] != len(cond.rows) or k["n_met"] != sum(r.holds for r in cond.rows) or k["all_met"] != cond.holds:
                bad.append(row["id"])
    return not bad, {"controls": bad}


@COMMON.asserts("measurement", ("complete", "incomplete"), "'complete' leaves no declared quantity unmeasured")
def _measurement(v: View, f: Stated):
    if not v.ok("reimpl"):  # nothing measured: the protocol's findings are not stated at all
        return None
    return (f.facts.n_missing == 0) == (f.state == "complete"), {"missing": f.facts.n_missing}


# -- checking ---------------------------------------------------------------------------------------------


def _protocol_invariants(protocol: str) -> Invariants | None:
    from ..claimfiles.registry import PROTOCOLS

    card = PROTOCOLS.get(protocol)
    return None if card is None else card.invariants


def _findings(record: Record) -> list[tuple[str, Finding]]:
    out = [(f"verdict.{r.state}", r) for r in record.verdict.reasons]
    return out + list(record.findings.items())


def _fmt(numbers: dict) -> str:
    def one(x: Any) -> str:
        if isinstance(x, float):
            return f"{x:.6g}"
        if isinstance(x, list):
            return "[" + ", ".join(one(i) for i in x) + "]"
        return str(x)

    return ", ".join(f"{k} = {one(x)}" for k, x in numbers.items())


def problems(record: Record, declared: Invariants | None = None) -> list[str]:
    """Every contradiction between a finding's state and the record's numbers, one line each."""
    sets = [COMMON] + ([declared] if declared is not None else [])
    if declared is None:
        own = _protocol_invariants(record.claim.protocol)
        sets += [own] if own is not None else []
    view = View(record)
    out = []
    for name, recorded in _findings(record):
        try:
            f = stated(name, recorded, record.claim.protocol)
        except ValidationError as exc:
            why = " ".join(str(exc).split())[:300]
            out.append(f"finding {name!r} ({recorded.state}): its facts do not fit its model: {why}")
            continue
        for inv in (i for s in sets for i in s.items if i.finding == name and i.applies(f.state)):
            try:
                res = inv.check(view, f)
            except (KeyError, TypeError, ValueError, ZeroDivisionError) as exc:
                out.append(
                    f"finding {name!r} ({f.state}): its check '{inv.asserts}' could not read the record: {exc!r}"
                )
                continue
            if res is not None and not res[0]:
                out.append(f"finding {name!r} in state {f.state!r} asserts that {inv.asserts}, but {_fmt(res[1])}")
    return out


def check_record(record: Record) -> None:
    """Raise :class:`InvariantError` when any finding of ``record`` contradicts its numbers."""
    found = problems(record)
    if found:
        lines = "\n  ".join(found)
        raise InvariantError(
            f"{record.claim.id}: the record's findings contradict its numbers (a bug in the harness; no report "
            f"was rendered):\n  {lines}"
        )
