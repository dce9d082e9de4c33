"""The authors' arm on a throw-away repository: checkout, refusals, subprocess, cache.

Everything here is real (git, gitpython, the launcher, subprocesses); only the
"authors' repository" is a tiny one built in ``tmp_path`` and the adapters are
a few lines each.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import subprocess
import tempfile
import textwrap
import time
from pathlib import Path
from types import SimpleNamespace

import git
import pytest
import yaml

from harness.authors import upstream
from harness.authors.checkout import checkout, load_pins, verified_tree
from harness.authors.upstream import UpstreamOptions, run_upstream_arm
from harness.claimfiles.spec import Claim, ClaimSpec
from harness.core.datalock import DataLock, Tables
from harness.core.errors import UpstreamError
from harness.core.paths import HARNESS, LAUNCHER
from harness.protocols.base import ProtocolParams

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
                                "env": {k: os.environ.get(k)
                                        for k in ("MPLBACKEND", "PYTHONHASHSEED", "HOME", "MPLCONFIGDIR")},
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
    "selfkill.py": """
        import os, signal

        def run(request):
            os.kill(os.getpid(), signal.SIGKILL)
    """,
    "badshape.py": """
        def run(request):
            return {"values": {"value": "not a number"}, "details": {}, "controls": {}}
    """,
    # Sleeps, with a child that sleeps too (marked in its argv, to be found in /proc).
    "sleep.py": """
        import subprocess, sys, time

        def run(request):
            subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "grandchild", request["checkout"]])
            time.sleep(60)
    """,
    # Writes by absolute path into the (test's) project: reports/ and the checkout in vendor/.
    "hostile.py": """
        import os

        def run(request):
            project = os.path.dirname(os.path.dirname(request["checkout"]))
            with open(os.path.join(project, "reports", "ESCAPE_abs.md"), "w") as fh:
                fh.write("escaped")
            with open(os.path.join(request["checkout"], "ESCAPE"), "w") as fh:
                fh.write("escaped")
            return {"values": {"value": 1.0}}
    """,
    # Double-forks a daemon (a session of its own) that would write into the project's reports/ later.
    "daemon.py": """
        import os, time

        def run(request):
            project = os.path.dirname(os.path.dirname(request["checkout"]))
            if os.fork() == 0:
                os.setsid()
                if os.fork() == 0:
                    time.sleep(3)
                    with open(os.path.join(project, "reports", "DAEMON.md"), "w") as fh:
                        fh.write("outlived the run")
                os._exit(0)
            time.sleep(0.5)
            return {"values": {"value": 1.0}}
    """,
    # Asks for 8 GiB, and says what happened.
    "allocate.py": """
        def run(request):
            try:
                block = bytearray(8 << 30)
                got = len(block)
            except MemoryError:
                got = 0
            return {"values": {"value": float(got)}}
    """,
    # Connects to a listener the test opened on 127.0.0.1, and says whether it could.
    "connect.py": """
        import socket

        def run(request):
            s = socket.socket()
            s.settimeout(2)
            try:
                s.connect(("127.0.0.1", int(request["params"]["factor"])))
                ok = 1.0
            except OSError:
                ok = 0.0
            return {"values": {"value": ok}}
    """,
    # Prints 200 MB to stdout.
    "flood.py": """
        import sys

        def run(request):
            block = b"x" * (1 << 20)
            for _ in range(200):
                sys.stdout.buffer.write(block)
            return {"values": {"value": 1.0}}
    """,
    # Answers 20 MB.
    "hugeanswer.py": """
        def run(request):
            return {"values": {"value": 1.0}, "details": {"blob": "x" * (20 << 20)}}
    """,
    # Writes into /dev/shm (a private one under bubblewrap), and tries the project by absolute path: says whether
    # that got through.
    "escape.py": """
        import os

        def run(request):
            with open("/dev/shm/harness-escape-" + str(request["seed"]), "w") as fh:
                fh.write("escaped")
            project = os.path.dirname(os.path.dirname(request["checkout"]))
            try:
                with open(os.path.join(project, "reports", "ESCAPE.md"), "w") as fh:
                    fh.write("escaped")
                made = 1.0
            except OSError:
                made = 0.0
            return {"values": {"value": made}}
    """,
    # Leaves a detached child behind (a session of its own), marked in its argv, and returns at once.
    "orphan.py": """
        import subprocess, sys

        def run(request):
            argv = [sys.executable, "-c", "import time; time.sleep(60)", "orphan-marker", request["checkout"]]
            subprocess.Popen(argv, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            return {"values": {"value": 1.0}}
    """,
    # Shows what it can import and from where.
    "paths.py": """
        import os, sys
        import pandas
        from scripts.tools import helper

        def run(request):
            return {"values": {"value": helper.VALUE},
                    "details": {"sys_path": sys.path, "pandas": pandas.__file__, "cwd": os.getcwd(),
                                "mode": oct(os.stat(request["tables"]["t"]).st_mode & 0o777)}}
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
        c1 = _commit(
            origin,
            {
                "fakepkg/__init__.py": "VALUE = 1\n",
                "big/data.txt": "not needed\n",
                "scripts/tools/helper.py": "VALUE = 5.0\n",
            },
            "one",
        )
        c2 = _commit(origin, {"fakepkg/__init__.py": "VALUE = 2\n"}, "two")
        c3 = _commit(origin, {"fakepkg/__init__.py": "VALUE = 3\n"}, "three")
    pins = tmp_path / "upstream.yaml"
    pins.write_text(
        yaml.safe_dump({"fake": {"url": str(tmp_path / "origin"), "commit": c2, "paths": ["fakepkg/", "scripts/"]}})
    )

    # a harness package of the test's own: the launcher, and the fake adapters as modules harness.fake.<name>
    package = tmp_path / "harness"
    (package / LAUNCHER).parent.mkdir(parents=True)
    (package / "fake").mkdir()
    (package / "__init__.py").write_text("")
    (package / "fake" / "__init__.py").write_text("")
    shutil.copy(HARNESS / LAUNCHER, package / LAUNCHER)
    for name, src in ADAPTERS.items():
        (package / "fake" / name).write_text(textwrap.dedent(src), encoding="utf-8")

    (tmp_path / "reports").mkdir()
    data = tmp_path / "data"
    data.mkdir()
    (data / "t.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    lock = DataLock.model_validate(
        {
            "tables": {
                "t": {
                    "path": "t.csv",
                    "rows": 1,
                    "provenance": "test",
                    "sha256": hashlib.sha256(b"a,b\n1,2\n").hexdigest(),
                }
            }
        }
    )
    options = UpstreamOptions(
        vendor_dir=tmp_path / "vendor",
        cache_dir=tmp_path / "cache",
        pins_file=pins,
        harness_dir=package,
        timeout_s=60,
    )
    return SimpleNamespace(
        tmp=tmp_path,
        c1=c1,
        c2=c2,
        c3=c3,
        pins=pins,
        options=options,
        tables=Tables(lock, data),
        vendor=tmp_path / "vendor" / "fake",
        adapters=package / "fake",
    )


class FakeParams(ProtocolParams):
    factor: float = 10.0


class Times(ProtocolParams):
    k: float


def _claim(upstream="fake", controls=()):
    """A validated claim as the runner hands it to the authors' arm: controls' parameters validated."""
    claim = Claim.model_validate(
        {
            "id": "fake_claim",
            "claim": "c",
            "locator": "l",
            "protocol": "fake",
            "inputs": ["t"],
            "upstream": upstream,
            "seed": 7,
            "targets": [{"quantity": "value", "paper": 20.0, "tolerance": 0.0, "reason": "r"}],
            "controls": [
                {"id": cid, "control": "times", "params": {"k": k}, "changes": "c", "must_fail_targets": True}
                for cid, k in controls
            ],
        }
    )
    return ClaimSpec(
        path=Path("fake_claim.yaml"),
        claim=claim,
        protocol=None,
        params=FakeParams(),
        control_params={cid: Times(k=k) for cid, k in controls},
        vocabulary={},
        control_vocabularies={},
    )


def _protocol(adapter: str | None):
    """A protocol as the authors' arm sees it: its name, and its card's adapter module (or none)."""
    module = f"harness.fake.{Path(adapter).stem}" if adapter else None
    return SimpleNamespace(name="fake", card=SimpleNamespace(name="fake", adapter_module=module))


def _arm(w, adapter="echo.py", claim=None, **opts):
    proto = _protocol(adapter)
    options = UpstreamOptions(**{**w.options.__dict__, **opts})
    return run_upstream_arm(claim or _claim(), proto, FakeParams(), w.tables, options=options)


def _refusal(w) -> str:
    with pytest.raises(UpstreamError) as info:
        verified_tree("fake", w.options.vendor_dir, pins_file=w.pins)
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
    assert verified_tree("fake", w.options.vendor_dir, pins_file=w.pins)[0] == w.vendor


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
    world.pins.write_text(
        yaml.safe_dump({"fake": {"url": str(world.tmp / "nowhere"), "commit": world.c2, "paths": ["x/"]}})
    )
    with pytest.raises(UpstreamError, match=f"could not clone {world.tmp / 'nowhere'} into {world.vendor}"):
        checkout("fake", world.options.vendor_dir, pins_file=world.pins)
    assert not world.vendor.exists()  # no half clone left behind


def test_a_commit_the_repository_lacks_is_reported(world):
    world.pins.write_text(
        yaml.safe_dump({"fake": {"url": str(world.tmp / "origin"), "commit": "0" * 40, "paths": ["x/"]}})
    )
    with pytest.raises(UpstreamError, match=f"commit {'0' * 40} is not in "):
        checkout("fake", world.options.vendor_dir, pins_file=world.pins)


# -- pins ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "pin, expected",
    [
        ({"url": "u", "commit": "5bdca77", "paths": ["a/"]}, "fake.commit: String should match pattern"),
        ({"url": "u", "commit": "a" * 40, "paths": ["a/"], "branch": "main"}, "fake.branch: unknown key"),
        ({"url": "u", "commit": "a" * 40}, "fake.paths: required key is missing"),
        (
            {"url": "u", "commit": "a" * 40, "paths": ["../up"]},
            "fake.paths[0]: must be a path inside the checkout: '..' is not allowed, got '../up'",
        ),
    ],
)
def test_bad_pins_name_the_file_and_the_field(tmp_path, pin, expected):
    path = tmp_path / "upstream.yaml"
    path.write_text(yaml.safe_dump({"fake": pin}))
    with pytest.raises(UpstreamError) as info:
        load_pins(path)
    assert str(info.value).startswith(f"{path}: ") and expected in str(info.value)


