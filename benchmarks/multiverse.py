"""A claim's multiverse, timed side by side (issue 20).

``multiverse``: every specification of claim 002's multiverse (the cheapest leaderboard one: each
specification is six sigmoid fits) on one process (``-j 1``, the serial executor), on two local worker
processes (``-j 2``) and on a ``distributed.LocalCluster`` of two workers (skipped, with the reason, without
dask), with specifications per second; every side must give the same record part. Medians of the repeats.
"""

from __future__ import annotations

import json
import statistics
import time

from harness.core.paths import CLAIMS_DIR

from .fanout import DASK_SIDE, local_dask_cluster

__all__ = ["multiverse_side_by_side"]


def _once(spec, tables, executor):
    from harness.parallel.fanout import using
    from harness.resampling.multiverse import run_multiverse

    with using(executor):
        t0 = time.perf_counter()
        out = run_multiverse(spec, tables)
        return time.perf_counter() - t0, out


def multiverse_side_by_side(tables, repeats: int) -> list[str]:
    from harness.claimfiles.spec import load_claim
    from harness.parallel.fanout import SERIAL, executor_from

    spec = load_claim(next(CLAIMS_DIR.glob("002*.yaml")), tables=tables)
    if spec.claim.multiverse is None:
        return ["multiverse: claim 002 declares no multiverse; nothing to time"]
    sides = {"-j 1 (serial)": SERIAL, "-j 2 (local:2)": executor_from("local:2")}
    lines, rows = [], []
    with local_dask_cluster(lines) as dask:
        if dask is not None:
            sides[DASK_SIDE] = dask
        results, n = {}, None
        for name, ex in sides.items():
            times = []
            for _ in range(max(1, repeats)):
                secs, results[name] = _once(spec, tables, ex)
                times.append(secs)
            n = len(results[name].specifications)
            med = statistics.median(times)
            rows.append(f"{name:<32} {med:7.2f} s  {n / med:6.2f} specifications/s")
        lines = [f"multiverse: claim 002, {n} specifications, median of {max(1, repeats)}", *lines, *rows]
        same = len({json.dumps(r.model_dump(), sort_keys=True) for r in results.values()}) == 1
        lines.append(f"same specifications and readings on every side: {'yes' if same else 'NO'}")
    return lines
