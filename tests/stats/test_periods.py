"""Period labels, rolling pairs and the overlap restriction."""

import numpy as np
import pandas as pd
import pytest
from reference import reference

from harness.stats.periods import (
    assign_periods,
    overlap_interval,
    overlap_mask,
    period_labels,
    rolling_pairs,
)

pytestmark = pytest.mark.filterwarnings("error")


# The paper's four periods (claims/001; ../shared/UPSTREAM.md "Claims 001 and 003"): the math package
# keeps no claim's constants, so the tests state them.
OLL_PERIODS = (
    ("P1", None, "2024-06"),
    ("P2", "2024-07", "2024-09"),
    ("P3", "2024-10", "2024-12"),
    ("P4", "2025-01", "2025-03"),
)


def test_labels_at_the_boundaries():
    dates = [
        "2020-01-15",
        "2024-06-30",
        "2024-07-01",
        "2024-12-31",
        "2025-01-01",
        "2025-03-31",
        "2025-04-01",
        None,
        "not a date",
    ]
    # P1 is open below; month ends are inclusive; April 2025 is in no period; missing dates get none
    assert period_labels(dates, OLL_PERIODS).tolist() == ["P1", "P1", "P2", "P3", "P4", "P4", None, None, None]


def test_assign_periods_drops_unlabelled_rows_and_keeps_order():
    df = pd.DataFrame({"d": ["2025-02-01", None, "2024-01-01", "2026-01-01"], "v": [1, 2, 3, 4]})
    out = assign_periods(df, date_col="d", periods=OLL_PERIODS, label_col="p")
    assert out["v"].tolist() == [1, 3] and out["p"].tolist() == ["P4", "P1"]
    assert "p" not in df.columns  # the input is not modified


def test_periods_are_validated():
    with pytest.raises(ValueError, match="order"):
        period_labels(["2024-01-01"], (("A", None, "2024-06"), ("B", "2024-05", None)))
    with pytest.raises(ValueError, match="YYYY-MM"):
        period_labels(["2024-01-01"], (("A", "June", None),))
    with pytest.raises(ValueError, match="YYYY-MM"):
        period_labels(["2024-01-01"], (("A", "2024-13", None),))
    with pytest.raises(ValueError, match="unique"):
        period_labels(["2024-01-01"], (("A", None, "2024-01"), ("A", "2024-02", None)))


def test_rolling_pairs():
    assert rolling_pairs(OLL_PERIODS) == [(1, "P1", "P2"), (2, "P2", "P3"), (3, "P3", "P4")]


def test_rolling_pairs_are_kept_per_periods_and_still_validated():
    first = rolling_pairs(OLL_PERIODS)
    first.append("changed by the caller")
    assert rolling_pairs(OLL_PERIODS) == [(1, "P1", "P2"), (2, "P2", "P3"), (3, "P3", "P4")]  # a fresh list
    assert rolling_pairs([list(p) for p in OLL_PERIODS]) == rolling_pairs(OLL_PERIODS)
    with pytest.raises(ValueError, match="order"):  # not kept when invalid: raises every time
        rolling_pairs((("A", None, "2024-06"), ("B", "2024-05", None)))
    with pytest.raises(ValueError, match="order"):
        rolling_pairs((("A", None, "2024-06"), ("B", "2024-05", None)))
    # labels that compare equal but read differently are other periods
    assert rolling_pairs(((1, None, "2024-06"), (2, "2024-07", None))) == [(1, "1", "2")]
    assert rolling_pairs(((True, None, "2024-06"), (2, "2024-07", None))) == [(1, "True", "2")]


def test_overlap_is_inclusive():
    tr, va = [0.0, 1.0, 2.0], [0.5, 1.0, 2.0, 2.5, -1.0]
    # [max(0, -1), min(2, 2.5)] = [0, 2]; 0.5, 1.0 and 2.0 (the end itself) are inside
    assert overlap_interval(tr, va) == (0.0, 2.0)
    assert overlap_mask(tr, va).tolist() == [True, True, True, False, False]


def test_period_and_overlap_counts_on_the_real_table(tables):
    from harness.stats.leaderboard import with_log_compute
    from harness.stats.splits import rolling_splits

    df = with_log_compute(tables.frame("oll"), "Pretraining tokens (T)", "#Params (B)", 6.0)
    assert len(df) == reference("leaderboard.rows_with_compute")[0]  # rows with a positive compute proxy
    labelled = assign_periods(df, date_col="Upload To Hub Date", periods=OLL_PERIODS)
    assert len(df) - len(labelled) == reference("leaderboard.rows_without_upload_date")[0]  # no upload date
    # the period sizes (tests/results/reference_numbers.yaml)
    sizes = {p: reference(f"leaderboard.period_{p}")[0] for p in ("P1", "P2", "P3", "P4")}
    assert labelled["period"].value_counts().to_dict() == sizes
    splits = rolling_splits(labelled, ["MATH Lvl 5 Raw"], periods=OLL_PERIODS)
    # validation models inside the overlap, same source
    assert [s.z_val.size for s in splits] == [474, 897, 1245]
    assert [s.z_train.size for s in splits] == [613, 482, 897]
    assert np.all([s.overlap[0] <= s.z_val.min() and s.z_val.max() <= s.overlap[1] for s in splits])
