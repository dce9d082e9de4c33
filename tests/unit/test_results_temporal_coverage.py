"""The facts of ``temporal_coverage`` reports (:mod:`harness.protocols.temporal_coverage.results`) on hand-made
records: two drift and two stable benchmarks over three splits, each number chosen so that the fact is known."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from harness.protocols.temporal_coverage import quantities as Q
from harness.protocols.temporal_coverage.results import ARM_GAP, Results, differ

TASKS = {"A": "A raw", "B": "B raw", "S": "S raw", "T": "T raw"}
# per split (t = 1, 2, 3): A is below zero on every split; B only on split 1, which alone carries its negative mean
# (without it, (-0.01 + 0.02) / 2 = +0.005); S dips below zero on split 2 (bins: never); T never
SPLITS = {"A": (-0.05, -0.01, -0.03), "B": (-0.06, -0.01, 0.02), "S": (0.01, -0.002, 0.02), "T": (0.02, 0.01, 0.01)}
BINS = {"A": (-0.02, -0.01, -0.02), "B": (-0.04, 0.01, 0.02), "S": (0.01, 0.001, 0.02), "T": (0.02, 0.01, -0.001)}
DATA = {
    "splits": [
        {"t": t, "train": f"P{t}", "val": f"P{t + 1}", "n_train": 100, "n_val": n, "n_val_before_overlap": n}
        for t, n in ((1, 40), (2, 50), (3, 60))
    ],
    "periods": [],
    "later_models": 150,
    "later_with_base_model": 140,
    "later_base_models": 12,
}


def _mean(xs):
    return sum(xs) / len(xs)


def _values() -> dict[str, float]:
    v = {}
    for x in TASKS:
        v[Q.signed_coverage(x)] = _mean(SPLITS[x])
        v[Q.bin_averaged(Q.signed_coverage(x))] = _mean(BINS[x])
        v[Q.in_sample(x)], v[Q.share_above(x)], v[Q.binomial_p(x)] = 0.01, 0.03, 0.2
        v[Q.cluster_p(x)], v[Q.design_effect(x)] = 0.4, 6.5
        for t in (1, 2, 3):
            v[Q.split(t, x)] = SPLITS[x][t - 1]
            v[Q.bin_averaged(Q.split(t, x))] = BINS[x][t - 1]
    for name, keys in (("drift", "AB"), ("stable", "ST")):
        v[Q.group(name)] = _mean([v[Q.signed_coverage(k)] for k in keys])
        v[Q.bin_averaged(Q.group(name))] = _mean([v[Q.bin_averaged(Q.signed_coverage(k))] for k in keys])
    v[Q.SEPARATION] = v[Q.group("stable")] - v[Q.group("drift")]
    v[Q.bin_averaged(Q.SEPARATION)] = v[Q.bin_averaged(Q.group("stable"))] - v[Q.bin_averaged(Q.group("drift"))]
    return v


def _target(quantity, relation, value, mine, title=None):
    return SimpleNamespace(
        quantity=quantity,
        title=title or quantity,
        relation=relation,
        value=value,
        paper=None,
        tolerance=None,
        other=None,
        reimpl=SimpleNamespace(value=mine, holds=relation == "<" and mine < value or relation == ">" and mine > value),
    )


def _results(*, mine=None, theirs=None, details=None, targets=(), controls=(), control_arms=None, data=DATA):
    """A :class:`Results` with the plain attributes its base gives, read from these made-up arms."""
    mine = _values() if mine is None else mine
    r = Results.__new__(Results)
    r.params = {"tasks": TASKS, "drift_tasks": ["A", "B"], "tau": 0.98, "exceed_rate": 0.02, "n_bins": 10}
    r.data, r.mine, r.theirs = data, mine, theirs or {}
    r.mine_details = details or {}
    r.record = SimpleNamespace(
        targets=list(targets),
        controls=list(controls),
        quantities={},
        arms=SimpleNamespace(reimpl=SimpleNamespace(controls=control_arms or {})),
    )
    return r


def test_rows_and_groups_are_the_measured_values():
    r = _results()
    (a,) = [x for x in r.rows if x["label"] == "A"]
    assert a["by_split"] == list(SPLITS["A"]) and a["group"] == "drift"
    assert a["mine"] == pytest.approx(-0.03) and a["theirs"] is None and a["bins_by_split"] == list(BINS["A"])
    assert r.groups["separation"]["mine"] == pytest.approx(r.groups["stable"]["mine"] - r.groups["drift"]["mine"])
    assert [row["group"] for row in r.rows].count("stable") == 2
    assert (a["cluster_p"], a["design_effect"], a["clusters"]) == (0.4, 6.5, None)
    (a,) = [x for x in _results(details={"n_clusters": {"A": 23}}).rows if x["label"] == "A"]
    assert a["clusters"] == 23


def test_a_negative_mean_carried_by_one_split_is_named_with_the_others_mean():
    # A is below zero on every split: no split carries it; B's mean -0.05/3 turns +0.005 without split 1
    (b,) = _results().carried
    assert (b["label"], b["t"], b["value"]) == ("B", 1, -0.06) and b["rest"] == pytest.approx(0.005)


def test_targets_judged_over_bins_name_the_outcomes_that_change():
    v = _values()
    targets = [
        _target(Q.signed_coverage("B"), "<", 0.0, v[Q.signed_coverage("B")]),  # -0.0167; over bins -0.0033: holds
        _target(Q.split(2, "B"), "<", 0.0, v[Q.split(2, "B")], title="B on split 2"),  # over bins +0.01: fails
        _target(Q.binomial_p("A"), "<", 0.5, 0.2),  # no bin-averaged counterpart: the same value
    ]
    r = _results(targets=targets)
    assert r.bin_changed == ["B on split 2"]
    assert [t["averaged"] for t in r.bin_targets] == [True, True, False]
    assert r.bin_targets[2]["bins"] == 0.2 and r.bin_targets[2]["holds_bins"] is True


def test_arms_differ_beyond_a_share_of_the_value():
    # 1.67e-18 against 6.63e-19 differ (a p-value far below any absolute floor); 0.0124 against 0.0124 + 6e-8
    # does not (the authors' per-bin coverage written with 6 significant digits)
    assert differ(6.63e-19, 1.67e-18) and not differ(0.0124, 0.0124 + 6e-8) and not differ(0.0, 0.0)


def test_the_box_explains_the_arms_gaps_it_closes():
    v = _values()
    name = Q.split(1, "A")
    v["boxed." + name], v["boxed." + Q.signed_coverage("B")] = -0.048, v[Q.signed_coverage("B")]
    theirs = {name: -0.048, Q.signed_coverage("B"): v[Q.signed_coverage("B")] * (1 + ARM_GAP / 2)}  # not apart
    r = _results(mine=v, theirs=theirs)
    (gap,) = r.arm_gaps
    assert (gap["label"], gap["mine"], gap["boxed"], gap["theirs"]) == (name, -0.05, -0.048, -0.048)
    assert r.box_unexplained == []
    assert _results(mine=_values(), theirs=theirs).box_unexplained is None  # no boxed refit: nothing to say of it
    v["boxed." + name] = -0.049  # the box moves the value only part of the way
    assert _results(mine=v, theirs=theirs).box_unexplained == [name]


def test_a_box_refit_on_the_other_side_of_a_target_flips_it():
    v = _values()
    v["boxed." + Q.split(1, "A")] = 0.001  # the target "< 0" holds free, fails inside the box
    r = _results(mine=v, targets=[_target(Q.split(1, "A"), "<", 0.0, -0.05, title="A on split 1")])
    assert r.box_flips == ["A on split 1"]
    outside = [{"task": "A", "t": 1, "beta": 0.6, "midpoint": 4.2, "boxed_signed_coverage": 0.001}]
    (o,) = _results(mine=v, details={"outside_box": outside}).outside_box
    assert (o["free"], o["boxed"]) == (-0.05, 0.001)


def test_relabelled_periods_name_the_benchmarks_still_below_zero():
    control = SimpleNamespace(id="shuffled", control="relabel_periods")
    means = {"A": 0.004, "B": -0.001, "S": 0.012, "T": 0.017}
    arm = SimpleNamespace(
        values={Q.SEPARATION: 0.006, **{Q.signed_coverage(x): m for x, m in means.items()}},
        details={"separation_each": [0.004, 0.006, 0.008]},
    )
    (x,) = _results(controls=[control], control_arms={"shuffled": arm}).relabelled
    assert (x["n"], x["separation"]) == (3, {"lo": 0.004, "hi": 0.008})
    assert x["below_zero"] == ["B"] and x["means"] == {"lo": -0.001, "hi": 0.017}
    assert _results(controls=[control]).relabelled == []  # a control that did not run says nothing
