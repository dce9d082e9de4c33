"""Child processes and scratch folders that die with the run, however the run ends.

A run can end by returning, by an exception, by SIGINT or SIGTERM (what
``timeout`` and CI send first) or by SIGKILL (what they send next). On every
one of these paths nothing the run started may outlive it:

* :func:`handle_sigterm_as_interrupt` (for the CLI's ``main``) turns SIGTERM
  and SIGHUP into :class:`Terminated`, a :class:`KeyboardInterrupt`, so that
  ``finally`` blocks and context managers clean up as they do for Ctrl-C. A
  second such signal stops the process at once.
* :func:`die_with_parent` asks the kernel (``prctl(PR_SET_PDEATHSIG)`` on
  Linux, through ctypes; a watchdog thread elsewhere) to kill the calling
  process when its parent dies. It is the ``initializer`` of a
  :class:`~concurrent.futures.ProcessPoolExecutor`'s workers;
  :func:`process_pool` makes such a pool and, when the block it serves is
  left by an exception (an interrupt included), kills the workers instead of
  waiting for every queued job.
* :func:`scratch_folder` makes a private temp folder named after its owner
  (``<prefix><pid>-…``) with a *guard*: a small process of its own session
  that waits on a pipe from the owner. If the owner dies without saying it
  has cleaned up (SIGKILL), the pipe closes and the guard kills the process
  groups it was told about (:meth:`Guard.watch`) and removes the folder.
  Folders left behind anyway (a guard killed too) are removed by
  :func:`sweep_stale_scratch` at the next start, once their owner is gone.

This file also runs as the guard (``python lifecycle.py guard ...``): at
module level it imports the standard library only.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import select
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

__all__ = [
    "Terminated",
    "handle_sigterm_as_interrupt",
    "die_with_parent",
    "process_pool",
    "Guard",
    "scratch_folder",
    "sweep_stale_scratch",
    "process_start_time",
    "parent_death_preexec",
    "OWNER_FILE",
]

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
OWNER_FILE = ".owner"  # in a scratch folder: "<pid> <start time>" of the process that made it
STALE_UNOWNED_S = 3600.0  # a folder without an owner file is left this long (it may be being made)
WATCHDOG_POLL_S = 0.5
GUARD_POLL_S = 0.5
GUARD_DONE = b"done\n"


# -- signals ------------------------------------------------------------------------------------------------


class Terminated(KeyboardInterrupt):
    """Raised in the main thread by SIGTERM or SIGHUP once :func:`handle_sigterm_as_interrupt` is in place."""

    def __init__(self, signum: int):
        super().__init__(f"stopped by {signal.Signals(signum).name}")
        self.signum = signum

    @property
    def exit_status(self) -> int:
        """What a shell reports for a process stopped by this signal (143 for SIGTERM)."""
        return 128 + self.signum


def handle_sigterm_as_interrupt(signals=(signal.SIGTERM, signal.SIGHUP)) -> dict[int, object]:
    """Make SIGTERM (and SIGHUP) stop the run the way Ctrl-C does; return the handlers replaced.

    Each signal raises :class:`Terminated` (a :class:`KeyboardInterrupt`) in
    the main thread, so ``finally`` blocks, ``with`` blocks and
    :func:`scratch_folder` clean up. The first one also restores the default
    action, so a second signal stops the process at once (the guards and
    :func:`die_with_parent` then clean up after it). A signal the process
    ignores (``nohup``) stays ignored. Call it from the main thread, once, at
    the start of the command line's ``main``.
    """
    previous = {}

    def interrupt(signum, _frame):
        signal.signal(signum, signal.SIG_DFL)
        raise Terminated(signum)

    for sig in signals:
        if signal.getsignal(sig) is signal.SIG_IGN:
            continue
        previous[sig] = signal.signal(sig, interrupt)
    return previous


# -- children that die with their parent ----------------------------------------------------------------------


def _libc_prctl():
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _libc_prctl()  # resolved here, so that a child between fork and exec only calls it


def die_with_parent(sig: int = signal.SIGKILL, parent: int | None = None) -> str:
    """Have this process receive ``sig`` when its parent dies; returns how: "prctl" or "watchdog".

    ``parent`` is the pid the caller expects as its parent (default: the
    multiprocessing parent of a pool worker, else the current parent). If it
    has already died (before the request could be made), ``sig`` is sent at
    once. On Linux this is ``prctl(PR_SET_PDEATHSIG)``: the kernel signals
    the process when the *thread* that started it ends, so start pools from
    the main thread. Elsewhere a daemon thread polls the parent's pid.

    Usable as a pool initializer:
    ``ProcessPoolExecutor(n, initializer=die_with_parent)``.
    """
    if parent is None:
        import multiprocessing

        mp_parent = multiprocessing.parent_process()
        parent = mp_parent.pid if mp_parent is not None else os.getppid()
    how = "watchdog"
    if _PRCTL is not None and _PRCTL(PR_SET_PDEATHSIG, int(sig), 0, 0, 0) == 0:
        how = "prctl"
    if os.getppid() != parent:
        os.kill(os.getpid(), sig)
    if how == "watchdog":
        threading.Thread(target=_watch_parent, args=(parent, sig), daemon=True, name="die-with-parent").start()
    return how


def _watch_parent(parent: int, sig: int) -> None:
    while os.getppid() == parent:
        time.sleep(WATCHDOG_POLL_S)
    os.kill(os.getpid(), sig)


def parent_death_preexec(sig: int = signal.SIGKILL):
    """A ``preexec_fn`` for :class:`subprocess.Popen` giving the child ``PR_SET_PDEATHSIG`` (Linux), or None.

    The signal survives ``exec``; a child whose parent died before the call
    exits at once. It only calls the already-resolved ``prctl``: nothing is
    imported or allocated between fork and exec.
    """
    if _PRCTL is None:
        return None
    parent = os.getpid()

    def preexec():
        _PRCTL(PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
        if os.getppid() != parent:
            os._exit(1)

    return preexec


@contextlib.contextmanager
def process_pool(max_workers: int, **kwargs) -> Iterator:
    """A :class:`~concurrent.futures.ProcessPoolExecutor` whose workers die with the run.

    Workers run :func:`die_with_parent` first (so a SIGKILLed harness takes
    them along). Leaving the block normally waits for the work, as ``with
    ProcessPoolExecutor(...)`` does; leaving it by an exception -- Ctrl-C,
    :class:`Terminated`, an error -- cancels what has not started and kills
    the workers instead of waiting for every queued job.
    """
    from concurrent.futures import ProcessPoolExecutor

    pool = ProcessPoolExecutor(max_workers=max_workers, initializer=die_with_parent, **kwargs)
    try:
        yield pool
    except BaseException:
        _stop_pool(pool)
        raise
    pool.shutdown(wait=True)


def _stop_pool(pool) -> None:
    workers = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in workers:
        with contextlib.suppress(Exception):
            proc.kill()
    for proc in workers:
        with contextlib.suppress(Exception):
            proc.join(timeout=5)


# -- scratch folders ------------------------------------------------------------------------------------------


def process_start_time(pid: int) -> str | None:
    """When ``pid`` started (clock ticks since boot, from /proc), or None if it is gone or unknown.

    Together with the pid it names a process: a pid reused later has another start time.
    """
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return None if fields[0] == "Z" else fields[19]


def _alive(pid: int, start: str | None) -> bool:
    if Path("/proc/self/stat").exists():
        return start is not None and process_start_time(pid) == start
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep_stale_scratch(prefix: str, base: str | Path | None = None) -> list[Path]:
    """Remove this user's ``<prefix>*`` folders in ``base`` (the temp dir) whose owner process is gone.

    A folder's owner is in its :data:`OWNER_FILE`; one without it is removed
    only when older than :data:`STALE_UNOWNED_S`. Returns what was removed.
    """
    base = Path(base or tempfile.gettempdir())
    removed = []
    try:
        candidates = [p for p in base.iterdir() if p.name.startswith(prefix)]
    except OSError:
        return removed
    for folder in candidates:
        try:
            st = folder.lstat()
        except OSError:
            continue
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
            continue
        try:
            owner = (folder / OWNER_FILE).read_text(encoding="ascii").split()
            pid, start = int(owner[0]), owner[1]
        except (OSError, ValueError, IndexError):
            if time.time() - st.st_mtime < STALE_UNOWNED_S:
                continue
        else:
            if _alive(pid, start):
                continue
        shutil.rmtree(folder, ignore_errors=True)
        removed.append(folder)
    return removed


class Guard:
    """A process that cleans up after this one if it dies without calling :meth:`close`.

    It runs this file with the same interpreter, in a session of its own
    (signals to the harness's process group do not reach it), ignoring SIGINT
    and SIGHUP, with stdout and stderr closed, and waits on a pipe. On
    :meth:`close` it exits doing nothing; if the pipe closes first, or its
    parent changes, it SIGKILLs every process group it was given with
    :meth:`watch` and removes ``folder``.
    """

    def __init__(self, folder: Path):
        self.folder = Path(folder)
        cmd = [
            sys.executable,
            "-s",
            "-P",
            "-B",
            str(Path(__file__).resolve()),
            "guard",
            str(os.getpid()),
            str(self.folder),
        ]
        self._proc = subprocess.Popen(
            cmd,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd="/",
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
            start_new_session=True,
        )

    @property
    def pid(self) -> int:
        return self._proc.pid

    def _send(self, data: bytes) -> None:
        with contextlib.suppress(OSError, ValueError):  # a guard that is gone protects nothing, but stops nothing
            self._proc.stdin.write(data)
            self._proc.stdin.flush()

    def watch(self, pgid: int) -> None:
        """Also kill process group ``pgid`` if this process dies before :meth:`close`."""
        self._send(f"pgid {int(pgid)}\n".encode())

    def close(self) -> None:
        """Everything is cleaned up: the guard exits without acting."""
        self._send(GUARD_DONE)
        with contextlib.suppress(OSError, ValueError):
            self._proc.stdin.close()
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()


@contextlib.contextmanager
def scratch_folder(prefix: str) -> Iterator[tuple[Path, Guard]]:
    """A fresh ``<tmp>/<prefix><pid>-…`` folder and its :class:`Guard`; removed on every way out.

    Stale folders of the same prefix whose owner is gone are swept first. On
    a normal exit or an exception the folder is removed here and the guard
    dismissed; if this process is killed, the guard removes it.
    """
    from .fileio import atomic_write_text

    sweep_stale_scratch(prefix)
    folder = Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-"))
    guard = None
    try:
        atomic_write_text(folder / OWNER_FILE, f"{os.getpid()} {process_start_time(os.getpid())}\n")
        guard = Guard(folder)
        yield folder, guard
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        if guard is not None and not folder.exists():
            guard.close()  # else it stays, and removes the folder when this process ends


# -- the guard itself -----------------------------------------------------------------------------------------


def _guard_main(parent: int, folder: str) -> int:
    for sig in (signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    groups: list[int] = []
    pending = b""
    while True:
        ready, _, _ = select.select([0], [], [], GUARD_POLL_S)
        if ready:
            chunk = os.read(0, 4096)
            if not chunk:
                break  # the owner closed the pipe without saying "done": it died
            pending += chunk
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                if line + b"\n" == GUARD_DONE:
                    return 0
                if line.startswith(b"pgid "):
                    groups.append(int(line.split()[1]))
        elif os.getppid() != parent:
            break
    for pgid in groups:
        with contextlib.suppress(OSError):
            os.killpg(pgid, signal.SIGKILL)
    shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] != "guard":
        print("usage: lifecycle.py guard PARENT_PID FOLDER", file=sys.stderr)
        sys.exit(2)
    sys.exit(_guard_main(int(sys.argv[2]), sys.argv[3]))
