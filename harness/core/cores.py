"""This machine's cores, shared: the slots the authors' processes hold, and the cores of one build.

Two limits, at two scales:

* **Slots** (:func:`authors_slot`): a process of the authors' arm holds one of ``n`` slots (default: the
  machine's cores) while it runs, so that runs of one checkout in parallel never start more such
  processes than there are cores. A slot is a ``flock`` on its own file, released when its holder dies
  however it dies. The files are kept per checkout (``<tmp>/harness-slots-<uid>/<checkout>/``): a hung run
  of another checkout holds none of this one's slots.
* **The build's cores** (:class:`Cores`, installed for a build with :func:`budget`): ``-j`` is the number
  of cores a build may use, the authors' processes and the re-implementation's tasks together. A task of
  the fan-out layer takes a core before it is sent to a worker (:meth:`Cores.take`, by priority: the
  claims' own work before the coverage studies', first come first served within one priority) and gives
  it back when it ends. An authors' process takes one at once (:meth:`Cores.take_now`): their requests
  start as soon as a slot is free, and the tasks wait until the cores they left are free again.

A wait for a slot or a lock that lasts says what it waits for, and again every
:data:`harness.core.progress.WAIT_EVERY_S` seconds (:class:`harness.core.progress.Waiting`).

Standard library only.
"""

from __future__ import annotations

import contextlib
import contextvars
import fcntl
import hashlib
import heapq
import itertools
import os
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from . import progress
from .paths import PROJECT_ROOT

__all__ = [
    "SLOTS_DIR",
    "Cores",
    "budget",
    "current_budget",
    "authors_slot",
    "PRIORITY",
    "CLAIM_WORK",
    "STUDY_WORK",
    "flock_waiting",
    "lock_holders",
]

#: This checkout, for folders shared by its runs outside the project (the project's own folder cannot hold them:
#: the authors' arm is checked for writes there).
CHECKOUT_KEY = hashlib.sha256(str(PROJECT_ROOT).encode()).hexdigest()[:12]
#: Where the slots of this checkout are kept (one lock file each).
SLOTS_DIR = Path(tempfile.gettempdir()) / f"harness-slots-{os.getuid()}" / CHECKOUT_KEY
SLOT_POLL_S = 0.05

#: The priority of the tasks a thread sends (lower first): a claim's own work, then the coverage studies'.
CLAIM_WORK, STUDY_WORK = 0, 1
PRIORITY: contextvars.ContextVar[tuple] = contextvars.ContextVar("harness_priority", default=(CLAIM_WORK, 0))


class Cores:
    """The ``n`` cores of a build, shared by its tasks and the authors' processes.

    ``take(priority)`` blocks until a core is free and no waiter of a better priority (lower tuple) or
    of the same priority and earlier is waiting; ``take_now()`` takes one whatever is in use (the authors'
    processes, at most ``n`` of them at once are ever started: their slots); ``give()`` frees one.
    """

    def __init__(self, n: int):
        self.n = max(1, int(n))
        self.used = 0
        self._cv = threading.Condition()
        self._waiting: list[tuple] = []  # heap of (priority, seq)
        self._seq = itertools.count()

    def take(self, priority: tuple | None = None) -> None:
        me = (priority if priority is not None else PRIORITY.get(), next(self._seq))
        with self._cv:
            heapq.heappush(self._waiting, me)
            while not (self.used < self.n and self._waiting[0] == me):
                self._cv.wait()
            heapq.heappop(self._waiting)
            self.used += 1
            self._cv.notify_all()  # the next waiter may go too, if a core is still free

    def take_now(self) -> None:
        with self._cv:
            self.used += 1

    def give(self) -> None:
        with self._cv:
            self.used -= 1
            self._cv.notify_all()


_BUDGET: list[Cores] = []  # the build's cores, while a build runs in this process


@contextlib.contextmanager
def budget(n: int) -> Iterator[Cores]:
    """Count the cores of a build of ``-j n`` while the block runs: the authors' processes and the tasks."""
    cores = Cores(n)
    _BUDGET.append(cores)
    try:
        yield cores
    finally:
        _BUDGET.remove(cores)


def current_budget() -> Cores | None:
    return _BUDGET[-1] if _BUDGET else None


# -- slots of the authors' processes --------------------------------------------------------------------------

_HELD_FDS: set[int] = set()  # slot and lock files this process holds: closed in a forked child (its copy only)


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


@contextlib.contextmanager
def authors_slot(n: int | None = None) -> Iterator[int]:
    """Hold one of this checkout's ``n`` slots (default: the build's cores, else the machine's), and one of the
    build's cores, while a process of the authors' arm runs. A wait that lasts says what it waits for."""
    cores = current_budget()
    n = max(1, n or (cores.n if cores is not None else None) or os.cpu_count() or 1)
    SLOTS_DIR.mkdir(parents=True, exist_ok=True)
    files = [SLOTS_DIR / f"slot-{i}.lock" for i in range(n)]

    def what() -> str | None:  # a wait for this run's own requests is not worth a line
        holders = sorted({p for f in files for p in lock_holders(f)})
        if holders and set(holders) == {os.getpid()}:
            return None
        return f"waiting for one of this checkout's {n} slots for the authors' code{_whose(holders)}"

    waiting = progress.Waiting(what)
    while True:
        for i, path in enumerate(files):
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            hold_fd(fd)
            if cores is not None:
                cores.take_now()
            try:
                yield i
            finally:
                if cores is not None:
                    cores.give()
                release_fd(fd)
            return
        waiting.tick()
        time.sleep(SLOT_POLL_S)


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
