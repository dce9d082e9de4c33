"""Group-aware equal-mass bins: hand-made cases and properties."""

import numpy as np
import pytest

from harness.stats.binning import assign_to_bins, bin_left_edges, equal_mass_bins, equal_mass_left_edges

pytestmark = pytest.mark.filterwarnings("error")

RULES = ("next", "same")


def test_tie_reaching_target_closes_bin_or_starts_next():
    # N = 8, K = 2 -> target 4; the running count first reaches 4 inside the tie at 2.0.
    z = [1.0, 2.0, 2.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    # "same": the tie completes the first bin (1 + 3 points), the rest form the second.
    assert equal_mass_bins(z, 2, 1, closing_group="same").tolist() == [0, 0, 0, 0, 1, 1, 1, 1]
    # "next": 2.0 becomes an edge, bins are [1, 2) and [2, 6]; the tie opens the second bin.
    assert equal_mass_bins(z, 2, 1, closing_group="next").tolist() == [0, 1, 1, 1, 1, 1, 1, 1]


def test_small_middle_bin_is_merged_into_its_smaller_neighbour():
    # N = 13, K = 4 -> target ceil(13/4) = 4, m = 3.
    # "next": running count hits 4 at z=2 (3+1) -> edge 2; restarts, hits 5 at z=3 -> edge 3;
    # restarts, hits 4 at z=7 = max -> no new bin. Bins [1,2): 3 pts, [2,3): 1 pt, [3,7]: 9 pts.
    # The 1-point bin is under m and merges with the smaller neighbour (3 < 9), giving sizes 4 and 9.
    z = [1, 1, 1, 2, 3, 3, 3, 3, 3, 4, 5, 6, 7]
    labels = equal_mass_bins(z, 4, 3, closing_group="next")
    assert labels.tolist() == [0] * 4 + [1] * 9
    # "same": the groups close bins of sizes 4 ({1,1,1,2}), 5 (the five 3s), 4 (4..7); nothing to merge.
    assert np.bincount(equal_mass_bins(z, 4, 3, closing_group="same")).tolist() == [4, 5, 4]


def test_bins_under_minimum_at_the_ends_are_merged_inwards():
    # 14 distinct points, K = 4, m = 4 -> target max(ceil(14/4), 4) = 4.
    z = np.arange(14.0)
    # "same": bins {0..3}, {4..7}, {8..11} close at 4 points; the remainder {12, 13} has 2 < 4
    # points and merges into its only neighbour: 4, 4, 6.
    assert np.bincount(equal_mass_bins(z, 4, 4, closing_group="same")).tolist() == [4, 4, 6]
    # "next": edges at the closing values 3, 7, 11 -> bins [0,3) 3 pts, [3,7) 4, [7,11) 4, [11,13] 3.
    # Smallest under-size bin first (leftmost on the tie): the first bin joins its neighbour (7),
    # then the last (3) joins the one to its left: 7, 7.
    assert np.bincount(equal_mass_bins(z, 4, 4, closing_group="next")).tolist() == [7, 7]


@pytest.mark.parametrize("rule", RULES)
def test_fewer_points_than_minimum_give_one_bin(rule):
    # 5 points and m = 30: every split would leave a bin under 30, so everything merges.
    assert equal_mass_bins([3.0, 1.0, 2.0, 5.0, 4.0], 10, 30, closing_group=rule).tolist() == [0] * 5


@pytest.mark.parametrize("rule", RULES)
def test_properties_on_heavily_tied_data(rule):
    rng = np.random.default_rng(0)
    z = rng.choice(rng.normal(size=40), size=700)  # 40 distinct values, heavy ties, like the leaderboard
    labels = equal_mass_bins(z, 10, 30, closing_group=rule)
    # identical z never split between bins
    for v in np.unique(z):
        assert np.unique(labels[z == v]).size == 1
    # labels are ordered in z: a larger z never gets a smaller label
    order = np.argsort(z, kind="stable")
    assert np.all(np.diff(labels[order]) >= 0)
    counts = np.bincount(labels)
    assert counts.min() >= 30  # the merge step leaves no bin under the minimum
    assert counts.size <= 10  # never more bins than asked (see module docstring)
    # labels depend on the values only, not on the order of the points
    perm = rng.permutation(z.size)
    assert np.array_equal(equal_mass_bins(z[perm], 10, 30, closing_group=rule), labels[perm])


def _closing_groups_one_by_one(z, n_bins, min_bin_size, rule):
    """The bins' starting groups before merging, by the module docstring's rule read literally: whole groups
    accumulated one at a time, the running count reset where it reaches the target."""
    values, counts = np.unique(np.asarray(z, dtype=float), return_counts=True)
    target = max(-(-len(z) // n_bins), min_bin_size)
    starts, running = [0], 0
    for g, c in enumerate(counts.tolist()):
        running += c
        if running >= target:
            nxt, end = (g, values.size - 1) if rule == "next" else (g + 1, values.size)
            if 0 < nxt < end and nxt != starts[-1]:
                starts.append(nxt)
            running = 0
    return starts


@pytest.mark.parametrize("rule", RULES)
def test_closing_groups_match_the_group_by_group_rule(rule):
    # the edges are searched for on the cumulative counts: the same starts as accumulating group by group
    from harness.stats import binning

    rng = np.random.default_rng(5)
    seen = 0
    for _ in range(300):
        z = rng.integers(0, int(rng.integers(1, 60)), int(rng.integers(1, 300))).astype(float)
        n_bins, m = int(rng.integers(1, 12)), int(rng.integers(1, 40))
        starts = _closing_groups_one_by_one(z, n_bins, m, rule)
        values, counts = np.unique(z, return_counts=True)
        sizes = np.add.reduceat(counts, starts).tolist()
        expected = values[[starts[ids[0]] for ids in binning._merge_small(sizes, m)]]
        got = equal_mass_left_edges(z, n_bins, m, closing_group=rule)
        assert np.array_equal(got, expected), (z.tolist(), n_bins, m)
        seen += len(starts) > 1
    assert seen > 50  # many cases with more than one bin before merging


@pytest.mark.parametrize("rule", RULES)
def test_edges_reproduce_labels_and_assign_new_points(rule):
    z = np.array([0.0, 0.0, 1.0, 1.0, 1.0, 2.0, 2.0, 5.0, 5.0, 6.0, 6.0, 7.0])
    left = equal_mass_left_edges(z, 3, 2, closing_group=rule)
    labels = equal_mass_bins(z, 3, 2, closing_group=rule)
    # the left edges are the smallest z of each bin, and re-assigning the data gives its labels
    assert np.array_equal(left, bin_left_edges(z, labels))
    assert np.array_equal(assign_to_bins(z, left), labels)


def test_assign_to_bins_gap_and_outside_rules():
    left = [0.0, 2.0, 5.0]
    # below the first edge -> bin 0; in [0,2) -> 0; exactly on an edge -> that (upper) bin;
    # in the gap before 5 -> the lower bin 1; beyond the data -> last bin
    got = assign_to_bins([-3.0, 0.0, 1.9, 2.0, 4.99, 5.0, 100.0], left)
    assert got.tolist() == [0, 0, 0, 1, 1, 2, 2]


def test_invalid_input():
    with pytest.raises(ValueError, match="finite"):
        equal_mass_bins([0.0, np.nan])
    with pytest.raises(ValueError, match="positive integers"):
        equal_mass_bins([0.0, 1.0], n_bins=0)
    with pytest.raises(ValueError, match="closing_group"):
        equal_mass_bins([0.0, 1.0], closing_group="left")
    with pytest.raises(ValueError, match="non-empty"):
        equal_mass_bins([])
