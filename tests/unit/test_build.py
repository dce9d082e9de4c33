"""What a report depends on, and why a claim or a study must run again: the lock (``claims.lock``) against today's
files, through the build's own plan. A file is "touched" by changing the hash the lock module reads for it, so
nothing in the checkout is edited. Every expectation is derived from the claim files in ``claims/``."""

import json
import os
import shutil
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest

from harness.authors.checkout import load_pins
from harness.build import make as planning
from harness.claimfiles.registry import PROTOCOLS
from harness.claimfiles.spec import load_claim
from harness.core import claimslock
from harness.core.datalock import load_lock
from harness.core.errors import HarnessError
from harness.core.paths import DEFAULT_LOCK, PROJECT_ROOT, REPORTS_DIR
from harness.resampling import calibration

CLAIMS = {p.stem: p for p in sorted((PROJECT_ROOT / "claims").glob("*.yaml"))}


class _Said:
    def __init__(self):
        self.errors = []

    def info(self, m):
        pass

    def note(self, m):
        pass

    def error(self, m):
        self.errors.append(m)


@pytest.fixture(scope="module")
def specs():
    lock = load_lock()
    return {k: load_claim(p, lock=lock) for k, p in CLAIMS.items()}


@pytest.fixture
def out(tmp_path, specs, tables):
    """The committed records and studies in a scratch reports folder, locked as a build of today writes them."""
    out = tmp_path / "reports"
    (out / "calibration").mkdir(parents=True)
    lock, pins = load_lock(), load_pins()
    for cid, spec in specs.items():
        if not (REPORTS_DIR / f"{cid}.json").is_file():
            pytest.skip(f"no committed record of {cid}")
        for name in (f"{cid}.json", f"{cid}.md"):
            shutil.copy(REPORTS_DIR / name, out / name)
        c = spec.claim
        deps = planning.record_deps(spec.path, spec.protocol.name, c.inputs, c.upstream, lock, pins, c.paper)
        outs = {n: claimslock.file_sha(out / n) for n in (f"{cid}.json", f"{cid}.md")}
        entry = {"protocol": c.protocol, "deps": deps, "render": claimslock.render_deps(c.protocol), "outs": outs}
        claimslock.update(out, "claims", cid, entry)
        study = calibration.study_path(cid)
        if study.is_file():
            shutil.copy(study, out / "calibration" / study.name)
            outs = {f"calibration/{study.name}": claimslock.file_sha(study)}
            entry = {"deps": calibration.study_deps(spec, lock), "outs": outs}
            claimslock.update(out, "studies", cid, entry)
    return out


def _plan(out: Path):
    args = SimpleNamespace(
        lock=DEFAULT_LOCK, data_root=None, pins=None, out=str(out), force=False, no_upstream=False, studies=False
    )
    claims, _, failed = planning.plan(args, list(CLAIMS.values()), _Said())
    assert failed == 0
    return {p.id: (p.run, p.render) for p in claims}


def _studies(out: Path, specs) -> dict[str, list[str]]:
    lock = load_lock()
    return {
        k: calibration.stale_reasons(s, lock, out / "calibration")
        for k, s in specs.items()
        if (out / "calibration" / f"{k}.json").is_file()
    }


def _touch(monkeypatch, rel: str) -> None:
    """Make the lock module read other bytes for the file ``rel`` (relative to the project)."""
    real = claimslock.file_sha
    target = (PROJECT_ROOT / rel).resolve()
    assert target.is_file(), rel
    monkeypatch.setattr(claimslock, "file_sha", lambda p: "0" * 64 if Path(p).resolve() == target else real(p))


def test_unchanged_is_up_to_date(out, specs):
    assert all(v == ([], []) for v in _plan(out).values())
    assert all(why == [] for why in _studies(out, specs).values())


def test_an_edited_record_is_run_again_and_not_read(out, specs):
    cid = next(iter(CLAIMS))
    record = out / f"{cid}.json"
    record.write_text(record.read_text(encoding="utf-8").replace('"reproduced"', '"not reproduced"', 1))
    planned = _plan(out)
    (why,) = planned[cid][0]
    assert why == f"{cid}.json was edited after it was written (its sha256 is not the one in claims.lock)"
    assert all(v == ([], []) for k, v in planned.items() if k != cid)
    with pytest.raises(HarnessError, match="was edited after it was written"):
        planning.checked_record(out, cid)


def test_an_edited_study_is_measured_again(out, specs):
    studies = _studies(out, specs)
    if not studies:
        pytest.skip("no committed study")
    cid = next(iter(studies))
    f = out / "calibration" / f"{cid}.json"
    f.write_text(f.read_text(encoding="utf-8") + " ")
    (why,) = _studies(out, specs)[cid]
    assert "was edited after it was written" in why


