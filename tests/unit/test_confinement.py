"""Hostile authors' code, in every confinement mode this machine offers (issue #29 items 3, 4, 5).

Each payload is an adapter of the fake authors' repository of ``test_upstream.py``. The modes:

* ``bubblewrap``: the sandbox (skipped where it cannot be had);
* ``landlock``: no bubblewrap (hidden from the harness), so the child confines itself: Landlock for writes and,
  where the kernel has them, its scopes for signals; the seccomp filter for the rest;
* ``seccomp-signals``: the same, with Landlock's scopes taken away, so that the seccomp filter keeps the
  signals in the child's process group;
* ``none``: the sandbox switched off (``--sandbox none``): no confinement of the filesystem, but signals,
  sockets and other processes still guarded (``none-seccomp-signals``: by seccomp and a Landlock domain that
  confines nothing of the filesystem, as on a kernel without Landlock's scopes);
* ``bare``: no bubblewrap, no scopes, no seccomp filter: the record must *say* what does not hold.

The SIGSTOP payload runs under a harness of its own (a child process of the test): if it froze that harness,
the test would see it frozen instead of freezing itself.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from test_upstream import FakeParams, _claim, _procs, _protocol, checked_out, world  # noqa: F401

from harness.authors import confine
from harness.authors.upstream import UpstreamOptions, run_upstream_arm
from harness.core import sandbox

#: What each payload tries, and says: "done", or the system's reason for refusing it.
TRY = """
def _try(fn):
    try:
        fn()
        return "done"
    except OSError as exc:
        return exc.strerror
