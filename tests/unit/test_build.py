"""What a report depends on, and why a claim must run again: exactly the affected claims, with the reason."""

from pathlib import Path

import pytest

from harness import build
from harness.datalock import load_lock
from harness.spec import load_claim
from harness.upstream import load_pins

ROOT = Path(__file__).resolve().parents[2]
CLAIMS = {p.stem[:3]: p for p in sorted((ROOT / "claims").glob("*.yaml"))}


@pytest.fixture(scope="module")
def deps():
    lock, pins = load_lock(), load_pins()
    return {k: build.dependencies(load_claim(p, lock=lock), lock, pins) for k, p in CLAIMS.items()}


def _changed(d: dict, part: str, key: str, value="0" * 64) -> dict:
    run = {**d["run"], part: {**d["run"][part], key: value}}
    return {**d, "run": run}


def test_unchanged_is_up_to_date(deps):
    for d in deps.values():
        assert build.stale_reasons(d, d) == ([], [])


def test_no_stored_dependencies_means_a_run():
    run, _ = build.stale_reasons(None, {"run": {}, "render": {}})
    assert run == ["no record of what produced the report"]


def test_a_claim_file_byte(deps):
    now = deps["002"]
    stored = {**now, "run": {**now["run"], "claim": "0" * 64}}
    assert build.stale_reasons(stored, now)[0] == ["claim file changed"]


def test_an_input_table_reruns_exactly_the_claims_that_read_it(deps):
    readers = {k for k, d in deps.items() if "oll" in d["run"]["data"]}
    assert readers == {"001", "002", "003", "004"}
    for k, d in deps.items():
        if k in readers:
            stored = _changed(d, "data", "oll")
            assert build.stale_reasons(stored, d)[0] == ["data changed: oll"]


@pytest.mark.parametrize(
    "path, affected",
    [
        ("harness/protocols/shift_test.py", {"000"}),
        ("harness/adapters/shift_test.py", {"000"}),
        ("harness/stats/shift.py", {"000"}),
        ("harness/stats/sigmoid.py", {"001", "002", "003", "004"}),
        ("harness/stats/ispline.py", {"001", "003"}),  # the period protocols share the splits' fitting
        ("harness/protocols/boundary_at_budget.py", {"002"}),
        ("harness/adapters/boundary_at_budget.py", {"001", "002", "003", "004"}),  # the other adapters import it
        ("harness/verdict.py", {"000", "001", "002", "003", "004"}),
    ],
)
def test_a_harness_file_reruns_exactly_the_claims_that_use_it(deps, path, affected):
    using = {k for k, d in deps.items() if path in d["run"]["code"]}
    assert using == affected
    for k in using:
        stored = _changed(deps[k], "code", path)
        assert build.stale_reasons(stored, deps[k])[0] == [f"harness code changed: {path}"]


def test_a_template_only_re_renders(deps):
    d = deps["002"]
    path = "templates/boundary_at_budget.md.j2"
    assert path in d["render"] and "templates/shift_test.md.j2" not in d["render"]
    stored = {**d, "render": {**d["render"], path: "0" * 64}}
    run, render = build.stale_reasons(stored, d)
    assert run == [] and render == [f"template or rendering code changed: {path}"]


def test_the_pin_and_the_package_versions(deps):
    d = deps["000"]
    stored = {**d, "run": {**d["run"], "upstream_pin": {**d["run"]["upstream_pin"], "commit": "1" * 40}}}
    assert build.stale_reasons(stored, d)[0] == ["upstream pin changed"]
    stored = {**d, "run": {**d["run"], "packages": {**d["run"]["packages"], "numpy": "1.0"}}}
    (reason,) = build.stale_reasons(stored, d)[0]
    assert reason.startswith("package versions changed: numpy 1.0 -> ")


def test_drawing_code_is_not_run_code(deps):
    for d in deps.values():
        assert "harness/figures.py" not in d["run"]["code"] and "harness/figures.py" in d["render"]
        assert "harness/cli.py" not in d["run"]["code"]
