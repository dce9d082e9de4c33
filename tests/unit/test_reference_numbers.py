"""The tests' reference numbers (``tests/results/``) agree with the committed run records that stand behind
them, within the tolerance each states."""

import importlib.util
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parents[1] / "results" / "reference_numbers.py"
_spec = importlib.util.spec_from_file_location("reference_numbers", HERE)
reference_numbers = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(reference_numbers)

ENTRIES = reference_numbers.load()


def test_every_reference_number_says_where_it_came_from():
    for name, e in ENTRIES.items():
        assert e["source"] in ("authors", "paper", "data"), name
        assert e["reason"] and e["tolerance"] >= 0, name


@pytest.mark.parametrize("name", [n for n, e in ENTRIES.items() if e.get("check_against")])
def test_a_reference_number_matches_its_record(name):
    e = ENTRIES[name]
    got = reference_numbers.recorded(e["check_against"])
    if got is None:
        pytest.skip(f"{e['check_against']} is not in the committed records")
    assert abs(got - e["value"]) <= e["tolerance"] + 1e-12, (name, got)
