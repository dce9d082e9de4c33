"""A build on one machine: the claims and coverage studies of one command, in threads of one process.

A claim's run is mostly waiting: for the authors' code (subprocesses), for its
fits and resamples (tasks of the fan-out layer). So the pieces of a build (each
claim, each coverage study) run in threads of this process, and every task they
send goes to one pool (:func:`harness.parallel.fanout.shared`) that has a core for it
when the build does (:class:`harness.core.cores.Cores`: ``-j`` cores, the authors'
processes counted): a claim's resamples run on whatever core the others leave
idle, the authors' requests start at once, and the studies' data sets fill the
cores the claims leave free (the claims' own work goes first:
:data:`harness.core.cores.CLAIM_WORK`). Results do not depend on any of this: every
task has its own seed and results come back in task order.

With ``-j 1`` or ``--executor serial`` the pieces run one after the other in
this thread, in the order given.

Matplotlib's style is process-wide state: figures are drawn under
:data:`DRAWING`, one at a time.
"""

from __future__ import annotations

import contextlib
import contextvars
import queue
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from ..core import cores
from ..parallel import fanout

__all__ = ["Piece", "machine", "run_pieces", "DRAWING"]

#: Held while a figure is drawn (matplotlib's rc context is global).
DRAWING = threading.Lock()


@dataclass(frozen=True)
class Piece:
    """One thread of a build: ``fn()``, whose tasks are sent with ``priority`` (lower first)."""

    name: str
    fn: Callable[[], object]
    priority: tuple = (cores.CLAIM_WORK, 0)


@contextlib.contextmanager
def machine(executor: fanout.Executor, jobs: int) -> Iterator[fanout.Executor]:
    """This process set up for a build of ``-j jobs``: one BLAS thread everywhere, the build's cores counted, and
    one pool (or one Dask client) for every task of the block."""
    import scipy.optimize  # noqa: F401  (load every BLAS before limiting its threads)
    from threadpoolctl import threadpool_limits

    with (
        threadpool_limits(limits=1, user_api="blas"),
        cores.budget(jobs) as cpus,
        fanout.shared(executor, cpus) as ex,
        fanout.using(ex),
    ):
        yield ex


def concurrent(executor: fanout.Executor, jobs: int) -> bool:
    """Whether a build's pieces run at once: more than one core, and tasks that do not run in the piece's own
    thread."""
    return jobs > 1 and executor.kind != "serial" and (executor.kind == "dask" or executor.workers > 1)


def run_pieces(pieces: list[Piece], *, at_once: bool) -> Iterator[tuple[int, object]]:
    """Run every piece; yield ``(index, what it returned)`` as each finishes (an exception it raised is raised
    here). ``at_once``: each in a thread of its own (daemon threads: an interrupted build does not wait for
    them; what they started dies with the process); else one after the other, in order, here."""
    if not at_once:
        for i, piece in enumerate(pieces):
            token = cores.PRIORITY.set(piece.priority)
            try:
                yield i, piece.fn()
            finally:
                cores.PRIORITY.reset(token)
        return
    done: queue.Queue = queue.Queue()
    for i, piece in enumerate(pieces):
        ctx = contextvars.copy_context()
        thread = threading.Thread(
            target=ctx.run, args=(_body, i, piece, done), name=f"harness {piece.name}", daemon=True
        )
        thread.start()
    for _ in pieces:
        i, out, exc = done.get()
        if exc is not None:
            raise exc
        yield i, out


def _body(i: int, piece: Piece, done: queue.Queue) -> None:
    cores.PRIORITY.set(piece.priority)
    try:
        done.put((i, piece.fn(), None))
    except BaseException as exc:  # handed to the thread that waits for the pieces
        done.put((i, None, exc))
