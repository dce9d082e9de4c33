"""Claim 000 (AIME-2025 shift test) end to end on the real exports, re-implementation arm."""

from pathlib import Path

import pytest

from harness.build.runner import run_claim
from harness.core.record import record_json
from harness.rendering.render import render_report
from harness.rendering.results import results_for

pytestmark = pytest.mark.e2e

CLAIM = Path(__file__).resolve().parents[2] / "claims" / "000_aime2025_shift_test.yaml"


@pytest.fixture(scope="module")
def record(run_once):
    return run_once("000").record


def test_regression_matches_the_authors_numbers(record):
    v = record.arms.reimpl.values
    # ../shared/UPSTREAM.md, "Claim 000": the authors' code gives these to 4 decimals; the
    # OLS part is deterministic, so ours must agree to rounding of the 4th decimal (5e-5).
    assert v["n_merged"] == 115 and v["n_support"] == 90 and (v["n_pre"], v["n_post"]) == (28, 62)
    for key, expected in {"gamma": 0.5757, "se": 0.3261, "t": 1.7652, "slope": 1.3557, "r2": 0.5289}.items():
        assert v[key] == pytest.approx(expected, abs=5e-5), key


def test_p_value_near_the_paper_and_not_significant(record):
    v = record.arms.reimpl.values
    # Paper: p = 0.15. Our permutation stream differs from the authors' (0.1484); with
    # 2000 permutations the Monte Carlo s.e. is about 0.008, so 0.02 is 2.5 s.e.
    assert v["p_value"] == pytest.approx(0.15, abs=0.02)
    assert v["p_value"] > 0.05 and v["gamma"] > 0
    assert record.verdict.verdict == "reproduced"


def test_controls_break(record):
    c = {row.id: row for row in record.controls}
    assert c["synthetic_inflation"].reimpl.broke and c["random_groups"].reimpl.broke
    infl = record.arms.reimpl.controls["synthetic_inflation"].values
    # The control asks for detection (p below 0.05), not for the rise of gamma, which is the planted
    # shift by algebra (OLS is linear in y and the support depends on x only).
    assert infl["gamma"] - record.arms.reimpl.values["gamma"] == pytest.approx(0.8, abs=1e-9)
    assert infl["p_value"] == pytest.approx(1 / 2001)
    assert results_for(record).planted["synthetic_inflation"]["decision"] == "below"


def test_power_is_measured_on_the_claims_design(record):
    r = results_for(record)
    pw, R = r.power, r.power["n_replicates"]
    # Measured on the claim's own design (harness.stats.power): at the observed gamma (0.58) the test
    # detects a shift of that size only about half the time; issue 38's 2,000-data-set run of the harness's
    # function gave 0.58 and size 5.5%. At 2,000 data sets the s.e. is about 0.011 and 0.005.
    assert R >= 2000 and pw["at_observed_se"] == pytest.approx((pw["at_observed"] * (1 - pw["at_observed"]) / R) ** 0.5)
    assert pw["state"] == "underpowered" and pw["at_observed"] == pytest.approx(0.56, abs=0.05)
    size = r.power_rows[0]
    assert size["shift"] == 0 and abs(size["power"] - 0.05) <= 3 * (0.05 * 0.95 / R) ** 0.5, size
    assert 0.8 < pw["min_detectable"]["shift"] < 1.2


def test_the_gamma_interval_is_the_test_inverted_and_covers_on_the_claims_design(record):
    """The 90% interval for γ (the stratified permutation test inverted, alpha = 0.05 each side) holds 0 because
    the test does not reject, and in the power study's data sets drawn from the fitted Equation 3 at the
    observed γ it covers that γ at its nominal level, within three Monte Carlo standard errors (issue 38: about
    90% at 2,000 data sets)."""
    r = results_for(record)
    v = record.arms.reimpl.values
    assert not r.interval["excludes_zero"] and v["gamma_lo"] < 0 < v["gamma"] < v["gamma_hi"]
    assert r.interval["level"] == pytest.approx(0.9)
    se = (0.9 * 0.1 / r.power["n_replicates"]) ** 0.5
    assert abs(r.power["coverage"] - 0.9) <= 3 * se, r.power["coverage"]


