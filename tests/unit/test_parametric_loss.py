"""``parametric_loss``'s reading of the table: the extraction's own axis reproduces the table's model sizes, the
corrected axis reads them again, and a corrected axis without its ticks is refused."""

from __future__ import annotations

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
