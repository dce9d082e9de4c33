"""Fixtures shared by the end-to-end tests."""

from __future__ import annotations

import pytest

from harness.build.runner import assemble_record
from harness.claimfiles.spec import load_claim
from harness.core.record import Arm, ArmControl


@pytest.fixture(scope="session")
def simulated_authors_arm(tables):
    """``f(record, claim_path)``: the record as if the authors' code had answered with the
    re-implementation's boxed values (to test how a report words what the box explains)."""

    def simulate(record, claim_path):
        spec = load_claim(claim_path)
        mine = record.arms.reimpl
        names = set(spec.vocabulary) - {n for n, q in spec.vocabulary.items() if q.arm != "both"}
        theirs = {k: mine.values.get("boxed." + k, x) for k, x in mine.values.items() if k in names}
        upstream = Arm(
            status="ok",
            values=theirs,
            details={},
            controls={c: ArmControl(values=m.values) for c, m in mine.controls.items()},
        )
        return assemble_record(
            spec, tables, mine, upstream, upstream_source={"url": "https://example.invalid/repo", "commit": "0" * 40}
        )

    return simulate


@pytest.fixture(scope="module")
def checkout_dir(claim):
    """The verified pinned checkout of the module's ``claim``, cloned if needed.

    Skips the module, with the reason, when it cannot be had.
    """
    from harness.authors.checkout import checkout, verified_tree
    from harness.core.errors import UpstreamError

    try:
        return verified_tree(claim.upstream)[0]
    except UpstreamError as not_ready:
        try:
            return checkout(claim.upstream)
        except UpstreamError as exc:
            pytest.skip(f"the authors' checkout cannot be had: {exc} (verified_tree said: {not_ready})")


@pytest.fixture(scope="module")
def params(claim):
    return claim.params


@pytest.fixture(scope="module")
def result(claim, params, checkout_dir, tables, tmp_path_factory):
    """The authors' arm for the module's claim, from the project cache unless HARNESS_UPSTREAM_COLD=1."""
    import os

    from harness.authors.upstream import UpstreamOptions, run_upstream_arm

    cold = os.environ.get("HARNESS_UPSTREAM_COLD") == "1"
    options = UpstreamOptions(cache_dir=tmp_path_factory.mktemp("upstream-cache")) if cold else UpstreamOptions()
    out = run_upstream_arm(claim, claim.protocol, params, tables, options=options)
    assert out.status == "ok", out.reason
    return out
