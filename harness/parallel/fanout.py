"""One fan-out layer for every independent unit of work (docs/build.md, "Where the work runs"): :func:`run`
returns the results of its :class:`Task` list in task order, wherever they ran (``serial``, ``local[:N]``,
``dask://HOST:PORT``). A task runs with one BLAS thread and, inside it, every further fan-out is serial."""

from __future__ import annotations

import contextlib
import contextvars
import ctypes
import os
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import CancelledError, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field, replace
from functools import partial

from ..core.errors import HarnessError


@dataclass(frozen=True)
class Task:
    """One independent unit of work: ``fn(*args)`` (a picklable module-level function), named ``key``
    (e.g. ``bootstrap resamples 40-49``)."""

    key: str
    fn: Callable
    args: tuple = ()


def _call(task: Task) -> tuple:
    """Run one task as every executor runs it: one BLAS thread, no fan-out below it; a failure is returned as
    ``(False, "Type: message")`` so that the parent names the task."""
    from threadpoolctl import threadpool_limits

    try:
        with using(SERIAL), threadpool_limits(limits=1, user_api="blas"):
            return (True, task.fn(*task.args))
    except Exception as exc:
        return (False, f"{type(exc).__name__}: {' '.join(str(exc).split())[:500]}")


def _die_with_parent() -> None:
    """A pool worker's initializer: the kernel kills it when the harness dies, even by SIGKILL."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    parent = __import__("multiprocessing").parent_process()
    if parent is not None and os.getppid() != parent.pid:  # the parent died before the request
        os.kill(os.getpid(), signal.SIGKILL)


@contextlib.contextmanager
def process_pool(n: int) -> Iterator[ProcessPoolExecutor]:
    """A process pool whose workers die with the run; left by an exception (Ctrl-C, SIGTERM) it kills them
    instead of waiting for the queued tasks."""
    pool = ProcessPoolExecutor(max_workers=n, initializer=_die_with_parent)
    try:
        yield pool
    except BaseException:
        workers = list((pool._processes or {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for proc in workers:
            proc.kill()
        raise
    pool.shutdown(wait=True)


@dataclass
class Executor:
    """Where tasks run: ``kind`` "serial", "local" (``workers`` processes) or "dask" (``address``)."""

    kind: str
    workers: int = 1
    address: str | None = None
    shared_pool: ProcessPoolExecutor | None = field(default=None, compare=False, repr=False)  # a build's (shared)
    client: object = field(default=None, compare=False, repr=False)  # the Dask client, made once

    @property
    def where(self) -> str:
        if self.kind == "dask":
            return f"the Dask scheduler at {self.address}"
        return "this machine" if self.kind == "local" else "this process"

    def describe(self) -> str:
        return {"serial": "serial", "local": f"local:{self.workers}", "dask": f"dask://{self.address}"}[self.kind]

    @contextlib.contextmanager
    def pool(self, n_tasks: int) -> Iterator:
        """A ``concurrent.futures`` executor for ``n_tasks`` tasks (``None``: run them here, one by one)."""
        if self.kind == "dask":
            yield self.dask_client().get_executor()
        elif self.shared_pool is not None:
            yield self.shared_pool
        elif self.kind == "local" and min(self.workers, n_tasks) > 1:
            with process_pool(min(self.workers, n_tasks)) as pool:
                yield pool
        else:
            yield None

    def dask_client(self):
        if self.client is None:
            try:
                from distributed import Client
            except ImportError:
                raise HarnessError(
                    f"--executor dask://{self.address} needs dask.distributed: pip install -e '.[dask]'"
                ) from None
            try:
                self.client = Client(f"tcp://{self.address}", timeout="10s", set_as_default=False)
            except OSError as exc:
                raise HarnessError(f"no Dask scheduler answers at {self.address}: {exc}") from None
        return self.client


SERIAL = Executor("serial")


def executor_from(spec: str | None = None, *, jobs: int | None = None) -> Executor:
    """The executor named by ``spec`` (else ``$HARNESS_EXECUTOR``, else ``local``): ``serial``, ``local``,
    ``local:N`` or ``dask://HOST:PORT``. ``jobs`` caps a local executor's workers (``-j``)."""
    spec = (spec or os.environ.get("HARNESS_EXECUTOR") or "local").strip()
    if spec == "serial":
        return SERIAL
    if spec == "local" or spec.startswith("local:"):
        n = spec.partition(":")[2] or str(os.cpu_count() or 1)
        if not n.isdigit() or int(n) < 1:
            raise HarnessError(f"executor {spec!r}: N in local:N must be a whole number >= 1")
        return Executor("local", workers=min(int(n), jobs) if jobs else int(n))
    if spec.startswith("dask://"):
        address = spec.removeprefix("dask://")
        host, _, port = address.rpartition(":")
        if not host or not port.isdigit():
            raise HarnessError(f"executor {spec!r}: expected dask://HOST:PORT, e.g. dask://127.0.0.1:8786")
        return Executor("dask", address=address)
    raise HarnessError(f"executor {spec!r}: expected serial, local, local:N or dask://HOST:PORT")


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


