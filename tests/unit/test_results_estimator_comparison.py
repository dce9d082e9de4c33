"""The results object of ``estimator_comparison`` on a hand-made record of two task-period pairs and two knot counts.

Every number is chosen so the answer can be worked by hand (comments give the arithmetic); what
``invariants.py`` checked of the findings is checked here of the properties.
"""

from types import SimpleNamespace

import pytest

from harness.core.record import TargetOutcome
from harness.protocols.estimator_comparison import quantities as Q

results = pytest.importorskip("harness.protocols.estimator_comparison.results")


def _target(quantity, relation, *, mine, theirs=None, paper=None, tolerance=None, value=None, holds=None):
    arm = {"value": mine, "holds": holds}
    return TargetOutcome.model_validate(
        {
            "quantity": quantity,
            "quantity_label": quantity,
            "title": f"{quantity} {relation}",
            "role": "headline",
            "relation": relation,
            "requirement": f"{relation} {value if paper is None else paper}",
            "paper": paper,
            "paper_text": None if paper is None else f"{paper:g}",
            "tolerance": tolerance,
            "value": value,
            "reason": "test",
            "judged_on": "reimpl",
            "decimals": 6,
            "reimpl": arm,
            "upstream": {"value": theirs, "holds": None if theirs is None else holds},
            "outcome": "holds" if holds else "fails",
        }
    )


# Table 2 of the toy: the sigmoid 8e-5 above the I-spline in ID pinball, 2e-5 above it in OOD pinball, and
# 0.002 better calibrated OOD (0.0221 against 0.0241).
MINE = {
    **{Q.metric(m, e): 0.01 for m in Q.METRICS for e in Q.ESTIMATORS},
    "pinball_id.sigmoid": 0.00408,
    "pinball_id.ispline": 0.00400,
    "pinball_ood.sigmoid": 0.004944,
    "pinball_ood.ispline": 0.004924,
    "calibration_ood.sigmoid": 0.0221,
    "calibration_ood.ispline": 0.0241,
    "boxed.pinball_ood.sigmoid": 0.00493,
    "boxed.pinball_id.sigmoid": 0.00409,  # 1e-5 from the paper's 0.00408, beyond its 5e-6: missed in the box
    **{Q.boxed(Q.metric(m, "sigmoid")): 0.01 for m in ("calibration_id", "calibration_ood")},
}
MINE.update(Q.gap_values(MINE))
THEIRS = {**MINE, "pinball_ood.sigmoid": 0.00493}
# per pair: ID gaps +2e-4 and -4e-5 (mean 8e-5), OOD calibration gaps 0.003 and 0.001 (mean 0.002), OOD pinball
# gaps +3e-5 and +1e-5: the sigmoid behind on both pairs
PAIRS = [
    {"task": "A", "t": 1, "gap.pinball_id": 2e-4, "gap.pinball_ood": 3e-5, "gap.calibration_ood": 0.003},
    {"task": "B", "t": 1, "gap.pinball_id": -4e-5, "gap.pinball_ood": 1e-5, "gap.calibration_ood": 0.001},
]
# the I-spline at 2 intervals: ID pinball 0.00410 (gap -2e-5: the sigmoid below it), OOD calibration 0.0230 (gap
# +0.0009); at 3 (claimed) the table's row
KNOTS = [
    {
        "n_intervals": 2,
        "pinball_id": 0.00410,
        "pinball_ood": 0.0049,
        "calibration_id": 0.018,
        "calibration_ood": 0.0230,
    },
    {"n_intervals": 3, **{m: MINE[Q.metric(m, "ispline")] for m in Q.METRICS}},
]
OUTSIDE = [{"task": "A", "t": 1, "beta": 0.6, "midpoint": 4.2, "z_min": -0.6, "z_max": 3.9}]
TARGETS = [
    _target("pinball_ood.sigmoid", "~", mine=0.004944, theirs=0.00493, paper=0.00493, tolerance=5e-6, holds=False),
    _target("pinball_id.ispline", "~", mine=0.004, paper=0.004, tolerance=1e-4, holds=True),
    _target("pinball_id.sigmoid", "~", mine=0.00408, paper=0.00408, tolerance=5e-6, holds=True),
    _target("gap.pinball_id", ">", mine=MINE["gap.pinball_id"], theirs=MINE["gap.pinball_id"], value=0.0, holds=True),
    _target("gap.pinball_id", "abs<", mine=MINE["gap.pinball_id"], value=1.5e-4, holds=True),
    _target("gap.calibration_ood", ">", mine=MINE["gap.calibration_ood"], value=0.0, holds=True),
]


