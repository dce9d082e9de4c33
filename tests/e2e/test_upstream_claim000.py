"""Claim 000 (AIME-2025 shift test) from the authors' code at the pinned commit.

Reference values: /work/shared/UPSTREAM.md ("Claim 000"), measured by running
the authors' ``_contamination_test_logit_to_logit`` at commit 5bdca77 after
the merge their ``main()`` does; printed there to 4 decimals. Tolerance 1e-4:
the rounding (at most 5e-5) with room to spare; their test is seeded (seed 0)
and reruns are byte-identical.

Runs the authors' code for real in a fresh cache (about 4 s).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from harness.authors.checkout import load_pins, verified_tree
from harness.authors.upstream import UpstreamOptions, run_upstream_arm
from harness.claimfiles.spec import load_claim

pytestmark = [pytest.mark.upstream, pytest.mark.e2e]

CLAIM = Path(__file__).resolve().parents[2] / "claims" / "000_aime2025_shift_test.yaml"
TOL = 1e-4
AUTHORS = {"gamma": 0.5757, "se": 0.3261, "t": 1.7652, "p_value": 0.1484, "slope": 1.3557, "r2": 0.5289}
COUNTS = {"n_merged": 115, "n_support": 90, "n_pre": 28, "n_post": 62}


@pytest.fixture(scope="module")
def claim():
    return load_claim(CLAIM)


@pytest.fixture(scope="module")
def setup(claim, tables):
    protocol = claim.protocol
    return protocol, claim.params


@pytest.fixture(scope="module")
def result(claim, setup, checkout_dir, tables, tmp_path_factory):
    protocol, params = setup
    options = UpstreamOptions(cache_dir=tmp_path_factory.mktemp("upstream-cache"))
    out = run_upstream_arm(claim, protocol, params, tables, options=options)
    assert out.status == "ok", out.reason
    return out


def test_the_run_is_the_pinned_code_not_a_cache(result, claim, checkout_dir):
    assert result.cached is False and result.commit == load_pins()[claim.upstream].commit
    verified_tree(claim.upstream)  # running the authors' code left the checkout clean


def test_authors_values(result):
    got = result.values
    for name, want in AUTHORS.items():
        assert got[name] == pytest.approx(want, abs=TOL), name
    for name, want in COUNTS.items():
        assert got[name] == want, name
    assert got["odds_ratio"] == pytest.approx(math.exp(got["gamma"]), rel=1e-12)
    assert got["upper95"] == pytest.approx(got["gamma"] + 1.6448536269514722 * got["se"], rel=1e-12)
    assert got["null_mean"] == pytest.approx(0.29, abs=0.01)  # UPSTREAM.md: the null is centred near +0.29


def test_value_names_are_the_protocols(result, claim, setup, tables):
    """Targets and controls must evaluate on both arms: the authors' names are the harness arm's.

    The harness arm may have more (e.g. ``*_precise``, re-implementation only);
    every quantity a target or a control's ``must`` reads is on both.
    """
    protocol, params = setup
    # the names do not depend on the permutation counts; keep the harness arm cheap
    cheap = {k: v for k, v in {"n_perm": 50, "n_perm_precise": 0}.items() if k in type(params).model_fields}
    params = params.model_copy(update=cheap)
    mine = protocol.measure(params, tables, np.random.default_rng(claim.seed))
    assert set(result.values) <= set(mine.values)
    assert {t.quantity for t in claim.targets} <= set(result.values)
    for c in claim.controls:
        cparams = protocol.controls[c.control].model_validate(c.params)
        ctl = protocol.control(c.control, cparams, params, tables, np.random.default_rng(claim.seed), mine)
        assert set(result.controls[c.id]["values"]) == set(ctl.values), c.id
        assert {q for m in c.must for q in m.quantities} <= set(result.controls[c.id]["values"]), c.id


def test_controls(result, claim):
    by_kind = {c.control: c for c in claim.controls}
    infl = result.controls[by_kind["inflate_post"].id]
    shift = by_kind["inflate_post"].params["shift"]
    assert infl["values"]["gamma"] - result.values["gamma"] == pytest.approx(shift, abs=1e-9)  # OLS is linear in y
    assert infl["values"]["p_value"] == pytest.approx(1 / 2001)
    assert infl["details"]["realized_shift"]["n_clipped"] == 0
    assert infl["details"]["realized_shift"]["max_abs_error"] < 1e-9
    relabel = result.controls[by_kind["relabel_groups"].id]
    assert abs(relabel["values"]["gamma_mean"]) < 0.15
    assert relabel["details"]["n_draws"] == by_kind["relabel_groups"].params["n_draws"]


def test_eps_sensitivity(result, setup):
    _, params = setup
    rows = {r["eps"]: r for r in result.details["eps_sensitivity"]}
    assert sorted(rows) == sorted(params.eps_grid)
    assert rows[1e-6]["gamma"] == pytest.approx(result.values["gamma"], abs=0)
    assert rows[1e-2]["gamma"] == pytest.approx(0.3047, abs=TOL)  # one in-support model scores AIME = 0
    assert all(abs(r["p_value"] - rows[1e-6]["p_value"]) < 0.01 for r in rows.values())
