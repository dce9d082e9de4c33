"""One fan-out layer for every independent unit of work: local processes by default, a Dask cluster when asked.

A claim's fits per task, split or sweep row, bootstrap and subsampling chunks,
calibration replicates and multiverse specifications are all lists of
:class:`Task`: a picklable module-level function with its arguments (and its
own seed, spawned from the claim's with ``numpy.random.SeedSequence.spawn`` by
the caller), named by a key that errors and progress show. :func:`run`
executes them on the current :class:`Executor` and returns their results **in
task order**, so the output does not depend on where, or in what order, the
tasks ran:

``serial``
    one after the other in this process;
``local`` / ``local:N``
    ``N`` worker processes of this machine (default: its cores), started by
    :func:`harness.core.lifecycle.process_pool`, so they die with the run however
    it ends;
``dask://HOST:PORT``
    the workers of a running ``dask.distributed`` scheduler, through its
    ``Client``'s ``concurrent.futures`` executor (``pip install -e '.[dask]'``).

The executor is chosen by ``--executor`` or ``$HARNESS_EXECUTOR`` (default
``local``) and set for a run with :func:`using`. A task runs with one BLAS
thread and, inside it, every further fan-out is serial (no pool inside a
worker), so the same bytes come out of every executor. The authors' code is
not run through here: it stays on this machine, confined (:mod:`harness.authors.upstream`).

A build (:func:`harness.build.make.run_claims`) runs its claims and coverage studies
in threads of one process, and :func:`shared` gives them one pool: every
claim's fits, resamples and specifications, and every study's data sets, are
tasks of that pool of ``-j`` workers, first come first served, so a claim's work
runs on whatever worker the others leave idle. On Dask, the workers
are checked before the first task and with every task (:mod:`harness.parallel.dask_workers`):
a worker with other code, other numerics pins or other packages is refused.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import traceback
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, CancelledError, wait
from dataclasses import dataclass, field
from typing import Any

from ..core import progress
from ..core.errors import HarnessError

__all__ = [
    "Task",
    "TaskError",
    "Executor",
    "Mapper",
    "executor_from",
    "using",
    "current",
    "run",
    "shared",
    "EXECUTOR_ENV",
]

EXECUTOR_ENV = "HARNESS_EXECUTOR"
#: How many tasks are sent ahead of the results gathered, per worker: enough to keep workers busy, few enough
#: that an interrupted run has little to cancel.
AHEAD = 4


@dataclass(frozen=True)
class Task:
    """One independent unit of work: ``fn(*args)``, named ``key`` (e.g. ``bootstrap resamples 40-49``)."""

    key: str
    fn: Callable
    args: tuple = ()


class TaskError(HarnessError):
    """A task raised: names the task, where it ran, and the exception (type and message; the traceback is kept
    in :attr:`detail`)."""

    def __init__(self, key: str, where: str, exc_type: str, message: str, detail: str = ""):
        super().__init__(f"task '{key}' failed on {where}: {exc_type}: {message}")
        self.key, self.where, self.detail = key, where, detail


@dataclass(frozen=True)
class _Outcome:
    ok: bool
    value: Any = None
    exc_type: str = ""
    message: str = ""
    detail: str = ""


def _call(task: Task) -> _Outcome:
    """Run one task as every executor runs it: one BLAS thread, no fan-out below it, failures returned."""
    from threadpoolctl import threadpool_limits

    token = _CURRENT.set(SERIAL)
    try:
        with threadpool_limits(limits=1, user_api="blas"):
            return _Outcome(True, task.fn(*task.args))
    except Exception as exc:  # returned, not raised: the parent names the task
        message = " ".join(str(exc).split())[:500]
        return _Outcome(False, exc_type=type(exc).__name__, message=message, detail=traceback.format_exc())
    finally:
        _CURRENT.reset(token)


@dataclass(frozen=True)
class Executor:
    """Where tasks run: ``kind`` "serial", "local" (``workers`` processes) or "dask" (``address``)."""

    kind: str
    workers: int = 1
    address: str | None = None
    _client: list = field(default_factory=list, compare=False, repr=False)  # the Dask client, made once
    _shared: list = field(default_factory=list, compare=False, repr=False)  # a build's pool, while it runs

    @property
    def where(self) -> str:
        if self.kind == "dask":
            return f"the Dask scheduler at {self.address}"
        return "this machine" if self.kind == "local" else "this process"

    def describe(self) -> str:
        return {"serial": "serial", "local": f"local:{self.workers}", "dask": f"dask://{self.address}"}[self.kind]

    @contextlib.contextmanager
    def pool(self, n_tasks: int) -> Iterator:
        """A ``concurrent.futures`` executor for ``n_tasks`` tasks (``None`` for serial)."""
        if self.kind == "serial" or (self.kind == "local" and min(self.workers, n_tasks) <= 1):
            yield None
        elif self.kind == "local":
            from ..core.lifecycle import process_pool

            with process_pool(min(self.workers, n_tasks)) as pool:
                yield pool
        else:
            yield self.dask_client().get_executor()

    def dask_client(self):
        """The client of the Dask scheduler, made once; its workers checked before the first task
        (:func:`harness.parallel.dask_workers.check_workers`)."""
        if not self._client:
            try:
                from distributed import Client
            except ImportError:
                raise HarnessError(
                    f"--executor dask://{self.address} needs dask.distributed: pip install -e '.[dask]'"
                ) from None
            try:
                client = Client(f"tcp://{self.address}", timeout="10s", set_as_default=False)
            except OSError as exc:
                raise HarnessError(f"no Dask scheduler answers at {self.address}: {exc}") from None
            from .dask_workers import check_workers

            try:
                seen = check_workers(client, self.address)
            except BaseException:
                client.close()
                raise
            self._client.extend([client, seen])
        return self._client[0]

    def workers_seen(self) -> dict[str, str]:
        """The Dask workers checked so far and their code digests (for the run log); empty elsewhere."""
        return dict(self._client[1]) if len(self._client) > 1 else {}


SERIAL = Executor("serial")


def executor_from(spec: str | None = None, *, jobs: int | None = None) -> Executor:
    """The executor named by ``spec`` (else ``$HARNESS_EXECUTOR``, else ``local``): ``serial``, ``local``,
    ``local:N`` or ``dask://HOST:PORT``. ``jobs`` caps a local executor's workers (``-j``)."""
    spec = (spec or os.environ.get(EXECUTOR_ENV) or "local").strip()
    cores = os.cpu_count() or 1
    if spec == "serial":
        return SERIAL
    if spec == "local" or spec.startswith("local:"):
        n = cores if spec == "local" else _positive(spec.partition(":")[2], spec)
        return Executor("local", workers=min(n, jobs) if jobs else n)
    if spec.startswith("dask://"):
        address = spec.removeprefix("dask://")
        host, _, port = address.rpartition(":")
        if not host or not port.isdigit():
            raise HarnessError(f"executor {spec!r}: expected dask://HOST:PORT, e.g. dask://127.0.0.1:8786")
        return Executor("dask", address=address)
    raise HarnessError(f"executor {spec!r}: expected serial, local, local:N or dask://HOST:PORT")


