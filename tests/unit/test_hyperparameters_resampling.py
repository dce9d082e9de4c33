"""The ``hyperparameters`` bootstrap statistic: the fits that cannot change its values are left out, and its values
are those of every fit made."""

from __future__ import annotations

import numpy as np
import pytest

from harness.protocols.hyperparameters import protocol as P
from harness.stats.sigmoid import Refits, SigmoidQuantileRegressor, sigmoid_boundary

SETTINGS = {
    "claimed": {"tau": 0.98, "kappa": 50.0, "lam": 1e-3},
    "tau=0.9": {"tau": 0.9, "kappa": 50.0, "lam": 1e-3},
    "kappa=10": {"tau": 0.98, "kappa": 10.0, "lam": 1e-3},
    "lam=0": {"tau": 0.98, "kappa": 50.0, "lam": 0.0},
    "lam=0.1": {"tau": 0.98, "kappa": 50.0, "lam": 0.1},
}


@pytest.fixture(scope="module")
def design():
    rng = np.random.default_rng(3)
    z = np.repeat(rng.uniform(-1.0, 4.0, 60), 4)  # ties, as a leaderboard's compute
    Y = np.column_stack(
        [sigmoid_boundary(z, 0.1, top, -2.0, 1.2) + rng.uniform(-0.05, 0.05, z.size) for top in (0.5, 0.6, 0.7)]
    )
    Y[::17, 1] = np.nan  # a task's missing scores
    labels = ["A", "B", "C"]
    fits = {}
    for key, s in SETTINGS.items():
        fits[key] = (s, {})
        for j, label in enumerate(labels):
            ok = np.isfinite(Y[:, j])
            model = SigmoidQuantileRegressor(rng=np.random.default_rng(0), **s).fit(z[ok], Y[ok, j])
            fits[key][1][label] = model.params_
    reference = {"A": 0.55, "B": 0.66, "C": 0.74}
    return {
        "z": z,
        "Y": Y,
        "W": None,
        "labels": labels,
        "settings": fits,
        "reference": reference,
        "z_eval": 3.0,
        "claimed_key": "claimed",
    }


def test_the_values_are_every_fits_whatever_the_order_with_fewer_fits_in_the_search_order(design, monkeypatch):
    made = []
    fit = Refits.fit
    monkeypatch.setattr(Refits, "fit", lambda self, setting, init: made.append(1) or fit(self, setting, init))
    order = P._search_order(design["settings"], design["reference"], design["z_eval"], design["claimed_key"])
    rng = np.random.default_rng(7)
    n, every, searched = design["z"].size, 0, 0
    for _ in range(4):
        rows = rng.integers(0, n, n)
        want, _ = P._sweep_fits(rows, None, **design)
        every += len(made)
        made.clear()
        assert P._sweep_values(rows, None, **design, order=order) == want
        searched += len(made)
        made.clear()
        shuffled = [(key, tasks[::-1]) for key, tasks in order[::-1]]  # the worst first: little left out
        assert P._sweep_values(rows, None, **design, order=shuffled) == want
        made.clear()
    assert every == 4 * len(SETTINGS) * len(design["labels"])
    assert searched < every


def test_a_task_that_cannot_be_fitted_fails_the_call(design):
    rows = np.arange(3)  # three points: fewer than a sigmoid needs
    order = P._search_order(design["settings"], design["reference"], design["z_eval"], design["claimed_key"])
    with pytest.raises(ValueError, match="at least 4"):
        P._sweep_values(rows, None, **design, order=order)


def test_with_weights_the_search_still_gives_every_fits_values(design):
    W = np.random.default_rng(11).uniform(0.2, 1.0, design["Y"].shape)  # a base model's 1/n_g, say
    weighted = {**design, "W": W}
    order = P._search_order(design["settings"], design["reference"], design["z_eval"], design["claimed_key"])
    rows = np.random.default_rng(8).integers(0, design["z"].size, design["z"].size)
    want, _ = P._sweep_fits(rows, None, **weighted)
    assert P._sweep_values(rows, None, **weighted, order=order) == want
    assert want != P._sweep_fits(rows, None, **design)[0]  # the weights are used
