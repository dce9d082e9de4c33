"""The multiverse's noise rule, measured on the claims' own designs (issue 38; a measurement, not a test).

A specification's assertion is *within noise* where it lies within ``NOISE_Z`` standard deviations of
``NOISE_RESAMPLES`` cluster-bootstrap resamples of its threshold (:mod:`harness.resampling.multiverse`), else it
*holds* or *fails* by its side. That is the one-sided decision of the ``normal`` interval method at
``alpha = 0.05`` from ``NOISE_RESAMPLES`` resamples, so the coverage study measures it: in its null world (every
data set moved so that the claim's difference is exactly at its threshold) the share of data sets read as
settled on each side is the rule's error there, nominally ``alpha`` a side.

Usage::

    python -m benchmarks.noise_rule [--replicates R] [-j J] [CLAIM ...]   (default: every claim with orderings)

Printed per claim and ordering: the share read below and above the threshold, each with its one-sided 95%
Clopper-Pearson upper bound, and the statistic calls.
"""

from __future__ import annotations

import argparse
import time

from threadpoolctl import threadpool_limits

from harness.build.runner import measurement_arm
from harness.claimfiles.spec import load_claim
from harness.cli import resolve_claims
from harness.core.datalock import Tables, load_lock, resolve_data_root
from harness.parallel.fanout import Mapper, executor_from, using
from harness.resampling.calibration import comparison_name, design
from harness.resampling.multiverse import NOISE_RESAMPLES, NOISE_Z
from harness.stats.calibration import coverage_study
from harness.stats.methods import METHODS

ALPHA = 0.05  # NOISE_Z is its one-sided normal quantile


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("claims", nargs="*")
    ap.add_argument("--replicates", type=int, default=400)
    ap.add_argument("-j", "--jobs", type=int, default=2)
    args = ap.parse_args(argv)
    tables = Tables(load_lock(), resolve_data_root())
    specs = [load_claim(p, tables=tables) for p in resolve_claims(args.claims)]
    specs = [s for s in specs if s.claim.bootstrap is not None and s.claim.bootstrap.comparisons]
    print(f"noise rule: within {NOISE_Z} s.d. of {NOISE_RESAMPLES} resamples; {args.replicates} data sets a claim")
    print("| claim | ordering | read below | 95% bound | read above | 95% bound | seconds |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    with threadpool_limits(limits=1, user_api="blas"), using(executor_from(f"local:{args.jobs}")):
        for spec in specs:
            b, t0 = spec.claim.bootstrap, time.perf_counter()
            d = design(spec, tables, measurement_arm(spec, tables))
            result = coverage_study(
                d,
                seed=b.seed + 1,  # not the claim's study's data sets
                n_replicates=args.replicates,
                n_resamples=NOISE_RESAMPLES,
                level=1 - 2 * ALPHA,
                alpha=ALPHA,
                quantities=[comparison_name(i) for i in range(len(b.comparisons))],
                methods=[METHODS["normal"]],
                map_fn=Mapper("noise-rule data sets"),
            )
            seconds = time.perf_counter() - t0
            for i, c in enumerate(b.comparisons):
                row = result["decisions"][comparison_name(i)]["normal"]
                print(
                    f"| {spec.id[:3]} | {c.label or comparison_name(i)} | {row['supports_below']:.3f} | "
                    f"{row['supports_below_bounds'][1]:.3f} | {row['supports_above']:.3f} | "
                    f"{row['supports_above_bounds'][1]:.3f} | {seconds:.0f} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
