"""Claim 003 (Table 2: sigmoid vs Constant, Binwise, I-spline) from the authors' code at the pinned commit.

The authors' arm runs their ``scripts/evaluate/sigmoid_pinball_baselines.py``
once (about 15 s), refits the 18 sigmoids for their parameters (8 s) and, for
the controls, computes the loss-minimising constant (instant) and refits their
sigmoid on each z shuffle (about 8 s per shuffle): about 60 s cold on 2 cores
with 5 shuffles. To keep the suite's budget the run goes through the project's
upstream cache (``.cache/upstream``); after ``python -m harness run 003`` it is
a cache read. Set ``HARNESS_UPSTREAM_COLD=1`` to rerun the authors' code in a
fresh cache.

Reference values: the "authors' code" columns of the claim's seed report
(Table 2, printed to 5 decimals: tolerance 1e-5, twice the rounding) and
/work/shared/UPSTREAM.md ("003 estimators and metrics": the beta = 0 control's
OOD calibration 0.0246, printed to 4 decimals: tolerance 1e-4).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.authors.checkout import load_pins, verified_tree
from harness.claimfiles.spec import load_claim

pytestmark = [pytest.mark.upstream, pytest.mark.e2e]

CLAIM = Path(__file__).resolve().parents[2] / "claims" / "003_sigmoid_vs_baselines.yaml"
COLD = os.environ.get("HARNESS_UPSTREAM_COLD") == "1"
TOL = 1e-5
ESTIMATORS = ("constant", "binwise", "ispline", "sigmoid")
METRICS = ("pinball_id", "pinball_ood", "calibration_id", "calibration_ood")
# metric -> authors' values for (constant, binwise, ispline, sigmoid), equal-weight mean over the 18 pairs
AUTHORS = {
    "pinball_id": (0.00535, 0.00401, 0.00400, 0.00408),
    "pinball_ood": (0.00623, 0.00500, 0.00492, 0.00493),
    "calibration_id": (0.04123, 0.01665, 0.01826, 0.01837),
    "calibration_ood": (0.03597, 0.02807, 0.02406, 0.02206),
}


@pytest.fixture(scope="module")
def claim():
    return load_claim(CLAIM)


def _control(claim, kind):
    (c,) = [c for c in claim.controls if c.control == kind]
    return c


def test_the_answer_is_the_pinned_code(result, claim, checkout_dir):
    assert result.commit == load_pins()[claim.upstream].commit
    if COLD:
        assert result.cached is False
    verified_tree(claim.upstream)  # running the authors' code left the checkout clean


def test_value_names(result, claim):
    want = {f"{m}.{e}" for m in METRICS for e in ESTIMATORS}
    want |= {"gap.pinball_id", "gap.pinball_ood", "gap.calibration_ood", "advantage.id"}
    assert set(result.values) == want
    missing = [t.quantity for t in claim.targets if t.quantity not in result.values]
    assert not missing, f"targets the authors' arm does not give: {missing}"
    names = {"beta_zero": {f"{m}.sigmoid" for m in METRICS}, "shuffle_z": {"advantage.id"}}
    for c in claim.controls:
        assert set(result.controls[c.id]["values"]) == names[c.control], c.id


def test_table2_is_the_authors(result):
    v = result.values
    assert result.details["n_pairs"] == 18
    for metric, row in AUTHORS.items():
        for est, want in zip(ESTIMATORS, row):
            assert v[f"{metric}.{est}"] == pytest.approx(want, abs=TOL), f"{metric}.{est}"


def test_gaps_are_arithmetic_of_the_table(result):
    v = result.values
    assert v["gap.pinball_id"] == pytest.approx(v["pinball_id.sigmoid"] - v["pinball_id.ispline"], abs=1e-15)
    assert v["gap.pinball_ood"] == pytest.approx(v["pinball_ood.sigmoid"] - v["pinball_ood.ispline"], abs=1e-15)
    assert v["gap.calibration_ood"] == pytest.approx(
        v["calibration_ood.ispline"] - v["calibration_ood.sigmoid"], abs=1e-15
    )
    assert v["advantage.id"] == pytest.approx(v["pinball_id.constant"] - v["pinball_id.sigmoid"], abs=1e-15)


def test_rebuilt_sets_are_the_scripts(result):
    """Their null rows recomputed on the sets rebuilt with their loaders equal the script's CSVs."""
    check = result.details["check"]
    assert check["null_rows_max_abs_diff"] < 1e-15
    # the script predicts through a 400-point curve interpolated in x, the refit at the exact q(z)
    assert check["sigmoid_exact_vs_interpolated_max_abs_diff"] < 1e-6


def test_sigmoid_box_bounds_are_reported(result):
    """Measured on this data (their code is deterministic): z* sits on an edge of the training z
    range in three pairs, and no fit is on the beta limits (0.05, 50)."""
    d = result.details
    assert d["sigmoid_z_star_at_range_edge"] == ["IFEval t=3", "MATH Lvl 5 t=1", "GPQA t=2"]
    assert d["sigmoid_beta_at_bound"] == []
    for row in d["per_pair"]:
        assert set(row["sigmoid_fit"]["params_native"]) == {"y0", "L", "z_star", "log_b"}


def test_beta_zero_is_the_loss_minimising_constant(result, claim):
    got = result.controls[_control(claim, "beta_zero").id]
    assert got["values"]["calibration_ood.sigmoid"] == pytest.approx(0.0246, abs=1e-4)
    # not the Constant row (the tau-quantile of the training scores)
    assert got["values"]["calibration_ood.sigmoid"] < result.values["calibration_ood.constant"] - 0.01
    for row in got["details"]["per_pair"]:
        assert 0.0 <= row["constant"] <= 1.0


def test_shuffled_z_shrinks_the_advantage(result, claim):
    ctl = _control(claim, "shuffle_z")
    got = result.controls[ctl.id]
    n = claim.control_params[ctl.id].n_shuffles or claim.params.n_shuffles
    assert len(got["details"]["advantage_each"]) == n
    assert 0.0 < got["values"]["advantage.id"] < 0.5 * result.values["advantage.id"]
