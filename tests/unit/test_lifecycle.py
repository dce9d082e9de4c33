"""Children and scratch folders die with the run: real processes, real signals."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from harness.core import lifecycle

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

POOL_PARENT = """
    import os, sys, time
    from concurrent.futures import ProcessPoolExecutor
    from pathlib import Path
    from harness.core import lifecycle

    def job(folder):
        Path(folder, str(os.getpid())).touch()  # the worker is running (its initializer has run)
        time.sleep(60)

    if __name__ == "__main__":
        lifecycle.handle_sigterm_as_interrupt()
        kind, folder = sys.argv[1], sys.argv[2]
        if kind == "process_pool":
            pool = lifecycle.process_pool(2)
        else:
            pool = ProcessPoolExecutor(2, initializer=lifecycle.die_with_parent)
        with pool as p:
            for f in [p.submit(job, folder) for _ in range(6)]:
                f.result()
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.parametrize(
    "kind, sig", [("process_pool", signal.SIGKILL), ("process_pool", signal.SIGTERM), ("initializer", signal.SIGKILL)]
)
def test_pool_workers_die_with_their_parent(tmp_path, kind, sig):
    """Defect 2: ProcessPoolExecutor workers were left running, with parent 1, after the harness was killed."""
    (tmp_path / "parent.py").write_text(textwrap.dedent(POOL_PARENT))
    running = tmp_path / "running"
    running.mkdir()
    parent = subprocess.Popen(
        [sys.executable, str(tmp_path / "parent.py"), kind, str(running)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        while len(list(running.iterdir())) < 2:
            assert parent.poll() is None and time.monotonic() < deadline, parent.stderr.read().decode()
            time.sleep(0.05)
        workers = [int(p.name) for p in running.iterdir()]
        t0 = time.monotonic()
        parent.send_signal(sig)
        parent.wait(timeout=10)
        assert time.monotonic() - t0 < 5  # SIGTERM: no waiting for the queued jobs
        deadline = time.monotonic() + 5
        while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not [pid for pid in workers if _alive(pid)]
    finally:
        parent.kill()
        parent.wait()
        parent.stderr.close()
        for p in running.iterdir():
            if _alive(int(p.name)):
                os.kill(int(p.name), signal.SIGKILL)


def test_die_with_parent_asks_the_kernel_on_linux():
    out = subprocess.run(
        [sys.executable, "-c", "from harness.core.lifecycle import die_with_parent; print(die_with_parent())"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == "prctl"


def test_sigterm_is_an_interrupt_and_a_second_one_is_not_caught():
    previous = lifecycle.handle_sigterm_as_interrupt()
    try:
        with pytest.raises(KeyboardInterrupt) as info:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(1)
        assert isinstance(info.value, lifecycle.Terminated) and info.value.exit_status == 143
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # the next one stops the process
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def test_an_ignored_signal_stays_ignored():
    old = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        previous = lifecycle.handle_sigterm_as_interrupt()
        assert signal.SIGHUP not in previous and signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    finally:
        signal.signal(signal.SIGHUP, old)


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_sweep_removes_the_folders_of_owners_that_are_gone(tmp_path):
    def folder(name, owner=None, age=0.0):
        path = tmp_path / name
        path.mkdir()
        if owner is not None:
            (path / lifecycle.OWNER_FILE).write_text(owner)
        if age:
            os.utime(path, (time.time() - age, time.time() - age))
        return path

    mine = folder("upstream-1", f"{os.getpid()} {lifecycle.process_start_time(os.getpid())}\n")
    dead = folder("upstream-2", f"{_dead_pid()} 12345\n")
    reused = folder("upstream-3", f"{os.getpid()} 1\n")  # our pid, another start time: an earlier owner
    young = folder("upstream-4")  # being made: its owner file is not written yet
    old = folder("upstream-5", age=2 * lifecycle.STALE_UNOWNED_S)
    other = folder("other-6", f"{_dead_pid()} 1\n")
    removed = lifecycle.sweep_stale_scratch("upstream-", tmp_path)
    assert sorted(removed) == sorted([dead, reused, old])
    assert mine.exists() and young.exists() and other.exists() and not dead.exists()


def test_a_scratch_folder_is_removed_on_an_exception_and_its_guard_dismissed(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with pytest.raises(RuntimeError), lifecycle.scratch_folder("t-") as (folder, guard):
        assert folder.parent == tmp_path and folder.name.startswith(f"t-{os.getpid()}-")
        assert (folder / lifecycle.OWNER_FILE).read_text().split()[0] == str(os.getpid())
        raise RuntimeError("boom")
    assert not folder.exists() and not list(tmp_path.iterdir())
    assert guard._proc.poll() == 0  # dismissed, not acting


GUARDED_PARENT = """
    import subprocess, sys, time
    from harness.core import lifecycle

    with lifecycle.scratch_folder("t-") as (folder, guard):
        child = subprocess.Popen(
            [sys.executable, "-c", "import time; time.sleep(60)", str(folder)], start_new_session=True
        )
        guard.watch(child.pid)
        print(folder, child.pid, flush=True)
        time.sleep(60)
"""


def test_the_guard_cleans_up_after_a_killed_owner(tmp_path):
    (tmp_path / "parent.py").write_text(textwrap.dedent(GUARDED_PARENT))
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    parent = subprocess.Popen(
        [sys.executable, str(tmp_path / "parent.py")],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "TMPDIR": str(scratch)},
    )
    try:
        folder, child = parent.stdout.readline().split()
        assert Path(folder).is_dir() and _alive(int(child))
        parent.kill()
        parent.wait()
        deadline = time.monotonic() + 5
        while (Path(folder).exists() or _alive(int(child))) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not Path(folder).exists() and not _alive(int(child))
    finally:
        parent.kill()
        parent.wait()
        parent.stdout.close()
