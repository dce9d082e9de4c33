"""Fixtures shared by the end-to-end tests of the authors' arm."""

from __future__ import annotations

import copy
import json
import os

import pytest

from harness.protocols import PROTOCOLS, Measurement
from harness.spec import load_claim
from harness.verdict import arm_disagreements, decide_verdict, evaluate_control, evaluate_targets
from harness.upstream import UpstreamError, UpstreamOptions, checkout, run_upstream_arm, verify_checkout


@pytest.fixture(scope="module")
def checkout_dir(claim):
    """The verified pinned checkout of the module's ``claim``, cloned if needed.

    Skips the module, with the reason, when it cannot be had.
    """
    try:
        return verify_checkout(claim.upstream)
    except UpstreamError as not_ready:
        try:
            return checkout(claim.upstream)
        except UpstreamError as exc:
            pytest.skip(f"the authors' checkout cannot be had: {exc} (verify_checkout said: {not_ready})")


@pytest.fixture(scope="module")
def params(claim):
    return PROTOCOLS[claim.protocol].Params.model_validate(claim.params)


@pytest.fixture(scope="module")
def result(claim, params, checkout_dir, tables, tmp_path_factory):
    """The authors' arm for the module's claim, from the project cache unless HARNESS_UPSTREAM_COLD=1."""
    cold = os.environ.get("HARNESS_UPSTREAM_COLD") == "1"
    options = UpstreamOptions(cache_dir=tmp_path_factory.mktemp("upstream-cache")) if cold else UpstreamOptions()
    out = run_upstream_arm(claim, PROTOCOLS[claim.protocol], params, tables, options=options)
    assert out["status"] == "ok", out["reason"]
    return out


@pytest.fixture(scope="session")
def simulated_authors_arm():
    """``f(record, claim_path)``: the record as if the authors' code had answered with the
    re-implementation's boxed values (to test how a report shows what the box explains)."""

    def simulate(record: dict, claim_path) -> dict:
        rec = copy.deepcopy(record)
        claim = load_claim(claim_path)
        mine = rec["arms"]["reimpl"]
        theirs = {k: mine["values"].get("boxed." + k, x) for k, x in mine["values"].items()
                  if not k.startswith("boxed.")}
        rec["arms"]["upstream"].update(
            status="ok", reason=None, values=theirs, details={}, commit="0" * 40, url="https://example.invalid/repo",
            controls={c: {"values": m["values"], "details": {}} for c, m in mine["controls"].items()})
        rec["targets"] = evaluate_targets(claim, mine["values"], theirs)
        for row, ctl in zip(rec["controls"], claim.controls):
            row["upstream"] = evaluate_control(ctl, claim, mine["controls"][ctl.id]["values"], theirs)
        rec["disagreements"] = arm_disagreements(claim, rec["targets"])
        rec["explanation"] = PROTOCOLS[claim.protocol].explain(
            None, None, Measurement(mine["values"], mine["details"]), Measurement(theirs, {}))
        rec["verdict"], rec["verdict_reasons"] = decide_verdict(True, rec["targets"], rec["controls"], True,
                                                                rec["disagreements"])
        return json.loads(json.dumps(rec))

    return simulate
