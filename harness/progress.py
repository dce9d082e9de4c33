"""Progress of long work, on standard error: which claim, which arm, which stage, how long so far.

Library code calls :func:`stage` when it starts a stage and :func:`step` inside
a counted loop; both are no-ops until the command line calls :func:`start`.
On a terminal every stage is a line and counted loops print a throttled
``done/total`` line; elsewhere (CI, a pipe) the stages are silent and the
command line prints one line per claim.
"""

from __future__ import annotations

import sys
import time

__all__ = ["start", "stage", "step", "elapsed"]

_state = {"claim": None, "t0": 0.0, "verbose": False, "last": 0.0}
THROTTLE_S = 2.0


def start(claim: str, *, verbose: bool) -> None:
    """Begin reporting for ``claim``; ``verbose`` when standard error is a terminal."""
    _state.update(claim=claim, t0=time.monotonic(), verbose=verbose, last=0.0)


def elapsed() -> float:
    return time.monotonic() - _state["t0"]


def _emit(text: str) -> None:
    print(f"  [{_state['claim']}] {text} ({elapsed():.0f} s)", file=sys.stderr, flush=True)


def stage(text: str) -> None:
    """A new stage of the current claim (``"re-implementation: sweep"``)."""
    if _state["claim"] is not None and _state["verbose"]:
        _state["last"] = time.monotonic()
        _emit(text)


def step(done: int, total: int, what: str) -> None:
    """``done`` of ``total`` items of a counted loop; printed at most every few seconds and at the end."""
    if _state["claim"] is None or not _state["verbose"]:
        return
    now = time.monotonic()
    if done == total or now - _state["last"] >= THROTTLE_S:
        _state["last"] = now
        bar = "#" * int(20 * done / max(total, 1))
        _emit(f"{what} [{bar:<20}] {done}/{total}")