def _positive(text: str, spec: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise HarnessError(f"executor {spec!r}: N in local:N must be a whole number >= 1")
    return int(text)


_CURRENT: contextvars.ContextVar[Executor | None] = contextvars.ContextVar("harness_executor", default=None)


def current() -> Executor:
    """The executor of this run (:func:`using`), else the one ``$HARNESS_EXECUTOR`` names."""
    return _CURRENT.get() or executor_from()


@contextlib.contextmanager
def using(executor: Executor) -> Iterator[Executor]:
    """Run the fan-outs inside the block on ``executor``."""
    token = _CURRENT.set(executor)
    try:
        yield executor
    finally:
        _CURRENT.reset(token)


def run(tasks: Sequence[Task], *, stage: str, executor: Executor | None = None) -> list:
    """``[task.fn(*task.args) for task in tasks]``, computed on ``executor`` (default: :func:`current`).

    Progress shows ``stage`` with tasks done / total. The first task that raised makes a
    :class:`TaskError` naming it (the others are cancelled or left to finish, and thrown away).
    """
    tasks = list(tasks)
    ex = executor or current()
    if ex._shared:
        return _run_shared(tasks, stage, ex)
    results: list[Any] = [None] * len(tasks)
    with ex.pool(len(tasks)) as pool:
        if pool is None:
            for i, task in enumerate(tasks):
                results[i] = _unwrap(task, _call(task), ex)
                progress.step(i + 1, len(tasks), stage)
            return results
        call, ahead = _caller(ex), AHEAD * max(ex.workers, 2)
        pending, next_i, done = {}, 0, 0
        while next_i < len(tasks) or pending:
            while next_i < len(tasks) and len(pending) < ahead:
                pending[pool.submit(*call(tasks[next_i]))] = next_i
                next_i += 1
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for f in finished:
                i = pending.pop(f)
                results[i] = _unwrap(tasks[i], _outcome(f, tasks[i], ex), ex)
                done += 1
                progress.step(done, len(tasks), stage)
    return results


def _call_checked(task: Task, want: dict) -> _Outcome:
    """Run ``task`` on this Dask worker (:func:`_call`) if it has the identity ``want``
    (:func:`harness.parallel.dask_workers.identity`); else a failed outcome that names the worker and what differs (a
    worker that joined after the check)."""
    from .dask_workers import differences, identity

    what = differences(want, identity())
    if what:
        try:
            from distributed import get_worker

            me = get_worker().address
        except (ImportError, ValueError):
            me = "this worker"
        return _Outcome(False, exc_type="WrongWorker", message=f"worker {me}: {'; '.join(what)}")
    return _call(task)


def _caller(ex: Executor) -> Callable:
    """What a pool is sent for a task: ``(_call, task)``; on Dask, the call that checks its worker first."""
    if ex.kind != "dask":
        return lambda task: (_call, task)
    from .dask_workers import expected

    want = expected()
    return lambda task: (_call_checked, task, want)


def _outcome(f, task: Task, ex: Executor) -> _Outcome:
    """The outcome of a finished future; a lost scheduler or a dead worker process in one line."""
    from concurrent.futures.process import BrokenProcessPool

    try:
        return f.result()
    except CancelledError:
        raise HarnessError(
            f"{ex.where} stopped answering (its futures were cancelled) while task '{task.key}' was pending;"
            " is the scheduler still running?"
        ) from None
    except BrokenProcessPool as exc:
        raise HarnessError(f"a worker process on {ex.where} died while task '{task.key}' ran ({exc})") from None
    except OSError as exc:
        raise HarnessError(f"{ex.where} could not be reached while task '{task.key}' was pending: {exc}") from None


def _run_shared(tasks: list[Task], stage: str, ex: Executor) -> list:
    """The tasks on the build's one pool, first come first served among the build's threads; results in task
    order (the first that failed, in that order, raises and the rest are cancelled)."""
    pool, call, n = ex._shared[-1], _caller(ex), len(tasks)
    futures: list = []
    try:
        futures = [pool.submit(*call(task)) for task in tasks]
        results = []
        for i, (task, f) in enumerate(zip(tasks, futures)):
            results.append(_unwrap(task, _outcome(f, task, ex), ex))
            progress.step(i + 1, n, stage)
        return results
    except BaseException:
        for f in futures:
            f.cancel()
        raise


@contextlib.contextmanager
def shared(executor: Executor) -> Iterator[Executor]:
    """One pool for every fan-out inside the block, from any thread (a build's claims and studies).

    Local: ``executor.workers`` processes, all started here (before the build starts its threads: they are
    forked), fed first come first served. Dask: the
    scheduler's client, made and its workers checked here (the one client serves every thread). Serial:
    nothing is shared.
    """
    if executor.kind == "dask":
        executor.dask_client()  # the scheduler and its workers are the build's, sent to as tasks come
    if executor.kind != "local" or executor.workers <= 1:
        yield executor
        return
    from ..core.lifecycle import process_pool

    with process_pool(executor.workers) as pool:
        pool.submit(int).result()  # starts every worker now
        executor._shared.append(pool)
        try:
            yield executor
        finally:
            executor._shared.pop()


def _unwrap(task: Task, outcome: _Outcome, ex: Executor):
    if not outcome.ok:
        raise TaskError(task.key, ex.where, outcome.exc_type, outcome.message, outcome.detail)
    return outcome.value


@dataclass(frozen=True)
class Mapper:
    """``Mapper(stage)(fn, items)``: ``[fn(item) for item in items]`` as tasks of :func:`run`, in item order.

    What the math package takes as its ``map_fn`` (it knows nothing of executors); picklable, so a
    statistic that holds one can itself be a task (inside which it runs serially).
    """

    stage: str

    def __call__(self, fn: Callable, items) -> list:
        items = list(items)
        n = len(items)
        return run([Task(f"{self.stage} {i + 1}/{n}", fn, (item,)) for i, item in enumerate(items)], stage=self.stage)
