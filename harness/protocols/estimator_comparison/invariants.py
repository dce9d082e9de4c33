"""What the findings of ``estimator_comparison`` assert about the record (see :mod:`harness.verdicts.invariants`).

Standard library only.
"""

from __future__ import annotations

from ...verdicts.invariants import Invariants, same
from . import quantities as Q

INVARIANTS = Invariants()


def _cells(v) -> list:
    return [t for t in v.record.targets if t.relation == "~"]


@INVARIANTS.asserts("summary", "measured", "its losses are the measured ones, and the box claims only cells it has")
def _summary(v, f):
    x = f.facts
    bad = [
        name
        for name in ("pinball_id", "pinball_ood")
        for e in ("sigmoid", "ispline")
        if not same(getattr(x, f"{name}_{e}"), v.value(Q.metric(name, e)))
    ]
    sig = [t for t in _cells(v) if t.quantity.endswith(".sigmoid")]
    box_ok = x.n_boxed_cells is None or (
        x.n_boxed_cells == len(sig) and all(t in [s.title for s in sig] for t in x.boxed_missed + x.boxed_rescues)
    )
    rescued_ok = all(any(t.title == r and t.reimpl.holds is False for t in sig) for r in x.boxed_rescues or [])
    return not bad and box_ok and rescued_ok, {"differ": bad, "sigmoid cells": len(sig)}


@INVARIANTS.asserts("table", "measured", "its counts are the claim's cells and those that hold")
def _table(v, f):
    cells = _cells(v)
    want = (len(cells), sum(t.reimpl.holds is True for t in cells))
    got = (f.facts.n_cells, f.facts.n_holding)
    all_ok = f.facts.all_holding == (bool(cells) and want[0] == want[1])
    return got == want and all_ok, {"stated": got, "in the record": want}


@INVARIANTS.asserts("comparisons", "measured", "each row is a relation target's outcome")
def _comparisons(v, f):
    rel = [t for t in v.record.targets if t.relation != "~"]
    ok = len(rel) == len(f.facts.rows) and all(r["holds"] == t.reimpl.holds for r, t in zip(f.facts.rows, rel))
    return ok, {"rows": len(f.facts.rows), "relation targets": len(rel)}


@INVARIANTS.asserts("ood_reading", "better_calibrated", "the sigmoid's OOD calibration error is below the I-spline's")
def _better(v, f):
    gap = v.value("gap.calibration_ood")
    return gap > 0, {"I-spline minus sigmoid": gap}


@INVARIANTS.asserts("ood_reading", "not_better_calibrated", "the sigmoid's OOD calibration error is not below")
def _not_better(v, f):
    gap = v.value("gap.calibration_ood")
    return gap <= 0, {"I-spline minus sigmoid": gap}


@INVARIANTS.asserts("ood_reading", None, "a tie on OOD loss is a gap no larger than the knot count's spread")
def _tie(v, f):
    x = f.facts
    gap = abs(v.value("gap.pinball_ood"))
    want = "tie" if gap <= x.knot_spread else ("behind" if v.value("gap.pinball_ood") > 0 else "ahead")
    ok = x.loss_reading == want and 0 <= x.n_pairs_better <= x.n_pairs
    return ok, {"gap": gap, "knot spread": x.knot_spread, "stated": x.loss_reading, "expected": want}


@INVARIANTS.asserts("box", "measured", "the claim asks for the box")
def _box(v, f):
    return v.params.get("box_check") is not None, {"box_check": v.params.get("box_check")}


@INVARIANTS.asserts("beta_zero", "measured", "its rows are the control's values")
def _beta_zero(v, f):
    x = f.facts
    cv = v.control_value(x.id, Q.metric("calibration_ood", "sigmoid"))
    return same(x.calibration_ood, cv), {"stated": x.calibration_ood, "control": cv}


@INVARIANTS.asserts("shuffle_z", "measured", "its advantages are the measured ones")
def _shuffle(v, f):
    x = f.facts
    ok = same(x.real, v.value("advantage.id")) and same(x.shuffled, v.control_value(x.id, "advantage.id"))
    return ok and x.smallest <= x.shuffled <= x.largest, {"real": x.real, "shuffled": x.shuffled}


@INVARIANTS.asserts("knots", "measured", "each ordering's state follows the knot rows, and the spread the gap")
def _knots(v, f):
    rows = f.facts.rows
    bad = []
    for o in f.facts.orderings:
        pos = [r["n_intervals"] for r in rows if r[o["name"]] > 0]
        want = "always" if len(pos) == len(rows) else ("never" if not pos else "changes")
        if o["state"] != want:
            bad.append(o["name"])
    ids = [r["pinball_id"] for r in rows]
    spread_ok = f.facts.spread_exceeds_gap == (max(ids) - min(ids) > abs(v.value("gap.pinball_id")))
    return not bad and spread_ok, {"orderings": bad}
