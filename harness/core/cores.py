"""The cores of a build and the locks its processes hold.

* :func:`authors_slot`: held while a process of the authors' arm runs, so that a build starts at most ``-j`` of
  them at once however many claims it runs (:func:`limit` sets ``-j``; default: this machine's cores). A plain
  semaphore of this process: the re-implementation's tasks go to one pool of ``-j`` workers
  (:func:`harness.parallel.fanout.shared`) beside them, first come first served.
* :func:`flock_waiting`, :func:`hold_fd`, :func:`release_fd`: the ``flock`` of the project's write lock
  (:mod:`harness.core.fileio`), saying what it waits for when it has to wait.

Standard library only.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from . import progress

__all__ = ["authors_slot", "limit", "flock_waiting", "hold_fd", "release_fd", "lock_holders"]

_SLOTS = [threading.BoundedSemaphore(os.cpu_count() or 1)]


@contextlib.contextmanager
def limit(n: int) -> Iterator[None]:
    """At most ``n`` of the authors' processes at once while the block runs (a build of ``-j n``)."""
    _SLOTS.append(threading.BoundedSemaphore(max(1, int(n))))
    try:
        yield
    finally:
        _SLOTS.pop()


@contextlib.contextmanager
def authors_slot() -> Iterator[None]:
    """Hold one of the build's slots while a process of the authors' arm runs."""
    with _SLOTS[-1]:
        yield


_HELD_FDS: set[int] = set()  # lock files this process holds: closed in a forked child (its copy only)


def _forget_in_child() -> None:
    for fd in list(_HELD_FDS):
        with contextlib.suppress(OSError):
            os.close(fd)
    _HELD_FDS.clear()


os.register_at_fork(after_in_child=_forget_in_child)


def hold_fd(fd: int) -> None:
    """Remember that ``fd`` holds a lock: a child forked meanwhile (a pool's worker) closes its copy, so the lock
    goes when this process lets it go, not when that child ends."""
    _HELD_FDS.add(fd)


def release_fd(fd: int) -> None:
    _HELD_FDS.discard(fd)
    os.close(fd)


def lock_holders(path: Path) -> list[int]:
    """The pids holding a ``flock`` on ``path`` (from ``/proc/locks``; empty where it cannot be read)."""
    try:
        st = os.stat(path)
        lines = Path("/proc/locks").read_text(encoding="ascii", errors="replace").splitlines()
    except OSError:
        return []
    where = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    pids = []
    for line in lines:
        fields = line.split()
        if "->" in fields or len(fields) < 6 or fields[1] != "FLOCK":
            continue
        if fields[5] == where and fields[4].isdigit():
            pids.append(int(fields[4]))
    return sorted(set(pids))


def _whose(pids: list[int]) -> str:
    if not pids:
        return ""
    named = ["this run" if p == os.getpid() else f"pid {p}" for p in pids]
    return f" (held by {', '.join(dict.fromkeys(named))})"


def flock_waiting(fd: int, mode: int, what: str, path: Path) -> None:
    """``flock(fd, mode)``, saying what it waits for when it has to wait (who holds ``path``)."""
    try:
        fcntl.flock(fd, mode | fcntl.LOCK_NB)
        return
    except BlockingIOError:
        pass
    waiting = progress.Waiting(lambda: f"waiting for {what}{_whose(lock_holders(path))}")
    delay = 0.01
    while True:
        try:
            fcntl.flock(fd, mode | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            waiting.tick()
            time.sleep(delay)
            delay = min(2 * delay, 0.25)
