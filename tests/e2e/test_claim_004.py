"""Claim 004 (τ, κ, λ) end to end on the real table: the sweeps (both arms) and the checks of the authors' code.

The checks of the authors' code (cited source lines, their loss function) are made in their arm, so the tests
that need them run the authors' arm from the pinned checkout (skipped, with the reason, where it cannot be had).
"""

from pathlib import Path

import pytest
import yaml
from claimset import slow_marks

from harness.authors.checkout import verified_tree
from harness.authors.upstream import UpstreamOptions
from harness.build.runner import run_claim
from harness.core.errors import UpstreamError
from harness.rendering.render import render_report
from harness.rendering.results import results_for

# a whole run of a heavy claim (tests/claimset.py): in `make test-all` (CI), not in `make test`
pytestmark = [pytest.mark.e2e, *slow_marks("004")]

ROOT = Path(__file__).resolve().parents[2]
CLAIM = ROOT / "claims" / "004_hyperparameters.yaml"


@pytest.fixture(scope="module")
def record(run_once):
    return run_once("004").record


@pytest.fixture(scope="module")
def both(run_once):
    return run_once("004", upstream=True).record


def test_only_the_claimed_triple_gives_table1(record):
    v = record.arms.reimpl.values
    # Paper Table 1 at three decimals; the claimed setting must come back within 0.001
    # (in fact within 0.0005, see claim 002), every other probed setting must not.
    assert v["claimed.max_dev"] <= 0.0005
    assert v["others.min_max_dev"] > 0.001
    assert v["others.n_within"] == 0
    r = results_for(record)
    assert r.within_settings == ["the claimed setting"]
    assert min(r.settings[1:], key=lambda s: s["mine"])["setting"] == "λ = 0.01"
    # Section 2.1 prints a sum; the mean with the same lambda is what gives Table 1 (refitted when the claim ran)
    assert r.sum_convention["n"] == 3663 and r.sum_convention["within"] is False


def test_coverage_follows_tau_and_median_control_breaks(record):
    v = record.arms.reimpl.values
    # UPSTREAM.md: mean empirical coverage 0.9940 at the claimed values.
    assert v["claimed.coverage_mean"] == pytest.approx(0.9940, abs=5e-4)
    assert v["sweep.tau=0.5.coverage_mean"] == pytest.approx(0.5, abs=0.05)
    assert record.controls[0].reimpl.broke is True
    # issue 37, kind 9: at tau = 0.98 the curves leave 0.60% of the models above them, not the 2% asked for
    (top,) = [c for c in results_for(record).coverage if c["tau"] == 0.98]
    assert top["above"] == pytest.approx(0.0060, abs=5e-4) and top["ratio"] == pytest.approx(0.30, abs=0.03)


def test_without_the_authors_arm_the_checks_of_their_code_are_unmeasured(record):
    # audit and loss are checks of the authors' code: without their arm they are not measured, so the
    # claim cannot be judged, and the report says why instead of asserting the lines were read.
    assert record.verdict.verdict == "inconclusive"
    (reason,) = record.verdict.reasons
    audit = next(t for t in record.targets if t.quantity == "audit.n_failed")
    assert reason.state == "unmeasured" and audit.title in reason.titles and audit.judged_on == "upstream"
    r = results_for(record)  # without their arm, nothing of their code is stated: no audit, no departure of theirs
    assert r.audit is None and not any(d["last_stage"] or d["all_at_lower"] or d["at_upper"] for d in r.departures)


def test_checks_of_the_authors_code(both):
    u = both.arms.upstream.values
    assert u["audit.n_failed"] == 0 and u["audit.n"] == 11
    assert u["loss.literal_max_gap"] < 1e-12  # their logaddexp form is the printed formula up to rounding
    assert u["loss.sharp_sup_gap"] == pytest.approx(0.6931471805599453 / 50, rel=1e-12)  # log(2)/kappa
    assert both.verdict.verdict == "reproduced"
    r = results_for(both)
    assert r.within_settings == ["the claimed setting"]
    # issue 37, kind 12: each line counted for what it states; 6 of the 11 state a value of the triple
    counts = {a["constant"]: a["n_found"] for a in r.audit["by_constant"]}
    assert counts["κ = 50"] == 3 and sum(counts[c] for c in ("λ = 1e-3", "τ = 0.98", "τ = 0.98 (CLI)")) == 3
    md = " ".join(render_report(both).split())
    assert "| κ = 50 | 3 | 3 |" in md and "state the triple" not in md  # golden prose
    # the authors' kappa = 10 row is a kappa = 25 fit: their trace says so beside the gap
    (k10,) = [d for d in r.departures if d["setting"] == "κ = 10"]
    assert k10["last_stage"] == [0.98, 25.0]


def _short(raw):
    # Keep the run short: the sweep is not what these tests are about.
    raw["params"].update(tau_grid=[0.98, 0.9], kappa_grid=[50.0], lam_grid=[0.001])
    raw["targets"] = [t for t in raw["targets"] if t["quantity"] != "others.min_max_dev"]
    return raw


def test_changing_one_expected_constant_fails_the_audit(tmp_path, tables):
    try:
        verified_tree("prescriptive-scaling")
    except UpstreamError as exc:
        pytest.skip(f"needs the pinned checkout: {exc}")
    raw = _short(yaml.safe_load(CLAIM.read_text(encoding="utf-8")))
    raw["params"]["source_audit"][0]["expect"] = "DEFAULT_LAMBDA_B: float = 1e-2"
    raw["id"] = "004_changed"
    path = tmp_path / "004_changed.yaml"
    path.write_text(yaml.safe_dump(raw, allow_unicode=True, sort_keys=False), encoding="utf-8")
    rec = run_claim(path, tables, upstream_options=UpstreamOptions(cache_dir=tmp_path / "cache")).record
    assert rec.arms.upstream.values["audit.n_failed"] == 1
    assert rec.verdict.verdict == "not reproduced"
    failed = [e for e in rec.arms.upstream.details["audit"]["entries"] if not e["found"]]
    assert [(e["file"], e["line"]) for e in failed] == [("skill_frontier/core/sigmoid.py", 63)]
    assert "| `skill_frontier/core/sigmoid.py:63` |" in render_report(rec)