def test_every_permutation_p_value_carries_its_monte_carlo_error_and_a_decided_side(record):
    """Issue 37, kind 4: 0.1429 from 2000 permutations has s.e. sqrt(p (1 - p) / 2000) = 0.0078, 12 of them above
    0.05; the 100,000-permutation limit 0.1316 (s.e. 0.0011) is above too; the t-test alone is below."""
    rows = {row["source"]: row for row in results_for(record).p_values}
    assert rows["run"]["mc_se"] == pytest.approx(0.0078, abs=1e-4) and rows["run"]["decision"] == "above"
    assert rows["precise"]["n_perm"] == 100_000 and rows["precise"]["decision"] == "above"
    # far from alpha: decided on the first batch, no permutation drawn beyond the claim's
    assert record.arms.reimpl.details["permutations"]["run"]["n_perm"] == 2000 and rows["run"]["refined_from"] is None
    assert rows["t_test"]["decision"] == "below" and results_for(record).tests_differ


def test_the_multiverse_counts_analysis_choices_and_tests_the_curve_under_the_null(record):
    """The cutoff is an estimand: shown apart, not counted. Across the analysis choices (bins, clip) the claim
    holds; the curve as a whole shows no shift beyond its null (the independent check in issue 27 found p above
    alpha at every bin count)."""
    f = results_for(record).multiverse
    assert f["state"] == "holds_across_choices" and f["fails"] == 0
    assert {n for s in record.multiverse.specifications if s.estimand for n in s.choices} == {"cutoff"}
    assert not any("cutoff" in s.choices for s in record.multiverse.specifications if not s.estimand)
    j = f["joint_null"]
    assert j["n_datasets"] == 200 and j["median_p"] > 0.05 and j["significant_p"] > 0.05


def test_each_specification_of_a_null_claim_reports_its_power(record):
    """A not-significant test says little where it cannot detect the shift: every specification measures its power
    at its own γ (issue 38). On this design it stays near the claim's own 55% (about 0.47 to 0.59 when written;
    tolerance: the Monte Carlo s.e. of 400 data sets, 0.025, and a margin for the specifications' γ)."""
    specs = [s for s in record.multiverse.specifications if s.status == "ok"]
    power = [s.values["power.at_observed"] for s in specs]
    assert all(0.3 < p < 0.75 for p in power), power
    [reported] = results_for(record).multiverse["reported"]
    assert reported["quantity"] == "power.at_observed" and reported["lo"] <= reported["hi"]


def test_eps_sensitivity_and_null_centre_are_reported(record):
    rows = record.arms.reimpl.details["eps_sensitivity"]
    assert [r["eps"] for r in rows] == [1e-6, 1e-4, 1e-3, 1e-2]
    # UPSTREAM.md: gamma 0.58 at 1e-6, 0.31 at 1e-2 (one in-support model scores AIME = 0).
    assert rows[0]["gamma"] == pytest.approx(0.58, abs=0.005) and rows[-1]["gamma"] == pytest.approx(0.31, abs=0.01)
    # UPSTREAM.md: the within-bin permutation null is centred near +0.29.
    assert record.arms.reimpl.values["null_mean"] == pytest.approx(0.29, abs=0.03)
    r = results_for(record)
    assert r.eps_reading == "same" and {e["decision"] for e in r.eps_rows} == {"above"}
    assert r.mine_details["n_bins_used"] == 10 and record.verdict.verdict == "reproduced"


def test_same_seed_same_record(record, tables):
    again = run_claim(CLAIM, tables, upstream_options=None).record
    assert record_json(again) == record_json(record)
    assert render_report(again) == render_report(record)


def test_a_column_the_claim_names_but_the_table_lacks_is_a_clear_error(tmp_path, tables):
    import yaml

    from harness.core.errors import SpecError

    raw = yaml.safe_load(CLAIM.read_text(encoding="utf-8"))
    raw["params"]["y_col"] = "aime_2025_percent"
    raw["id"] = "000_bad_column"
    bad = tmp_path / "000_bad_column.yaml"
    bad.write_text(yaml.safe_dump(raw, allow_unicode=True, sort_keys=False), encoding="utf-8")
    with pytest.raises(SpecError, match="aime_2025_percent") as info:
        run_claim(bad, tables, upstream_options=None)
    assert "params.y_col: column 'aime_2025_percent' is not in table 'aa_aime2025'" in str(info.value)
    assert "did you mean 'aime_2025_pct'" in str(info.value)
