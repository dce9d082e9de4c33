"""Every protocol's vocabulary is what a run measures. (Claims at other parameters, and what their reports
come to, are the corpus's: ``tests/e2e/test_corpus.py``.)"""

from pathlib import Path

import pytest
from claimset import params

from harness.rendering.results import results_for

pytestmark = pytest.mark.e2e

CLAIMS = Path(__file__).resolve().parents[2] / "claims"


@pytest.mark.parametrize("prefix", params())
def test_each_declared_quantity_is_measured(run_once, prefix):
    """The re-implementation measures exactly what the vocabulary gives it (both arms' and its own)."""
    from harness.claimfiles.spec import load_claim

    (path,) = sorted(CLAIMS.glob(f"{prefix}*.yaml"))
    spec = load_claim(path)
    record = run_once(prefix).record
    declared = {n for n, q in spec.vocabulary.items() if q.arm in ("both", "reimpl")}
    assert set(record.arms.reimpl.values) == declared
    for c in spec.claim.controls:
        assert set(record.arms.reimpl.controls[c.id].values) == set(spec.control_vocabularies[c.id])
    assert record.unmeasured == [] and results_for(record).complete
