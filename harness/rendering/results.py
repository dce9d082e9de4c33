"""What a report states, each fact derived once from its record: the results object."""

from __future__ import annotations

import importlib
import re
from functools import cached_property

from ..claimfiles.multiverse_spec import same_value
from ..core.quantities import budget_text
from ..core.record import Record
from ..core.relations import within_tolerance
from ..verdicts.judging import arm_disagreements

#: Two specifications' values are one result when every pair is within these (relative, absolute): an
#: optimiser's noise (004's six refits agree to about 1e-11) is not a different result.
SAME_RTOL, SAME_ATOL = 1e-6, 1e-9

#: An exception as a one-line reason gives it: its type, then its message.
_EXCEPTION = re.compile(r"(?:^|[:;] )(?:[A-Za-z_][\w]*\.)*([A-Z][A-Za-z0-9_]*(?:Error|Exception|Exit|Interrupt))")


def same_results(a: dict, b: dict) -> bool:
    """Whether two specifications' values are one result (:data:`SAME_RTOL`, :data:`SAME_ATOL`)."""
    return a.keys() == b.keys() and all(
        (x is None) == (y is None) and (x is None or abs(x - y) <= SAME_ATOL + SAME_RTOL * max(abs(x), abs(y)))
        for x, y in ((a[k], b[k]) for k in a)
    )


def span(values) -> dict | None:
    """The lowest and highest of ``values`` that are not ``None`` (``{"lo", "hi"}``; ``None`` where none is)."""
    vals = [v for v in values if v is not None]
    return {"lo": min(vals), "hi": max(vals)} if vals else None


def results_for(record: Record) -> Results:
    """The results object of a record: its protocol's (``harness.protocols.<name>.results``), else this module's."""
    try:
        module = importlib.import_module(f"harness.protocols.{record.claim.protocol}.results")
    except ModuleNotFoundError:
        return Results(record)
    return module.Results(record)


