"""Claim 003 (sigmoid against baselines, Table 2) end to end on the real table, re-implementation arm.

Expected values: the reference report ../shared/seeds/003_cc33e3e4bb086765.txt (its "paper" columns
are Table 2; its "authors' code" columns, five decimals, are the authors' fitter re-run) and
../shared/UPSTREAM.md ("003 estimators and metrics").
"""

from pathlib import Path

import pytest
from claimset import slow_marks

from harness.build.runner import run_claim
from harness.core.record import record_json
from harness.rendering.render import render_report
from harness.rendering.results import results_for

# a whole run of a heavy claim (tests/claimset.py): in `make test-all` (CI), not in `make test`
pytestmark = [pytest.mark.e2e, *slow_marks("003")]

CLAIM = Path(__file__).resolve().parents[2] / "claims" / "003_sigmoid_vs_baselines.yaml"
METRICS = ("pinball_id", "pinball_ood", "calibration_id", "calibration_ood")

# Seed 003 tables, "authors' code" columns, five decimals printed: half a unit = 5e-6.
SEED_AUTHORS = {
    "constant": (0.00535, 0.00623, 0.04123, 0.03597),
    "binwise": (0.00401, 0.00500, 0.01665, 0.02807),
    "sigmoid": (0.00408, 0.00493, 0.01837, 0.02206),
}
# Table 2 (the seed's "paper" columns): pinball to three significant figures, calibration to four decimals.
PAPER_SIGMOID = (0.00408, 0.00493, 0.0184, 0.0221)
PAPER_TOL = (5e-6, 5e-6, 5e-5, 5e-5)


@pytest.fixture(scope="module")
def record(run_once):
    return run_once("003").record


@pytest.fixture(scope="module")
def values(record):
    return record.arms.reimpl.values


def test_fit_free_rows_match_the_authors_run(values):
    for est in ("constant", "binwise"):
        for m, expected in zip(METRICS, SEED_AUTHORS[est]):
            assert values[f"{m}.{est}"] == pytest.approx(expected, abs=5e-6), (est, m)


def test_sigmoid_row_against_table2(record, values):
    # The paper's model (no box): three of the four cells round to Table 2 ...
    for m, paper, tol in zip(METRICS, PAPER_SIGMOID, PAPER_TOL):
        if m != "pinball_ood":
            assert values[f"{m}.sigmoid"] == pytest.approx(paper, abs=tol), m
    # ... and the OOD pinball lands at 4.94e-3, 1.4e-5 above the printed 4.93e-3: outside the
    # claim's half-unit tolerance, which makes the verdict "not reproduced" (a headline cell).
    assert values["pinball_ood.sigmoid"] == pytest.approx(0.004944, abs=2e-6)
    assert record.verdict.verdict == "not reproduced"
    (reason,) = record.verdict.reasons
    assert reason.state == "headline_missed" and reason.titles == ["Sigmoid, OOD pinball"]


def test_the_authors_box_explains_the_sigmoid_row(record, values):
    # Inside the authors' box every sigmoid cell rounds to Table 2 and to the authors' run.
    for m, paper, tol, theirs in zip(METRICS, PAPER_SIGMOID, PAPER_TOL, SEED_AUTHORS["sigmoid"]):
        assert values[f"boxed.{m}.sigmoid"] == pytest.approx(paper, abs=tol), m
        assert values[f"boxed.{m}.sigmoid"] == pytest.approx(theirs, abs=5e-6), m  # five decimals printed
    outside = {(o["task"], o["t"]) for o in record.arms.reimpl.details["boxed"]["free_fits_outside"]}
    assert ("MATH Lvl 5", 1) in outside  # its free midpoint lies beyond the training z range


def test_ispline_and_the_comparisons(record, values):
    rows = {r.quantity + r.relation: r for r in record.targets}
    # the I-spline cells hold within the claim's (supporting, wider) tolerances
    for m in METRICS:
        assert rows[f"{m}.ispline~"].outcome == "holds", m
    # seed: sigmoid slightly above the I-spline in ID pinball, better OOD calibration (0.02202 vs 0.02478)
    assert 0 < values["gap.pinball_id"] < 2e-4
    assert values["gap.calibration_ood"] > 0.001
    # the claim's own OOD pinball pair is a near-tie (seed: 1.8e-5 behind in its run, 1.2e-5 in the authors')
    assert abs(values["gap.pinball_ood"]) < 5e-5
    res = results_for(record)
    assert [k["n_intervals"] for k in res.knots] == [2, 3, 4, 5, 6]
    # the asserted orderings only (none on OOD pinball), each holding at every knot count tried
    assert [o["title"] for o in res.orderings] == [t.title for t in record.targets if t.quantity.startswith("gap.")]
    assert all(o["knots"] == len(res.knots) for o in res.orderings)


def test_controls_break(record, values):
    c = {row.id: row for row in record.controls}
    assert c["slope_removed"].reimpl.broke is True and c["shuffled_compute"].reimpl.broke is True
    ctl = record.arms.reimpl.controls
    # UPSTREAM.md: a genuine beta = 0 fit has OOD calibration 0.0246 (four decimals)
    assert ctl["slope_removed"].values["calibration_ood.sigmoid"] == pytest.approx(0.0246, abs=5e-5)
    # Seed: the ID advantage over the Constant is 1.27e-03 and falls to 1.79e-04 under shuffled z
    # (0.14x; another permutation stream here, so the shuffled value is only required to be < 0.3x)
    assert values["advantage.id"] == pytest.approx(1.27e-3, abs=5e-6)
    assert ctl["shuffled_compute"].values["advantage.id"] < 0.3 * values["advantage.id"]


def test_report_sections(record):
    md = render_report(record)
    assert md.startswith("# Post-training capability boundaries are modeled as sigmoid")
    assert "**Verdict: [not reproduced](README.md#verdicts).**" in md
    assert "| ordering | required | mine | authors' code | paper | holds | pairs | knot counts |" in md
    box = results_for(record).box
    # inside the authors' box every sigmoid cell holds, the OOD pinball cell the free fit misses among them
    assert box["rescued"] == ["Sigmoid, OOD pinball"] and all(r["within"] is not False for r in box["rows"])


def test_report_with_an_authors_arm_shows_the_box_removing_the_difference(record, simulated_authors_arm):
    rec = simulated_authors_arm(record, CLAIM)
    # a headline met by the authors' code (here: the boxed values) but not by the paper's model
    assert rec.verdict.verdict == "partially reproduced"
    assert rec.verdict.reasons[0].state == "rescued_by_authors"
    rows = results_for(rec).box["rows"]
    assert [b["removed"] for b in rows] == [1.0] * len(rows)  # the authors' values are the boxed ones
    assert "| Sigmoid, OOD pinball |" in render_report(rec)


@pytest.mark.slow  # a second whole run of the slowest claim; `make test` checks the same of 000 and 002
def test_two_runs_give_byte_identical_records(record, tables):
    again = run_claim(CLAIM, tables, upstream_options=None).record
    assert record_json(again) == record_json(record)
