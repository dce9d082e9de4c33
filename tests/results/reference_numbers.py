"""Print the reference numbers of ``reference_numbers.yaml`` beside what the committed run records hold.

    python tests/results/reference_numbers.py

Each entry with ``check_against: "<claim id>:<path of keys>"`` is read from ``reports/<claim id>.json``
(a key ``a\\.b`` holds a dot); the tests (``tests/unit/test_reference_numbers.py``) require the two to agree
within the entry's tolerance, so that a reference number cannot drift from the run that stands behind it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
REPORTS = HERE.parents[1] / "reports"


def load() -> dict[str, dict]:
    """``{"group.name": entry}`` for every reference number."""
    raw = yaml.safe_load((HERE / "reference_numbers.yaml").read_text(encoding="utf-8"))
    return {f"{group}.{name}": entry for group, entries in raw.items() for name, entry in entries.items()}


def recorded(where: str):
    """The number at ``"<claim id>:<path>"`` in the committed record (``None`` when it is not there)."""
    claim, _, path = where.partition(":")
    node = json.loads((REPORTS / f"{claim}.json").read_text(encoding="utf-8"))
    for key in re.split(r"(?<!\\)\.", path):
        key = key.replace("\\.", ".")
        if isinstance(node, list):
            node = node[int(key)] if key.isdigit() and int(key) < len(node) else None
        elif isinstance(node, dict):
            node = node.get(key)
        if node is None:
            return None
    return node


if __name__ == "__main__":
    for name, e in load().items():
        where = e.get("check_against")
        got = recorded(where) if where else None
        print(f"{name:45s} {e['value']!s:>10} ± {e['tolerance']!s:<8} {e['source']:8s} record: {got}")
