"""The facts of ``shift_test``'s report (harness/protocols/shift_test/results.py) on claim 000's record, and on
copies of it edited to reach the states a fresh claim can reach: what its invariants used to check."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from harness.core.record import read_record
from harness.rendering.results import results_for
from harness.stats.permutation import MC_SIDE_SDS, mc_se, p_value_side, side

RECORD = Path(__file__).resolve().parents[2] / "reports" / "000_aime2025_shift_test.json"


@pytest.fixture(scope="module")
def record():
    if not RECORD.exists():
        pytest.skip("claim 000 has not been run")
    return read_record(RECORD)


def _edited(rec, values=None, details=None, params=None, drop=()):
    """``rec`` with the re-implementation's values, details or the claim's params updated (``drop``: values or
    details removed)."""
    values = {k: x for k, x in {**rec.arms.reimpl.values, **(values or {})}.items() if k not in drop}
    details = {k: x for k, x in {**rec.arms.reimpl.details, **(details or {})}.items() if k not in drop}
    arm = rec.arms.reimpl.model_copy(update={"values": values, "details": details})
    claim = rec.claim.model_copy(update={"params": {**rec.claim.params, **(params or {})}})
    return rec.model_copy(update={"arms": rec.arms.model_copy(update={"reimpl": arm}), "claim": claim})


def test_the_decision_is_undecided_within_four_monte_carlo_errors_of_the_level():
    """Issue 37, kind 4: p = 0.051 from 2,000 permutations is 0.2 s.e. (0.0049, of a p-value at 0.05) above 0.05:
    no side; its limit 0.0478 from 200,000 (s.e. 0.00049) lies 4.5 s.e. below: decided."""
    assert mc_se(0.051, 2000) == pytest.approx(math.sqrt(0.051 * 0.949 / 2000)) and MC_SIDE_SDS == 4.0
    assert p_value_side(0.051, 2000, 0.05) == "undecided" and p_value_side(0.0478, 200_000, 0.05) == "below"
    assert p_value_side(0.1429, 2000, 0.05) == "above"
    assert side(0.0501, 0.05, 0.0) == "above" and side(0.0499, 0.05, 0.0) == "below"  # exact: a side


def test_claim_000s_p_values_each_carry_their_error_and_side(record):
    r = results_for(record)
    v, n = record.arms.reimpl.values, record.claim.params["n_perm"]
    rows = {row["source"]: row for row in r.p_values}
    assert rows["run"]["p"] == v["p_value"] and rows["run"]["mc_se"] == pytest.approx(mc_se(v["p_value"], n))
    assert rows["precise"]["p"] == v["p_value_precise"] and rows["precise"]["n_perm"] == 100_000
    assert [row["decision"] for row in r.p_values][-1] == "below"  # the t-test
    assert r.permutation_decision == "above" and r.tests_differ
    assert rows["run"]["null_centre"] == v["null_mean"] and rows["t_test"]["null_centre"] == 0.0


def test_a_p_value_near_the_level_is_undecided_and_the_precise_run_decides(record):
    near = _edited(  # no refinement recorded: each p at its claim's permutations
        record,
        values={"p_value": 0.051, "p_value_precise": 0.0478},
        params={"n_perm_precise": 200_000},
        details={"permutations": {}},
    )
    r = results_for(near)
    rows = {row["source"]: row for row in r.p_values}
    assert rows["run"]["decision"] == "undecided" and rows["precise"]["decision"] == "below"
    assert r.permutation_decision == "below" and r.power["state"] == "rejected"
    alone = results_for(
        _edited(record, values={"p_value": 0.051}, details={"permutations": {}}, drop=("p_value_precise",))
    )
    assert alone.permutation_decision == "undecided" and not alone.tests_differ


def test_a_refined_p_value_says_how_many_permutations_its_decision_took(record):
    """The record's refinement (details.permutations): the row's s.e. and side at the permutations used."""
    used = {"run": {"n_perm": 64_000, "n_perm_ge": 3135, "p_value_mc_se": 0.00085, "decision": "below"}}
    r = results_for(_edited(record, values={"p_value": 0.049}, details={"permutations": used}))
    run = r.p_values[0]
    assert (run["n_perm"], run["refined_from"], run["decision"]) == (64_000, 2000, "undecided")
    assert run["mc_se"] == pytest.approx(mc_se(0.049, 64_000))
    low = results_for(
        _edited(record, values={"p_value": 0.0455}, details={"permutations": used}, drop=("p_value_precise",))
    )
    assert low.p_values[0]["decision"] == "below" and low.permutation_decision == "below"
    assert results_for(record).p_values[0]["refined_from"] is None


def test_the_clip_table_reads_same_crosses_or_undecided(record):
    r = results_for(record)
    assert r.eps_reading == "same" and r.eps_gamma == dict(
        lo=min(e["gamma"] for e in r.eps_rows),
        hi=max(e["gamma"] for e in r.eps_rows),
    )
    rows = [dict(e) for e in record.arms.reimpl.details["eps_sensitivity"]]
    crossing = [{**rows[0], "p_value": 0.01}, *rows[1:]]
    assert results_for(_edited(record, details={"eps_sensitivity": crossing})).eps_reading == "crosses"
    near = [{**rows[0], "p_value": 0.052}, *rows[1:]]
    assert results_for(_edited(record, details={"eps_sensitivity": near})).eps_reading == "undecided"


def test_power_is_read_against_its_target_with_its_error(record):
    r = results_for(record)
    assert r.power["state"] == "underpowered" and r.power["at_observed"] < r.power["target"]
    assert [row["shift"] for row in r.power_rows] == record.claim.params["power"]["shifts"]
    pw = record.arms.reimpl.details["power"]
    at = {**pw["linear"]["at_observed"], "power": 0.79, "mc_se": 0.02}
    close = {**pw, "linear": {**pw["linear"], "at_observed": at}}
    assert results_for(_edited(record, details={"power": close})).power["state"] == "undecided"
    none = _edited(record, drop=("power",))
    assert results_for(none).power is None and results_for(none).power_rows == []


def test_the_interval_is_the_test_inverted(record):
    r, v = results_for(record), record.arms.reimpl.values
    assert (r.interval["lo"], r.interval["hi"]) == (v["gamma_lo"], v["gamma_hi"])
    assert r.interval["level"] == pytest.approx(1 - 2 * record.claim.params["alpha"])
    assert r.interval["excludes_zero"] == (v["gamma_lo"] > 0) == (r.p_values[0]["decision"] == "below")


def test_the_planted_shift_is_detected_with_its_error(record):
    pl = results_for(record).planted["synthetic_inflation"]
    assert pl["decision"] == "below" and pl["p"] == record.arms.reimpl.controls["synthetic_inflation"].values["p_value"]
