"""``make claims`` as a build, timed side by side: a warm run (nothing changed) and cold runs at -j 1 and -j 2.

Each side runs the command line in a fresh process into its own scratch folder of reports, without the
authors' arm (``--no-upstream``: its cost is the cache's, not the harness's), and the sides are
interleaved. The warm side runs after a cold one into the same folder, so every claim is up to date.
Printed: one line per side with the median wall time, and the ratios.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness.paths import PROJECT_ROOT

__all__ = ["build_times"]


def _run(out: Path, *extra: str) -> float:
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "harness", "run", "--no-upstream", "--accept-degraded", "--out", str(out), *extra],
        cwd=PROJECT_ROOT,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return time.perf_counter() - t0


def build_times(tables, repeats: int) -> list[str]:
    repeats = max(1, min(repeats, 3))  # a cold run is minutes: a few repeats at most
    times: dict[str, list[float]] = {"cold -j 1": [], "cold -j 2": [], "warm": []}
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
            times["cold -j 1"].append(_run(Path(a), "-j", "1"))
            times["cold -j 2"].append(_run(Path(b), "-j", "2"))
            times["warm"].append(_run(Path(b), "-j", "2"))
    med = {k: statistics.median(v) for k, v in times.items()}
    lines = [f"build: `python -m harness run --no-upstream` on every claim, median of {repeats}, sides interleaved"]
    lines += [f"{k:<10} {v:8.1f} s" for k, v in med.items()]
    lines.append(f"cold -j 2 / cold -j 1: {med['cold -j 2'] / med['cold -j 1']:.2f}")
    return lines
