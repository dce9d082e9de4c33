"""A claim's coverage study: found, keyed by what it depends on, and the same bytes wherever its data sets ran.

The study itself (the engine) is tested on toy designs in ``tests/stats/test_calibration.py``; here it runs on the
real tables of each claim that asks for one, narrowed to a few data sets so that the test stays fast.
"""

from __future__ import annotations

import dataclasses
import json
from types import SimpleNamespace

import pytest

from harness.build.runner import measurement_arm
from harness.claimfiles.spec import load_claim
from harness.core.claimslock import file_sha, update
from harness.core.paths import CLAIMS_DIR, DEFAULT_LOCK
from harness.parallel import fanout
from harness.parallel.fanout import executor_from
from harness.resampling.calibration import STUDY_DIR, read_study, run_study, stale_reasons, study_deps
from harness.stats.calibration import study_json

pytestmark = pytest.mark.e2e


def _asking():
    paths = []
    for path in sorted(CLAIMS_DIR.glob("*.yaml")):
        b = load_claim(path).claim.bootstrap
        if b is not None and b.calibration is not None:
            paths.append(path)
    return paths


ASKING = _asking()


def _narrow(spec, replicates: int, resamples: int):
    """The claim with its study cut to ``replicates`` data sets of ``resamples`` resamples (the study resamples as
    the claim's bootstrap does: its ``n_resamples`` is cut with it)."""
    b = spec.claim.bootstrap
    c = b.calibration.model_copy(update={"replicates": replicates})
    claim = spec.claim.model_copy(
        update={"bootstrap": b.model_copy(update={"calibration": c, "n_resamples": resamples})}
    )
    return dataclasses.replace(spec, claim=claim)


def _locked(folder, spec, lock, study: dict, deps=None) -> None:
    """``study`` written into ``folder`` and locked in its reports folder as a build writes it."""
    file = folder / f"{spec.id}.json"
    file.write_text(json.dumps(study, indent=1), encoding="utf-8")
    outs = {f"{folder.name}/{file.name}": file_sha(file)}
    update(folder.parent, "studies", spec.id, {"deps": deps or study_deps(spec, lock), "outs": outs})


@pytest.mark.parametrize("path", ASKING, ids=lambda p: p.stem)
def test_a_study_is_absent_stale_unreadable_or_measured(path, tables, tmp_path):
    spec = load_claim(path)
    lock, folder = tables.lock, tmp_path / "calibration"
    folder.mkdir()
    assert read_study(spec, lock, folder)[0] == "absent"
    _locked(folder, spec, lock, {}, deps={**study_deps(spec, lock), "design": "0" * 64})
    assert read_study(spec, lock, folder)[0] == "stale"
    (folder / f"{spec.id}.json").write_text("{not json", encoding="utf-8")
    assert read_study(spec, lock, folder)[0] == "unreadable"
    _locked(folder, spec, lock, {})
    assert read_study(spec, lock, folder)[0] == "measured"


@pytest.mark.parametrize("path", ASKING[:1], ids=lambda p: p.stem)
def test_a_study_made_with_other_package_versions_is_stale(path, tables, tmp_path):
    """A fresh machine once installed pandas 3.1.2 where the records named 3.1.1: the records went stale, the
    studies (computed, worded and drawn with the same packages) did not."""
    spec = load_claim(path)
    lock, folder = tables.lock, tmp_path / "calibration"
    folder.mkdir()
    deps = study_deps(spec, lock)
    _locked(folder, spec, lock, {}, deps={**deps, "packages": {**deps["packages"], "numpy": "1.0.0"}})
    assert read_study(spec, lock, folder)[0] == "stale"
    now = deps["packages"]["numpy"]
    assert stale_reasons(spec, lock, folder) == [f"package versions changed: numpy 1.0.0 -> {now}"]


@pytest.mark.parametrize("path", ASKING[:1], ids=lambda p: p.stem)
def test_an_edited_study_is_refused_and_calibrate_runs_it_again(path, tables, tmp_path, monkeypatch):
    """Issue #29 item 8: every coverage of a study set to 0.95 by hand made `calibrate` say "up to date" and the
    next run read the edited coverage. Now its bytes are not those the lock names: its state is "edited", no
    coverage is read from it, and `calibrate` runs it again."""
    import harness.claimfiles.spec
    from harness.build import make
    from harness.resampling.calibration import design
    from harness.resampling.robustness import run_bootstrap

    spec = _narrow(load_claim(path), 3, 4)
    b = spec.claim.bootstrap
    spec = dataclasses.replace(
        spec, claim=spec.claim.model_copy(update={"bootstrap": b.model_copy(update={"n_resamples": 4})})
    )
    lock = tables.lock
    reimpl = measurement_arm(spec, tables)
    names = design(spec, tables, reimpl).quantities
    study = {"coverage": {q: {b.method: {"coverage": 0.5, "mc_se": 0.01}} for q in names}}
    folder = tmp_path / "calibration"
    folder.mkdir()
    file = folder / f"{spec.id}.json"
    monkeypatch.setattr("harness.resampling.robustness.read_study", lambda spec, lock: read_study(spec, lock, folder))

    def coverages():
        with fanout.using(executor_from("serial", jobs=1)):
            facts = run_bootstrap(spec, tables, reimpl, []).facts
        return facts["calibration"]["state"], {iv["coverage"] for iv in facts["intervals"]}

    _locked(folder, spec, lock, study)
    state, read = read_study(spec, lock, folder)
    assert state == "measured" and read["coverage"] == study["coverage"]
    assert coverages() == ("measured", {0.5})  # a locked study is read
    edited = {
        **study,
        "coverage": {q: {m: {**r, "coverage": 0.95} for m, r in p.items()} for q, p in study["coverage"].items()},
    }
    file.write_text(json.dumps(edited, indent=1), encoding="utf-8")
    assert read_study(spec, lock, folder) == ("edited", None)
    assert coverages() == ("edited", {None})  # the edited coverage is not read

    # `calibrate` does not call it up to date: it runs the study again, and what it writes reads back
    monkeypatch.setattr(harness.claimfiles.spec, "load_claim", lambda p, **kw: spec)
    said = _Said()
    args = SimpleNamespace(lock=str(DEFAULT_LOCK), data_root=None, out=str(tmp_path), force=False, jobs=1)
    args.executor = "serial"
    assert make.calibrate_claims(args, [path], said) == make.EXIT_OK
    assert f"{spec.id}: calibration: edited; running the study" in said.notes
    assert read_study(spec, lock, folder)[0] == "measured"


