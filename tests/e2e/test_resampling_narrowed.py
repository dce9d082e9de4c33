"""A protocol's resampling narrowed to what a claim's bootstrap reads gives those values as it gives them whole.

The bootstrap and the coverage study pass the protocol the quantities they read (``quantities=``: the claim's
``bootstrap.quantities`` and the sides of its comparisons), and the protocol leaves out the work only the others
need (claim 003 fits no Constant or Binwise on a resample; claim 001 bins nothing). For every claim with a
bootstrap, here: on one resample of its rows and from both the full-sample fits and the resample's own (``rebase``),
the narrowed statistic gives every quantity read, equal to the bit to the whole statistic's.
"""

from __future__ import annotations

import numpy as np
import pytest
from claimset import slow_marks

from harness.build.runner import measurement_arm
from harness.claimfiles.spec import load_claim
from harness.core.paths import CLAIMS_DIR
from harness.resampling.calibration import resampled_quantities
from harness.stats.resample import cluster_bootstrap_indices, cluster_ids_from_labels

pytestmark = pytest.mark.e2e

BOOTSTRAPPED = [
    pytest.param(p, id=p.stem, marks=slow_marks(p.name.split("_", 1)[0]))  # a heavy claim's: make test-all only
    for p in sorted(CLAIMS_DIR.glob("*.yaml"))
    if load_claim(p).claim.bootstrap is not None
]


def _read(spec) -> list[str]:
    sides = [s for c in spec.claim.bootstrap.comparisons for s in (c.left, c.right) if isinstance(s, str)]
    return list(dict.fromkeys(resampled_quantities(spec) + sides))


@pytest.mark.parametrize("path", BOOTSTRAPPED)
def test_the_narrowed_statistic_gives_what_is_read_as_the_whole_one(path, tables):
    spec = load_claim(path)
    reimpl = measurement_arm(spec, tables)
    col, read = spec.claim.bootstrap.cluster_col, _read(spec)
    whole = spec.protocol.resampling(spec.params, tables, reimpl, cluster_col=col)
    narrow = spec.protocol.resampling(spec.params, tables, reimpl, cluster_col=col, quantities=read)
    ids = cluster_ids_from_labels(whole.cluster_labels)
    rows = cluster_bootstrap_indices(ids, 1, np.random.default_rng(7))[0]

    def same(a: dict, b: dict, what: str):
        missing = [q for q in read if q not in b]
        assert not missing, f"{spec.id}: the narrowed {what} gives no {missing}"
        differ = {q: (a[q], b[q]) for q in read if not (a[q] == b[q] or (np.isnan(a[q]) and np.isnan(b[q])))}
        assert not differ, f"{spec.id}: the narrowed {what} differs from the whole one: {differ}"

    same(whole.statistic(rows, np.random.default_rng(1)), narrow.statistic(rows, np.random.default_rng(1)), "statistic")
    if whole.rebase is not None:
        (va, stat_a), (vb, stat_b) = (r.rebase(rows, np.random.default_rng(2)) for r in (whole, narrow))
        same(va, vb, "rebased values")
        again = cluster_bootstrap_indices(ids, 1, np.random.default_rng(8))[0]
        same(stat_a(again, np.random.default_rng(3)), stat_b(again, np.random.default_rng(3)), "rebased statistic")
