"""One build, one pool (issue 31): coverage studies and claims run at once in threads of one process, their tasks
interleaved on one pool, give the bytes each gives alone."""

from __future__ import annotations

from functools import partial

import pytest
from test_calibration_claims import ASKING, _narrow

from harness.build import schedule
from harness.build.runner import measurement_arm, run_claim
from harness.claimfiles.spec import load_claim
from harness.core import cores
from harness.core.record import record_json
from harness.parallel.fanout import SERIAL, executor_from, using
from harness.resampling.calibration import run_study
from harness.stats.calibration import study_json

pytestmark = pytest.mark.e2e


def _study(spec, tables) -> str:
    return study_json(run_study(spec, tables, tables.lock, measurement_arm(spec, tables)))


def _claim(path, tables) -> str:
    return record_json(run_claim(path, tables, upstream_options=None).record)


@pytest.mark.slow  # minutes: two studies and a claim, twice
def test_two_studies_and_a_claim_at_once_on_one_pool_give_what_each_gives_alone(tables):
    specs = [_narrow(load_claim(p), 3, 4) for p in ASKING if p.stem.startswith(("001", "002"))]
    claim = next(p for p in ASKING if p.stem.startswith("002"))
    with using(SERIAL):
        alone = [_study(s, tables) for s in specs] + [_claim(claim, tables)]
    pieces = [schedule.Piece(s.id, partial(_study, s, tables), (cores.STUDY_WORK, i)) for i, s in enumerate(specs)]
    pieces.append(schedule.Piece(claim.stem, partial(_claim, claim, tables)))
    with schedule.machine(executor_from("local:2"), 2):
        together = dict(schedule.run_pieces(pieces, at_once=True))
    assert [together[i] for i in range(len(pieces))] == alone
