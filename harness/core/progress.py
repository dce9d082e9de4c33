"""Progress of long work, on standard error: which claim, which arm, which stage, how long so far.

Library code calls :func:`stage` when it starts a stage and :func:`step` inside
a counted loop; both are no-ops until the command line calls :func:`start`.
On a terminal every stage is a line and counted loops print a throttled
``done/total`` line. Elsewhere (CI, a pipe, a log file) the same lines come
at most once a minute (:data:`QUIET_EVERY_S`): a stage or a counted loop that
has been going on for a while says so, and a long run is never silent for
longer than its slowest step.

A wait (for another run's lock) says what it
waits for once it has lasted :data:`WAIT_GRACE_S`, and again every
:data:`WAIT_EVERY_S` seconds, on a terminal or not (:class:`Waiting`).

Claims of one build run in threads of one process: what is being reported is
kept per thread of work (a context variable, which :func:`start` sets and
threads started with :func:`contextvars.copy_context` inherit).
"""

from __future__ import annotations

import contextvars
import sys
import time
from collections.abc import Callable

__all__ = ["start", "stage", "step", "elapsed", "enable", "Waiting", "WAIT_EVERY_S"]

THROTTLE_S = 2.0
QUIET_EVERY_S = 60.0  # off a terminal: at most one line this often
WAIT_GRACE_S = 2.0  # a wait shorter than this is not worth a line
WAIT_EVERY_S = 30.0  # a wait that lasts says so again this often

_STATE: contextvars.ContextVar[dict | None] = contextvars.ContextVar("harness_progress", default=None)
_ENABLED = {"on": False, "verbose": False}  # the command line's: waits outside a claim are said too


def enable(*, verbose: bool) -> None:
    """Let waits be said outside a claim's work as well (the command line calls this)."""
    _ENABLED.update(on=True, verbose=verbose)


def start(claim: str, *, verbose: bool) -> None:
    """Begin reporting for ``claim`` in this thread of work; ``verbose`` when standard error is a terminal."""
    _STATE.set({"claim": claim, "t0": time.monotonic(), "verbose": verbose, "last": None})


def _state() -> dict | None:
    return _STATE.get()


def _due(state: dict, now: float, every: float) -> bool:
    return state["last"] is None or now - state["last"] >= every


def elapsed() -> float:
    state = _state()
    return 0.0 if state is None else time.monotonic() - state["t0"]


def _emit(state: dict, text: str) -> None:
    print(f"  [{state['claim']}] {text} ({time.monotonic() - state['t0']:.0f} s)", file=sys.stderr, flush=True)


def stage(text: str) -> None:
    """A new stage of the current claim (``"re-implementation: sweep"``): a line on a terminal; elsewhere a line
    when the last was a minute ago or more."""
    state = _state()
    if state is None:
        return
    now = time.monotonic()
    if state["verbose"] or _due(state, now, QUIET_EVERY_S):
        state["last"] = now
        _emit(state, text)


def step(done: int, total: int, what: str) -> None:
    """``done`` of ``total`` items of a counted loop; printed at most every few seconds (elsewhere than on a
    terminal: every minute) and, on a terminal, at the end."""
    state = _state()
    if state is None:
        return
    now = time.monotonic()
    if state["verbose"]:
        due = done == total or _due(state, now, THROTTLE_S)
    else:
        due = _due(state, now, QUIET_EVERY_S)
    if due:
        state["last"] = now
        bar = "#" * int(20 * done / max(total, 1))
        _emit(state, f"{what} [{bar:<20}] {done}/{total}")


class Waiting:
    """A wait that says what it waits for: call :meth:`tick` while waiting; ``what()`` words it (called only
    when a line is due; None: not worth a line this time). Silent until :func:`start` or :func:`enable` was
    called."""

    def __init__(self, what: Callable[[], str | None]):
        self.what = what
        self.t0 = time.monotonic()
        self.last: float | None = None

    def tick(self) -> None:
        now = time.monotonic()
        if now - self.t0 < WAIT_GRACE_S or (self.last is not None and now - self.last < WAIT_EVERY_S):
            return
        state = _state()
        if state is None and not _ENABLED["on"]:
            return
        self.last = now
        text = self.what()
        if text is not None:
            who = f"[{state['claim']}] " if state is not None else ""
            print(f"  {who}{text}: {now - self.t0:.0f} s so far", file=sys.stderr, flush=True)
