"""Claim 001 (non-stationary boundaries, Figure 2) end to end on the real table, re-implementation arm.

Expected values come from the reference report ../shared/seeds/001_faf120360fa20474.txt
(four decimals, so half a unit is 5e-5) and ../shared/UPSTREAM.md ("Claims 001 and 003").
Both were produced by the authors' fitter, which keeps the sigmoid's midpoint inside the
training z range; where the paper's unconstrained model (the re-implementation) differs,
the comparison is made on the re-implementation's boxed refit (values ``boxed.*``).
"""

from pathlib import Path

import numpy as np
import pytest

from harness.build.runner import run_claim
from harness.core.record import record_json
from harness.rendering.render import render_report
from harness.rendering.results import results_for

pytestmark = pytest.mark.e2e

CLAIM = Path(__file__).resolve().parents[2] / "claims" / "001_nonstationary_boundaries.yaml"
LABELS = ["IFEval", "BBH", "MATH Lvl 5", "GPQA", "MUSR", "MMLU-Pro"]

# Seed 001, "Out-of-period coverage" and "Per-split detail" tables (four decimals printed).
SEED_SIGNED = {
    "IFEval": -0.0184,
    "BBH": 0.0124,
    "MATH Lvl 5": -0.0311,
    "GPQA": 0.0171,
    "MUSR": 0.0154,
    "MMLU-Pro": 0.0121,
}
SEED_IN_SAMPLE = {
    "IFEval": 0.0150,
    "BBH": 0.0173,
    "MATH Lvl 5": 0.0060,
    "GPQA": 0.0193,
    "MUSR": 0.0179,
    "MMLU-Pro": 0.0162,
}
SEED_SHARE = {
    "IFEval": 0.0256,
    "BBH": 0.0084,
    "MATH Lvl 5": 0.0482,
    "GPQA": 0.0038,
    "MUSR": 0.0050,
    "MMLU-Pro": 0.0061,
}  # printed as percentages with two decimals
SEED_SPLITS = {
    "IFEval": (-0.0665, -0.0079, 0.0192),
    "BBH": (0.0137, 0.0155, 0.0080),
    "MATH Lvl 5": (-0.0496, -0.0123, -0.0314),
    "GPQA": (0.0200, 0.0178, 0.0136),
    "MUSR": (0.0158, 0.0178, 0.0128),
    "MMLU-Pro": (0.0052, 0.0144, 0.0168),
}
HALF_UNIT = 5e-5


@pytest.fixture(scope="module")
def record(run_once):
    return run_once("001").record


@pytest.fixture(scope="module")
def values(record):
    return record.arms.reimpl.values


def test_verdict_and_split_sizes(record, values):
    # the exceedance tests, supporting, fail once base models are clusters; every headline sign holds
    assert record.verdict.verdict == "partially reproduced", record.verdict.reasons
    failed = [t.title for t in record.targets if t.reimpl.holds is False]
    assert failed == ["MATH Lvl 5 exceedances beyond 2% (p < 0.05)", "IFEval exceedances beyond 2% (p < 0.05)"]
    assert record.arms.upstream.status == "not run"
    # UPSTREAM.md: 474, 897 and 1245 validation models inside the overlap; 613/482/897/1245 per period
    assert [values[f"n_validation.split{t}"] for t in (1, 2, 3)] == [474, 897, 1245]
    assert [p["rows"] for p in record.data["periods"]] == [613, 482, 897, 1245]


def test_clustered_exceedance_test_matches_an_independent_computation(values):
    # issue 38, item 7 (a referee's own code): design effect 22.9 and cluster-robust p 0.078 for MATH, 0.22 for
    # IFEval, against exact binomial p 6.6e-19 and 0.027 (two significant digits; half a unit of the last)
    assert values["design_effect.MATH Lvl 5"] == pytest.approx(22.9, abs=0.05)
    assert values["cluster_p.MATH Lvl 5"] == pytest.approx(0.078, abs=0.0005)
    assert values["cluster_p.IFEval"] == pytest.approx(0.22, abs=0.005)
    assert values["binomial_p.MATH Lvl 5"] == pytest.approx(6.6e-19, rel=0.01)
    assert values["binomial_p.IFEval"] == pytest.approx(0.027, abs=0.0005)


def test_boxed_refit_matches_the_seed_to_rounding(values):
    for label in LABELS:
        assert values[f"boxed.signed_coverage.{label}"] == pytest.approx(SEED_SIGNED[label], abs=HALF_UNIT), label
        assert values[f"boxed.in_sample.{label}"] == pytest.approx(SEED_IN_SAMPLE[label], abs=HALF_UNIT), label
        assert values[f"boxed.share_above.{label}"] == pytest.approx(SEED_SHARE[label], abs=HALF_UNIT), label
        for t, expected in enumerate(SEED_SPLITS[label], start=1):
            assert values[f"boxed.split{t}.{label}"] == pytest.approx(expected, abs=HALF_UNIT), (label, t)
    # Seed: separation +0.0390, drift group -0.0248 (the summary's -0.0248), stable +0.0143
    assert values["boxed.separation"] == pytest.approx(0.0390, abs=HALF_UNIT)
    assert values["boxed.group.drift"] == pytest.approx(-0.0248, abs=HALF_UNIT)
    assert values["boxed.group.stable"] == pytest.approx(0.0143, abs=HALF_UNIT)
    # Seed: MATH p = 1.67e-18, IFEval p = 2.73e-02 (three significant figures)
    assert values["boxed.binomial_p.MATH Lvl 5"] == pytest.approx(1.67e-18, rel=0.005)
    assert values["boxed.binomial_p.IFEval"] == pytest.approx(2.73e-2, rel=0.005)


