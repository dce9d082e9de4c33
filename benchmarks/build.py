"""``make claims`` as a build, timed side by side.

``build``: a warm run (nothing changed) and cold runs at -j 1 and -j 2, each in a fresh process into its own
scratch folder of reports, without the authors' arm (``--no-upstream``: its cost is the cache's, not the
harness's), the sides interleaved. Printed: the median wall time of each side, and the ratio.

``warm-build``: a build with nothing to do (``run`` and ``status`` over a scratch folder of reports made up to
date first by a cold ``run --no-upstream``), CPU (user + system, the process and its children) and wall, medians
of the repeats. The claims are those of ``$BENCH_CLAIMS`` (ids or prefixes, e.g. ``"000 002"``), else all. With
``$BENCH_BASELINE_REF`` (a git ref, e.g. ``main``), the same ``run`` of that ref's code on its own committed
reports (up to date with it), in a scratch copy, interleaved with ours.

``cold-build``: the critical path of a cold ``make claims``, coverage studies included, in a scratch copy of
the project (this working tree's files, the pinned checkout, an empty ``.cache/`` and no studies): the build
(``run --studies --force-upstream -j J``), and beside it the authors' code alone, run the same way (every
claim's authors' arm at once in one process, on the same ``-j J`` cores, nothing cached). Printed: the build's
wall and CPU, when the authors' last request ended and the time after it, the authors' code alone, and the
build's wall against max(authors alone; build CPU / cores). ``$BENCH_CLAIMS`` restricts the claims,
``$BENCH_JOBS`` sets J (default 2), ``$BENCH_KEEP`` a folder to copy the build's reports into. One run each:
each side takes many minutes.

CPU is the process's and its children's (``getrusage``), plus what processes inside a bubblewrap pid
namespace used: the kernel never adds those to the harness's children's time (a busy loop under ``bwrap
--unshare-pid`` shows 0 s), so they are sampled from ``/proc`` every 0.2 s (:class:`HiddenCpu`; a process
that lives less than that is missed).
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from harness.core.paths import PROJECT_ROOT

__all__ = ["build_times", "warm_build", "cold_build"]


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


def _claims() -> list[str]:
    return os.environ.get("BENCH_CLAIMS", "").split()


def _load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


class HiddenCpu(threading.Thread):
    """The CPU time of the processes below ``root`` that run inside a bubblewrap pid namespace (the namespace's
    init, a ``bwrap`` under the ``bwrap`` the harness started, and everything under it), sampled from ``/proc``
    until :meth:`stop`: ``getrusage`` of the harness never counts them."""

    def __init__(self, root: int, every: float = 0.2):
        super().__init__(daemon=True)
        self.root, self.every, self._done = root, every, threading.Event()
        self.seen: dict[tuple[int, int], float] = {}  # (pid, start time) -> the CPU seconds last read
        self._tick = os.sysconf("SC_CLK_TCK")

    @staticmethod
    def _stat(pid: int) -> tuple[str, int, int, float] | None:
        try:
            with open(f"/proc/{pid}/stat", "rb") as fh:
                raw = fh.read().decode(errors="replace")
        except OSError:
            return None
        name, rest = raw[raw.index("(") + 1 : raw.rindex(")")], raw[raw.rindex(")") + 2 :].split()
        return name, int(rest[1]), int(rest[19]), float(int(rest[11]) + int(rest[12]))  # ppid, start, ticks

    def _sample(self) -> None:
        procs = {int(d): st for d in os.listdir("/proc") if d.isdigit() and (st := self._stat(int(d))) is not None}
        for pid, (_, _, start, ticks) in procs.items():
            names, p = [], pid
            while p in procs and p != self.root and len(names) < 64:
                names.append(procs[p][0])
                p = procs[p][1]
            # below the build, and the namespace's init or inside it: the outer bwrap (waited for by the
            # harness, so counted) is the only one with a single bwrap from itself up
            if p == self.root and names.count("bwrap") >= 2:
                self.seen[(pid, start)] = ticks / self._tick

    def run(self) -> None:
        while not self._done.wait(self.every):
            self._sample()

    def stop(self) -> float:
        self._done.set()
        self.join()
        return sum(self.seen.values())


def _timed(cmd: list[str], cwd: Path, env: dict | None = None, log: str | None = None) -> tuple[float, float, int]:
    """``(wall s, CPU s of the process and everything below it, exit status)`` of ``cmd`` (:class:`HiddenCpu`
    adds what ran in a bubblewrap pid namespace); its errors (``error:`` lines of standard error) are printed
    when it fails."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    hidden = HiddenCpu(proc.pid)
    hidden.start()
    _, stderr = proc.communicate()
    done = subprocess.CompletedProcess(cmd, proc.returncode, None, stderr)
    wall = time.perf_counter() - t0
    if log:
        Path(log).write_text(stderr)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime) + hidden.stop()
    if done.returncode not in (0, 1):
        said = [ln for ln in done.stderr.splitlines() if ln.startswith("error:")] or done.stderr.splitlines()[-5:]
        print("\n".join(f"  ({cmd[3] if len(cmd) > 3 else cmd[-1]} said) {ln[:300]}" for ln in said[:10]))
    return wall, cpu, done.returncode


