"""``requirements.lock`` pins every package the project installs, and the packages a record names at the versions
the committed records name: a record's entry in the lock goes stale when one of them moves, so a looser pin would
make a fresh machine run every claim again and commit other records."""

from __future__ import annotations

import json
import re
from importlib import metadata
from pathlib import Path

from harness.authors.checkout import package_name
from harness.core.provenance import PACKAGES

ROOT = Path(__file__).resolve().parents[2]
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def _locked() -> dict[str, str]:
    pins = re.findall(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;]+)", (ROOT / "requirements.lock").read_text(), re.M)
    return {package_name(name): version for name, version in pins}


def test_every_dependency_of_the_project_and_its_extras_is_pinned():
    declared = {package_name(NAME.match(r).group()) for r in metadata.requires("claim-audit-harness") or []}
    assert {"numpy", "pandas", "pytest", "dask"} <= declared  # the base, test and dask requirements were read
    assert sorted(declared - set(_locked())) == []


def test_the_lock_pins_the_versions_the_committed_records_name():
    locked, records = _locked(), sorted((ROOT / "reports").glob("*.json"))
    assert records
    for path in records:
        for name, version in json.loads(path.read_text())["provenance"]["packages"].items():
            assert locked.get(package_name(name)) == version, f"{path.name} names {name} {version}"


def test_this_environment_has_the_locked_versions_of_what_a_record_names():
    locked = _locked()
    found = {name: metadata.version(name) for name in PACKAGES}
    wanted = {name: locked[package_name(name)] for name in PACKAGES}
    assert found == wanted, "run `make venv` after `rm .venv/.installed`"
