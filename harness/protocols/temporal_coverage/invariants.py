"""What the findings of ``temporal_coverage`` assert about the record (see :mod:`harness.verdicts.invariants`).

Standard library only.
"""

from __future__ import annotations

from ...verdicts.invariants import Invariants, same
from . import quantities as Q

INVARIANTS = Invariants()


def _sign(x: float) -> str:
    return "under" if x < 0 else ("over" if x > 0 else "exact")


@INVARIANTS.asserts("groups", "measured", "its group means and readings are the measured ones, at rate 1 - tau")
def _groups(v, f):
    x = f.facts
    ok = same(x.drift_mean, v.value("group.drift")) and same(x.stable_mean, v.value("group.stable"))
    ok = ok and x.drift_reading == _sign(x.drift_mean) and x.stable_reading == _sign(x.stable_mean)
    rate_ok = abs(x.exceed_rate - (1.0 - v.params["tau"])) <= 1e-9
    return ok and rate_ok, {"exceed_rate": x.exceed_rate, "1 - tau": 1.0 - v.params["tau"]}


@INVARIANTS.asserts("coverage_table", "measured", "each row is the measured signed coverage")
def _table(v, f):
    bad = [r["label"] for r in f.facts.rows if not same(r["signed"], v.value(Q.signed_coverage(r["label"])))]
    return not bad, {"rows": bad}


@INVARIANTS.asserts("in_sample", "all_covered", "no benchmark's in-sample error is negative")
def _all_covered(v, f):
    low = [x for x in v.params["tasks"] if v.value(Q.in_sample(x)) < 0]
    return not low, {"negative": low}


@INVARIANTS.asserts("in_sample", "some_under", "the named benchmarks' in-sample errors are negative")
def _some_under(v, f):
    bad = [u["label"] for u in f.facts.under if not v.value(Q.in_sample(u["label"])) < 0]
    return bool(f.facts.under) and not bad, {"not negative": bad}


@INVARIANTS.asserts("split_table", "measured", "its counts are integers and its cells the measured splits")
def _split_table(v, f):
    ints = all(isinstance(s["n"], int) for s in f.facts.splits)
    ts = [s["t"] for s in f.facts.splits]
    bad = [
        r["label"]
        for r in f.facts.rows
        if any(not same(x, v.value(Q.split(t, r["label"]))) for t, x in zip(ts, r["by_split"]))
        or r["n_negative"] != sum(x < 0 for x in r["by_split"])
    ]
    return ints and not bad, {"counts": [s["n"] for s in f.facts.splits], "rows": bad}


@INVARIANTS.asserts("drift_splits", "measured", "each pattern follows the task's split values")
def _drift_splits(v, f):
    bad = []
    for r in f.facts.rows:
        n = r["n_negative"]
        if r["pattern"] == "every_split" and n != r["n_splits"]:
            bad.append(r["label"])
        if r["pattern"] == "none_negative" and n:
            bad.append(r["label"])
        if r["pattern"] == "carried" and (not r["carriers"] or any(c["rest_mean"] < 0 for c in r["carriers"])):
            bad.append(r["label"])
        if r["one_other"] != (r["n_splits"] == 2):
            bad.append(r["label"])
    return not bad, {"rows": bad}


@INVARIANTS.asserts("stable_splits", "none_negative", "no stable benchmark is below zero on any split")
def _stable_none(v, f):
    neg = [
        (x, t)
        for x in v.params["tasks"]
        if x not in v.params["drift_tasks"]
        for t in Q.split_numbers(v.params)
        if (v.value(Q.split(t, x)) or 0) < 0
    ]
    return not neg, {"negative": neg}


@INVARIANTS.asserts("stable_splits", "some_negative", "each named split is below zero")
def _stable_some(v, f):
    bad = [n for n in f.facts.negatives if not v.value(Q.split(n["t"], n["label"])) < 0]
    return bool(f.facts.negatives) and not bad, {"not negative": bad}


@INVARIANTS.asserts("stable_bins", "none_negative", "no stable benchmark is below zero on any split, over bins")
def _bins_none(v, f):
    neg = [
        (x, t)
        for x in v.params["tasks"]
        if x not in v.params["drift_tasks"]
        for t in Q.split_numbers(v.params)
        if (v.value(Q.bin_averaged(Q.split(t, x))) or 0) < 0
    ]
    return not neg, {"negative": neg}


@INVARIANTS.asserts("stable_bins", "some_negative", "each named split is below zero, over bins")
def _bins_some(v, f):
    bad = [n for n in f.facts.negatives if not v.value(Q.bin_averaged(Q.split(n["t"], n["label"]))) < 0]
    return bool(f.facts.negatives) and not bad, {"not negative": bad}


@INVARIANTS.asserts("arm_split_gap", "measured", "the authors' arm ran")
def _arm_gap(v, f):
    return v.ok("upstream"), {"authors' arm": v.record.arms.upstream.status}


@INVARIANTS.asserts("bin_averaged", "same_outcomes", "no target changes, and the verdict is this record's")
def _bins_same(v, f):
    return not f.facts.changed and f.facts.same_verdict and f.facts.verdict == v.record.verdict.verdict, {
        "changed": f.facts.changed,
        "verdict": f.facts.verdict,
        "record's verdict": v.record.verdict.verdict,
    }


@INVARIANTS.asserts("bin_averaged", "outcomes_change", "the named targets change their outcome")
def _bins_change(v, f):
    bad = [
        r["title"]
        for r in f.facts.rows
        if r["title"] in f.facts.changed and r["holds_bin_averaged"] == r["holds_pooled"]
    ]
    return bool(f.facts.changed) and not bad, {"unchanged": bad}


@INVARIANTS.asserts("box", "measured", "the claim asks for the box, and its moves are the measured ones")
def _box(v, f):
    moved = [r["label"] for r in f.facts.rows if r["free"] != r["boxed"]]
    return v.params.get("box_check") is not None and moved == f.facts.moved, {"moved": moved}


@INVARIANTS.asserts("box_arms", ("differ", "no_difference"), "the authors' arm ran and the counts add up")
def _box_arms(v, f):
    x = f.facts
    ok = v.ok("upstream") and (x.n_differ > 0) == (f.state == "differ") and x.n_differ <= x.n_compared
    return ok, {"n_differ": x.n_differ, "n_compared": x.n_compared}


@INVARIANTS.asserts("relabelled", "none_under", "no benchmark's mean under shuffled periods is negative")
def _none_under(v, f):
    low = [x for x in v.params["tasks"] if v.control_value(f.facts.id, Q.signed_coverage(x)) < 0]
    return not low, {"negative": low}


@INVARIANTS.asserts("relabelled", "some_under", "the named benchmarks' means under shuffled periods are negative")
def _some_under_shuffled(v, f):
    bad = [u["label"] for u in f.facts.under if not v.control_value(f.facts.id, Q.signed_coverage(u["label"])) < 0]
    return bool(f.facts.under) and not bad, {"not negative": bad}
