"""Progress of long work on standard error: which claim, which stage, how long so far.

:func:`stage` is a no-op until :func:`start` names the claim of this thread of work (a context variable, which
threads started with :func:`contextvars.copy_context` inherit).
"""

from __future__ import annotations

import contextvars
import sys
import time

_STATE: contextvars.ContextVar[tuple | None] = contextvars.ContextVar("harness_progress", default=None)


def start(claim: str) -> None:
    """Begin reporting for ``claim`` in this thread of work."""
    _STATE.set((claim, time.monotonic()))


def stage(text: str) -> None:
    """A new stage of the current claim (``"re-implementation: sweep"``), one line."""
    if (state := _STATE.get()) is not None:
        print(f"  [{state[0]}] {text} ({time.monotonic() - state[1]:.0f} s)", file=sys.stderr, flush=True)