class Results:
    """The facts every report states, each derived once from ``record``."""

    def __init__(self, record: Record):
        self.record = record
        self.params = record.claim.params
        self.data = record.data
        arms = record.arms
        self.authors_ran = arms.upstream.ok
        self.mine = arms.reimpl.values
        self.theirs = arms.upstream.values if self.authors_ran else {}
        self.mine_details = arms.reimpl.details
        self.their_details = arms.upstream.details if self.authors_ran else {}
        self.evidence = record.evidence

    def control_values(self, control_id: str) -> dict:
        c = self.record.arms.reimpl.controls.get(control_id)
        return c.values if (c is not None and self.record.arms.reimpl.ok) else {}

    @cached_property
    def budget(self) -> str | None:
        """The budget a claim reads its boundaries at (``eval_x``), in words (``10²⁴ FLOPs``); ``None`` without."""
        x = self.params.get("eval_x")
        return None if x is None else budget_text(float(x))

    @cached_property
    def complete(self) -> bool:
        """The re-implementation ran and measured every quantity its protocol declares (its own facts need all)."""
        return self.record.arms.reimpl.ok and not self.record.unmeasured

    @cached_property
    def targets(self) -> list[dict]:
        """One row per target: how it is judged, each arm's value, and whether each arm meets it."""
        return [
            t.model_dump(include={"title", "role", "requirement", "decimals", "judged_on", "outcome"})
            | {
                "mine": t.reimpl.value,
                "theirs": t.upstream.value,
                # a supporting target both arms meet is folded away; a headline or a missed one is in view
                "folded": t.role == "supporting" and t.outcome == "holds" and t.upstream.holds is not False,
            }
            for t in self.record.targets
        ]

    @cached_property
    def n_holding(self) -> int:
        return sum(t["outcome"] == "holds" for t in self.targets)

    @cached_property
    def n_theirs_holding(self) -> int | None:
        return sum(t.upstream.holds is True for t in self.record.targets) if self.authors_ran else None

    @cached_property
    def n_theirs_judged(self) -> int | None:
        return sum(t.upstream.holds is not None for t in self.record.targets) if self.authors_ran else None

    @cached_property
    def reasons(self) -> list[dict]:
        """The verdict's reasons, each with the target rows (or control ids) it names."""
        by_title = {t["title"]: t for t in self.targets}
        return [
            {"state": r.state, "titles": r.titles, "targets": [by_title[x] for x in r.titles if x in by_title]}
            for r in self.record.verdict.reasons
        ]

    @cached_property
    def target_reasons(self) -> list[dict]:
        """The targets' reasons, each text once, with the titles that give it."""
        groups: dict[str, list[str]] = {}
        for t in self.record.targets:
            groups.setdefault(t.reason, []).append(t.title)
        return [{"titles": titles, "reason": reason} for reason, titles in groups.items()]

    @cached_property
    def controls(self) -> list[dict]:
        """Per control, its outcome and per condition how many quantities meet it and the range measured."""
        out = []
        for c in self.record.controls:
            theirs = c.upstream.conditions if c.upstream.ran else [None] * len(c.reimpl.conditions)
            conditions = [
                {
                    "requirement": cond.requirement,
                    "n": len(cond.rows),
                    "n_met": sum(r.holds for r in cond.rows),
                    **(span(r.measured for r in cond.rows) or {"lo": None, "hi": None}),
                    "theirs_n_met": sum(r.holds for r in their.rows) if their else None,
                    "theirs_all": their.holds if their else None,
                    "single": len(cond.rows) == 1,
                }
                for cond, their in zip(c.reimpl.conditions, theirs)
            ]
            out.append(dict(c) | {"conditions": conditions})
        return out

    @cached_property
    def authors(self) -> dict:
        """How the authors' arm fared: ``ran``, ``switched_off``, ``no_pin``, ``no_adapter``, ``outside`` (the
        adapter found the claim outside what their code can do; ``words`` its message), ``crashed``
        (``exception`` its type), ``timed_out`` or ``failed``."""
        arm = self.record.arms.upstream
        text = arm.reason or ""
        if arm.ok:
            return {"state": "ran"}
        if arm.status == "not run":
            state = (
                "no_pin" if "no upstream pin" in text else "no_adapter" if "has no adapter" in text else "switched_off"
            )
            return {"state": state}
        if "did not finish within" in text:
            return {"state": "timed_out"}
        m = _EXCEPTION.search(text)
        if m and m.group(1) == "OutsideTheirCodeError":
            words = text[m.end() :].lstrip(": ").split(": ", 1)[0].split(" (full text")[0].rstrip(" .;")
            return {"state": "outside", "words": words}
        return {"state": "crashed", "exception": m.group(1)} if m else {"state": "failed"}

    @cached_property
    def arms_agree(self) -> bool:
        """Both arms ran, measured a target in common, and agree within every target's tolerance and on every
        relation. This is the arms against each other; each arm against the paper is :attr:`targets`."""
        both = any(t.reimpl.value is not None and t.upstream.value is not None for t in self.record.targets)
        return both and not arm_disagreements(self.record.targets)

    @cached_property
    def resampling(self) -> dict | None:
        """The bootstrap's reading of each ordering the claim asserts and the study it rests on (``None``: not run)."""
        rb = self.record.robustness
        if rb is None or rb.state == "not run":
            return None
        f = rb.facts
        rows = []
        for c in f.get("comparisons", []):
            side = "error_against" if c.get("decision") == "contradicted" else "error"  # each decision's error as made
            keys = ("label", "state", "difference", "bound", "detectable", "dominated_by")
            rows.append(
                {k: c.get(k) for k in keys}
                | {"error": c.get(side), "error_bound": c.get(f"{side}_bound")}
                | {"carried_by": [x.get("cluster") for x in c.get("carried_by") or []]}
            )
        return {"label": rb.state, "orderings": rows, "study": f.get("calibration") or {}, "facts": f}

    @cached_property
    def multiverse(self) -> dict | None:
        """How the claim fares across its analysis specifications (``None`` where it declares none)."""
        mv = self.record.multiverse
        if mv is None:
            return None
        analysis = [s for s in mv.specifications if not s.estimand]
        ran = [s for s in analysis if s.status == "ok"]
        reps: list = []
        for s in ran:
            if not any(same_results(r.values, s.values) for r in reps):
                reps.append(s)
        paper = next(s for s in analysis if s.paper)
        k = sum(s.reading == "holds" for s in reps)
        fails = [s for s in reps if s.reading == "fails"]
        unsettled = sum(s.reading == "unsettled" for s in reps)
        if len(ran) > 1 and len(reps) == 1:
            state = "inert"  # every choice leaves every value as it is: nothing was tested
        elif not mv.assertions:
            state = "values_only"
        elif k + len(fails) + unsettled == 0:
            state = "none_judged"
        elif not fails:
            state = "holds_across_choices" if k else "within_noise"
        else:
            state = "depends_on_choices" if k else "holds_in_none"
        choices = []
        flip = {"holds": "fails", "fails": "holds"}.get(paper.reading if paper.status == "ok" else None)
        for c in mv.choices:
            name = c["name"]
            moved = [s for s in ran if not same_value(s.choices[name], paper.choices[name])]
            alone = [
                s for s in moved if all(same_value(s.choices[o], paper.choices[o]) for o in s.choices if o != name)
            ]
            choices.append(
                {
                    "name": name,
                    "paper_text": c["paper_text"],
                    "alternatives": [a["text"] for a in c["alternatives"] if not a["paper"]],
                    "inert": bool(alone) and all(same_results(s.values, paper.values) for s in alone),
                    "flips": flip is not None and any(s.reading == flip for s in alone),
                    "in_failing": any(not same_value(s.choices[name], paper.choices[name]) for s in fails),
                }
            )

        targets = [
            {
                "title": t["title"],
                **r,
                "within": within_tolerance(max(abs(x - t["paper"]) for x in r.values()), t["tolerance"]),
            }
            for t in mv.targets
            if (r := span(s.values.get(t["quantity"]) for s in reps))  # over the distinct results
        ]
        return {
            "state": state,
            "k": k,
            "fails": len(fails),
            "unsettled": unsettled,
            "n_distinct": len(reps),
            "n_ran": len(ran),
            "n": len(analysis),
            "assertions": [a["label"] for a in mv.assertions],
            "depends_on": (
                [c["name"] for c in choices if c["flips"]] or [c["name"] for c in choices if c["in_failing"]]
                if state == "depends_on_choices"
                else []
            ),
            "inert": [] if state == "inert" else [c["name"] for c in choices if c["inert"]],  # the label says it
            "choices": choices,
            "targets": targets,
            "joint_null": mv.joint_null,
            "noise_rule": self._noise_rule,
            "reported": [{**q, **r} for q in mv.reported if (r := span(s.values.get(q["quantity"]) for s in reps))],
        }

    @cached_property
    def _noise_rule(self) -> dict | None:
        """How often the multiverse's reading by noise takes a side where there is none, on the claim's design: the
        largest measured error of either side over the orderings, its bound, and whether every bound is within
        the limit (``None`` where no study measured it)."""
        rb = getattr(self.record, "robustness", None)  # a multiverse alone (tests) has none
        rules = [c.get("noise_rule") or {} for c in (rb.facts.get("comparisons", []) if rb else [])]
        rules = [r for r in rules if r.get("error_bound") is not None and r.get("error_against_bound") is not None]
        if not rules:
            return None
        worst = max(rules, key=lambda r: max(r["error_bound"], r["error_against_bound"]))
        side = "error" if worst["error_bound"] >= worst["error_against_bound"] else "error_against"
        return {
            "error": worst[side],
            "bound": worst[f"{side}_bound"],
            "limit": worst["limit"],
            "calibrated": all(max(r["error_bound"], r["error_against_bound"]) <= r["limit"] for r in rules),
        }
