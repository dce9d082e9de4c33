"""``parametric_loss``'s reading of the table: the extraction's own axis reproduces the table's model sizes, the
corrected axis reads them again, and a corrected axis without its ticks is refused."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError

from harness.protocols.parametric_loss.protocol import LossParams, _log_axis, _runs

#: The claims' parameters that matter here (Hoffmann et al.'s values do not enter the reading of the table).
BASE = {
    "table": "chinchilla_runs",
    "tex": [6.0, 6.0, 0.5, 0.3, 0.3],
    "printed": [400.0, 400.0, 1.7, 0.3, 0.3],
    "interval_a": [0.454, 0.455],
    "compute": 5.88e23,
}
#: data_extraction.ipynb cell 6: the ticks the extraction used (100B at SVG 26.872, 100M at 319.125).
EXTRACTED = [26.872, 1e11, 319.125, 1e8]


def test_a_log_axis_through_two_ticks():
    # halfway between the ticks in SVG units is the geometric mean of their values
    assert _log_axis([0.0, 5.0, 10.0], [0.0, 1e2, 10.0, 1e4]) == pytest.approx([1e2, 1e3, 1e4], rel=1e-12)


def test_the_extractions_own_ticks_give_the_tables_model_sizes(tables):
    if "chinchilla_runs" not in tables.lock.tables:
        pytest.skip("no chinchilla_runs table in the data lock")
    frame = tables.frame("chinchilla_runs")
    assert _log_axis(frame["y"].to_numpy(), EXTRACTED) == pytest.approx(frame["Model Size"].to_numpy(), rel=1e-9)
    as_is = _runs(LossParams(**BASE), tables)
    again = _runs(LossParams(**BASE, y_axis="corrected", corrected_ticks=[26.872, 1e11, 322.703, 1e8]), tables)
    assert np.array_equal(as_is[2], again[2])  # the losses are not read off the y axis
    shift = again[0] - as_is[0]
    assert np.all(shift >= 0) and 0.05 < shift.max() < 0.1  # a lower 100M tick: every size read larger


def test_a_corrected_axis_needs_its_ticks():
    with pytest.raises(ValidationError, match="needs corrected_ticks"):
        LossParams(**BASE, y_axis="corrected")
    with pytest.raises(ValidationError, match="two SVG coordinates apart"):
        LossParams(**BASE, y_axis="corrected", corrected_ticks=[1.0, 1e11, 1.0, 1e8])


def test_the_threshold_of_the_runs_needed_is_placed_in_monte_carlo_errors():
    """Issue 37's one new finding: where a target sets a threshold on the runs needed, how far the estimate lies
    from it in the bootstrap's Monte Carlo standard errors (claim 102's record: a threshold within noise)."""
    from harness.core.record import read_record
    from harness.rendering.results import results_for

    reports = Path(__file__).resolve().parents[2] / "reports"
    found = sorted(reports.glob("102_*.json"))
    if not found:
        pytest.skip("claim 102 has not been run")
    rec = read_record(found[0])
    r = results_for(rec)
    mine, se = rec.arms.reimpl.values["required_runs"], rec.arms.reimpl.values["mc.required_runs"]
    (t,) = r.margins
    assert t["value"] == 600_000 and t["se"] == pytest.approx(abs(mine - 600_000) / se)
    assert t["side"] == ("below" if mine > 600_000 else "above")
    targets = [x.model_copy(update={"value": 5e5}) for x in rec.targets]  # a threshold 10^5 below: far below
    (t,) = results_for(rec.model_copy(update={"targets": targets})).margins
    assert t["se"] == pytest.approx((mine - 5e5) / se) and t["se"] > 3 and t["side"] == "below"
