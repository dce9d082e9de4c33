"""The one check of a fit's inputs (:mod:`harness.stats._inputs`), as every estimator meets it."""

from __future__ import annotations

import numpy as np
import pytest

from harness.stats._inputs import check_y, check_zy
from harness.stats.baselines import ConstantQuantileRegressor
from harness.stats.sigmoid import SigmoidQuantileRegressor


def test_good_inputs_come_back_as_float_arrays():
    z, y = check_zy([1, 2, 3, 4], [0.1, 0.2, 0.3, 0.4], min_points=4)
    assert z.dtype == y.dtype == np.float64 and z.tolist() == [1.0, 2.0, 3.0, 4.0]
    assert check_y([0.5]).tolist() == [0.5]


@pytest.mark.parametrize(
    "z, y, min_points, says",
    [
        ([1, 2], [0.1], 1, "1-d of equal length"),
        ([[1, 2]], [[0.1, 0.2]], 1, "1-d of equal length"),
        ([1, 2, 3], [0.1, 0.2, 0.3], 4, "at least 4 (z, y) points, got 3"),
        ([], [], 1, "at least 1 (z, y) points, got 0"),
        ([1, np.nan], [0.1, 0.2], 1, "must be finite"),
        ([1, 2], [0.1, np.inf], 1, "must be finite"),
    ],
)
def test_each_bad_input_is_named(z, y, min_points, says):
    with pytest.raises(ValueError, match=says.replace("(", r"\(").replace(")", r"\)")):
        check_zy(z, y, min_points=min_points)


def test_y_alone():
    for y, says in (([], "at least 1 points"), ([[0.1]], "1-d"), ([0.1, np.nan], "finite")):
        with pytest.raises(ValueError, match=says):
            check_y(y)


def test_each_estimator_asks_for_the_points_its_model_needs():
    """The sigmoid (four parameters) needs four points; a constant needs one."""
    with pytest.raises(ValueError, match="at least 4"):
        SigmoidQuantileRegressor(tau=0.9, kappa=50.0, lam=0.0, n_random=0).fit([1.0, 2.0, 3.0], [0.1, 0.2, 0.3])
    assert ConstantQuantileRegressor(tau=0.9).fit([1.0], [0.3]) is not None
