"""The side-by-side benchmark runs both checkouts' cases and prints what it promises."""

import re

import pytest

from benchmarks.side_by_side import side_by_side
from harness.core.paths import PROJECT_ROOT


@pytest.mark.slow  # two processes that each load the tables and build a fit case: about 5 s
def test_a_checkout_against_itself_and_a_case_neither_has():
    lines = side_by_side(PROJECT_ROOT, ["sigmoid fit (warm-up), MUSR", "no such case"], rounds=2)
    assert lines[0].startswith(f"side by side: baseline {PROJECT_ROOT} | this {PROJECT_ROOT}; median of 2 calls")
    assert re.fullmatch(
        r"sigmoid fit \(warm-up\), MUSR: baseline [\d.]+ ms wall \([\d.]+ CPU\) \| this [\d.]+ ms wall "
        r"\([\d.]+ CPU\) \| baseline / this [\d.]+x wall, [\d.]+x CPU",
        lines[1],
    )
    assert lines[2] == "no such case: not on baseline and this"
    assert re.fullmatch(r"load [\d.]+ [\d.]+ [\d.]+", lines[3])