"""

PAYLOADS = {
    # Stops the harness (its pid is the request's `factor`) and the guard of its scratch folder, tries to trace
    # it, to lower its CPU limit and its priority, then sleeps past the time limit.
    "freeze.py": """
        import ctypes, json, os, resource, signal, time

        def _guards(harness):
            found = []
            for entry in os.listdir("/proc"):
                try:
                    argv = open(f"/proc/{entry}/cmdline", "rb").read().split(b"\\0")
                except OSError:
                    continue
                if b"guard" in argv and str(harness).encode() in argv:
                    found.append(int(entry))
            return found

        _TRY_

        def run(request):
            harness = int(request["params"]["factor"])
            libc = ctypes.CDLL(None, use_errno=True)

            def attach():
                if libc.ptrace(16, harness, 0, 0) != 0:  # PTRACE_ATTACH stops what it attaches to
                    raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))

            said = {"harness": _try(lambda: os.kill(harness, signal.SIGSTOP))}
            said.update({f"guard {p}": _try(lambda p=p: os.kill(p, signal.SIGSTOP)) for p in _guards(harness)})
            said["group"] = _try(lambda: os.killpg(os.getpgid(harness), signal.SIGSTOP))
            said["ptrace"] = _try(attach)
            said["prlimit"] = _try(lambda: resource.prlimit(harness, resource.RLIMIT_CPU, (1, 1)))
            said["setpriority"] = _try(lambda: os.setpriority(os.PRIO_PROCESS, harness, 19))
            print("tried " + json.dumps(said), flush=True)
            time.sleep(600)
    """,
    # The same SIGSTOP alone (where nothing stops it, the test resumes the harness itself).
    "stop.py": """
        import os, signal, time

        def run(request):
            os.kill(int(request["params"]["factor"]), signal.SIGSTOP)
            time.sleep(600)
    """,
    # Changes the mode, owner, times, extended attributes and inode flags of a file outside its folder.
    "metadata.py": """
        import fcntl, os, struct

        _TRY_

        def _flags(victim):
            fd = os.open(victim, os.O_RDONLY)
            try:
                fcntl.ioctl(fd, 0x40086602, struct.pack("l", 0x80))  # FS_IOC_SETFLAGS: FS_NOATIME_FL
            finally:
                os.close(fd)

        def _fchmod(victim):
            fd = os.open(victim, os.O_RDONLY)
            try:
                os.fchmod(fd, 0o777)
            finally:
                os.close(fd)

        def run(request):
            victim = os.path.join(os.path.dirname(os.path.dirname(request["checkout"])), "victim.txt")
            said = {
                "chmod": _try(lambda: os.chmod(victim, 0o777)),
                "fchmod": _try(lambda: _fchmod(victim)),
                "chown": _try(lambda: os.chown(victim, 65534, 65534)),
                "utime": _try(lambda: os.utime(victim, (0, 0))),
                "setxattr": _try(lambda: os.setxattr(victim, "user.harness", b"x")),
                "flags": _try(lambda: _flags(victim)),
            }
            return {"values": {"value": float(sum(v == "done" for v in said.values()))}, "details": said}
    """,
    # Sends bytes to a UNIX socket file outside its folder, and to an abstract one, named by the test.
    "unix.py": """
        import hashlib, os, socket

        def run(request):
            base = os.path.dirname(os.path.dirname(request["checkout"]))
            abstract = "\\0harness-test-" + hashlib.sha256(base.encode()).hexdigest()[:16]
            said = {}
            for name, address in (("file", os.path.join(base, "outside.sock")), ("abstract", abstract)):
                try:
                    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                    s.settimeout(2)
                    s.connect(address)
                    s.sendall(b"escaped")
                    s.close()
                    said[name] = "sent"
                except OSError as exc:
                    said[name] = exc.strerror or str(exc)
            return {"values": {"value": float(sum(v == "sent" for v in said.values()))}, "details": said}
    """,
    # Reads a file outside its folder (as a run log in .cache/runs/ would be).
    "read.py": """
        import os

        def run(request):
            secret = os.path.join(os.path.dirname(os.path.dirname(request["checkout"])), "secret.txt")
            try:
                text = open(secret).read()
            except OSError as exc:
                text = exc.strerror
            return {"values": {"value": 1.0}, "details": {"read": text}}
    """,
}

MODES = ["bubblewrap", "landlock", "seccomp-signals", "none", "bare"]
REFUSED = {"Operation not permitted", "Permission denied"}  # EPERM (seccomp, Landlock's scopes), EACCES (Landlock)
UNSEEN = {"No such file or directory", "No such process"}  # bubblewrap: nothing outside to name


def _hidden(mode: str) -> dict:
    """What the mode takes away from the harness: ``{module attribute: why}``, applied by :func:`_forced`."""
    return {
        "bubblewrap": {},
        "landlock": {"bwrap": "hidden for a test"},
        "seccomp-signals": {"bwrap": "hidden for a test", "scopes_unavailable": "taken away for a test"},
        "none": {"bwrap": "hidden for a test"},
        "none-seccomp-signals": {"bwrap": "hidden for a test", "scopes_unavailable": "taken away for a test"},
        "bare": {
            "bwrap": "hidden for a test",
            "scopes_unavailable": "taken away for a test",
            "seccomp_unavailable": "taken away for a test",
        },
    }[mode]


def _sandbox_option(mode: str) -> str:
    return {"bubblewrap": "bubblewrap", "none": "none", "none-seccomp-signals": "none"}.get(mode, "auto")


def _skip_absent(mode: str) -> None:
    if mode == "bubblewrap" and sandbox.bubblewrap_unavailable():
        pytest.skip(f"no working bubblewrap here: {sandbox.bubblewrap_unavailable()}")
    if mode in ("landlock", "seccomp-signals", "bare") and confine.landlock_unavailable():
        pytest.skip(f"no Landlock here: {confine.landlock_unavailable()}")
    if mode == "landlock" and confine.scopes_unavailable() and confine.seccomp_unavailable():
        pytest.skip(f"neither Landlock's scopes nor seccomp here: {confine.scopes_unavailable()}")
    if mode in ("seccomp-signals", "none", "none-seccomp-signals") and confine.seccomp_unavailable():
        pytest.skip(f"no seccomp filter here: {confine.seccomp_unavailable()}")
    if mode != "bubblewrap" and confine.network_unavailable():
        pytest.skip(f"no network namespace without bubblewrap here: {confine.network_unavailable()}")


def _forced(monkeypatch, mode: str) -> None:
    for name, why in _hidden(mode).items():
        if name == "bwrap":
            monkeypatch.setattr(sandbox.shutil, "which", lambda _: None)
        else:
            monkeypatch.setattr(confine, name, lambda why=why: why)
    sandbox.bubblewrap_unavailable.cache_clear()  # and again after the test (the fixture `hostile`)


@pytest.fixture
def hostile(checked_out):  # noqa: F811
    for name, src in PAYLOADS.items():
        (checked_out.adapters / name).write_text(textwrap.dedent(src).replace("_TRY_\n", TRY), encoding="utf-8")
    yield checked_out
    sandbox.bubblewrap_unavailable.cache_clear()


def _run(w, adapter: str, mode: str, factor: float = 10.0):
    options = UpstreamOptions(**{**w.options.__dict__, "sandbox": _sandbox_option(mode), "watch": {}, "force": True})
    return run_upstream_arm(_claim(), _protocol(adapter), FakeParams(factor=factor), w.tables, options=options)


# -- item 3: the time limit holds whatever the child does ------------------------------------------------------

HARNESS = """
import json, sys
sys.path.pop(0)  # this script's folder holds the test's own harness package (the adapters'): import the real one
from pathlib import Path
from types import SimpleNamespace
from harness.authors import confine
from harness.core import sandbox
from harness.core.datalock import DataLock, Tables
from harness.protocols.base import ProtocolParams
from harness.claimfiles.spec import Claim, ClaimSpec
from harness.authors.upstream import UpstreamOptions, run_upstream_arm

