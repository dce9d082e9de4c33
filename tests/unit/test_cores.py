"""The authors' processes a build runs at once, and waits for the project's lock that say what they wait for."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from harness.core import cores, progress


def _holder(path) -> subprocess.Popen:
    """Another process holding an exclusive ``flock`` on ``path`` until killed (it says when it has it)."""
    code = textwrap.dedent(
        f"""
        import fcntl, os, sys, time
        fd = os.open({str(path)!r}, os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)
        print("held", flush=True)
        time.sleep(120)
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    proc.stdout.close()
    return proc


@pytest.fixture
def fast_waits(monkeypatch):
    monkeypatch.setattr(progress, "WAIT_GRACE_S", 0.1)
    monkeypatch.setattr(progress, "WAIT_EVERY_S", 0.3)
    monkeypatch.setitem(progress._ENABLED, "on", True)


def test_off_a_terminal_a_wait_is_said_at_least_every_30_s():
    assert progress.WAIT_EVERY_S <= 30 and progress.WAIT_GRACE_S < progress.WAIT_EVERY_S


def test_a_wait_for_another_runs_lock_names_it(fast_waits, capsys, tmp_path):
    path = tmp_path / "writes.lock"
    holder = _holder(path)
    fd = os.open(path, os.O_RDWR)
    try:
        threading.Timer(1.0, holder.kill).start()
        cores.flock_waiting(fd, fcntl.LOCK_EX, "another run's hold on this checkout's files", path)
    finally:
        os.close(fd)
        holder.wait()
    err = capsys.readouterr().err
    assert "waiting for another run's hold on this checkout's files" in err and f"pid {holder.pid}" in err


def _started_then_sleep(started):
    started.set()
    time.sleep(3)


def test_a_build_runs_at_most_j_of_the_authors_processes_at_once():
    running, most, guard = [0], [0], threading.Lock()

    def request():
        with cores.authors_slot():
            with guard:
                running[0] += 1
                most[0] = max(most[0], running[0])
            time.sleep(0.05)
            with guard:
                running[0] -= 1

    with cores.limit(2):
        threads = [threading.Thread(target=request) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert most[0] == 2
