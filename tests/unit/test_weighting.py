"""`weighting: base_model`: each row of a fit weighs 1/n_g, n_g the scored rows of its base model."""

import numpy as np
import pandas as pd
import pytest
import yaml
from pydantic import ValidationError

from harness.protocols.boundary_at_budget.protocol import BoundaryParams, _boundary_fits
from harness.protocols.estimator_comparison.protocol import EstimatorComparisonParams
from harness.protocols.leaderboard import task_data, task_weights, with_weights
from harness.stats.leaderboard import cluster_weights, weight_column
from harness.stats.sigmoid import SigmoidQuantileRegressor, sigmoid_boundary
from harness.stats.splits import _fit_job, rolling_splits

ROOT = __import__("pathlib").Path(__file__).resolve().parents[2]


def _params(cls, claim, **over):
    raw = yaml.safe_load((ROOT / "claims" / claim).read_text(encoding="utf-8"))["params"]
    raw = {k: tuple(v) if k == "box_check" else v for k, v in raw.items()}  # YAML's list is the schema's pair
    return cls(**{**raw, **over})


def _frame():
    # base model a: three rows, one unscored in A; b: one row; two rows without a base model
    return pd.DataFrame(
        {
            "base": ["a", "a", "b", None, "a", np.nan],
            "A": [0.1, 0.2, 0.3, 0.4, np.nan, 0.6],
            "B": [0.1, np.nan, 0.3, 0.4, 0.5, 0.6],
            "period": ["P1", "P2", "P1", "P1", "P1", "P2"],
            "z": [0.0, 1.0, 2.0, 3.0, 4.0, 5.0],
        }
    )


def test_cluster_weights_give_each_group_one_and_a_missing_group_its_own():
    np.testing.assert_allclose(cluster_weights(["a", "b", "a", None, np.nan, "a"]), [1 / 3, 1, 1 / 3, 1, 1, 1 / 3])


def test_weights_count_the_scored_rows_of_each_base_model_per_task_and_period():
    p = _params(BoundaryParams, "002_table1_boundary_1e24.yaml", tasks={"A": "A", "B": "B"}, base_model_col="base")
    assert with_weights(_frame(), p) is not None and weight_column("A") not in with_weights(_frame(), p).columns
    p = p.model_copy(update={"weighting": "base_model"})
    df = with_weights(_frame(), p)
    np.testing.assert_allclose(df[weight_column("A")], [0.5, 0.5, 1, 1, np.nan, 1])
    np.testing.assert_allclose(df[weight_column("B")], [0.5, np.nan, 1, 1, 0.5, 1])
    by = with_weights(_frame(), p, ("period",))
    np.testing.assert_allclose(by[weight_column("A")], [1, 1, 1, 1, np.nan, 1])
    np.testing.assert_allclose(by[weight_column("B")], [0.5, np.nan, 1, 1, 0.5, 1])
    w, (z, _) = task_weights(df, p)["B"], task_data(df, p)["B"]
    assert w.shape == z.shape and np.isclose(w.sum(), 4.0)  # a, b and the two rows alone, each weighing one


def test_a_resampled_base_model_drawn_twice_weighs_twice():
    rng = np.random.default_rng(0)
    sizes = rng.integers(1, 8, 40)
    z = np.repeat(rng.uniform(-1, 4, 40), sizes)
    y = sigmoid_boundary(z, 0.1, 0.6, -2.0, 1.2) + rng.uniform(-0.05, 0.05, z.size)
    w = cluster_weights(np.repeat(np.arange(40), sizes))
    kw = {"tau": 0.9, "kappa": 50.0, "lam": 1e-3, "n_random": 0}
    init = SigmoidQuantileRegressor(**kw).fit(z, y, weights=w).params_
    first = np.flatnonzero(np.repeat(np.arange(40), sizes) == 0)
    indices = np.r_[np.arange(z.size), first]  # base model 0 drawn twice
    design = dict(z=z, Y=y[:, None], W=w[:, None], labels=["t"], inits={"t": init}, options=kw, z_eval=3.0)
    got, _ = _boundary_fits(indices, None, **design)
    w2 = w.copy()
    w2[first] *= 2
    want = SigmoidQuantileRegressor(**kw).fit(z, y, init=init, weights=w2)
    assert got["boundary.t"] == pytest.approx(float(want.predict(3.0)), abs=1e-12)


def test_rolling_splits_carry_the_training_weights_and_only_the_sigmoid_takes_them():
    df = with_weights(
        _frame(),
        _params(
            BoundaryParams,
            "002_table1_boundary_1e24.yaml",
            tasks={"A": "A"},
            base_model_col="base",
            weighting="base_model",
        ),
        ("period",),
    )
    df = pd.concat([df] * 4, ignore_index=True)  # four rows a split at least
    (split,) = rolling_splits(df, {"A": "A"}, periods=[("P1", None, "2024-06"), ("P2", "2024-07", None)])
    np.testing.assert_allclose(split.w_train, np.tile([1.0, 1.0, 1.0], 4))
    with pytest.raises(ValueError, match="sigmoid alone"):
        _fit_job(("constant", {"tau": 0.9}, split.z_train, split.y_train, None, None, split.w_train))


def test_the_estimator_comparison_refuses_weights():
    with pytest.raises(ValidationError, match="weighting must be 'rows'"):
        _params(EstimatorComparisonParams, "003_sigmoid_vs_baselines.yaml", weighting="base_model")
