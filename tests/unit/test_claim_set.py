"""The tests hold for whatever claims ``claims/`` holds (issue #17 item 1): a scratch copy of the project with two
claim files added (copies of a cheap claim under the next two numbers), and the tests that go over every claim run
there."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: The tests whose expectations are derived from the claim set (each goes over every claim in claims/).
CLAIM_SET_TESTS = [
    "tests/unit/test_build.py",
    "tests/unit/test_cli.py",
    "tests/unit/test_spec.py",
    "tests/e2e/test_corpus.py::test_the_corpus_spans_every_protocol",
]


def _new_claims(claims: Path) -> list[Path]:
    """Two claims added as the README says (a copy of a claim file under the next number, then the one after):
    with claims 000-004 they are 005 and 006, and ``test_cli`` then asks for numbers such as 011, spelt like
    001 but nearest to 006 (issue 30: the suggestion ranked by spelling, and adding a claim broke the tests)."""
    paths = sorted(claims.glob("*.yaml"))
    numbers = [int(p.name.split("_", 1)[0]) for p in paths if p.name.split("_", 1)[0].isdigit()]
    base = min(paths, key=lambda p: p.stat().st_size)  # any claim would do: nothing here runs it
    out = []
    for k, name in ((1, "my_claim"), (2, "scratch_copy")):
        new_id = f"{max(numbers) + k:03d}_{name}"
        text, n = re.subn(r"(?m)^id: .*$", f"id: {new_id}", base.read_text(encoding="utf-8"), count=1)
        assert n == 1
        new = claims / f"{new_id}.yaml"
        new.write_text(text, encoding="utf-8")
        out.append(new)
    return out


@pytest.mark.slow  # runs the claim-set tests again in a scratch copy
def test_the_claim_set_tests_hold_with_two_claims_added(tmp_path):
    from harness.core.datalock import DataError, resolve_data_root

    try:
        data_root = resolve_data_root()
    except DataError as exc:
        pytest.skip(f"the input tables are not available: {exc}")
    copy = tmp_path / "project"
    skip = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache", ".ruff_cache")
    for name in ("harness", "claims", "data", "templates", "tests", "reports"):
        shutil.copytree(ROOT / name, copy / name, ignore=skip)
    for name in ("pyproject.toml", "Makefile", "README.md"):
        shutil.copy(ROOT / name, copy / name)
    added = _new_claims(copy / "claims")
    env = {**os.environ, "PYTHONPATH": str(copy), "HARNESS_DATA_ROOT": str(data_root), "HARNESS_NUMERICS": "native"}
    validate = subprocess.run(
        [sys.executable, "-m", "harness", "validate"], cwd=copy, env=env, capture_output=True, text=True
    )
    assert validate.returncode == 0, validate.stderr
    assert all(f"ok  {new.name}" in validate.stdout for new in added), validate.stdout
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *CLAIM_SET_TESTS],
        cwd=copy,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    tail = "\n".join(done.stdout.splitlines()[-30:])
    assert done.returncode == 0, tail
