"""Claim 004 (τ, κ, λ) end to end on the real table, re-implementation arm and audit."""

from pathlib import Path

import pytest
import yaml

from harness.render import render_report
from harness.runner import run_claim
from harness.upstream import UpstreamError, verify_checkout

ROOT = Path(__file__).resolve().parents[2]
CLAIM = ROOT / "claims" / "004_hyperparameters.yaml"


@pytest.fixture(scope="module")
def record(tables):
    return run_claim(CLAIM, tables, upstream_options=None)


def test_only_the_claimed_triple_gives_table1(record):
    v = record["arms"]["reimpl"]["values"]
    # Paper Table 1 at three decimals; the claimed setting must come back within 0.001
    # (in fact within 0.0005, see claim 002), every other probed setting must not.
    assert v["claimed.max_dev"] <= 0.0005
    assert v["others.min_max_dev"] > 0.001
    assert v["n_within"] == 1


def test_loss_checks(record):
    v = record["arms"]["reimpl"]["values"]
    assert v["loss.literal_max_gap"] < 1e-12  # identical up to rounding
    assert v["loss.sharp_sup_gap"] == pytest.approx(0.6931471805599453 / 50, rel=1e-12)  # log(2)/kappa


def test_coverage_follows_tau_and_median_control_breaks(record):
    v = record["arms"]["reimpl"]["values"]
    # UPSTREAM.md: mean empirical coverage 0.9940 at the claimed values.
    assert v["claimed.coverage_mean"] == pytest.approx(0.9940, abs=5e-4)
    assert v["sweep.tau=0.5.coverage_mean"] == pytest.approx(0.5, abs=0.05)
    assert record["controls"][0]["broke"] is True


def test_audit_and_verdict(record):
    error = record["arms"]["reimpl"]["details"]["audit"].get("error")
    if error:
        # Without the checkout the audit target is unmeasured: the verdict must say so.
        assert "audit.n_failed" not in record["arms"]["reimpl"]["values"]
        assert record["verdict"] == "inconclusive"
        pytest.skip(f"the pinned checkout was not available, so the audit did not run: {error}")
    assert record["arms"]["reimpl"]["values"]["audit.n_failed"] == 0
    assert record["verdict"] == "reproduced"
    assert "## 2. The constants in the authors' code" in render_report(record)


def test_changing_one_expected_constant_fails_the_audit(tmp_path, tables):
    try:
        verify_checkout("prescriptive-scaling")
    except UpstreamError as exc:
        pytest.skip(f"needs the pinned checkout: {exc}")
    raw = yaml.safe_load(CLAIM.read_text(encoding="utf-8"))
    raw["params"]["source_audit"][0]["expect"] = "DEFAULT_LAMBDA_B: float = 1e-2"
    # Keep the run short: the sweep is not what this test is about.
    raw["params"].update(tau_grid=[0.98], kappa_grid=[50.0], lam_grid=[0.001], loss_grid_points=1001)
    raw["targets"] = [t for t in raw["targets"] if t["quantity"] != "others.min_max_dev"]
    path = tmp_path / "004_changed.yaml"
    path.write_text(yaml.safe_dump(raw, allow_unicode=True, sort_keys=False), encoding="utf-8")
    rec = run_claim(path, tables, upstream_options=None)
    assert rec["arms"]["reimpl"]["values"]["audit.n_failed"] == 1
    assert rec["verdict"] == "not reproduced"
    assert "cited source lines" in rec["verdict_reasons"][0]
