"""The harness's own writes while an authors' arm runs (issue 31): they need not wait for it, and its check still
blames only the authors' code.

An arm runs unconfined (``sandbox="none"``, where any change in the watched folders voids it) in a thread, with an
adapter that naps; meanwhile this process writes a cache entry and a report through :mod:`harness.core.fileio` (as
another claim of the build does). The arm is still accepted; a write by other means in the same window is still
caught, and named, and ours is not.
"""

from __future__ import annotations

import sys
import textwrap
import threading
import time

import pytest
from test_upstream import _arm, checked_out, world  # noqa: F401  (fixtures of the authors' arm's tests)

from harness.authors import upstream
from harness.authors.upstream import UpstreamResult
from harness.core import journal
from harness.core.fileio import atomic_write_text, project_lock, write_together

NAP = """
    import time

    def run(request):
        time.sleep(3)
        return {"values": {"value": 1.0}}
"""


def _while_the_arm_runs(w, write) -> UpstreamResult:
    """Run the napping adapter unconfined in a thread; call ``write()`` once its window is open."""
    (w.adapters / "nap.py").write_text(textwrap.dedent(NAP), encoding="utf-8")
    out: list[UpstreamResult] = []
    watch = {"reports": w.tmp / "reports"}  # and the cache, the checkout, the tables, the interpreter: always
    arm = threading.Thread(
        target=lambda: out.append(_arm(w, adapter="nap.py", sandbox="none", force=True, watch=watch))
    )
    arm.start()
    deadline = time.monotonic() + 30
    while journal.open_windows() == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert journal.open_windows() == 1, "the arm never opened its window"
    time.sleep(0.3)  # well inside the adapter's nap
    t0 = time.monotonic()
    write()
    waited = time.monotonic() - t0
    arm.join(timeout=60)
    (result,) = out
    assert waited < 2.0, f"the write waited {waited:.1f} s for the arm"
    return result


def _cache_entry(w) -> None:
    other = UpstreamResult(status="ok", values={"value": 2.0})
    upstream._write_cache(w.options.cache_dir / ("b" * 64 + ".json"), other)


def test_a_cache_entry_written_while_another_arm_runs_does_not_void_it(checked_out):  # noqa: F811
    w = checked_out
    w.options.cache_dir.mkdir(exist_ok=True)

    def ours():
        _cache_entry(w)
        write_together(w.tmp / "reports", "other", {"other.md": b"a report\n", "figures/other/f.svg": b"<svg/>"})

    result = _while_the_arm_runs(w, ours)
    assert result.status == "ok", result.reason
    assert (w.options.cache_dir / ("b" * 64 + ".json")).is_file()


def test_a_foreign_write_in_the_same_window_is_still_caught_and_ours_is_not_named(checked_out):  # noqa: F811
    w = checked_out
    w.options.cache_dir.mkdir(exist_ok=True)

    def ours_and_a_foreign_one():
        _cache_entry(w)
        (w.tmp / "reports" / "FOREIGN.md").write_text("not through the harness")

    result = _while_the_arm_runs(w, ours_and_a_foreign_one)
    assert result.status == "could not run"
    assert "FOREIGN.md" in result.reason and "b" * 64 not in result.reason


def test_one_of_our_files_changed_again_by_other_means_is_caught(checked_out):  # noqa: F811
    w = checked_out
    w.options.cache_dir.mkdir(exist_ok=True)

    def ours_then_touched():
        _cache_entry(w)
        (w.options.cache_dir / ("b" * 64 + ".json")).write_text("{}")

    result = _while_the_arm_runs(w, ours_then_touched)
    assert result.status == "could not run" and "b" * 64 in result.reason


def test_a_write_by_any_means_still_waits_for_the_arms_of_this_process(tmp_path):
    """``project_lock(shared=False)`` without ``journaled`` (a git checkout into vendor/) waits until no arm of
    this process runs: its writes could not be told from the authors' code's."""
    opened, waited = threading.Event(), []

    def arm():
        with project_lock(shared=True):
            opened.set()
            time.sleep(1.0)

    t = threading.Thread(target=arm)
    t.start()
    opened.wait(10)
    t0 = time.monotonic()
    with project_lock(shared=False):
        waited.append(time.monotonic() - t0)
    t.join()
    assert waited[0] >= 0.5
    t0 = time.monotonic()
    with project_lock(shared=True):  # and a journaled write does not wait for an arm
        done = threading.Thread(target=lambda: atomic_write_text(tmp_path / "x", "y"))
        done.start()
        done.join(5)
        assert not done.is_alive()


def test_a_thread_running_an_arm_may_write_through_fileio_but_not_by_other_means():
    with project_lock(shared=True), project_lock(shared=False, journaled=True):
        pass
    with project_lock(shared=True), pytest.raises(RuntimeError), project_lock(shared=False):
        pass


def test_a_window_is_read_while_other_threads_write(tmp_path):
    """The check reads a window while the other claims' threads go on recording their writes (seen in a build:
    "dictionary changed size during iteration")."""
    from harness.core.sandbox import WatchRoot

    roots = [WatchRoot("w", tmp_path)]
    stop = threading.Event()

    def writer():
        i = 0
        while not stop.is_set():
            atomic_write_text(tmp_path / f"f{i}.txt", str(i))  # a new entry each time
            i += 1

    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # the threads take turns often
    try:
        with project_lock(shared=True) as window:
            t = threading.Thread(target=writer)
            t.start()
            try:
                deadline = time.monotonic() + 2.0
                while time.monotonic() < deadline:
                    journal.undo_own(window, {}, {}, roots)
            finally:
                stop.set()
                t.join()
    finally:
        sys.setswitchinterval(switch)