class _Said:
    def __init__(self):
        self.notes = []

    def info(self, m):
        self.notes.append(m)

    def note(self, m):
        self.notes.append(m)

    def error(self, m):
        raise AssertionError(m)


@pytest.mark.parametrize("path", ASKING, ids=lambda p: p.stem)
def test_the_study_dependencies_follow_the_design(path, tables):
    spec = load_claim(path)
    key = study_deps(spec, tables.lock)
    assert key == study_deps(load_claim(path), tables.lock)
    assert study_deps(_narrow(spec, 7, 9), tables.lock) != key  # another study
    b = spec.claim.bootstrap
    reseeded = spec.claim.model_copy(update={"bootstrap": b.model_copy(update={"seed": b.seed + 1})})
    assert study_deps(dataclasses.replace(spec, claim=reseeded), tables.lock) != key


@pytest.mark.parametrize("path", ASKING, ids=lambda p: p.stem)
def test_the_committed_study_is_the_one_of_this_design(path, tables):
    """A claim that asks for a study ships one of its current design (``make calibration`` writes it): else
    its report would say its coverage is unknown."""
    spec = load_claim(path)
    state, _ = read_study(spec, tables.lock, STUDY_DIR)
    assert state == "measured", f"reports/calibration/{spec.id}.json is {state}: run `make calibration`"


@pytest.mark.parametrize("path", ASKING[:1], ids=lambda p: p.stem)
def test_a_narrow_study_is_the_same_bytes_serial_and_on_two_processes(path, tables):
    spec = _narrow(load_claim(path), 3, 4)
    reimpl = measurement_arm(spec, tables)
    with fanout.using(executor_from("serial")):
        serial = study_json(run_study(spec, tables, reimpl))
    with fanout.using(executor_from("local:2")):
        pooled = study_json(run_study(spec, tables, reimpl))
    assert serial == pooled
    out = json.loads(serial)
    assert out["n_replicates"] == 3 and out["n_resamples"] == 4
    methods = set(spec.claim.bootstrap.calibration.methods)
    for q, row in out["coverage"].items():
        assert set(row) == methods, q
        for m in methods:
            assert round(row[m]["coverage"] * 3, 9) in (0, 1, 2, 3), (q, m)  # a share of 3 data sets
    for o in out["orderings"]:  # each asserted ordering's decision, measured for every method
        assert set(o["by_method"]) == methods
        for d in o["by_method"].values():
            assert round(d["error"] * 3, 9) in (0, 1, 2, 3) and d["limit"] > spec.claim.bootstrap.alpha


@pytest.mark.parametrize("path", ASKING, ids=lambda p: p.stem)
def test_a_rebase_gives_the_statistic_and_a_statistic_started_from_it(path, tables):
    """``rebase`` on rows is the statistic on them; the statistic it returns agrees on a resample of them with the
    one started from the real fits (both solve to convergence), differences of the comparisons included."""
    import numpy as np

    from harness.resampling.calibration import design
    from harness.stats.resample import cluster_bootstrap_indices, cluster_ids_from_labels

    spec = load_claim(path)
    reimpl = measurement_arm(spec, tables)
    d = design(spec, tables, reimpl)
    if d.rebase is None:
        pytest.skip(f"protocol {spec.protocol.name} gives no rebase: its study starts every fit from the real fits")
    ids = cluster_ids_from_labels(d.cluster_labels)
    world = cluster_bootstrap_indices(ids, 2, np.random.default_rng(0))
    rows, again = world[0], world[1]
    values, own = d.rebase(rows, np.random.default_rng(1))
    assert values == d.statistic(rows, np.random.default_rng(1))
    a, b = own(again, np.random.default_rng(2)), d.statistic(again, np.random.default_rng(2))
    assert set(a) == set(b) and any(k.startswith("comparison[") for k in a)
    for k in a:
        assert a[k] == pytest.approx(b[k], abs=1e-7), k
