"""Progress of long work, on standard error: which claim, which arm, which stage, how long so far.

Library code calls :func:`stage` when it starts a stage and :func:`step` inside
a counted loop; both are no-ops until the command line calls :func:`start`.
On a terminal every stage is a line and counted loops print a throttled
``done/total`` line. Elsewhere (CI, a pipe, a log file) the same lines come
at most once a minute (:data:`QUIET_EVERY_S`): a stage or a counted loop that
has been going on for a while says so, and a long run is never silent for
longer than its slowest step.
"""

from __future__ import annotations

import sys
import time

__all__ = ["start", "stage", "step", "elapsed"]

_state = {"claim": None, "t0": 0.0, "verbose": False, "last": None}
THROTTLE_S = 2.0
QUIET_EVERY_S = 60.0  # off a terminal: at most one line this often


def start(claim: str, *, verbose: bool) -> None:
    """Begin reporting for ``claim``; ``verbose`` when standard error is a terminal."""
    _state.update(claim=claim, t0=time.monotonic(), verbose=verbose, last=None)


def _due(now: float, every: float) -> bool:
    return _state["last"] is None or now - _state["last"] >= every


def elapsed() -> float:
    return time.monotonic() - _state["t0"]


def _emit(text: str) -> None:
    print(f"  [{_state['claim']}] {text} ({elapsed():.0f} s)", file=sys.stderr, flush=True)


def stage(text: str) -> None:
    """A new stage of the current claim (``"re-implementation: sweep"``): a line on a terminal; elsewhere a line
    when the last was a minute ago or more."""
    if _state["claim"] is None:
        return
    now = time.monotonic()
    if _state["verbose"] or _due(now, QUIET_EVERY_S):
        _state["last"] = now
        _emit(text)


def step(done: int, total: int, what: str) -> None:
    """``done`` of ``total`` items of a counted loop; printed at most every few seconds (elsewhere than on a
    terminal: every minute) and, on a terminal, at the end."""
    if _state["claim"] is None:
        return
    now = time.monotonic()
    if _state["verbose"]:
        due = done == total or _due(now, THROTTLE_S)
    else:
        due = _due(now, QUIET_EVERY_S)
    if due:
        _state["last"] = now
        bar = "#" * int(20 * done / max(total, 1))
        _emit(f"{what} [{bar:<20}] {done}/{total}")