cfg = json.loads(Path(sys.argv[1]).read_text())
for name, why in cfg["hidden"].items():
    if name == "bwrap":
        sandbox.shutil.which = lambda _: None
    else:
        setattr(confine, name, lambda why=why: why)

class Params(ProtocolParams):
    factor: float = 1.0

options = UpstreamOptions(**{k: Path(v) for k, v in cfg["options"].items()}, timeout_s=cfg["timeout"], **cfg["more"])
tables = Tables(DataLock.model_validate(cfg["lock"]), Path(cfg["data"]))
claim = ClaimSpec(path=Path("c.yaml"), claim=Claim.model_validate(cfg["claim"]), protocol=None, params=Params(),
                  control_params={}, vocabulary={}, control_vocabularies={})
protocol = SimpleNamespace(name="fake", card=SimpleNamespace(name="fake", adapter_module=cfg["adapter"]))
r = run_upstream_arm(claim, protocol, Params(factor=float(__import__("os").getpid())), tables, options=options)
Path(cfg["result"]).write_text(json.dumps(r.to_json()))
"""


def _stopped(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] in ("T", "t")
    except OSError:
        return False


def _frozen_run(w, adapter: str, mode: str, timeout_s: float = 3.0, patience_s: float = 150.0):
    """Run ``adapter`` under a harness of its own; ``(result or None, seconds, whether it was seen stopped)``.
    A harness seen stopped is resumed (SIGCONT) each time, so the test never waits on it for ever."""
    cfg = {
        "options": {k: str(getattr(w.options, k)) for k in ("vendor_dir", "cache_dir", "pins_file", "harness_dir")},
        "more": {"sandbox": _sandbox_option(mode), "watch": {}, "force": True},
        "hidden": _hidden(mode),
        "timeout": timeout_s,
        "lock": w.tables.lock.model_dump(),
        "data": str(w.tmp / "data"),
        "claim": _claim().claim.model_dump(),
        "adapter": f"harness.fake.{Path(adapter).stem}",
        "result": str(w.tmp / "result.json"),
    }
    (w.tmp / "cfg.json").write_text(json.dumps(cfg))
    (w.tmp / "harness_run.py").write_text(HARNESS)
    t0, seen_stopped = time.monotonic(), False
    with open(w.tmp / "harness_run.err", "wb") as err:
        proc = subprocess.Popen(
            [sys.executable, str(w.tmp / "harness_run.py"), str(w.tmp / "cfg.json")],
            stdout=subprocess.DEVNULL,
            stderr=err,
            start_new_session=True,  # a group of its own: a stop sent to its group reaches neither pytest nor workers
        )
    try:
        while proc.poll() is None and time.monotonic() - t0 < patience_s:
            if _stopped(proc.pid):
                seen_stopped = True
                os.kill(proc.pid, signal.SIGCONT)
            time.sleep(0.1)
        seconds = time.monotonic() - t0
        if proc.poll() is None:
            return None, seconds, seen_stopped
        assert proc.returncode == 0, (w.tmp / "harness_run.err").read_text()
        return json.loads((w.tmp / "result.json").read_text()), seconds, seen_stopped
    finally:
        proc.kill()
        proc.wait()
        for pid in _procs(str(w.tmp)):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("mode", ["bubblewrap", "landlock", "seccomp-signals", "none", "none-seccomp-signals"])
def test_the_authors_code_cannot_stop_the_harness_and_the_time_limit_holds(hostile, mode):
    """Unconfined, a payload that sent SIGSTOP to its parent froze a run with a 60 s limit until an outside timeout
    killed it at 409 s. Now no stop, trace, CPU limit or priority reaches the harness or its guard, and the run
    ends at its time limit, saying why; the record says that signals are confined."""
    _skip_absent(mode)
    result, seconds, seen_stopped = _frozen_run(hostile, "freeze.py", mode)
    assert result is not None, f"the harness was still running after {seconds:.0f} s (stopped: {seen_stopped})"
    assert not seen_stopped and seconds < 150  # the payload sleeps 600 s: it ended at the 3 s limit (and start-up)
    assert result["status"] == "could not run" and "did not finish within 3 s" in result["reason"]
    tried = json.loads(result["stdout"].split("tried ", 1)[1].splitlines()[0])
    assert tried and all(v in REFUSED | UNSEEN for v in tried.values()), tried
    if mode != "bubblewrap":
        assert any(k.startswith("guard ") for k in tried), tried  # the guard was there to be found, and spared
    signals = result["confinement"]["signals"]
    assert signals.startswith("only to its own") and "does not hold" not in signals
    if mode.endswith("seccomp-signals"):
        assert "only to its own process group (seccomp)" in signals


def test_where_nothing_confines_signals_the_record_says_the_time_limit_does_not_hold(hostile):
    """No bubblewrap, no Landlock scopes, no seccomp: the SIGSTOP reaches the harness (the test resumes it), and
    the record says that the time limit does not hold against the authors' code."""
    _skip_absent("bare")
    result, _, seen_stopped = _frozen_run(hostile, "stop.py", "bare")
    assert seen_stopped and result is not None
    signals = result["confinement"]["signals"]
    assert signals.startswith("not confined") and "the time limit does not hold" in signals