@pytest.mark.parametrize(
    "make, expected",
    [
        (lambda p: p.mkdir(), "the file of upstream pins is a folder, not a regular file"),
        (lambda p: os.mkfifo(p), "the file of upstream pins is a FIFO (named pipe), not a regular file"),
        (lambda p: p.write_bytes(b"fake: \xff\n"), "the file of upstream pins is not UTF-8 text (byte offset 6)"),
    ],
)
def test_a_pins_file_that_cannot_be_read_is_named(tmp_path, make, expected):
    """--pins names the file: a folder, a FIFO (never opened: it would block) or bytes that are not text are
    refused in one line, as the data lock is."""
    path = tmp_path / "upstream.yaml"
    make(path)
    with pytest.raises(UpstreamError) as info:
        load_pins(path)
    assert str(info.value) == f"{path}: {expected}"


def test_the_project_pins_load():
    pin = load_pins()["prescriptive-scaling"]
    assert pin.url == "https://github.com/hlzhang109/prescriptive-scaling" and len(pin.commit) == 40


# -- running the adapter ---------------------------------------------------------------------------------------


def test_the_adapter_runs_isolated_from_the_checkout(checked_out, monkeypatch):
    w = checked_out
    scratch_root = w.tmp / "tmp"  # the run's scratch folder is made here, and must be gone after it
    scratch_root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch_root))
    r = _arm(w, claim=_claim(controls=[("double", 2)]))
    assert r.status == "ok", r.reason
    assert r.values == {"value": 20.0, "seed": 7.0}  # VALUE = 2 at the pinned commit, times factor 10
    assert r.controls == {"double": {"values": {"value": 4.0}, "details": {}}}
    d = r.details
    assert d["path0"] == str(w.vendor) and d["file"] == str(w.vendor / "fakepkg" / "__init__.py")
    assert d["env"]["MPLBACKEND"] == "Agg" and d["env"]["PYTHONHASHSEED"] == "0"
    assert d["cwd"] == "<scratch>"  # the scratch folder, named without its local path
    assert d["env"]["HOME"] == "<scratch>/home" and d["env"]["MPLCONFIGDIR"] == "<scratch>/mpl"
    assert not list(scratch_root.iterdir())  # and it is gone
    assert d["table"] == "a,b\n1,2\n"
    assert "noise on stdout" in r.stdout and (r.commit, r.url) == (w.c2, str(w.tmp / "origin"))
    assert not list(w.vendor.rglob("__pycache__"))  # the checkout stays clean
    verified_tree("fake", w.options.vendor_dir, pins_file=w.pins)


