"""One fan-out layer for every fit: the same bytes whatever runs the tasks, errors that name the task, and no
worker left behind.

The Dask tests start a ``distributed.LocalCluster`` of two worker processes on 127.0.0.1 (no other address is
used) and skip, with the reason, where ``dask.distributed`` is not installed (``pip install -e '.[dask]'``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from clusters import local_cluster

from harness.build.runner import run_claim
from harness.core.errors import HarnessError
from harness.core.paths import CLAIMS_DIR
from harness.core.record import record_json
from harness.parallel import fanout
from harness.parallel.fanout import SERIAL, Task, executor_from, using

pytestmark = pytest.mark.e2e


def claim_path(prefix: str) -> Path:
    (path,) = sorted(CLAIMS_DIR.glob(f"{prefix}*.yaml"))
    return path


def _square(x):
    return x * x


def _boom(x):
    raise RuntimeError(f"planted failure at {x}")


@pytest.fixture(scope="module")
def dask_cluster():
    with local_cluster(2) as cluster:
        yield cluster


def _dask(cluster):
    return executor_from(f"dask://{cluster.scheduler_address.removeprefix('tcp://')}")


def test_results_come_back_in_task_order_whatever_runs_them():
    tasks = [Task(f"square {i}", _square, (i,)) for i in range(20)]
    want = [i * i for i in range(20)]
    assert fanout.run(tasks, executor=SERIAL) == want
    assert fanout.run(tasks, executor=executor_from("local:2")) == want


@pytest.mark.parametrize("spec", ["serial", "local:2"])
def test_a_task_that_raises_names_itself_and_where_it_ran(spec):
    tasks = [Task("fine", _square, (1,)), Task("the planted one", _boom, (7,))]
    with pytest.raises(HarnessError, match=r"task 'the planted one' failed on .*: RuntimeError: planted failure at 7"):
        fanout.run(tasks, executor=executor_from(spec))


@pytest.mark.parametrize(
    "spec, message",
    [
        ("local:0", "N in local:N must be a whole number >= 1"),
        ("dask://nowhere", "expected dask://HOST:PORT"),
        ("spark://x:1", "expected serial, local, local:N or dask://HOST:PORT"),
    ],
)
def test_a_mistyped_executor_is_refused(spec, message):
    with pytest.raises(HarnessError, match=message):
        executor_from(spec)


@pytest.mark.slow  # a second whole run of claim 002, for determinism
def test_claim_002_gives_the_same_record_serially_and_on_two_local_workers(tables):
    path = claim_path("002")
    with using(SERIAL):
        serial = record_json(run_claim(path, tables, upstream_options=None).record)
    with using(executor_from("local:2")):
        pooled = record_json(run_claim(path, tables, upstream_options=None).record)
    assert serial == pooled


@pytest.mark.slow  # a second whole run of claim 002, for determinism
@pytest.mark.dask
def test_claim_002_gives_the_same_record_on_a_dask_cluster(tables, dask_cluster):
    path = claim_path("002")
    with using(SERIAL):
        serial = record_json(run_claim(path, tables, upstream_options=None).record)
    with using(_dask(dask_cluster)):
        remote = record_json(run_claim(path, tables, upstream_options=None).record)
    assert serial == remote


@pytest.mark.dask
def test_a_task_that_raises_on_a_dask_worker_names_itself(dask_cluster):
    with pytest.raises(HarnessError, match=r"task 'remote' failed on the Dask scheduler at .*: RuntimeError: planted"):
        fanout.run([Task("remote", _boom, (3,))], executor=_dask(dask_cluster))


def test_a_failing_task_fails_its_claim_and_the_others_go_on(tmp_path, monkeypatch, capsys):
    """A fit that raises inside claim 002's fan-out (on forked local workers, which see the planted failure)
    makes that claim an error naming the claim and the task; claim 000 is still written; exit status 2."""
    from harness import cli
    from harness.protocols.boundary_at_budget import protocol

    monkeypatch.setattr(protocol, "_fit_task", _boom)
    out = tmp_path / "reports"
    status = cli.main(["run", "-j", "1", "--executor", "local:2", "--no-upstream", "--out", str(out), "000", "002"])
    err = capsys.readouterr().err
    assert status == 2
    assert "002_table1_boundary_1e24.yaml" in err and "task 'fits of the tasks 1/6' failed on this machine" in err
    assert "RuntimeError: planted failure at" in err and "Traceback" not in err
    assert (out / "000_aime2025_shift_test.md").is_file() and not (out / "002_table1_boundary_1e24.md").exists()


def _children(pid: int) -> set[int]:
    """Every live descendant of ``pid``, found through /proc."""
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] != "Z":
                parents[int(entry.name)] = int(fields[1])
    out, todo = set(), [pid]
    while todo:
        p = todo.pop()
        kids = [c for c, pp in parents.items() if pp == p]
        out.update(kids)
        todo += kids
    return out


def _alive(pid: int) -> bool:
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_an_interrupted_run_leaves_no_worker_of_ours(tmp_path, sig):
    env = {**os.environ, "HARNESS_EXECUTOR": "local:2"}
    cmd = [sys.executable, "-m", "harness", "run", "-j", "2", "--force", "--no-upstream", "--out", str(tmp_path), "001"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline, seen = time.monotonic() + 120, set()
        while len(seen) < 2 and time.monotonic() < deadline and proc.poll() is None:
            seen |= _children(proc.pid)
            time.sleep(0.1)
        assert len(seen) >= 2, "the run never started its workers"
        proc.send_signal(sig)
        proc.wait(timeout=30)
        deadline = time.monotonic() + 10
        while any(_alive(p) for p in seen) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [p for p in seen if _alive(p)], "a worker outlived the run"
    finally:
        if proc.poll() is None:
            proc.kill()