def _results(*, box=True, authors=True, targets=TARGETS):
    details = {"pair_gaps": PAIRS, "knot_rows": KNOTS}
    if box:
        details["boxed"] = {"box": [0.05, 50.0], "free_fits_outside": OUTSIDE}
    r = results.Results.__new__(results.Results)
    r.record = SimpleNamespace(targets=targets, quantities={})
    r.mine, r.mine_details = MINE, details
    r.theirs = THEIRS if authors else {}
    r.params = {"ispline_intervals": 3, "tasks": {"A": "a", "B": "b"}}
    r.data = {"splits": [{"t": 1}]}
    return r


def test_table_has_every_estimator_and_the_printed_cells():
    r = _results()
    assert [row["estimator"] for row in r.table] == ["Constant", "Binwise", "I-spline", "Sigmoid"]
    sig = r.table[3]
    assert sig["pinball_ood"] == {"mine": 0.004944, "theirs": 0.00493, "paper": "0.00493"}
    assert sig["calibration_id"]["paper"] is None  # no target pins it
    assert _results(authors=False).table[3]["pinball_ood"]["theirs"] is None
    assert r.n_pairs == 2


def test_only_the_orderings_the_targets_assert():
    # issue 37, kind 5: the OOD pinball difference is measured per pair and per knot count, yet no target asserts
    # an ordering on it, so no row reports one
    rows = _results().orderings
    assert [o["title"] for o in rows] == ["gap.pinball_id >", "gap.pinball_id abs<", "gap.calibration_ood >"]
    assert not any("pinball_ood" in o["title"] for o in rows)


def test_one_rule_for_every_ordering():
    # issue 37, kind 11: the target's own relation, on the means, on each pair, at each knot count; no other
    # standard (no "tie" against a spread) for any row
    r = _results()
    by = {o["title"]: o for o in r.orderings}
    assert len({frozenset(o) for o in by.values()}) == 1  # every row carries the same facts
    id_gap = by["gap.pinball_id >"]
    assert id_gap["holds"] is True and id_gap["mine"] == pytest.approx(8e-5)
    assert (id_gap["pairs"], r.n_pairs) == (1, 2)  # +2e-4 > 0, -4e-5 is not
    assert (id_gap["knots"], len(r.knots)) == (1, 2)  # at 2 intervals 0.00408 - 0.00410 < 0
    assert id_gap["paper"] == pytest.approx(8e-5)  # 0.00408 - 0.00400, from the printed cells
    small = by["gap.pinball_id abs<"]
    assert (small["pairs"], small["knots"]) == (1, 2)  # |2e-4| >= 1.5e-4; |-4e-5| and |-2e-5| < 1.5e-4
    cal = by["gap.calibration_ood >"]
    assert (cal["pairs"], cal["knots"], cal["paper"]) == (2, 2, None)  # no printed calibration cells here


def test_knot_rows_carry_their_differences():
    k2, k3 = _results().knots
    assert (k2["claimed"], k3["claimed"]) == (False, True)
    assert k2["gap.pinball_id"] == pytest.approx(-2e-5) and k2["gap.calibration_ood"] == pytest.approx(0.0009)
    assert k3["gap.pinball_id"] == pytest.approx(MINE["gap.pinball_id"])


def test_the_box_rescues_the_cell_the_free_fit_misses():
    b = _results().box
    ood = next(row for row in b["rows"] if row["title"] == "pinball_ood.sigmoid ~")
    # free 0.004944 misses 0.00493 by 1.4e-5 > 5e-6; inside the box 0.00493 is the authors' value exactly
    assert (ood["free_within"], ood["within"], ood["removed"]) == (False, True, 1.0)
    assert b["rescued"] == ["pinball_ood.sigmoid ~"]
    assert [r["title"] for r in b["rows"] if r["within"] is False] == ["pinball_id.sigmoid ~"]
    assert b["bounds"] == [0.05, 50.0] and b["outside"] == OUTSIDE
    # a cell without a paper value is not judged, and the arms agreeing exactly remove no share
    cal = next(row for row in b["rows"] if row["title"] == "calibration_ood.sigmoid")
    assert cal["within"] is None and cal["removed"] is None


def test_no_box_and_no_authors():
    assert _results(box=False).box is None
    rows = _results(authors=False).box["rows"]
    assert all(row["theirs"] is None and row["removed"] is None for row in rows)
