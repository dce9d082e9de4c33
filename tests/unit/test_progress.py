"""Progress lines name the claim and the stage; and the Makefile's switch that recomputes every verdict."""

from __future__ import annotations

import contextvars
import subprocess
from pathlib import Path

import pytest

from harness.core import progress

ROOT = Path(__file__).resolve().parents[2]


def _stages():
    progress.stage("before any claim")  # nothing: no claim is being reported in this thread
    progress.start("c")
    progress.stage("re-implementation: sweep")


def test_a_stage_is_a_line_that_names_the_claim(capsys):
    contextvars.Context().run(_stages)  # a context of its own: no claim another test started
    assert capsys.readouterr().err.splitlines() == ["  [c] re-implementation: sweep (0 s)"]


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
