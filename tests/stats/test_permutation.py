"""A Monte Carlo p-value decided at a level, refined sequentially where it lies within its error of the level."""

from __future__ import annotations

import math

import numpy as np
import pytest

from harness.stats.permutation import MC_SIDE_SDS, p_value_side, refined_p_value
from harness.stats.shift import shift_test

ALPHA = 0.05


def _binomial_counts(p_exact: float, seed: int):
    """``count_fresh`` of a permutation test whose exact p-value is ``p_exact``; the batch sizes it was asked."""
    rng, asked = np.random.default_rng(seed), []

    def count_fresh(b: int) -> int:
        asked.append(b)
        return int(rng.binomial(b, p_exact))

    return count_fresh, asked


def test_the_side_is_undecided_within_four_errors_of_a_p_value_at_the_level():
    margin = MC_SIDE_SDS * math.sqrt(ALPHA * (1 - ALPHA) / 2000)  # 0.0195
    assert p_value_side(ALPHA + 0.99 * margin, 2000, ALPHA) == "undecided"
    assert p_value_side(ALPHA - 0.99 * margin, 2000, ALPHA) == "undecided"
    assert p_value_side(ALPHA + 1.01 * margin, 2000, ALPHA) == "above"
    assert p_value_side(ALPHA - 1.01 * margin, 2000, ALPHA) == "below"
    assert p_value_side(0.051, 2000, ALPHA) == "undecided" and p_value_side(0.0478, 200_000, ALPHA) == "below"


def test_a_p_value_far_from_the_level_stops_at_the_first_batch():
    count_fresh, asked = _binomial_counts(0.14, seed=1)
    out = refined_p_value(285, 2000, count_fresh, alpha=ALPHA, n_perm_max=200_000)
    assert asked == [] and out["n_perm"] == 2000 and out["n_perm_ge"] == 285
    assert out["p_value"] == pytest.approx(286 / 2001) and out["decision"] == "above"
    assert out["p_value_mc_se"] == pytest.approx(math.sqrt(out["p_value"] * (1 - out["p_value"]) / 2000))


def test_a_p_value_near_the_level_is_refined_by_doubling_until_its_side_is_settled():
    """Exact p 0.047: 2,000 permutations cannot tell it from 0.05 (margin 0.0195), about 85,000 can (0.0030)."""
    count_fresh, asked = _binomial_counts(0.047, seed=2)
    out = refined_p_value(101, 2000, count_fresh, alpha=ALPHA, n_perm_max=1_000_000)
    assert asked[:3] == [2000, 4000, 8000] and out["n_perm"] == 2000 * 2 ** len(asked)
    assert out["decision"] == "below" and 64_000 <= out["n_perm"] <= 512_000
    assert abs(out["p_value"] - 0.047) < 4 * math.sqrt(0.047 * 0.953 / out["n_perm"])
    # it stopped at the first look outside the margin, not later
    assert p_value_side(out["p_value"], out["n_perm"], ALPHA) == "below"


def test_still_within_the_error_at_the_cap_is_undecided_and_the_last_batch_stops_at_the_cap():
    count_fresh, asked = _binomial_counts(ALPHA, seed=3)
    out = refined_p_value(100, 2000, count_fresh, alpha=ALPHA, n_perm_max=30_000)
    assert asked == [2000, 4000, 8000, 14_000] and out["n_perm"] == 30_000
    assert out["decision"] == "undecided"


def test_the_sequence_is_reproducible_from_its_seed():
    runs = [refined_p_value(101, 2000, _binomial_counts(0.048, seed=4)[0], alpha=ALPHA, n_perm_max=200_000)]
    runs.append(refined_p_value(101, 2000, _binomial_counts(0.048, seed=4)[0], alpha=ALPHA, n_perm_max=200_000))
    other = refined_p_value(101, 2000, _binomial_counts(0.048, seed=5)[0], alpha=ALPHA, n_perm_max=200_000)
    assert runs[0] == runs[1] and other != runs[0]


def _toy_test(seed=0, **kw):
    rng = np.random.default_rng(11)
    x = rng.normal(size=80)
    d = rng.random(80) < 0.5
    y = 0.4 * x + 0.25 * d + rng.normal(scale=0.6, size=80)
    pct = [100.0 / (1.0 + np.exp(-v)) for v in (x, y)]
    return shift_test(*pct, d, rng=np.random.default_rng(seed), eps=1e-6, n_bins=4, n_perm=1000, **kw)


def test_the_shift_test_refines_its_own_p_value_from_the_same_stream():
    """The level set at the toy's own 1,000-permutation p-value puts it at the level: it is refined, the first
    1,000 permutations kept (the null's summaries and the interval are theirs), the rest drawn after them."""
    plain = _toy_test()
    far = _toy_test(alpha=0.5, n_perm_max=64_000)
    assert far["n_perm"] == 1000 and far["p_value"] == plain["p_value"] and far["decision"] == "below"
    near = _toy_test(alpha=plain["p_value"], n_perm_max=64_000)
    assert near["n_perm"] > 1000 and near["n_perm"] in {1000 * 2**k for k in range(1, 7)}
    assert near["null_mean"] == plain["null_mean"] and near["n_perm_ge"] >= plain["n_perm_ge"]
    assert near == _toy_test(alpha=plain["p_value"], n_perm_max=64_000)
    assert near["p_value_mc_se"] == pytest.approx(math.sqrt(near["p_value"] * (1 - near["p_value"]) / near["n_perm"]))
