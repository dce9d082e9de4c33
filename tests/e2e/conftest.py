"""Fixtures shared by the end-to-end tests of the authors' arm."""

from __future__ import annotations

import pytest

from harness.upstream import UpstreamError, checkout, verify_checkout


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
