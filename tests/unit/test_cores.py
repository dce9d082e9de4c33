"""This machine's cores, shared (issue 29 items 9 and 10, issue 31): slots per checkout, a build's core budget, and
waits that say what they wait for."""

from __future__ import annotations

import fcntl
import hashlib
import multiprocessing
import os
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from harness.core import cores, progress
from harness.core.paths import PROJECT_ROOT


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


def test_the_slots_are_this_checkouts_own():
    assert cores.SLOTS_DIR.name == hashlib.sha256(str(PROJECT_ROOT).encode()).hexdigest()[:12]
    assert cores.SLOTS_DIR.parent.name == f"harness-slots-{os.getuid()}"


def test_a_slot_held_by_another_checkout_does_not_hold_this_one():
    other = cores.SLOTS_DIR.parent / "another-checkout"
    other.mkdir(parents=True, exist_ok=True)
    holder = _holder(other / "slot-0.lock")
    try:
        t0 = time.monotonic()
        with cores.authors_slot(1) as i:
            assert i == 0
        assert time.monotonic() - t0 < 1.0
    finally:
        holder.kill()
        holder.wait()


def test_a_wait_for_a_slot_says_what_it_waits_for_and_again_while_it_lasts(fast_waits, capsys, tmp_path, monkeypatch):
    # slots of its own: under make test another worker's authors' run may take this checkout's slot the moment
    # the holder lets it go, and the wait would then (rightly) go on
    monkeypatch.setattr(cores, "SLOTS_DIR", tmp_path / "slots")
    cores.SLOTS_DIR.mkdir(parents=True, exist_ok=True)
    holder = _holder(cores.SLOTS_DIR / "slot-0.lock")
    got = threading.Event()

    def wait_for_it():
        with cores.authors_slot(1):
            got.set()

    t = threading.Thread(target=wait_for_it)
    t.start()
    time.sleep(1.2)
    assert not got.is_set()
    holder.kill()
    holder.wait()
    t.join(10)
    assert got.is_set()
    lines = [ln for ln in capsys.readouterr().err.splitlines() if "waiting for" in ln]
    assert len(lines) >= 2, lines
    assert "waiting for one of this checkout's 1 slots for the authors' code" in lines[0]
    assert f"held by pid {holder.pid}" in lines[0] and "s so far" in lines[0]


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


def test_the_claims_work_goes_before_the_studies_and_the_authors_start_at_once():
    c = cores.Cores(1)
    c.take()  # the one core is busy
    order = []

    def wants(priority, name):
        c.take(priority)
        order.append(name)
        c.give()

    threads = [threading.Thread(target=wants, args=((cores.STUDY_WORK, 0), "study"))]
    threads[0].start()
    time.sleep(0.2)
    threads.append(threading.Thread(target=wants, args=((cores.CLAIM_WORK, 3), "claim")))
    threads[1].start()
    time.sleep(0.2)
    c.take_now()  # an authors' process: does not wait, and is counted
    assert c.used == 2 and order == []
    c.give()
    c.give()
    for t in threads:
        t.join(5)
    assert order == ["claim", "study"] and c.used == 0


def _started_then_sleep(started):
    started.set()
    time.sleep(3)


def test_a_child_forked_while_a_slot_is_held_does_not_keep_it():
    """A pool's worker forked while this process held a slot closes its copy: the slot goes when we let it go."""
    ctx = multiprocessing.get_context("fork")
    started = ctx.Event()
    with cores.authors_slot(1):
        child = ctx.Process(target=_started_then_sleep, args=(started,))
        child.start()
        assert started.wait(30)  # the child runs (its copy of the slot's descriptor would be open by now)
    try:
        fd = os.open(cores.SLOTS_DIR / "slot-0.lock", os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # raises BlockingIOError if the child kept it
        finally:
            os.close(fd)
    finally:
        child.join()