@contextlib.contextmanager
def shared(executor: Executor) -> Iterator[Executor]:
    """:func:`using` for a build: every fan-out inside the block, from any thread that copies this context, goes
    to one pool of ``executor.workers`` processes started here, before the build's threads (on Dask, through
    the client made here)."""
    with contextlib.ExitStack() as stack:
        if executor.kind == "dask":
            executor.dask_client()
        elif executor.kind == "local" and executor.workers > 1:
            pool = stack.enter_context(process_pool(executor.workers))
            pool.submit(int).result()  # starts the workers now
            executor = replace(executor, shared_pool=pool)
        with using(executor):
            yield executor


def run(tasks: Sequence[Task], *, executor: Executor | None = None) -> list:
    """``[task.fn(*task.args) for task in tasks]``, computed on ``executor`` (default: :func:`current`), in task
    order. The first task that raised (in that order) makes a :class:`HarnessError` naming it."""
    tasks, ex = list(tasks), executor or current()
    with ex.pool(len(tasks)) as pool:
        if pool is None:
            return [_result(t, ex, partial(_call, t)) for t in tasks]
        futures = [pool.submit(_call, t) for t in tasks]
        try:
            return [_result(t, ex, f.result) for t, f in zip(tasks, futures)]
        except BaseException:
            for f in futures:
                f.cancel()
            raise


def _result(task: Task, ex: Executor, outcome: Callable[[], tuple]):
    """The task's value; its failure, a lost scheduler or a dead worker process in one line."""
    try:
        ok, value = outcome()
    except CancelledError:
        raise HarnessError(
            f"{ex.where} stopped answering (its futures were cancelled) while task '{task.key}' was pending;"
            " is the scheduler still running?"
        ) from None
    except BrokenProcessPool as exc:
        raise HarnessError(f"a worker process on {ex.where} died while task '{task.key}' ran ({exc})") from None
    except OSError as exc:
        raise HarnessError(f"{ex.where} could not be reached while task '{task.key}' was pending: {exc}") from None
    if not ok:
        raise HarnessError(f"task '{task.key}' failed on {ex.where}: {value}")
    return value


@dataclass(frozen=True)
class Mapper:
    """``Mapper(stage)(fn, items)``: ``[fn(item) for item in items]`` as tasks of :func:`run`, in item order (the
    math package's ``map_fn``; picklable, so a statistic that holds one can itself be a task)."""

    stage: str

    def __call__(self, fn: Callable, items) -> list:
        items = list(items)
        return run([Task(f"{self.stage} {i + 1}/{len(items)}", fn, (item,)) for i, item in enumerate(items)])


def worker_command(address: str, nworkers: int) -> list[str]:
    """This interpreter's ``dask worker`` for the scheduler at ``address``: one thread each, listening on
    127.0.0.1 only, no dashboard."""
    flags = ["--nworkers", str(nworkers), "--nthreads", "1", "--host", "127.0.0.1", "--no-dashboard"]
    return [sys.executable, "-m", "distributed.cli.dask_worker", address, *flags]