# -- item 4: metadata outside the folder ------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_mode_owner_times_and_attributes_outside_its_folder_are_refused_or_said(hostile, mode, monkeypatch):
    """Landlock let chmod, chown, utime and setxattr through outside the scratch folder (a victim file ended
    -rwxrwxrwx nobody, mtime 0) while the record said "writable only in its own folder". Now they are refused
    (seccomp, or bubblewrap where the file is not even there), or the record says exactly that they are not."""
    _skip_absent(mode)
    _forced(monkeypatch, mode)
    victim = hostile.tmp / "victim.txt"
    victim.write_text("victim")
    before = os.stat(victim)
    r = _run(hostile, "metadata.py", mode)
    assert r.status == "ok", r.reason
    fs = r.confinement["filesystem"]
    after = os.stat(victim)
    if mode in ("bubblewrap", "landlock", "seccomp-signals"):
        assert r.values["value"] == 0.0 and set(r.details.values()) <= REFUSED | UNSEEN, r.details
        assert (after.st_mode, after.st_uid, after.st_mtime_ns) == (before.st_mode, before.st_uid, before.st_mtime_ns)
        assert "not confined" not in fs
        if mode != "bubblewrap":
            assert "no file's mode, owner, times or extended attributes changeable anywhere (seccomp)" in fs
    elif mode == "bare":  # Landlock alone: what it does not cover is said
        assert r.values["value"] >= 4.0, r.details  # they went through ...
        assert "the mode, owner, times and extended attributes of files elsewhere not confined" in fs  # ... and said
    else:
        assert fs.startswith("not confined (the sandbox was switched off")