def test_touching_a_template_re_renders_only(out, specs, monkeypatch):
    template = sorted((PROJECT_ROOT / "templates").iterdir())[0].relative_to(PROJECT_ROOT).as_posix()
    _touch(monkeypatch, template)
    for run, render in _plan(out).values():
        assert run == [] and render == ["template or rendering code changed: templates/**"]
    assert all(why == [] for why in _studies(out, specs).values())


def test_touching_the_math_stales_every_claim_and_study(out, specs, monkeypatch):
    _touch(monkeypatch, "harness/stats/sigmoid.py")
    for run, _ in _plan(out).values():
        assert run == ["harness code changed: harness/stats/**"]
    studies = _studies(out, specs)
    assert studies and all(why == ["harness code changed: harness/stats/**"] for why in studies.values())


@pytest.mark.parametrize("protocol", sorted(PROTOCOLS))
def test_touching_a_protocols_measurement_stales_only_its_claims_and_studies(out, specs, monkeypatch, protocol):
    rel = f"harness/protocols/{protocol}/protocol.py"
    _touch(monkeypatch, rel)
    own = {k for k, s in specs.items() if s.protocol.name == protocol}
    planned = _plan(out)
    assert {k for k, (run, _) in planned.items() if run} == own
    assert all(planned[k][0] == [f"harness code changed: {rel}"] for k in own)
    assert {k for k, why in _studies(out, specs).items() if why} == own & set(_studies(out, specs))


@pytest.mark.parametrize("protocol", sorted(p for p, c in PROTOCOLS.items() if c.module_file("figures")))
def test_touching_a_protocols_figures_re_runs_only_its_claims(out, specs, monkeypatch, protocol):
    """Figures are drawn when a claim runs, from plot data no record keeps: their code is the record's."""
    _touch(monkeypatch, f"harness/protocols/{protocol}/figures.py")
    own = {k for k, s in specs.items() if s.protocol.name == protocol}
    planned = _plan(out)
    assert {k for k, (run, _) in planned.items() if run} == own


@pytest.mark.parametrize("protocol", sorted(PROTOCOLS))
def test_touching_a_protocols_results_re_renders_only_its_reports(out, specs, monkeypatch, protocol):
    path = PROJECT_ROOT / f"harness/protocols/{protocol}/results.py"
    if not path.is_file():
        pytest.skip(f"{protocol} has no results.py")
    _touch(monkeypatch, f"harness/protocols/{protocol}/results.py")
    own = {k for k, s in specs.items() if s.protocol.name == protocol}
    planned = _plan(out)
    assert not any(run for run, _ in planned.values())
    assert {k for k, (_, render) in planned.items() if render} == own


def test_the_registry_and_the_build_are_in_no_dependency(out):
    lock = json.loads((out / "claims.lock").read_text(encoding="utf-8"))
    for entry in lock["claims"].values():
        names = set(entry["deps"]["code"]) | set(entry["render"])
        assert not any(n.startswith(("harness/build/make", "harness/cli")) for n in names)
        assert not [f for p in names for f in claimslock.files_of(p) if f.name == "registry.py"]


def test_the_lock_holds_no_absolute_path_and_sorted_keys(out, tmp_path):
    text = (out / "claims.lock").read_text(encoding="utf-8")
    assert str(PROJECT_ROOT) not in text and str(tmp_path) not in text and '"/' not in text
    data = json.loads(text)
    assert text == json.dumps(data, indent=1, sort_keys=True) + "\n"


@pytest.mark.parametrize("name", ["claims.lock", "README.md"])
def test_a_fifo_for_the_lock_or_the_index_is_not_read_and_is_replaced(out, name):
    """A FIFO in place of ``claims.lock`` hung every command that reads the lock (``status`` among them), and one in
    place of the index hung the build that compares it; neither is read now, and the index is written over it."""
    (out / name).unlink(missing_ok=True)
    os.mkfifo(out / name)
    said = {}

    def reads():
        if name == "claims.lock":
            said["lock"] = claimslock.read_lock(out)
            said["plan"] = _plan(out)
        else:
            said["index"] = planning.write_index(out, _Said())

    worker = threading.Thread(target=reads, daemon=True)  # a blocked open() of a FIFO is left behind, not waited on
    worker.start()
    worker.join(30)
    assert not worker.is_alive(), f"reading {name} still blocked after 30 s"
    if name == "claims.lock":
        assert said["lock"] == {}
        assert all(run and "not in claims.lock" in run[0] for run, _ in said["plan"].values())
    else:
        assert said["index"] == planning.EXIT_OK
        assert (out / name).is_file() and "|" in (out / name).read_text(encoding="utf-8")
