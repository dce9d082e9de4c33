"""Progress off a terminal (issue #17 item 8): a log is never silent for long, yet not flooded; and the
Makefile's switch that recomputes every verdict."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from harness.core import progress

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def clock(monkeypatch):
    now = [1000.0]
    monkeypatch.setattr(progress.time, "monotonic", lambda: now[0])
    return now


def _lines(capsys) -> list[str]:
    return capsys.readouterr().err.splitlines()


def test_off_a_terminal_a_stage_line_comes_every_minute_or_so(clock, capsys):
    progress.start("c", verbose=False)
    progress.stage("re-implementation: sweep")
    assert _lines(capsys) == ["  [c] re-implementation: sweep (0 s)"]
    clock[0] += 5
    progress.stage("re-implementation: fits")
    for i in range(1, 100):
        progress.step(i, 100, "resamples")
    assert _lines(capsys) == []  # within the minute: quiet
    clock[0] += progress.QUIET_EVERY_S
    progress.step(100, 100, "resamples")
    (line,) = _lines(capsys)
    assert "[c] resamples" in line and "100/100" in line and f"({5 + progress.QUIET_EVERY_S:.0f} s)" in line
    clock[0] += progress.QUIET_EVERY_S
    progress.stage("authors' arm")
    assert _lines(capsys) == [f"  [c] authors' arm ({5 + 2 * progress.QUIET_EVERY_S:.0f} s)"]


def test_on_a_terminal_every_stage_is_a_line(clock, capsys):
    progress.start("c", verbose=True)
    progress.stage("a")
    progress.stage("b")
    assert len(_lines(capsys)) == 2


def _make(*args: str) -> str:
    done = subprocess.run(
        ["make", "-n", "--no-print-directory", "-W", ".venv/.installed", "claims", "PY=py", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.skip(f"make cannot be run here: {done.stderr.strip()}")
    return next(ln for ln in done.stdout.splitlines() if "harness run" in ln)


def test_make_claims_force_recomputes_and_plain_make_claims_does_not():
    assert "--force" not in _make().split()
    assert "--force" in _make("FORCE=1").split() and "--force-upstream" not in _make("FORCE=1").split()
    assert {"--force", "--force-upstream"} <= set(_make("FORCE=1", "FORCE_UPSTREAM=1").split())
    assert "--force" not in _make("FORCE=0").split()