def test_a_missing_checkout_cannot_run(world):
    r = _arm(world)
    assert r.status == "could not run" and "run `make vendor`" in r.reason and r.commit == world.c2


def test_an_unreachable_repository_cannot_run(world):
    url = str(world.tmp / "nowhere")
    world.pins.write_text(yaml.safe_dump({"fake": {"url": url, "commit": world.c2, "paths": ["fakepkg/"]}}))
    r = _arm(world, auto_checkout=True)
    assert r.status == "could not run" and f"could not clone {url}" in r.reason
    assert "does not exist" in r.reason  # git's own words


def test_auto_checkout_clones_a_missing_checkout(world):
    assert _arm(world, auto_checkout=True).status == "ok"


def test_a_crashing_adapter_cannot_run_and_shows_stderr(checked_out):
    r = _arm(checked_out, adapter="crash.py")
    assert r.status == "could not run" and "crash.py exited with status 1" in r.reason
    assert "about to fail" in r.reason and "RuntimeError: boom from the fake adapter" in r.reason
    assert "boom from the fake adapter" in r.stderr


@pytest.mark.parametrize("mode", ["none", "bubblewrap"])
def test_a_killed_adapter_is_said_to_be_killed(checked_out, mode):
    r = _arm(checked_out, adapter="selfkill.py", sandbox=mode)
    assert r.status == "could not run" and "selfkill.py was killed by signal 9" in r.reason


