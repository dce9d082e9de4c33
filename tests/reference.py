"""The tests' reference numbers, each with where it came from: ``tests/results/reference_numbers.yaml``."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import yaml

FILE = Path(__file__).resolve().parent / "results" / "reference_numbers.yaml"


@cache
def _all() -> dict:
    return yaml.safe_load(FILE.read_text(encoding="utf-8"))


def reference(name: str) -> tuple[float, float]:
    """``(value, tolerance)`` of ``"group.name"`` (``"shift_test.gamma"``); its source and reason are in the file."""
    group, _, key = name.partition(".")
    e = _all()[group][key]
    return e["value"], e["tolerance"]


def approx(name: str):
    """``pytest.approx`` of a reference number within its stated tolerance."""
    import pytest

    value, tolerance = reference(name)
    return pytest.approx(value, abs=tolerance)
