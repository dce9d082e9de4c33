"""The fan-out layer, timed side by side (issue 18).

``fanout-build``: the forced cold build of every claim with both arms (``run --force --force-upstream``) at
``-j 1`` and at ``-j 2``, each in a fresh process into its own scratch folder of reports, and from the run
logs the critical path: the longest single authors' request and the slowest claim.

``fanout-bootstrap``: claim 002's bootstrap with 1000 resamples (its own seed and clusters; 100 chunks of
ten), on two local worker processes and on a ``distributed.LocalCluster`` of two workers (skipped, with the
reason, without dask), with tasks and resamples per second; the two give the same draws.

Both print their own lines; times are medians of the repeats (one for the build: each side takes minutes).
"""

from __future__ import annotations

import contextlib
import json
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

from harness.core.paths import CLAIMS_DIR, PROJECT_ROOT, RUN_LOG_DIR

__all__ = ["build_side_by_side", "bootstrap_side_by_side"]


def _cold_build(out: Path, jobs: int) -> tuple[float, dict]:
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "harness", "run", "--force", "--force-upstream", "--accept-degraded", "-j", str(jobs)]
        + ["--out", str(out)],
        cwd=PROJECT_ROOT,
        check=False,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wall = time.perf_counter() - t0
    logs = {}
    for path in sorted(CLAIMS_DIR.glob("*.yaml")):
        log = RUN_LOG_DIR / f"{path.stem}.json"
        if log.is_file():
            logs[path.stem] = json.loads(log.read_text(encoding="utf-8"))
    return wall, logs


def build_side_by_side(tables, repeats: int) -> list[str]:
    lines = ["fanout-build: forced cold build, both arms (run --force --force-upstream), one run per side"]
    walls = {}
    for jobs in (1, 2):
        with tempfile.TemporaryDirectory() as out:
            wall, logs = _cold_build(Path(out), jobs)
        walls[jobs] = wall
        longest = max(
            ((s, cid) for cid, log in logs.items() for s in (log.get("upstream_request_seconds") or [])),
            default=(0.0, "-"),
        )
        slowest = max(((log.get("total_seconds", 0.0), cid) for cid, log in logs.items()), default=(0.0, "-"))
        n_requests = sum(len(log.get("upstream_request_seconds") or []) for log in logs.values())
        lines.append(
            f"-j {jobs}: {wall:7.1f} s wall; {n_requests} authors' requests; longest request {longest[0]:.1f} s "
            f"({longest[1]}); slowest claim {slowest[0]:.1f} s ({slowest[1]})"
        )
    lines.append(f"-j 2 / -j 1: {walls[2] / walls[1]:.2f}")
    return lines


def _bootstrap(spec, tables, reimpl, executor):
    from harness.parallel.fanout import using
    from harness.resampling.robustness import run_bootstrap
    from harness.verdicts.judging import judge_targets

    with using(executor):
        t0 = time.perf_counter()
        out = run_bootstrap(spec, tables, reimpl, judge_targets(spec, reimpl, reimpl))
        return time.perf_counter() - t0, out


def bootstrap_side_by_side(tables, repeats: int) -> list[str]:
    from harness.build.runner import _run_reimpl
    from harness.claimfiles.spec import load_claim
    from harness.parallel.fanout import executor_from

    spec = load_claim(next(CLAIMS_DIR.glob("002*.yaml")), tables=tables)
    boot = spec.claim.bootstrap.model_copy(update={"n_resamples": 1000})
    spec = type(spec)(**{**spec.__dict__, "claim": spec.claim.model_copy(update={"bootstrap": boot})})
    reimpl = _run_reimpl(spec, tables, {})
    n_tasks = -(-1000 // 10)
    sides = {"local:2": executor_from("local:2")}
    lines = [f"fanout-bootstrap: claim 002, 1000 resamples in {n_tasks} tasks, median of {repeats}"]
    with local_dask_cluster(lines) as dask:
        if dask is not None:
            sides[DASK_SIDE] = dask
        results = {}
        for name, ex in sides.items():
            times = []
            for _ in range(max(1, repeats)):
                secs, results[name] = _bootstrap(spec, tables, reimpl, ex)
                times.append(secs)
            med = statistics.median(times)
            lines.append(f"{name:<32} {med:7.2f} s  {n_tasks / med:6.1f} tasks/s  {1000 / med:6.1f} resamples/s")
        same = len({json.dumps(r.model_dump(), sort_keys=True) for r in results.values()}) == 1
        lines.append(f"same intervals and shares on every side: {'yes' if same else 'NO'}")
    return lines


#: How the benchmarks name the Dask side.
DASK_SIDE = "dask (LocalCluster, 2 workers)"


@contextlib.contextmanager
def local_dask_cluster(lines: list[str]):
    """The executor of a ``distributed.LocalCluster`` of two worker processes on 127.0.0.1, closed on exit; ``None``
    (and a line in ``lines`` saying why) where dask.distributed is not installed."""
    from harness.parallel.fanout import executor_from

    try:
        import distributed
    except ImportError:
        lines.append("dask side skipped: dask.distributed is not installed (pip install -e '.[dask]')")
        yield None
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cluster = distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
        )
    try:
        yield executor_from(f"dask://{cluster.scheduler_address.removeprefix('tcp://')}")
    finally:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cluster.close()