def warm_build(tables, repeats: int) -> list[str]:
    claims = _claims()
    harness = [sys.executable, "-m", "harness"]
    ref = os.environ.get("BENCH_BASELINE_REF")
    env = {**os.environ, "HARNESS_DATA_ROOT": str(tables.root)}
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "reports"
        _timed([*harness, "run", "--no-upstream", "-j", "2", "--out", str(out), *claims], PROJECT_ROOT)
        sides = {
            "run (warm)": ([*harness, "run", "--no-upstream", "--out", str(out), *claims], PROJECT_ROOT),
            "status": ([*harness, "status", "--no-upstream", "--no-studies", "--out", str(out), *claims], PROJECT_ROOT),
        }
        if ref:
            base = Path(tmp) / "baseline"
            base.mkdir()
            archive = subprocess.run(["git", "archive", ref], cwd=PROJECT_ROOT, capture_output=True, check=True)
            subprocess.run(["tar", "-x", "-C", str(base)], input=archive.stdout, check=True)
            sides[f"run at {ref}"] = ([*harness, "run", *claims], base)
        rows: dict[str, list[tuple[float, float, int]]] = {k: [] for k in sides}
        for _ in range(max(1, repeats)):
            for name, (cmd, cwd) in sides.items():  # interleaved
                rows[name].append(_timed(cmd, cwd, env))
    what = " ".join(claims) or "every claim"
    lines = [f"warm-build: nothing to do ({what}; records made by a cold --no-upstream run), median of {repeats}"]
    for name, got in rows.items():
        cpu = statistics.median(c for _, c, _ in got)
        wall = statistics.median(w for w, _, _ in got)
        codes = sorted({s for _, _, s in got})
        lines.append(f"{name:<12} {cpu:6.2f} s CPU  {wall:6.2f} s wall  exit {codes}")
    lines.append(_load())
    return lines


def _scratch_copy(dest: Path) -> None:
    """This working tree's files (tracked and new, not ignored), the pinned checkout; no cache, no reports, no
    studies (the build writes them all: a claim left out of ``$BENCH_CLAIMS`` leaves no stale record behind)."""
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=PROJECT_ROOT, capture_output=True, check=True
    ).stdout.decode()
    for rel in filter(None, listed.split("\0")):
        src = PROJECT_ROOT / rel
        if src.is_file() and not rel.startswith("reports/"):
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    shutil.copytree(PROJECT_ROOT / "vendor", dest / "vendor", symlinks=True)


AUTHORS_ALONE = """
import sys, threading
from harness.core.datalock import Tables, load_lock, resolve_data_root
from harness.claimfiles.spec import load_claim
from harness.authors.upstream import UpstreamOptions, run_upstream_arm
from harness.cli import resolve_claims

jobs, names = int(sys.argv[1]), sys.argv[2:]
tables = Tables(load_lock(), resolve_data_root())
specs = [load_claim(p, tables=tables) for p in resolve_claims(names)]
options = UpstreamOptions(force=True, jobs=jobs, auto_checkout=True)  # -j: the authors' processes at once
bad = []
def arm(spec):
    r = run_upstream_arm(spec, spec.protocol, spec.params, tables, options=options)
    if not r.ok and spec.claim.upstream:
        bad.append(f"{spec.id}: {r.status}")
threads = [threading.Thread(target=arm, args=(s,)) for s in specs]
for t in threads: t.start()
for t in threads: t.join()
sys.exit(1 if bad else 0)
"""


def cold_build(tables, repeats: int) -> list[str]:
    claims, jobs = _claims(), os.environ.get("BENCH_JOBS", "2")
    env = {**os.environ, "HARNESS_DATA_ROOT": str(tables.root)}
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "project"
        _scratch_copy(copy)
        load_before = _load()
        t_start = time.time()
        build = [sys.executable, "-m", "harness", "run", "--studies", "--force", "--force-upstream"]
        keep = os.environ.get("BENCH_KEEP")
        log = f"{keep}.log" if keep else None
        wall, cpu, code = _timed([*build, "--accept-degraded", "-j", jobs, *claims], copy, env, log)
        logs = [json.loads(p.read_text()) for p in sorted((copy / ".cache" / "runs").glob("*.json"))]
        ended = max((log.get("upstream_ended_at", t_start) for log in logs), default=t_start) - t_start
        if keep:  # the build's reports, run logs and messages, kept (a forced cold `make claims` of this tree)
            shutil.copytree(copy / "reports", keep, dirs_exist_ok=True)
            shutil.copytree(copy / ".cache" / "runs", f"{keep}.runs", dirs_exist_ok=True)
        alone_wall, alone_cpu, alone_code = _timed([sys.executable, "-c", AUTHORS_ALONE, jobs, *claims], copy, env)
        load_after = _load()
    cores = int(jobs)
    bound = max(alone_wall, cpu / cores)
    what = " ".join(claims) or "every claim"
    return [
        f"cold-build: `run --studies --force --force-upstream -j {jobs}` ({what}) in a scratch copy, no cache, "
        "no studies; one run each",
        f"build                 {wall:8.1f} s wall  {cpu:8.1f} s CPU  exit {code}",
        f"authors' last request ended at {ended:8.1f} s; the build went on {wall - ended:8.1f} s after it",
        f"authors' code alone   {alone_wall:8.1f} s wall  {alone_cpu:8.1f} s CPU  exit {alone_code}",
        f"build CPU / {cores} cores   {cpu / cores:8.1f} s",
        f"build wall / max(authors alone, CPU / cores) = {wall:.1f} / {bound:.1f} = {wall / bound:.2f}",
        f"{load_before} before, {load_after} after",
    ]
