"""What the findings of ``shift_test`` assert about the record (see :mod:`harness.verdicts.invariants`).

Standard library only.
"""

from __future__ import annotations

from ...verdicts.invariants import Invariants, same

INVARIANTS = Invariants()


def _p(v) -> float:
    return v.value("p_value")


def _alpha(v) -> float:
    return v.params["alpha"]


@INVARIANTS.asserts("summary", "measured", "its numbers are the re-implementation's and its readings follow them")
def _summary(v, f):
    x = f.facts
    ok = same(x.gamma, v.value("gamma")) and same(x.p_value, _p(v))
    ok = ok and x.positive == (v.value("gamma") > 0) and x.significant == (_p(v) < _alpha(v))
    ok = ok and same(x.n_support, v.value("n_support"))
    return ok, {"gamma": v.value("gamma"), "p_value": _p(v), "alpha": _alpha(v), "stated": [x.gamma, x.p_value]}


@INVARIANTS.asserts("result", "measured", "its counts are the measured counts")
def _result(v, f):
    x = f.facts
    keys = ("n_merged", "n_support", "n_pre", "n_post")
    bad = [k for k in keys if not same(getattr(x, k), v.value(k))]
    ok = not bad and same(v.value("n_pre") + v.value("n_post"), v.value("n_support"))
    return ok, {"differ": bad, "n_pre + n_post": v.value("n_pre") + v.value("n_post"), "n": v.value("n_support")}


@INVARIANTS.asserts("power", "underpowered", "the test did not reject, and its power is under the target")
def _underpowered(v, f):
    x = f.facts
    return _p(v) >= _alpha(v) and x.at_observed < x.target, {
        "p_value": _p(v),
        "alpha": _alpha(v),
        "power": x.at_observed,
        "target": x.target,
    }


@INVARIANTS.asserts("power", "adequate", "the test did not reject, and its power reaches the target")
def _adequate(v, f):
    x = f.facts
    return _p(v) >= _alpha(v) and x.at_observed >= x.target, {
        "p_value": _p(v),
        "alpha": _alpha(v),
        "power": x.at_observed,
        "target": x.target,
    }


@INVARIANTS.asserts("power", "rejected", "the test rejected")
def _rejected(v, f):
    return _p(v) < _alpha(v), {"p_value": _p(v), "alpha": _alpha(v)}


@INVARIANTS.asserts("power", "not_run", "the claim asks for no power study")
def _power_not_run(v, f):
    return v.params.get("power") is None, {"power": v.params.get("power")}


_NULL = {
    "both_not_significant": (False, False),
    "only_classical_significant": (False, True),
    "only_permutation_significant": (True, False),
    "both_significant": (True, True),
}


@INVARIANTS.asserts("null_centre", tuple(_NULL), "each test's side of the level is its p-value's")
def _null_centre(v, f):
    perm, classical = _NULL[f.state]
    p_classical = v.value("p_classical")
    ok = (_p(v) < _alpha(v)) == perm and (p_classical < _alpha(v)) == classical
    return ok, {"p_value": _p(v), "p_classical": p_classical, "alpha": _alpha(v)}


@INVARIANTS.asserts("null_centre", tuple(_NULL), "'off centre' is the null's mean against its spread, as recorded")
def _null_off_centre(v, f):
    x, test = f.facts, v.record.arms.reimpl.details.get("test", {})
    ok = same(x.null_mean, v.value("null_mean")) and same(x.null_sd, test.get("null_sd"))
    ok = ok and x.off_centre == (abs(x.null_mean) >= x.off_centre_sds * x.null_sd)
    return ok, {"null_mean": x.null_mean, "null_sd": x.null_sd}


@INVARIANTS.asserts("monte_carlo", "single", "no second permutation count was run")
def _mc_single(v, f):
    return v.value("p_value_precise") is None, {"p_value_precise": v.value("p_value_precise")}


@INVARIANTS.asserts("monte_carlo", ("side_settled", "side_uncertain"), "the limit is that many s.d. from alpha")
def _mc_side(v, f):
    x = f.facts
    settled = abs(x.limit - x.alpha) > x.sds * x.sd
    ok = same(x.limit, v.value("p_value_precise")) and settled == (f.state == "side_settled")
    ok = ok and (x.paper_sds is None or x.paper_sds >= 0) and (x.upstream_sds is None or x.upstream_sds >= 0)
    return ok, {"limit": x.limit, "alpha": x.alpha, "sd": x.sd, "paper_sds": x.paper_sds}


@INVARIANTS.asserts("eps_sensitivity", "same_side", "every clip's p-value is on one side of alpha")
def _eps_same(v, f):
    sides = {r["p_value"] < _alpha(v) for r in f.facts.rows}
    return len(sides) == 1, {"p": [r["p_value"] for r in f.facts.rows], "alpha": _alpha(v)}


@INVARIANTS.asserts("eps_sensitivity", "crosses", "some clip's p-value is below alpha and another's not")
def _eps_cross(v, f):
    sides = {r["p_value"] < _alpha(v) for r in f.facts.rows}
    return len(sides) == 2, {"p": [r["p_value"] for r in f.facts.rows], "alpha": _alpha(v)}


@INVARIANTS.asserts("planted", "detected", "the planted shift's p-value is below alpha")
def _detected(v, f):
    return f.facts.p_value < _alpha(v) and same(f.facts.p_value, v.control_value(f.facts.id, "p_value")), {
        "p_value": f.facts.p_value,
        "alpha": _alpha(v),
    }


@INVARIANTS.asserts("planted", "missed", "the planted shift's p-value is not below alpha")
def _missed(v, f):
    return f.facts.p_value >= _alpha(v), {"p_value": f.facts.p_value, "alpha": _alpha(v)}


@INVARIANTS.asserts("relabelled", "measured", "its mean is the control's")
def _relabelled(v, f):
    return same(f.facts.mean, v.control_value(f.facts.id, "gamma_mean")), {
        "stated": f.facts.mean,
        "control": v.control_value(f.facts.id, "gamma_mean"),
    }


@INVARIANTS.asserts("upper_bound", "not_rejected", "the test did not reject")
def _not_rejected(v, f):
    return _p(v) >= _alpha(v), {"p_value": _p(v), "alpha": _alpha(v)}


@INVARIANTS.asserts("upper_bound", "rejected", "the test rejected")
def _ub_rejected(v, f):
    return _p(v) < _alpha(v), {"p_value": _p(v), "alpha": _alpha(v)}


@INVARIANTS.asserts(
    "gamma_interval",
    ("excludes_zero", "includes_zero"),
    "its ends are the measured ones, its lower end is above 0 exactly when the test rejects at alpha, and its "
    "level is 1 - 2 alpha",
)
def _gamma_interval(v, f):
    x = f.facts
    lo, hi = v.value("gamma_lo"), v.value("gamma_hi")
    excludes = lo > 0 or hi < 0
    ok = same(x.lo, lo) and same(x.hi, hi) and same(x.level, 1 - 2 * _alpha(v))
    ok = ok and (f.state == "excludes_zero") == excludes and (lo > 0) == (_p(v) < _alpha(v))
    return ok, {"lo": lo, "hi": hi, "p_value": _p(v), "alpha": _alpha(v), "stated": [x.lo, x.hi]}
