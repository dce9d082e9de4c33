"""Dask when asked: workers that ``python -m harness worker`` starts, a scheduler killed mid-run, an address that
is not one. Every scheduler and worker here listens on 127.0.0.1; the tests skip, with the
reason, without ``dask.distributed`` (``pip install -e '.[dask]'``).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from clusters import local_cluster

from harness import cli
from harness.core.errors import HarnessError
from harness.core.numerics import PINNED_ENV
from harness.parallel import fanout
from harness.parallel.fanout import Task, executor_from

pytestmark = [pytest.mark.e2e, pytest.mark.dask]
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def cluster():
    with local_cluster(1) as c:
        yield c


def _address(cluster) -> str:
    return cluster.scheduler_address.removeprefix("tcp://")


def _square(x):
    return x * x


def _worker(address: str, cwd: Path, env: dict | None = None) -> subprocess.Popen:
    """A ``dask worker`` process started in ``cwd`` (whose ``harness/`` it imports first)."""
    cmd = fanout.worker_command(f"tcp://{address}", 1)
    env = {**os.environ, "PYTHONPATH": str(cwd), **(env or {})}
    return subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _wait_for_workers(cluster, n: int) -> None:
    from distributed import Client

    with Client(cluster.scheduler_address, set_as_default=False) as client:
        client.wait_for_workers(n, timeout=60)


def test_a_task_runs_on_the_workers_of_the_scheduler(cluster):
    ex = executor_from(f"dask://{_address(cluster)}")
    assert fanout.run([Task("sq", _square, (3,))], executor=ex) == [9]


@pytest.mark.slow  # starts a worker process of its own (about 15 s)
def test_harness_worker_starts_a_worker_the_build_accepts(monkeypatch):
    """``python -m harness worker`` pins the kernels itself, whatever the shell had; it listens on 127.0.0.1."""
    for key, value in PINNED_ENV.items():  # this process as `python -m harness` runs it: pinned
        monkeypatch.setenv(key, value)
    with local_cluster(0) as cluster:
        env = {k: v for k, v in os.environ.items() if k not in PINNED_ENV}  # a shell without the pins
        cmd = [sys.executable, "-m", "harness", "worker", cluster.scheduler_address]
        worker = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            _wait_for_workers(cluster, 1)
            ex = executor_from(f"dask://{_address(cluster)}")
            assert fanout.run([Task("pow", pow, (4, 2))], executor=ex) == [16]  # importable anywhere
            (address,) = ex.dask_client().scheduler_info()["workers"]
            assert address.startswith("tcp://127.0.0.1:")
        finally:
            worker.kill()
            worker.wait()


@pytest.mark.slow  # starts a scheduler and a worker of its own (about 20 s)
def test_a_killed_scheduler_is_one_line_not_a_traceback(tmp_path):
    pytest.importorskip("distributed", reason="dask.distributed is not installed (pip install -e '.[dask]')")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    scheduler = subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", str(port)]
        + ["--no-dashboard"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    worker = _worker(f"127.0.0.1:{port}", ROOT)
    try:
        ex = executor_from(f"dask://127.0.0.1:{port}")
        deadline = time.monotonic() + 60
        while True:
            try:
                ex.dask_client()
                break
            except HarnessError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
        threading.Timer(2.0, lambda: scheduler.send_signal(signal.SIGKILL)).start()
        with pytest.raises(HarnessError) as info:
            fanout.run([Task(f"nap {i}", time.sleep, (0.5,)) for i in range(60)], executor=ex)
        assert "\n" not in str(info.value) and "stopped answering" in str(info.value)
    finally:
        for p in (worker, scheduler):
            p.kill()
            p.wait()


@pytest.mark.parametrize("command", ["run", "status", "calibrate"])
def test_an_executor_that_is_no_address_is_refused_even_with_nothing_to_run(tmp_path, command):
    from harness.build import make

    args = cli.build_parser().parse_args([command, "--out", str(tmp_path)])
    args.executor = "dask://127.0.0.1:notaport"
    lines: list[str] = []
    said = SimpleNamespace(info=lines.append, note=lines.append, error=lines.append)
    status = {
        "run": lambda: make.run_claims(args, [], said),
        "status": lambda: make.run_claims(args, [], said, would=True),
        "calibrate": lambda: make.calibrate_claims(args, [], said),
    }[command]()
    assert status == 2 and any("expected dask://HOST:PORT" in line for line in lines), lines
