"""Coverage study of the interval methods on two real claim designs (a benchmark-sized job, not a test).

Usage::

    python -m benchmarks.calibration_study --design table1 --replicates 100 --resamples 100 -j 2 --out DIR
    python -m benchmarks.calibration_study --design both ...

Designs (built from the real claim files and tables, the protocol files untouched):

``table1``
    Claim 002 (Table 1): the 3663 leaderboard rows with a compute proxy, 231
    base-model clusters, the tau = 0.98 sigmoid boundary at z = 3 of **MATH
    Lvl 5 and MMLU-Pro** only (the claim's comparison). The protocol's own
    ``resampling`` is called with the claim's parameters narrowed to those two
    tasks (same rows: the frame does not depend on the tasks).
``period``
    Claim 001 (Figure 2): the dated rows, the rolling fit-on-one-period /
    evaluate-on-the-next analysis, for **MATH Lvl 5 and IFEval** only (the
    claim's two headline comparisons, quantities ``signed_coverage.<task>``).
    The protocol needs a non-empty stable group, so the narrowed parameters
    name only MATH Lvl 5 as drifting; the group quantities that depend on that
    are not studied (the statistic is wrapped to return the two signed
    coverages only), and the per-task signed coverage does not depend on it.

The warm starts are the re-implementation arm's own fits: ``protocol.measure``
with the claim's parameters and the runner's measurement generator
(``SeedSequence(claim seed).spawn(1 + controls)[0]``), with the robustness
extras that run *after* the main fits switched off (claim 002's other-start
refit and both claims' box check), so the main fits, and the stream they use,
are those of the report. The script checks that the warm-start values equal
the committed report's.

Written to ``--out``: ``calibration_<design>.json`` (the study, byte-identical
for a seed whatever ``-j``) and ``calibration_<design>.timing.json`` (wall
time, fits per second, the command). Printed: the same and the coverage table.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np
import scipy.optimize  # noqa: F401  (load BLAS before limiting it)
from threadpoolctl import threadpool_limits

from harness.claimfiles.spec import load_claim
from harness.core.datalock import Tables, load_lock, resolve_data_root
from harness.core.paths import PROJECT_ROOT
from harness.core.record import Arm, plain
from harness.parallel.fanout import Mapper, executor_from, using
from harness.protocols.boundary_at_budget import quantities as boundary_quantities
from harness.protocols.temporal_coverage import quantities as temporal_quantities
from harness.stats.calibration import DEFAULT_METHODS, coverage_study, coverage_table, study_json

DESIGNS = {
    "table1": {
        "claim": "002_table1_boundary_1e24.yaml",
        "tasks": ["MATH Lvl 5", "MMLU-Pro"],
        "after_main_off": {"robustness_cold_start": False, "box_check": None},
        "narrow": {},
        "quantity": boundary_quantities.boundary,
    },
    "period": {
        "claim": "001_nonstationary_boundaries.yaml",
        "tasks": ["MATH Lvl 5", "IFEval"],
        "after_main_off": {"box_check": None},
        "narrow": {"drift_tasks": ["MATH Lvl 5"]},
        "quantity": temporal_quantities.signed_coverage,
    },
}


def build_design(name: str, tables):
    """``(resampling, quantities, fits_per_call, info)`` of one design."""
    d = DESIGNS[name]
    spec = load_claim(PROJECT_ROOT / "claims" / d["claim"], tables=tables)
    # the runner's measurement stream (harness.build.runner._generators): one for the measurement, one per control
    rng = np.random.default_rng(np.random.SeedSequence(spec.claim.seed).spawn(1 + len(spec.claim.controls))[0])
    main = spec.params.model_copy(update=d["after_main_off"])
    t0 = time.perf_counter()
    m = spec.protocol.measure(main, tables, rng)
    measure_s = time.perf_counter() - t0
    arm = Arm(status="ok", values=plain(m.values), details=plain(m.details))
    narrowed = main.model_copy(update={"tasks": {k: spec.params.tasks[k] for k in d["tasks"]}, **d["narrow"]})
    res = spec.protocol.resampling(narrowed, tables, arm, cluster_col=spec.claim.bootstrap.cluster_col)
    qs = [d["quantity"](t) for t in d["tasks"]]
    if "fitted" in arm.details:  # period split: one fit per (task, split)
        fits_per_call = sum(f["task"] in d["tasks"] for f in arm.details["fitted"])
    else:
        fits_per_call = len(d["tasks"])
    from harness.core.record import read_record

    committed = read_record(PROJECT_ROOT / "reports" / d["claim"].replace(".yaml", ".json")).arms.reimpl.values
    info = {
        "claim": spec.id,
        "tasks": d["tasks"],
        "cluster_col": spec.claim.bootstrap.cluster_col,
        "claim_bootstrap_seed": spec.claim.bootstrap.seed,
        "measure_seconds": measure_s,
        "warm_start_values": {q: arm.values[q] for q in qs},
        "report_values": {q: committed.get(q) for q in qs},
    }
    return res, qs, fits_per_call, info


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.calibration_study", description=__doc__.split("\n")[0])
    ap.add_argument("--design", choices=[*DESIGNS, "both"], default="both")
    ap.add_argument("--replicates", type=int, default=100, help="R, simulated data sets")
    ap.add_argument("--resamples", type=int, default=100, help="B, resamples per interval")
    ap.add_argument("-j", "--jobs", type=int, default=1, help="local worker processes (1: serial)")
    ap.add_argument("--executor", default=None, help="serial, local:N or dask://HOST:PORT (overrides -j)")
    ap.add_argument("--seed", type=int, default=None, help="default: the claim's bootstrap seed")
    ap.add_argument(
        "--methods",
        nargs="*",
        default=None,
        choices=[m.name for m in DEFAULT_METHODS],
        help="default: all of harness.stats.calibration.DEFAULT_METHODS",
    )
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    methods = [m for m in DEFAULT_METHODS if args.methods is None or m.name in args.methods]
    args.out.mkdir(parents=True, exist_ok=True)
    tables = Tables(load_lock(), resolve_data_root())
    t_all = time.perf_counter()
    executor = executor_from(args.executor or ("serial" if args.jobs == 1 else f"local:{args.jobs}"))
    with threadpool_limits(limits=1, user_api="blas"), using(executor):
        for name in DESIGNS if args.design == "both" else [args.design]:
            t0 = time.perf_counter()
            res, qs, fits_per_call, info = build_design(name, tables)
            seed = info["claim_bootstrap_seed"] if args.seed is None else args.seed
            same = all(
                info["report_values"][q] is not None
                and math.isclose(info["warm_start_values"][q], info["report_values"][q], rel_tol=0, abs_tol=1e-12)
                for q in qs
            )
            print(
                f"== {name}: claim {info['claim']}, {res.n_rows} rows, tasks {info['tasks']}; warm starts "
                f"{'equal' if same else 'DIFFER FROM'} the committed report's values {info['warm_start_values']}",
                flush=True,
            )
            t1 = time.perf_counter()

            def progress(done, total, t1=t1):
                if done % 10 == 0 or done == total:
                    print(f"   {done}/{total} data sets, {time.perf_counter() - t1:.0f} s", file=sys.stderr, flush=True)

            out = coverage_study(
                res,
                seed=seed,
                n_replicates=args.replicates,
                n_resamples=args.resamples,
                quantities=qs,
                methods=methods,
                map_fn=None if executor.kind == "serial" else Mapper("calibration data sets"),
                name=f"{name} ({info['claim']}: {', '.join(info['tasks'])})",
                on_result=progress,
            )
            study_s = time.perf_counter() - t1
            calls = out["statistic_calls"]["total"]
            timing = {
                "design": name,
                "command": "python -m benchmarks.calibration_study " + " ".join(argv or sys.argv[1:]),
                "n_jobs": args.jobs,
                "wall_seconds": time.perf_counter() - t0,
                "study_seconds": study_s,
                "build_seconds": t1 - t0,
                "statistic_calls": calls,
                "fits_per_call": fits_per_call,
                "fits": calls * fits_per_call,
                "fits_per_second": calls * fits_per_call / study_s,
                "warm_starts_equal_report": same,
                **info,
            }
            (args.out / f"calibration_{name}.json").write_text(study_json(out), encoding="utf-8")
            (args.out / f"calibration_{name}.timing.json").write_text(
                json.dumps(timing, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
            )
            print(coverage_table(out))
            print(
                f"   truth {out['design']['truth']}; the simulated estimates' sd "
                f"{ {q: round(v['sd'], 5) for q, v in out['estimates'].items()} } and bias "
                f"{ {q: round(v['bias'], 5) for q, v in out['estimates'].items()} }"
            )
            print(
                f"   wall {timing['wall_seconds']:.1f} s (study {study_s:.1f} s, -j {args.jobs}); {calls} statistic "
                f"calls x {fits_per_call} fits = {timing['fits']} fits, {timing['fits_per_second']:.0f} fits/s",
                flush=True,
            )
    print(f"total wall {time.perf_counter() - t_all:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
