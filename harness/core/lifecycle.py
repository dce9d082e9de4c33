"""Pool workers that die with the run, however the run ends.

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

The authors' code is the sandbox's business (:mod:`harness.authors.sandbox`: bubblewrap's
``--die-with-parent`` and a process group of its own).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator

__all__ = [
    "Terminated",
    "handle_sigterm_as_interrupt",
    "die_with_parent",
    "process_pool",
]

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
WATCHDOG_POLL_S = 0.5


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
    the main thread, so ``finally`` and ``with`` blocks clean up. The first
    one also restores the default action, so a second signal stops the
    process at once. A signal the process
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