def test_a_hanging_adapter_is_killed_with_its_children(checked_out):
    t0 = time.perf_counter()
    r = _arm(checked_out, adapter="hang.py", timeout_s=2)
    assert r.status == "could not run" and "did not finish within 2 s and was killed" in r.reason
    assert time.perf_counter() - t0 < 10
    assert "pids " in r.stdout  # the child had started
    assert _gone(str(checked_out.adapters / "hang.py")), "the adapter or its child outlived the timeout"


def _procs(marker: str) -> list[int]:
    """Live processes (zombies waiting to be reaped count as dead) whose command line contains ``marker``.

    Found through /proc rather than by pid: in a sandbox the adapter sees other pids than we do.
    """
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


def _gone(marker: str, within: float = 5.0) -> bool:
    deadline = time.monotonic() + within
    while _procs(marker):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_an_answer_of_the_wrong_shape_cannot_run(checked_out):
    r = _arm(checked_out, adapter="badshape.py")
    assert r.status == "could not run" and "not JSON of the expected shape: values.value:" in r.reason


def test_a_missing_adapter_file_cannot_run(checked_out):
    r = _arm(checked_out, adapter="nope.py")
    assert r.status == "could not run" and "nope.py does not exist" in r.reason


@pytest.mark.parametrize(
    "change, reason",
    [
        ({"adapter": None}, "has no adapter"),
        ({"claim": _claim(upstream=None)}, "names no upstream pin"),
    ],
)
def test_not_run_says_why(world, change, reason):
    adapter = change.pop("adapter", "echo.py")
    r = _arm(world, adapter=adapter, **change)
    assert r.status == "not run" and reason in r.reason


def test_an_unknown_pin_cannot_run_and_suggests_a_name(world):
    r = _arm(world, claim=_claim(upstream="fak"))
    assert r.status == "could not run" and "no upstream pin named 'fak' (did you mean 'fake'?)" in r.reason


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
    assert len(w.calls) == 1 and (first.cached, second.cached) == (False, True)
    assert second.values == first.values and second.seconds == first.seconds
    assert (w.options.cache_dir / f"{first.cache_key}.json").is_file()


def test_force_reruns(counted):
    _arm(counted)
    again = _arm(counted, force=True)
    assert len(counted.calls) == 2 and again.cached is False


