"""What a report depends on, and why a claim must run again: exactly the affected claims, with the reason.

Every expectation is derived from the claim files in ``claims/`` (their protocols and inputs), so the tests
hold for whatever claims the folder holds.
"""

from pathlib import Path

import pytest

from harness.authors.checkout import load_pins
from harness.build import keys
from harness.claimfiles.registry import PROTOCOLS
from harness.claimfiles.spec import load_claim
from harness.core.datalock import load_lock

ROOT = Path(__file__).resolve().parents[2]
CLAIMS = {p.stem: p for p in sorted((ROOT / "claims").glob("*.yaml"))}


@pytest.fixture(scope="module")
def specs():
    lock = load_lock()
    return {k: load_claim(p, lock=lock) for k, p in CLAIMS.items()}


@pytest.fixture(scope="module")
def deps(specs):
    lock, pins = load_lock(), load_pins()
    return {k: keys.dependencies(s, lock, pins) for k, s in specs.items()}


def _changed(d: dict, part: str, key: str, value="0" * 64) -> dict:
    run = {**d["run"], part: {**d["run"][part], key: value}}
    return {**d, "run": run}


def _rel(path: Path) -> str:
    return path.resolve().relative_to(ROOT).as_posix()


def test_unchanged_is_up_to_date(deps):
    for d in deps.values():
        assert keys.stale_reasons(d, d) == ([], [])


def test_no_stored_dependencies_means_a_run():
    run, _ = keys.stale_reasons(None, {"run": {}, "render": {}})
    assert run == ["no record of what produced the report"]


def test_a_claim_file_byte(deps):
    for now in deps.values():
        stored = {**now, "run": {**now["run"], "claim": "0" * 64}}
        assert keys.stale_reasons(stored, now)[0] == ["claim file changed"]


def test_an_input_table_reruns_exactly_the_claims_that_read_it(specs, deps):
    for table in {t for s in specs.values() for t in s.claim.inputs}:
        readers = {k for k, s in specs.items() if table in s.claim.inputs}
        assert {k for k, d in deps.items() if table in d["run"]["data"]} == readers
        for k in readers:
            assert keys.stale_reasons(_changed(deps[k], "data", table), deps[k])[0] == [f"data changed: {table}"]


@pytest.mark.parametrize("protocol", sorted(PROTOCOLS))
def test_a_protocol_folder_reruns_exactly_its_claims(specs, deps, protocol):
    """Its measurement, vocabulary, card and adapter re-run its claims and no other; its figures re-render them."""
    card = PROTOCOLS[protocol]
    own = {k for k, s in specs.items() if s.protocol.name == protocol}
    for module in ("__init__", "protocol", "quantities", "adapter"):
        f = card.module_file(module)
        if f is None:
            continue
        path = _rel(f)
        assert {k for k, d in deps.items() if path in d["run"]["code"]} == own, path
        for k in own:
            assert keys.stale_reasons(_changed(deps[k], "code", path), deps[k])[0] == [f"harness code changed: {path}"]
    figures = card.module_file("figures")
    if figures is not None:
        path = _rel(figures)
        assert not any(path in d["run"]["code"] for d in deps.values())
        assert {k for k, d in deps.items() if path in d["render"]} == own


def test_the_registry_is_in_no_key(deps):
    """Adding a protocol (a folder and a registry line) re-runs nothing."""
    for d in deps.values():
        assert (
            "harness/claimfiles/registry.py" not in d["run"]["code"]
            and "harness/claimfiles/registry.py" not in d["render"]
        )


@pytest.mark.parametrize(
    "path, protocols",
    [
        ("harness/stats/shift.py", {"shift_test"}),
        ("harness/stats/sweep.py", {"hyperparameters"}),
        (
            "harness/authors/adapters/authors_sigmoid.py",
            {"boundary_at_budget", "temporal_coverage", "estimator_comparison", "hyperparameters"},
        ),  # the adapters that fit their sigmoid
        ("harness/authors/adapters/authors_periods.py", {"temporal_coverage", "estimator_comparison"}),
        ("harness/verdicts/verdict.py", set(PROTOCOLS)),
    ],
)
def test_a_shared_file_reruns_exactly_the_claims_that_use_it(specs, deps, path, protocols):
    using = {k for k, d in deps.items() if path in d["run"]["code"]}
    assert using == {k for k, s in specs.items() if s.protocol.name in protocols}
    for k in using:
        assert keys.stale_reasons(_changed(deps[k], "code", path), deps[k])[0] == [f"harness code changed: {path}"]


def test_a_template_only_re_renders(specs, deps):
    for k, d in deps.items():
        own = f"templates/{specs[k].protocol.card.template}"
        others = {f"templates/{c.template}" for c in PROTOCOLS.values()} - {own}
        assert own in d["render"] and not others & set(d["render"])
        stored = {**d, "render": {**d["render"], own: "0" * 64}}
        run, render = keys.stale_reasons(stored, d)
        assert run == [] and render == [f"template or rendering code changed: {own}"]


def test_the_pin_and_the_package_versions(deps):
    for d in deps.values():
        if d["run"]["upstream_pin"] is not None:
            stored = {**d, "run": {**d["run"], "upstream_pin": {**d["run"]["upstream_pin"], "commit": "1" * 40}}}
            assert keys.stale_reasons(stored, d)[0] == ["upstream pin changed"]
        stored = {**d, "run": {**d["run"], "packages": {**d["run"]["packages"], "numpy": "1.0"}}}
        (reason,) = keys.stale_reasons(stored, d)[0]
        assert reason.startswith("package versions changed: numpy 1.0 -> ")


def test_drawing_code_is_not_run_code(deps):
    for d in deps.values():
        assert "harness/rendering/figures.py" not in d["run"]["code"] and "harness/rendering/figures.py" in d["render"]
        assert "harness/cli.py" not in d["run"]["code"] and "harness/build/make.py" not in d["run"]["code"]