# -- item 5: UNIX sockets and reads outside ---------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_a_unix_socket_outside_its_folder_is_unreachable_or_said(hostile, mode, monkeypatch):
    """A payload connected to a socket file outside its folder and sent bytes (TCP was cut as promised)."""
    _skip_absent(mode)
    _forced(monkeypatch, mode)
    base = str(hostile.tmp)
    servers = []
    for address in (
        str(hostile.tmp / "outside.sock"),
        "\0harness-test-" + hashlib.sha256(base.encode()).hexdigest()[:16],
    ):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(address)
        s.listen(4)
        s.setblocking(False)
        servers.append(s)
    try:
        r = _run(hostile, "unix.py", mode)
        received = []
        for s in servers:
            try:
                conn, _ = s.accept()
                with conn:
                    conn.settimeout(1)
                    received.append(conn.recv(64))
            except BlockingIOError:
                pass
    finally:
        for s in servers:
            s.close()
    assert r.status == "ok", r.reason
    network = r.confinement["network"]
    assert r.details["abstract"] != "sent"  # a network namespace of its own: in every mode
    if mode == "bare":
        assert r.details["file"] == "sent" and received == [b"escaped"]  # it went through ...
        assert "a UNIX socket file outside its folder reachable" in network  # ... and the record says so
    else:
        assert r.values["value"] == 0.0 and not received, (r.details, received)
        assert r.details["file"] in REFUSED | UNSEEN, r.details
        assert "reachable" not in network
        if mode != "bubblewrap":
            assert "no UNIX socket can be made (seccomp)" in network


@pytest.mark.parametrize("mode", MODES)
def test_a_file_outside_what_it_needs_is_unseen_under_bubblewrap_and_said_readable_otherwise(
    hostile, mode, monkeypatch
):
    """Under bubblewrap the whole filesystem was visible read-only (a file's text ended in .cache/runs/). Now only
    what the authors' code needs is there; without bubblewrap, the record says every readable file is readable."""
    _skip_absent(mode)
    _forced(monkeypatch, mode)
    (hostile.tmp / "secret.txt").write_text("a run log")
    r = _run(hostile, "read.py", mode)
    assert r.status == "ok", r.reason
    if mode == "bubblewrap":
        assert r.details["read"] == "No such file or directory"
        assert "no other file or socket file reachable" in r.confinement["filesystem"]
    else:
        assert r.details["read"] == "a run log"
        assert "readable" in r.confinement["filesystem"] or "not confined" in r.confinement["filesystem"]


def test_the_sandbox_shows_the_python_environment_the_checkout_and_the_harness_only(hostile):
    if sandbox.bubblewrap_unavailable():
        pytest.skip(f"no working bubblewrap here: {sandbox.bubblewrap_unavailable()}")
    w = hostile
    cmd = sandbox.bubblewrap_command("bwrap", w.tmp / "scratch", visible=[w.vendor, w.options.harness_dir])
    binds = {cmd[i + 1] for i, c in enumerate(cmd) if c in ("--ro-bind", "--bind")}
    assert str(w.vendor) in binds and str(w.options.harness_dir) in binds and str(w.tmp / "scratch") in binds
    assert "/" not in binds and not any(b.startswith(("/home", "/root/.ssh", "/run", "/var")) for b in binds)
    assert str(Path(sys.prefix)) in binds


@pytest.mark.parametrize("scopes", [None, "no scopes"])
@pytest.mark.parametrize("seccomp", [None, "no seccomp"])
@pytest.mark.parametrize("domain", [None, "no Landlock"])
def test_the_record_says_the_time_limit_does_not_hold_exactly_where_nothing_keeps_it(scopes, seccomp, domain):
    """Every combination of the pieces a machine may lack: the words claim the time limit only where a piece keeps
    signals and /proc away from the harness, say what is open where one is missing, and never say both."""
    if domain is not None:
        scopes = domain  # no Landlock, no scopes
    g = confine.Guards(sandboxed=False, landlock=domain, scopes=scopes, seccomp=seccomp, domain=domain)
    said = g.describe()
    holds = scopes is None or (seccomp is None and domain is None)
    assert ("does not hold" not in said["signals"]) == holds, said["signals"]
    assert said["signals"].startswith("only to its own") == (scopes is None or seccomp is None)
    assert ("no UNIX socket can be made" in said["network"]) == (seccomp is None)
    assert ("reachable" in said["network"]) == (seccomp is not None)
    if domain is None:
        metadata_confined = (
            "no file's mode, owner, times or extended attributes changeable anywhere" in said["filesystem"]
        )
        assert metadata_confined == (seccomp is None)
        assert ("attributes of files elsewhere not confined" in said["filesystem"]) == (seccomp is not None)
    else:
        assert said["filesystem"].startswith("not confined")