@pytest.mark.parametrize("force", [False, True])
def test_claims_asking_one_request_at_once_run_it_once(counted, monkeypatch, force):
    """A build's claims start their authors' arms together: the first runs a shared request, the others wait for
    its answer (the notebook's main request ran once per claim that asked it, minutes each)."""
    import threading

    counting = upstream._run_adapter  # the fixture's: counts each run

    def slow(*a, **k):
        time.sleep(0.5)  # the others ask meanwhile
        return counting(*a, **k)

    monkeypatch.setattr(upstream, "_run_adapter", slow)
    out = []
    threads = [threading.Thread(target=lambda: out.append(_arm(counted, force=force))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(counted.calls) == 1 and sum(not r.cached for r in out) == 1
    assert len({r.cache_key for r in out}) == 1 and all(r.values == out[0].values for r in out)


def test_a_changed_adapter_or_request_misses_the_cache(counted):
    w = counted
    key = _arm(w).cache_key
    assert _arm(w, claim=_claim(controls=[("double", 2)])).cache_key != key
    (w.adapters / "echo.py").write_text((w.adapters / "echo.py").read_text() + "\n# edited\n")
    assert _arm(w).cache_key != key
    assert len(w.calls) == 3


def test_failures_are_not_cached(counted):
    assert _arm(counted, adapter="crash.py").status == "could not run"
    assert _arm(counted, adapter="crash.py").cached is False
    assert len(counted.calls) == 2 and not list(counted.options.cache_dir.glob("*.json"))


# -- hardening (issue #11) -------------------------------------------------------------------------------------

GOOD, ALTERED = "a,b\n1,2\n", "a,b\n6,6\n"  # the verified table, and a swapped one of the same shape


def _cached_tables(w) -> list[str]:
    return [json.loads(f.read_text())["result"]["details"]["table"] for f in sorted(w.options.cache_dir.glob("*.json"))]


def test_a_table_swapped_after_verification_is_not_what_the_adapter_reads(checked_out):
    """Defect 1: the adapter re-read the table by path after it had been verified, and the answer
    computed from the altered file was cached under the key of the verified one."""
    w = checked_out
    table = w.tmp / "data" / "t.csv"
    w.tables.describe(["t"])  # verified, as the runner does before either arm runs
    table.write_text(ALTERED)
    r = _arm(w)
    assert r.status == "ok", r.reason
    assert r.details["table"] == GOOD  # the bytes that were verified, not the file now on disk
    assert _cached_tables(w) == [GOOD]
    table.write_text(GOOD)
    again = _arm(w)
    assert again.cached and again.details["table"] == GOOD


def test_a_scripts_namespace_package_imports_and_nothing_shadows_from_the_scratch_folder(checked_out):
    w = checked_out
    r = _arm(w, adapter="paths.py")
    assert r.status == "ok", r.reason
    d = r.details
    assert r.values["value"] == 5.0  # scripts/ has no __init__.py: a namespace package from the checkout
    assert d["sys_path"][0] == str(w.vendor)
    assert not any(p.startswith(str(w.tmp / "harness")) for p in d["sys_path"])  # the harness is a package, not a path
    assert "" not in d["sys_path"] and "." not in d["sys_path"]
    assert not any(p.startswith(d["cwd"]) for p in d["sys_path"])  # nothing from the scratch folder
    assert "site-packages" in d["pandas"]


@pytest.mark.parametrize(
    "planted, exclude",
    [
        ("pandas.py", "pandas.py"),
        ("fakepkg/__pycache__/__init__.cpython-311.pyc", "__pycache__/"),
    ],
)
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
    assert r.status == "could not run" and f"ignored {planted}" in r.reason


def test_an_empty_planted_folder_in_the_checkout_is_refused(checked_out):
    w = checked_out
    (w.vendor / "numpy").mkdir()
    assert "untracked numpy/" in _refusal(w)


def test_the_adapter_runs_as_a_process_with_a_safe_path(checked_out):
    """The launcher runs with -s -P -B: no user site, no script folder or cwd on sys.path, no .pyc written."""
    w = checked_out
    r = _arm(w, adapter="paths.py")
    assert r.status == "ok", r.reason
    assert not any(".local" in p for p in r.details["sys_path"])
    assert not list(w.vendor.rglob("__pycache__")) and not list(w.options.harness_dir.rglob("__pycache__"))


def _bubblewrap_or_skip() -> None:
    from harness.authors import sandbox

    why = sandbox.unavailable()
    if why:
        pytest.skip(f"no working bubblewrap here: {why}")


def test_the_sandbox_is_recorded(checked_out):
    r = _arm(checked_out)
    assert r.status == "ok", r.reason
    assert r.confinement["network"] == "cut (a network namespace of its own)"
    assert _arm(checked_out, sandbox="none", force=True).confinement["network"] == "not cut (--sandbox none)"


def test_cache_and_input_copies_are_world_readable(checked_out):
    """Defect 8: cache entries were written 0600 (committed reports are 0644)."""
    w = checked_out
    r = _arm(w, adapter="paths.py")
    assert r.status == "ok", r.reason
    (entry,) = w.options.cache_dir.glob("*.json")
    assert stat.S_IMODE(entry.stat().st_mode) == 0o644
    assert r.details["mode"] == "0o644"  # the adapter's copy of the table


PARENT = """
import json, sys
sys.path.pop(0)  # this script's folder holds the test's own harness package (the adapters'): import the real one
from types import SimpleNamespace
from pathlib import Path
from harness.core.datalock import DataLock, Tables
from harness.protocols.base import ProtocolParams
from harness.claimfiles.spec import Claim, ClaimSpec
from harness.authors.upstream import UpstreamOptions, run_upstream_arm

cfg = json.loads(Path(sys.argv[1]).read_text())

class Params(ProtocolParams):
    factor: float = 1.0

options = UpstreamOptions(**{k: Path(v) for k, v in cfg["options"].items()}, timeout_s=60, **cfg["more"])
tables = Tables(DataLock.model_validate(cfg["lock"]), Path(cfg["data"]))
claim = ClaimSpec(path=Path("c.yaml"), claim=Claim.model_validate(cfg["claim"]), protocol=None, params=Params(),
                  control_params={}, vocabulary={}, control_vocabularies={})
protocol = SimpleNamespace(name="fake", card=SimpleNamespace(name="fake", adapter_module="harness.fake.sleep"))
run_upstream_arm(claim, protocol, Params(), tables, options=options)
"""


# -- hardening, round two (issue #21 item 2): every mode cuts the network, limits memory and processes, and
# -- leaves no process behind


@pytest.mark.parametrize("mode", ["none", "bubblewrap"])
def test_the_adapter_cannot_take_8_gib(checked_out, mode):
    r = _arm(checked_out, adapter="allocate.py", sandbox=mode)
    assert r.status == "ok", r.reason
    assert r.values["value"] == 0.0 and "at most 6 GiB" in r.confinement["memory"]


@pytest.mark.parametrize("mode", ["none", "bubblewrap"])
def test_the_adapter_cannot_reach_a_listener_on_this_machine(checked_out, mode):
    import socket

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    try:
        claim = _claim()
        proto = _protocol("connect.py")
        options = UpstreamOptions(**{**checked_out.options.__dict__, "sandbox": mode})
        r = run_upstream_arm(claim, proto, FakeParams(factor=float(port)), checked_out.tables, options=options)
    finally:
        server.close()
    assert r.status == "ok", r.reason
    assert r.values["value"] == (1.0 if mode == "none" else 0.0)
    assert r.confinement["network"].startswith("not cut" if mode == "none" else "cut")


# -- tampering hidden from git (issue #21 item 1) --------------------------------------------------------------


@pytest.mark.parametrize("hide", ["assume-unchanged", "skip-worktree"])
def test_an_edit_hidden_from_git_is_refused_naming_the_file(checked_out, hide):
    w = checked_out
    with git.Repo(w.vendor) as repo:
        repo.git.update_index(f"--{hide}", "fakepkg/__init__.py")
    target = w.vendor / "fakepkg" / "__init__.py"
    target.write_text("VALUE = 99\n")
    os.utime(target, (1, 1))  # an old timestamp as well: only the bytes on disk can tell
    msg = _refusal(w)
    assert "\n" not in msg and "fakepkg/__init__.py" in msg and ("pinned commit" in msg or "local changes" in msg)
    result = _arm(w)
    assert result.status == "could not run" and "fakepkg/__init__.py" in result.reason
    assert not list(w.options.cache_dir.glob("*.json"))


def test_the_cache_key_covers_the_bytes_that_ran(checked_out, monkeypatch):
    w = checked_out
    key = _arm(w).cache_key
    from harness.authors import checkout as checkout_module

    real = checkout_module.verified_tree
    monkeypatch.setattr(upstream, "verified_tree", lambda *a, **k: (real(*a, **k)[0], "0" * 64))
    assert _arm(w).cache_key != key


# -- issue #29 item 10: what varies between runs with no number moving stays out of the record ------------------


def test_one_scrubber_leaves_no_local_path_at_any_depth(tmp_path):
    """``core.paths.scrub_paths`` (the reasons an arm gives, the authors' output and answer): the data root, the
    scratch folder, any other temporary path and the project's own paths, in strings at any depth; numbers kept."""
    import tempfile

    from harness.core.paths import PROJECT_ROOT, scrub_paths

    scratch, data = tmp_path / "scratch", Path("/srv/data-root")
    other = Path(tempfile.gettempdir()) / "pytest-x" / "y.txt"
    obj = {
        "why": f"read {data}/oll.csv in {scratch}/launch.py from {PROJECT_ROOT}/harness/cli.py; {other} left",
        "rows": [[f"{PROJECT_ROOT}", 3.5], {"cwd": str(scratch)}],
        "n": 7,
    }
    got = scrub_paths(obj, scratch=scratch, data_root=data)
    assert got == {
        "why": "read <data root>/oll.csv in <scratch>/launch.py from harness/cli.py; <scratch> left",
        "rows": [[".", 3.5], {"cwd": "<scratch>"}],
        "n": 7,
    }
    assert scrub_paths(None) is None and scrub_paths("no path here") == "no path here"
    # an answer's other paths are data: only the scratch folder and the project go
    assert scrub_paths([str(other), f"{scratch}/a"], scratch=scratch, any_temp=False) == [str(other), "<scratch>/a"]


# -- broken on purpose: the cache, the checkout, the sandbox's limits ------------------------------------------


def _entry(w, r) -> Path:
    return w.options.cache_dir / f"{r.cache_key}.json"


def test_an_edited_cached_answer_is_computed_again(counted):
    w = counted
    first = _arm(w)
    stored = json.loads(_entry(w, first).read_text())
    stored["result"]["values"]["value"] = 99.0  # the sha256 beside it no longer matches
    _entry(w, first).write_text(json.dumps(stored))
    again = _arm(w)
    assert again.cached is False and again.values["value"] == 20.0 and len(w.calls) == 2
    _entry(w, first).write_text(_entry(w, first).read_text()[:50])  # truncated
    assert _arm(w).cached is False and len(w.calls) == 3


def test_a_fifo_in_place_of_a_cache_entry_does_not_hang(counted):
    w = counted
    path = _entry(w, _arm(w))
    path.unlink()
    os.mkfifo(path)
    t0 = time.perf_counter()
    r = _arm(w)
    assert r.status == "ok" and r.cached is False and time.perf_counter() - t0 < 10


def test_an_answer_cached_unconfined_is_not_served_to_a_confined_run(counted):
    _bubblewrap_or_skip()
    assert _arm(counted, sandbox="none").ok
    r = _arm(counted)
    assert r.ok and r.cached is False and r.confinement["network"].startswith("cut")


def test_an_unwritable_cache_skips_the_write_with_a_warning(checked_out):
    w = checked_out
    w.options.cache_dir.write_text("a file where the cache folder should be")
    with pytest.warns(UserWarning, match="answer was used but not cached"):
        r = _arm(w)
    assert r.status == "ok" and r.values["value"] == 20.0


def test_a_flood_on_stdout_is_stopped_at_the_cap(checked_out):
    _bubblewrap_or_skip()
    r = _arm(checked_out, adapter="flood.py")
    assert r.status == "could not run" and "printed more than 64 MiB to stdout and stderr" in r.reason
    assert len(r.stdout) <= upstream.OUTPUT_TAIL_CHARS + 100  # the harness kept a tail, not the flood


def test_a_huge_answer_is_refused(checked_out):
    r = _arm(checked_out, adapter="hugeanswer.py")
    assert r.status == "could not run" and "wrote an answer of more than 16 MiB" in r.reason


def test_a_replace_ref_does_not_change_what_runs(checked_out):
    w = checked_out
    with git.Repo(w.vendor) as repo:  # the pinned commit replaced by a newer one, and that one checked out
        repo.git.replace(w.c2, w.c3)
        repo.git.checkout("--quiet", "--force", "--detach", w.c2)
    assert (w.vendor / "fakepkg" / "__init__.py").read_text() == "VALUE = 3\n"
    r = _arm(w)
    assert r.status == "could not run" and "fakepkg/__init__.py" in r.reason and not r.values


def test_an_fsmonitor_planted_in_the_checkout_is_never_run(checked_out):
    w = checked_out
    marker = w.tmp / "FSMONITOR_RAN"
    hook = w.tmp / "fsmonitor.sh"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    hook.chmod(0o755)
    subprocess.run(["git", "-C", str(w.vendor), "config", "core.fsmonitor", str(hook)], check=True)
    assert "its git configuration holds core.fsmonitor" in _refusal(w)
    assert _arm(w).status == "could not run" and not marker.exists()


def test_the_authors_code_writes_nowhere_but_its_scratch_folder(checked_out):
    _bubblewrap_or_skip()
    w = checked_out
    r = _arm(w, adapter="escape.py")
    assert r.status == "ok", r.reason
    assert r.values["value"] == 0.0
    assert not (w.tmp / "reports" / "ESCAPE.md").exists() and not Path("/dev/shm/harness-escape-7").exists()


def test_a_child_of_the_authors_code_does_not_survive_the_run(checked_out):
    _bubblewrap_or_skip()
    w = checked_out
    r = _arm(w, adapter="orphan.py")
    assert r.status == "ok", r.reason
    assert _gone(f"orphan-marker {w.vendor}", within=2.0), "the detached child outlived the run"


# -- a pin's declared environment, and a notebook run through the real path --------------------------------


def _declare(w, pin_name="fake", **fields):
    pins = yaml.safe_load(w.pins.read_text())
    pins[pin_name].update(fields)
    w.pins.write_text(yaml.safe_dump(pins))


@pytest.fixture
def bare_env(checked_out, monkeypatch):
    """The pin declares a package; its environment is a bare venv uv makes offline (nothing installed)."""
    from harness.authors import environment as envmod

    pytest.importorskip("uv", reason="building an environment needs uv (pip install -e .)")
    _declare(checked_out, packages=["fakepkg==2"])
    monkeypatch.setattr(envmod, "_install", lambda pin, packages, python: None)
    (checked_out.adapters / "prefix.py").write_text(
        "import sys, fakepkg\n\ndef run(request):\n"
        "    return {'values': {'value': fakepkg.VALUE}, 'details': {'prefix': sys.prefix}}\n"
    )
    return checked_out


def test_a_pin_that_declares_packages_runs_in_their_environment(bare_env):
    w = bare_env
    envs = w.tmp / "envs"
    r = _arm(w, adapter="prefix.py", envs_dir=envs)
    assert r.status == "ok", r.reason
    (built,) = envs.iterdir()
    assert r.details["prefix"] == str(built) and r.values == {"value": 2.0}
    _declare(w, packages=["fakepkg==3"])
    again = _arm(w, adapter="prefix.py", envs_dir=envs)
    assert again.cache_key != r.cache_key and not again.cached and len(list(envs.iterdir())) == 2


def test_a_pins_time_limit_holds(bare_env):
    _declare(bare_env, timeout_s=1)
    r = _arm(bare_env, adapter="hang.py", envs_dir=bare_env.tmp / "envs")
    assert r.status == "could not run" and "did not finish within 1 s" in r.reason


TOY_CELLS = [
    "x = 2 * k",
    "raise SystemExit('cell 1 is not named: it must not run')",
    "import numpy as np\ny = np.arange(x) * factor",
    "1 / 0",
]


def _notebook_adapter(w, name: str, cells: list[int]):
    named = [(i, TOY_CELLS[i]) for i in cells]
    (w.adapters / name).write_text(
        textwrap.dedent(f"""
        from harness.authors.adapters.notebook import cell_sha256, run_cells

        def run(request):
            cells = [(i, cell_sha256(source)) for i, source in {named!r}]
            setting = f"k, factor = 3, {{request['params']['factor']}}"
            out = run_cells(request["checkout"], "toy.ipynb", cells, parameters=setting, outputs=["x", "y"])
            return {{"values": {{"x": out["x"]}}, "details": {{"y": out["y"]}}}}
        """)
    )


@pytest.fixture
def notebook(checked_out):
    """A second pin holding a notebook whose committed outputs are wrong, and the runner in the test's package."""
    nbformat = pytest.importorskip("nbformat", reason="the notebook runner needs nbformat (pip install -e '.[test]')")
    pytest.importorskip("nbclient", reason="the notebook runner needs nbclient (pip install -e '.[test]')")
    pytest.importorskip("ipykernel", reason="the notebook runner needs ipykernel (pip install -e '.[test]')")
    w = checked_out
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in TOY_CELLS])
    nb.cells[2].outputs = [nbformat.v4.new_output("execute_result", {"text/plain": "[999]"}, execution_count=3)]
    with git.Repo.init(w.tmp / "nb-origin") as origin:
        commit = _commit(origin, {"toy.ipynb": nbformat.writes(nb)}, "toy")
    pins = yaml.safe_load(w.pins.read_text())
    pins["nb"] = {"url": str(w.tmp / "nb-origin"), "commit": commit, "paths": ["toy.ipynb"]}
    w.pins.write_text(yaml.safe_dump(pins))
    runner = "authors/adapters/notebook.py"
    shutil.copy(HARNESS / runner, w.adapters.parent / runner)
    checkout("nb", w.options.vendor_dir, pins_file=w.pins)
    return w


def test_a_notebook_runs_its_named_cells_confined_and_answers_what_they_computed(notebook):
    _notebook_adapter(notebook, "nb_ok.py", [0, 2])
    r = _arm(notebook, adapter="nb_ok.py", claim=_claim(upstream="nb"))
    assert r.status == "ok", r.reason
    # k = 3, factor = 10 (FakeParams): x = 6, y = 0, 10, ..., 50; the committed output [999] is not read, and
    # cell 1 (which would stop the kernel) is not run
    assert r.values == {"x": 6.0} and r.details["y"] == [0, 10, 20, 30, 40, 50]
    assert "toy.ipynb: cell 2 ran in" in r.stderr


def test_a_raising_cell_is_named_with_its_error(notebook):
    _notebook_adapter(notebook, "nb_raises.py", [0, 3])
    r = _arm(notebook, adapter="nb_raises.py", claim=_claim(upstream="nb"))
    assert r.status == "could not run"
    assert "NotebookError: toy.ipynb: cell 3 raised ZeroDivisionError: division by zero" in r.reason
