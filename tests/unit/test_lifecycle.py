"""Pool workers die with the run: real processes, real signals."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from harness import cli

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

POOL_PARENT = """
    import os, sys, time
    from concurrent.futures import ProcessPoolExecutor
    from pathlib import Path
    from harness.parallel import fanout

    def job(folder):
        Path(folder, str(os.getpid())).touch()  # the worker is running (its initializer has run)
        time.sleep(60)

    if __name__ == "__main__":
        kind, folder = sys.argv[1], sys.argv[2]
        if kind == "process_pool":
            pool = fanout.process_pool(2)
        else:
            pool = ProcessPoolExecutor(2, initializer=fanout._die_with_parent)
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


def test_sigterm_is_an_interrupt_and_a_second_one_is_not_caught():
    previous = signal.signal(signal.SIGTERM, cli._terminated)
    try:
        with pytest.raises(KeyboardInterrupt) as info:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(1)
        assert info.value.args == ("SIGTERM",)
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # the next one stops the process
    finally:
        signal.signal(signal.SIGTERM, previous)
