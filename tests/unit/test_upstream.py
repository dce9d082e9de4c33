"""The authors' arm on a throw-away repository: checkout, refusals, subprocess, cache.

Everything here is real (git, gitpython, the launcher, subprocesses); only the
"authors' repository" is a tiny one built in ``tmp_path`` and the adapters are
a few lines each.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import textwrap
import time
from pathlib import Path
from types import SimpleNamespace

import git
import pytest
import yaml

from harness import upstream
from harness.datalock import DataLock, Tables
from harness.errors import UpstreamError
from harness.protocols.base import ProtocolParams
from harness.spec import Claim
from harness.upstream import UpstreamOptions, checkout, load_pins, run_upstream_arm, verify_checkout

ACTOR = git.Actor("Test", "test@example.invalid")

ADAPTERS = {
    # Reports what it sees: the authors' package, its place on sys.path, the environment, the request.
    "echo.py": """
        import os, sys
        import fakepkg

        def run(request):
            print("noise on stdout, as the authors' code makes")
            ctl = {c["id"]: {"values": {"value": fakepkg.VALUE * c["params"]["k"]}} for c in request["controls"]}
            return {"values": {"value": fakepkg.VALUE * request["params"]["factor"], "seed": request["seed"]},
                    "details": {"path0": sys.path[0], "cwd": os.getcwd(), "file": fakepkg.__file__,
                                "env": {k: os.environ.get(k) for k in ("MPLBACKEND", "PYTHONHASHSEED", "HOME", "MPLCONFIGDIR")},
                                "table": open(request["tables"]["t"]).read()},
                    "controls": ctl}
    """,
    "crash.py": """
        import sys

        def run(request):
            print("about to fail", file=sys.stderr)
            raise RuntimeError("boom from the fake adapter")
    """,
    # Hangs, and so does a child it starts: the whole process group must go.
    "hang.py": """
        import subprocess, sys, time

        def run(request):
            child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
            print(f"pids {child.pid}", flush=True)
            time.sleep(120)
    """,
    "badshape.py": """
        def run(request):
            return {"values": {"value": "not a number"}, "details": {}, "controls": {}}
    """,
}


def _commit(repo: git.Repo, files: dict[str, str], msg: str) -> str:
    for rel, text in files.items():
        path = Path(repo.working_tree_dir) / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    repo.index.add(list(files))
    return repo.index.commit(msg, author=ACTOR, committer=ACTOR).hexsha


@pytest.fixture
def world(tmp_path):
    """An origin repository with three commits, a pin on the second, adapters, a table, a claim."""
    with git.Repo.init(tmp_path / "origin") as origin:
        c1 = _commit(origin, {"fakepkg/__init__.py": "VALUE = 1\n", "big/data.txt": "not needed\n"}, "one")
        c2 = _commit(origin, {"fakepkg/__init__.py": "VALUE = 2\n"}, "two")
        c3 = _commit(origin, {"fakepkg/__init__.py": "VALUE = 3\n"}, "three")
    pins = tmp_path / "upstream.yaml"
    pins.write_text(yaml.safe_dump({"fake": {"url": str(tmp_path / "origin"), "commit": c2, "paths": ["fakepkg/"]}}))

    adapters = tmp_path / "adapters"
    adapters.mkdir()
    shutil.copy(upstream.ADAPTERS_DIR / upstream.LAUNCHER, adapters / upstream.LAUNCHER)
    for name, src in ADAPTERS.items():
        (adapters / name).write_text(textwrap.dedent(src), encoding="utf-8")

    data = tmp_path / "data"
    data.mkdir()
    (data / "t.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    lock = DataLock.model_validate({"tables": {"t": {"path": "t.csv", "rows": 1, "provenance": "test",
                                                     "sha256": hashlib.sha256(b"a,b\n1,2\n").hexdigest()}}})
    options = UpstreamOptions(vendor_dir=tmp_path / "vendor", cache_dir=tmp_path / "cache", pins_file=pins,
                              adapters_dir=adapters, timeout_s=60)
    return SimpleNamespace(tmp=tmp_path, c1=c1, c2=c2, c3=c3, pins=pins, options=options,
                           tables=Tables(lock, data), vendor=tmp_path / "vendor" / "fake")


class FakeParams(ProtocolParams):
    factor: float = 10.0


def _claim(upstream="fake", controls=()):
    return Claim.model_validate({
        "id": "fake_claim", "claim": "c", "locator": "l", "protocol": "fake", "inputs": ["t"], "upstream": upstream,
        "seed": 7, "targets": [{"quantity": "value", "paper": 20.0, "tolerance": 0.0, "reason": "r"}],
        "controls": [{"id": cid, "control": "times", "params": {"k": k}, "changes": "c", "must_fail_targets": True}
                     for cid, k in controls]})


def _arm(w, adapter="echo.py", claim=None, **opts):
    proto = SimpleNamespace(name="fake", adapter=adapter)
    options = UpstreamOptions(**{**w.options.__dict__, **opts})
    return run_upstream_arm(claim or _claim(), proto, FakeParams(), w.tables, options=options)


def _refusal(w) -> str:
    with pytest.raises(UpstreamError) as info:
        verify_checkout("fake", w.options.vendor_dir, pins_file=w.pins)
    return str(info.value)


# -- checkout ------------------------------------------------------------------------------------------------


@pytest.fixture
def checked_out(world):
    checkout("fake", world.options.vendor_dir, pins_file=world.pins)
    return world


def test_checkout_gives_the_pinned_commit_not_the_newest(checked_out):
    w = checked_out
    with git.Repo(w.vendor) as repo:
        assert repo.head.is_detached and repo.head.commit.hexsha == w.c2  # c3 is newer and must not be used
    assert (w.vendor / "fakepkg" / "__init__.py").read_text() == "VALUE = 2\n"
    assert not (w.vendor / "big").exists()  # outside the pin's paths: sparse
    assert verify_checkout("fake", w.options.vendor_dir, pins_file=w.pins) == w.vendor


def test_checkout_reuses_the_clone_and_fetches_a_new_pin(checked_out):
    w = checked_out
    with git.Repo(w.tmp / "origin") as origin:
        c4 = _commit(origin, {"fakepkg/__init__.py": "VALUE = 4\n"}, "four")
    w.pins.write_text(yaml.safe_dump({"fake": {"url": str(w.tmp / "origin"), "commit": c4, "paths": ["fakepkg/"]}}))
    assert "HEAD is " + w.c2[:7] + ", expected " + c4 in _refusal(w)
    checkout("fake", w.options.vendor_dir, pins_file=w.pins)
    assert (w.vendor / "fakepkg" / "__init__.py").read_text() == "VALUE = 4\n"


def test_a_missing_checkout_says_to_run_make_vendor(world):
    msg = _refusal(world)
    assert f"no checkout of 'fake' at {world.vendor}" in msg and "run `make vendor`" in msg


def test_a_checkout_at_another_commit_is_refused(checked_out):
    w = checked_out
    with git.Repo(w.vendor) as repo:
        repo.git.checkout("--quiet", "--detach", w.c1)
    msg = _refusal(w)
    assert f"HEAD is {w.c1[:7]}, expected {w.c2}" in msg and "run `make vendor`" in msg


def test_a_modified_file_is_refused(checked_out):
    w = checked_out
    (w.vendor / "fakepkg" / "__init__.py").write_text("VALUE = 99\n")
    msg = _refusal(w)
    assert "local changes (changed fakepkg/__init__.py)" in msg and f"remove {w.vendor} and run `make vendor`" in msg


def test_an_untracked_file_is_refused(checked_out):
    w = checked_out
    (w.vendor / "fakepkg" / "extra.py").write_text("X = 1\n")
    assert "local changes (untracked fakepkg/extra.py)" in _refusal(w)


def test_checkout_does_not_overwrite_local_changes(checked_out):
    w = checked_out
    (w.vendor / "fakepkg" / "__init__.py").write_text("VALUE = 99\n")
    with pytest.raises(UpstreamError, match="local changes"):
        checkout("fake", w.options.vendor_dir, pins_file=w.pins)
    assert (w.vendor / "fakepkg" / "__init__.py").read_text() == "VALUE = 99\n"


def test_a_folder_that_is_not_a_repository_is_refused(world):
    world.vendor.mkdir(parents=True)
    assert f"{world.vendor} is not a git repository; remove {world.vendor}" in _refusal(world)


def test_a_clone_of_another_url_is_refused(checked_out):
    w = checked_out
    with git.Repo(w.vendor) as repo:
        repo.git.remote("set-url", "origin", "https://example.invalid/other")
    assert "is a clone of https://example.invalid/other, expected" in _refusal(w)


def test_an_unreachable_url_cannot_be_cloned(world):
    world.pins.write_text(yaml.safe_dump({"fake": {"url": str(world.tmp / "nowhere"), "commit": world.c2, "paths": ["x/"]}}))
    with pytest.raises(UpstreamError, match=f"could not clone {world.tmp / 'nowhere'} into {world.vendor}"):
        checkout("fake", world.options.vendor_dir, pins_file=world.pins)
    assert not world.vendor.exists()  # no half clone left behind


def test_a_commit_the_repository_lacks_is_reported(world):
    world.pins.write_text(yaml.safe_dump({"fake": {"url": str(world.tmp / "origin"), "commit": "0" * 40, "paths": ["x/"]}}))
    with pytest.raises(UpstreamError, match=f"commit {'0' * 40} is not in "):
        checkout("fake", world.options.vendor_dir, pins_file=world.pins)


# -- pins ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("pin, expected", [
    ({"url": "u", "commit": "5bdca77", "paths": ["a/"]}, "fake.commit: String should match pattern"),
    ({"url": "u", "commit": "a" * 40, "paths": ["a/"], "branch": "main"}, "fake.branch: unknown key"),
    ({"url": "u", "commit": "a" * 40}, "fake.paths: required key is missing"),
    ({"url": "u", "commit": "a" * 40, "paths": ["../up"]}, "fake.paths: paths must be relative paths inside the repository"),
])
def test_bad_pins_name_the_file_and_the_field(tmp_path, pin, expected):
    path = tmp_path / "upstream.yaml"
    path.write_text(yaml.safe_dump({"fake": pin}))
    with pytest.raises(UpstreamError) as info:
        load_pins(path)
    assert str(info.value).startswith(f"{path}: ") and expected in str(info.value)


def test_the_project_pins_load():
    pin = load_pins()["prescriptive-scaling"]
    assert pin.url == "https://github.com/hlzhang109/prescriptive-scaling" and len(pin.commit) == 40


# -- running the adapter ---------------------------------------------------------------------------------------


def test_the_adapter_runs_isolated_from_the_checkout(checked_out):
    w = checked_out
    r = _arm(w, claim=_claim(controls=[("double", 2)]))
    assert r["status"] == "ok", r["reason"]
    assert r["values"] == {"value": 20.0, "seed": 7.0}  # VALUE = 2 at the pinned commit, times factor 10
    assert r["controls"] == {"double": {"values": {"value": 4.0}, "details": {}}}
    d = r["details"]
    assert d["path0"] == str(w.vendor) and d["file"] == str(w.vendor / "fakepkg" / "__init__.py")
    assert d["env"]["MPLBACKEND"] == "Agg" and d["env"]["PYTHONHASHSEED"] == "0"
    assert d["env"]["HOME"].startswith(d["cwd"]) and d["env"]["MPLCONFIGDIR"].startswith(d["cwd"])
    assert not Path(d["cwd"]).exists()  # the scratch folder is gone
    assert d["table"] == "a,b\n1,2\n"
    assert "noise on stdout" in r["stdout"] and (r["commit"], r["url"]) == (w.c2, str(w.tmp / "origin"))
    assert not list(w.vendor.rglob("__pycache__"))  # the checkout stays clean
    verify_checkout("fake", w.options.vendor_dir, pins_file=w.pins)


def test_a_missing_checkout_cannot_run(world):
    r = _arm(world)
    assert r["status"] == "could not run" and "run `make vendor`" in r["reason"] and r["commit"] == world.c2


def test_an_unreachable_repository_cannot_run(world):
    url = str(world.tmp / "nowhere")
    world.pins.write_text(yaml.safe_dump({"fake": {"url": url, "commit": world.c2, "paths": ["fakepkg/"]}}))
    r = _arm(world, auto_checkout=True)
    assert r["status"] == "could not run" and f"could not clone {url}" in r["reason"]
    assert "does not exist" in r["reason"]  # git's own words


def test_auto_checkout_clones_a_missing_checkout(world):
    assert _arm(world, auto_checkout=True)["status"] == "ok"


def test_a_crashing_adapter_cannot_run_and_shows_stderr(checked_out):
    r = _arm(checked_out, adapter="crash.py")
    assert r["status"] == "could not run" and "crash.py exited with status 1" in r["reason"]
    assert "about to fail" in r["reason"] and "RuntimeError: boom from the fake adapter" in r["reason"]
    assert "boom from the fake adapter" in r["stderr"]


def test_a_hanging_adapter_is_killed_with_its_children(checked_out):
    t0 = time.perf_counter()
    r = _arm(checked_out, adapter="hang.py", timeout_s=2)
    assert r["status"] == "could not run" and "did not finish within 2 s and was killed" in r["reason"]
    assert time.perf_counter() - t0 < 10
    child = int(r["stdout"].split("pids ")[1].split()[0])
    deadline = time.monotonic() + 5
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as fh:  # a zombie waiting for init to reap it is dead
        return fh.read().split(")")[-1].split()[0] != "Z"


def test_an_answer_of_the_wrong_shape_cannot_run(checked_out):
    r = _arm(checked_out, adapter="badshape.py")
    assert r["status"] == "could not run" and "not JSON of the expected shape: values.value:" in r["reason"]


def test_a_missing_adapter_file_cannot_run(checked_out):
    r = _arm(checked_out, adapter="nope.py")
    assert r["status"] == "could not run" and "nope.py does not exist" in r["reason"]


@pytest.mark.parametrize("change, reason", [
    ({"enabled": False}, "switched off"),
    ({"adapter": None}, "has no adapter"),
    ({"claim": _claim(upstream=None)}, "names no upstream pin"),
])
def test_not_run_says_why(world, change, reason):
    adapter = change.pop("adapter", "echo.py")
    r = _arm(world, adapter=adapter, **change)
    assert r["status"] == "not run" and reason in r["reason"]


def test_an_unknown_pin_cannot_run_and_suggests_a_name(world):
    r = _arm(world, claim=_claim(upstream="fak"))
    assert r["status"] == "could not run" and "no upstream pin named 'fak' (did you mean 'fake'?)" in r["reason"]


# -- cache ---------------------------------------------------------------------------------------------------


@pytest.fixture
def counted(checked_out, monkeypatch):
    calls = []
    real = upstream._run_adapter
    monkeypatch.setattr(upstream, "_run_adapter", lambda *a, **k: calls.append(1) or real(*a, **k))
    checked_out.calls = calls
    return checked_out


def test_a_second_call_is_served_from_the_cache(counted):
    w = counted
    first = _arm(w)
    second = _arm(w)
    assert len(w.calls) == 1 and (first["cached"], second["cached"]) == (False, True)
    assert second["values"] == first["values"] and second["seconds"] == first["seconds"]
    assert (w.options.cache_dir / f"{first['cache_key']}.json").is_file()


def test_force_reruns(counted):
    _arm(counted)
    again = _arm(counted, force=True)
    assert len(counted.calls) == 2 and again["cached"] is False


def test_a_changed_adapter_or_request_misses_the_cache(counted):
    w = counted
    key = _arm(w)["cache_key"]
    assert _arm(w, claim=_claim(controls=[("double", 2)]))["cache_key"] != key
    (w.options.adapters_dir / "echo.py").write_text((w.options.adapters_dir / "echo.py").read_text() + "\n# edited\n")
    assert _arm(w)["cache_key"] != key
    assert len(w.calls) == 3


def test_failures_are_not_cached(counted):
    assert _arm(counted, adapter="crash.py")["status"] == "could not run"
    assert _arm(counted, adapter="crash.py")["cached"] is False
    assert len(counted.calls) == 2 and not list(counted.options.cache_dir.glob("*.json"))


# -- the checkout holds the pinned tree and nothing else ----------------------------------------------------


@pytest.mark.parametrize("planted, exclude", [
    ("pandas.py", "pandas.py"),
    ("fakepkg/__pycache__/__init__.cpython-311.pyc", "__pycache__/"),
])
def test_an_ignored_file_in_the_checkout_is_refused(checked_out, planted, exclude):
    """Defect 3: `git status` skips ignored files, so a module planted and listed in .git/info/exclude
    (or a stale ignored .pyc) was imported by the authors' arm unnoticed."""
    w = checked_out
    (w.vendor / planted).parent.mkdir(parents=True, exist_ok=True)
    (w.vendor / planted).write_text("raise SystemExit('shadowed')\n")
    with open(w.vendor / ".git" / "info" / "exclude", "a") as fh:
        fh.write(exclude + "\n")
    assert f"ignored {planted}" in _refusal(w)
    r = _arm(w)
    assert r["status"] == "could not run" and f"ignored {planted}" in r["reason"]


def test_an_empty_planted_folder_in_the_checkout_is_refused(checked_out):
    w = checked_out
    (w.vendor / "numpy").mkdir()
    assert "untracked numpy/" in _refusal(w)