def test_unconstrained_fit_differs_only_where_the_box_binds(record, values):
    # The free fit of MATH on split 1 has its midpoint beyond the training range; every other
    # split's coverage is the seed's to rounding, and MATH's mean moves by less than 0.001.
    for label in LABELS:
        for t, expected in enumerate(SEED_SPLITS[label], start=1):
            if (label, t) != ("MATH Lvl 5", 1):
                assert values[f"split{t}.{label}"] == pytest.approx(expected, abs=HALF_UNIT), (label, t)
    assert values["signed_coverage.MATH Lvl 5"] == pytest.approx(SEED_SIGNED["MATH Lvl 5"], abs=0.001)
    outside = {(o["task"], o["t"]) for o in record.arms.reimpl.details["outside_box"]}
    assert ("MATH Lvl 5", 1) in outside
    # the headline relations hold for both fits
    for prefix in ("", "boxed."):
        assert values[f"{prefix}signed_coverage.MATH Lvl 5"] < 0 and values[f"{prefix}signed_coverage.IFEval"] < 0
        assert all(values[f"{prefix}signed_coverage.{k}"] > 0 for k in ("BBH", "GPQA", "MUSR", "MMLU-Pro"))


def test_the_contrast_of_coverage_drops_is_the_signed_contrast_less_the_in_sample_one(values):
    drift, stable = ("IFEval", "MATH Lvl 5"), ("BBH", "GPQA", "MUSR", "MMLU-Pro")
    gap = np.mean([values[f"in_sample.{k}"] for k in stable]) - np.mean([values[f"in_sample.{k}"] for k in drift])
    assert values["drop_separation"] == pytest.approx(values["separation"] - gap, abs=1e-12)
    assert 0.01 < values["drop_separation"] < values["separation"]  # the in-sample gap is the smoothing's share


def test_bin_averaged_variant(values):
    # UPSTREAM.md: the paper's figure averages over bins, MATH -0.020 rather than -0.031 (three decimals)
    assert values["boxed.bin_averaged.MATH Lvl 5"] == pytest.approx(-0.020, abs=0.0005)
    assert values["bin_averaged.MATH Lvl 5"] == pytest.approx(-0.020, abs=0.0005)
    assert values["bin_averaged.separation"] > 0.01


def test_relabelling_control_breaks(record, values):
    (ctl,) = record.controls
    assert ctl.id == "shuffled_time" and ctl.reimpl.broke is True
    moved = record.arms.reimpl.controls["shuffled_time"].values
    # Seed: with shuffled periods the separation collapses to +0.0091 and MATH reads +0.0030 (five
    # relabellings, another permutation stream): require a collapse to under 0.015 and MATH >= 0.
    assert abs(moved["separation"]) < 0.015 < values["separation"]
    assert moved["signed_coverage.MATH Lvl 5"] > 0


def test_report_sections_and_the_facts_it_rests_on(record):
    md = render_report(record)
    assert md.startswith("# Unlike the stable boundaries")
    assert "**Verdict: [partially reproduced](README.md#verdicts).**" in md
    for section in ("## Setup", "## Result", "## Limitations", "<summary>Provenance</summary>"):
        assert section in md, section
    r = results_for(record)
    assert r.bin_changed == []  # every target holds over bins as over models
    (ifeval,) = r.carried  # split 1 alone carries IFEval's negative mean; MATH is below zero on every split
    assert (ifeval["label"], ifeval["t"]) == ("IFEval", 1) and ifeval["rest"] > 0
    assert all(x < 0 for row in r.rows if row["label"] == "MATH Lvl 5" for x in row["by_split"])
    assert r.relabelled[0]["below_zero"] == []
    # UPSTREAM.md: 474 + 897 + 1245 later models; the count of their base models is the table's
    d = record.data
    assert d["later_models"] == 2616 and 1 < d["later_base_models"] < d["later_with_base_model"] <= 2616
    assert "IFEval's mean is below zero only through split 1" in md  # golden prose: the limitation
    assert render_report(record) == md


def test_report_with_an_authors_arm_names_what_the_box_explains(record, simulated_authors_arm):
    simulated = simulated_authors_arm(record, CLAIM)
    r = results_for(simulated)
    assert r.arm_gaps and r.box_unexplained == []  # the box explains every difference between the arms
    assert ("MATH Lvl 5", 1) in {(o["task"], o["t"]) for o in r.outside_box}
    md = render_report(simulated)
    assert "the re-implementation gives the authors' values" in " ".join(md.split())


@pytest.mark.slow  # two more whole runs; `make test` checks the same of 000 and 002 (and -j 2 = -j 1)
def test_same_report_on_a_second_run_and_serially(record, tables):
    from harness.parallel.fanout import SERIAL, using

    with using(SERIAL):
        again = run_claim(CLAIM, tables, upstream_options=None).record
    assert again.arms.reimpl == record.arms.reimpl
    assert record_json(run_claim(CLAIM, tables, upstream_options=None).record) == record_json(record)
