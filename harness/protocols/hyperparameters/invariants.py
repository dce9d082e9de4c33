"""What the findings of ``hyperparameters`` assert about the record (see :mod:`harness.verdicts.invariants`).

Standard library only.
"""

from __future__ import annotations

import re

from ...verdicts.invariants import Invariants, same

#: A setting written as its raw key (``tau=0.98,kappa=10``) rather than in words (``κ = 10``).
_RAW_KEY = re.compile(r"[a-z]=[0-9]")

INVARIANTS = Invariants()

_SUMMARY = {
    "only_claimed": (True, False),
    "claimed_and_others": (True, True),
    "not_claimed": (False, True),
    "neither": (False, False),
}


@INVARIANTS.asserts("summary", tuple(_SUMMARY), "whether the claimed and the other settings reach the reference")
def _summary(v, f):
    claimed, others = _SUMMARY[f.state]
    within = v.params["within"]
    c, n = v.value("claimed.max_dev"), v.value("others.n_within")
    ok = (c <= within) == claimed and (n > 0) == others and f.facts.n_others_within == n
    ok = ok and len(f.facts.within_settings) == n and same(f.facts.closest_max_dev, v.value("others.min_max_dev"))
    return ok, {"claimed.max_dev": c, "within": within, "others within": n}


@INVARIANTS.asserts("audit", "all_found", "the authors' arm read every cited line and found it")
def _all_found(v, f):
    return v.ok("upstream") and f.facts.n_found == f.facts.n, {"n": f.facts.n, "found": f.facts.n_found}


@INVARIANTS.asserts("audit", "some_failed", "the authors' arm read the lines and the named ones were not found")
def _some_failed(v, f):
    x = f.facts
    ok = v.ok("upstream") and x.n_found < x.n and len(x.failed) == x.n - x.n_found == x.n_failed
    return ok, {"n": x.n, "found": x.n_found, "failed": x.failed}


@INVARIANTS.asserts("audit", "not_checked", "the authors' arm did not report the audit")
def _not_checked(v, f):
    return "audit" not in v.record.arms.upstream.details, {"authors' arm": v.record.arms.upstream.status}


@INVARIANTS.asserts("loss", "checked", "the authors' arm evaluated their loss")
def _loss(v, f):
    return v.ok("upstream") and "loss" in v.record.arms.upstream.details, {
        "authors' arm": v.record.arms.upstream.status
    }


@INVARIANTS.asserts("loss", "not_checked", "the authors' arm did not evaluate their loss")
def _loss_not(v, f):
    return "loss" not in v.record.arms.upstream.details, {"authors' arm": v.record.arms.upstream.status}


@INVARIANTS.asserts("sweeps", "measured", "every grid value has its row")
def _sweeps(v, f):
    bad = [
        p for p in ("tau", "kappa", "lam") if [r["value"] for r in getattr(f.facts, p)] != list(v.params[f"{p}_grid"])
    ]
    return not bad, {"grids off": bad}


@INVARIANTS.asserts("tau_tracking", ("tracks", "does_not_track"), "tracking is coverage rising with the level")
def _tau(v, f):
    rows = sorted(v.finding("sweeps").facts.tau, key=lambda r: r["value"])
    covs = [r["coverage_mean"] for r in rows]
    rising = all(b > a for a, b in zip(covs, covs[1:]))
    return rising == (f.state == "tracks"), {"coverage by level": covs}


@INVARIANTS.asserts("upstream_quirks", "not_run", "the authors' arm reported no settings")
def _quirks_not_run(v, f):
    return "settings" not in v.record.arms.upstream.details, {"authors' arm": v.record.arms.upstream.status}


@INVARIANTS.asserts("upstream_quirks", ("none", "some"), "the authors' arm ran, and 'some' names a quirk")
def _quirks(v, f):
    x = f.facts
    some = bool(x.stage or x.beta_min or x.beta_max)
    ok = v.ok("upstream") and some == (f.state == "some") and not any(_RAW_KEY.search(s["setting"]) for s in x.stage)
    return ok, {"stage": x.stage, "beta_min": x.beta_min}


@INVARIANTS.asserts("steep_slopes", ("none", "some"), "'some' names a steep slope")
def _steep(v, f):
    return bool(f.facts.rows) == (f.state == "some"), {"rows": f.facts.rows}


_MEAN_SUM = {"mean_only": (True, False), "sum_only": (False, True), "both": (True, True), "neither": (False, False)}


@INVARIANTS.asserts("mean_or_sum", tuple(_MEAN_SUM), "which convention reaches the reference follows its gaps")
def _mean_or_sum(v, f):
    mean, total = _MEAN_SUM[f.state]
    x = f.facts
    # a refit whose boundary was not a number (its gap stated as None) reaches nothing, as the producer reads it
    summed = x.sum_max_dev is not None and x.sum_max_dev <= x.within
    ok = (x.mean_max_dev <= x.within) == mean and summed == total
    ok = ok and same(x.mean_max_dev, v.value("claimed.max_dev"))
    return ok, {"mean": x.mean_max_dev, "sum": x.sum_max_dev, "within": x.within}


@INVARIANTS.asserts("control_move", "measured", "its values are the control's")
def _control(v, f):
    x = f.facts
    cv = v.control_value(x.id, "claimed.coverage_mean")
    return same(x.coverage_to, cv), {"stated": x.coverage_to, "control": cv}
