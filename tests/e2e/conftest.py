"""Fixtures shared by the end-to-end tests of the authors' arm."""

from __future__ import annotations

import os

import pytest

from harness.protocols import PROTOCOLS
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
