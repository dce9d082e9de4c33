"""What the findings of ``boundary_at_budget`` assert about the record (see :mod:`harness.verdicts.invariants`).

Standard library only: rendering a report checks these and loads nothing heavier.
"""

from __future__ import annotations

import math

from ...core.relations import within_tolerance
from ...verdicts.invariants import Invariants, same
from . import quantities as Q

INVARIANTS = Invariants()
_ALL = None


def _z(v) -> float:
    return math.log10(v.params["eval_x"])


@INVARIANTS.asserts("result", "measured", "its values are the arms' boundaries and its counts the record's")
def _result(v, f):
    bad = [
        r["label"]
        for r in f.facts.rows
        if not same(r["reimpl"], v.value(Q.boundary(r["label"])))
        or not same(r["upstream"], v.value(Q.boundary(r["label"]), "upstream") if v.ok("upstream") else None)
    ]
    paper = [t for t in v.record.targets if t.relation == "~" and t.quantity.startswith("boundary.")]
    counts = {
        "n_paper": (f.facts.n_paper, len(paper)),
        "n_holding_reimpl": (f.facts.n_holding_reimpl, sum(t.reimpl.holds is True for t in paper)),
        "n_models": (f.facts.n_models, v.n_models),
    }
    wrong = {k: a for k, (a, b) in counts.items() if a != b}
    return not bad and not wrong, {"rows not the arms' values": bad, "counts off": wrong}


@INVARIANTS.asserts("result", "measured", "'all within' holds only when every paper value is met")
def _all_within(v, f):
    paper = [t for t in v.record.targets if t.relation == "~" and t.quantity.startswith("boundary.")]
    want = bool(paper) and all(t.reimpl.holds is True for t in paper)
    return f.facts.all_holding_reimpl == want, {"stated": f.facts.all_holding_reimpl, "in the record": want}


@INVARIANTS.asserts("eval_support", "beyond", "the evaluation point lies above the largest z")
def _beyond(v, f):
    return _z(v) > f.facts.z_max and f.facts.n_at_or_above == 0, {
        "z_eval": _z(v),
        "z_max": f.facts.z_max,
        "n_at_or_above": f.facts.n_at_or_above,
    }


@INVARIANTS.asserts("eval_support", "below", "the evaluation point lies below the smallest z")
def _below(v, f):
    return _z(v) < f.facts.z_min, {"z_eval": _z(v), "z_min": f.facts.z_min}


@INVARIANTS.asserts(
    "eval_support",
    ("edge", "small_table"),
    "the point is in the data but fewer than 1/(1 - tau) models lie at or above it",
)
def _edge(v, f):
    edge = 1.0 / (1.0 - v.params["tau"])
    ok = f.facts.z_min <= _z(v) <= f.facts.z_max and f.facts.n_at_or_above < edge
    ok = ok and same(f.facts.expected_above, f.facts.n_at_or_above * (1.0 - v.params["tau"]))
    return ok, {"z_eval": _z(v), "n_at_or_above": f.facts.n_at_or_above, "1/(1 - tau)": edge}


@INVARIANTS.asserts("eval_support", "edge", "the point is in the top thin-tail share of the data: its upper edge")
def _at_the_edge(v, f):
    share = f.facts.n_at_or_above / f.facts.n_models
    return share < f.facts.thin_share, {"share": share, "thin_share": f.facts.thin_share}


@INVARIANTS.asserts(
    "eval_support", "small_table", "the point is not at the edge: at least the thin-tail share lie at or above it"
)
def _small_table(v, f):
    share = f.facts.n_at_or_above / f.facts.n_models
    return share >= f.facts.thin_share, {"share": share, "thin_share": f.facts.thin_share}


@INVARIANTS.asserts(
    "eval_support", ("upper_tail", "inside"), "the point is in the data with at least 1/(1 - tau) models above it"
)
def _in_data(v, f):
    edge = 1.0 / (1.0 - v.params["tau"])
    ok = f.facts.z_min <= _z(v) <= f.facts.z_max and f.facts.n_at_or_above >= edge
    return ok, {"z_eval": _z(v), "n_at_or_above": f.facts.n_at_or_above, "1/(1 - tau)": edge}


@INVARIANTS.asserts("eval_support", "upper_tail", "under the thin-tail share of the models lie at or above it")
def _thin(v, f):
    share = f.facts.n_at_or_above / f.facts.n_models
    return share < f.facts.thin_share, {"share": share, "thin_share": f.facts.thin_share}


@INVARIANTS.asserts("eval_support", "inside", "at least the thin-tail share of the models lie at or above it")
def _inside(v, f):
    share = f.facts.n_at_or_above / f.facts.n_models
    return share >= f.facts.thin_share, {"share": share, "thin_share": f.facts.thin_share}


@INVARIANTS.asserts("eval_support", _ALL, "its counts are the record's")
def _counts(v, f):
    ok = f.facts.n_models == v.n_models and 0 <= f.facts.n_at_or_above <= f.facts.n_models
    return ok, {"n_models": f.facts.n_models, "in the record": v.n_models}


@INVARIANTS.asserts("start_robustness", "not_run", "the claim asks for no other start")
def _start_not_run(v, f):
    return not v.params.get("robustness_cold_start"), {"robustness_cold_start": v.params.get("robustness_cold_start")}


@INVARIANTS.asserts("start_robustness", "measured", "'within' compares the measured shifts with its tolerance")
def _start(v, f):
    x = f.facts
    mine = v.value(Q.ALT_START_MAX_SHIFT)
    theirs = v.value(Q.ALT_START_MAX_SHIFT, "upstream") if v.ok("upstream") else None
    ok = same(x.reimpl_shift, mine) and x.reimpl_within == within_tolerance(mine, x.tolerance)
    ok = ok and same(x.upstream_shift, theirs)
    want = None if theirs is None else within_tolerance(theirs, x.tolerance)
    ok = ok and x.upstream_within == want
    return ok, {"shift": mine, "authors' shift": theirs, "tolerance": x.tolerance}


@INVARIANTS.asserts("start_robustness", "measured", "a cause is named for the authors' values only where they move")
def _start_causes(v, f):
    x = f.facts
    causes = x.upstream_causes or []
    moved = [label for g in causes for label in g["labels"]]
    shifts = [abs(v.value(Q.boundary(k), "upstream") - v.value(Q.alt_start_boundary(k), "upstream")) for k in moved]
    ok = (not causes or x.upstream_within is False) and all(d > x.tolerance for d in shifts)
    return ok, {"labels": moved, "shifts": shifts, "tolerance": x.tolerance}


@INVARIANTS.asserts("control_shifts", "measured", "each control's shifts are its boundaries' distances")
def _control_shifts(v, f):
    bad = []
    for row in f.facts.controls:
        c = v.control(row["id"])
        if c is None or not c.reimpl.ran or (row["n"] and not (row["min"] <= row["mean"] <= row["max"])):
            bad.append(row["id"])
    return not bad, {"controls": bad}


@INVARIANTS.asserts("explanation", "explained", "the authors' arm ran, and each row's cause is what its numbers say")
def _explained(v, f):
    gap_limit = f.facts.objective_gap
    bad = []
    for r in f.facts.rows:
        cause = r["cause"]
        if cause == "same_optimum" and r["objective_gap"] > gap_limit:
            bad.append(f"{r['label']}: same optimum, gap {r['objective_gap']:.3g}")
        if cause == "setting" and not r["setting_differs"]:
            bad.append(f"{r['label']}: setting blamed, yet the authors fitted the claimed setting")
        if cause == "optimiser_short" and (r["setting_differs"] or not (r["short_by"] or 0) > gap_limit):
            bad.append(f"{r['label']}: optimiser blamed at another setting or without a lower objective")
        if (
            cause == "different_data"
            and r.get("n_upstream") == r.get("n_reimpl")
            and (
                r.get("coverage_upstream") is None
                or abs(r["coverage_of_theirs_here"] - r["coverage_upstream"]) <= 2.0 / r["n_reimpl"]
            )
        ):
            bad.append(f"{r['label']}: different data blamed, yet the arms fit the same points")
        if cause not in ("same_optimum", "different_data") and r["objective_gap"] <= gap_limit:
            bad.append(f"{r['label']}: a difference explained although both reach one optimum")
        if not same(r["upstream"], v.value(Q.boundary(r["label"]), "upstream")):
            bad.append(f"{r['label']}: not the authors' value")
    shown = {r["label"] for r in f.facts.differing} | set((f.facts.setting or {}).get("labels", []))
    want = {r["label"] for r in f.facts.rows if r["cause"] not in ("same_optimum", "different_data")}
    if shown != want:
        bad.append(f"worded {sorted(shown)}, differing {sorted(want)}")
    return v.ok("upstream") and not bad, {"rows": bad}


@INVARIANTS.asserts("own_setting", "not_reported", "the authors' arm did not run or did not report their setting")
def _own_not_reported(v, f):
    up = v.record.arms.upstream
    return not (up.ok and up.details.get("own_setting")), {"authors' arm": up.status}


@INVARIANTS.asserts("own_setting", "same", "their setting is the claim's")
def _own_same(v, f):
    own = v.record.arms.upstream.details.get("own_setting") or {}
    ok = v.ok("upstream") and all(same(own.get(k), v.params[k]) for k in ("tau", "kappa", "lam"))
    return ok, {k: own.get(k) for k in ("tau", "kappa", "lam")}


@INVARIANTS.asserts(
    "own_setting",
    ("no_common_miss", "closes", "does_not_close"),
    "their setting differs from the claim's in exactly the parameters named",
)
def _own_differs(v, f):
    own = v.record.arms.upstream.details.get("own_setting") or {}
    changed = [k for k in ("tau", "kappa", "lam") if not same(own.get(k), v.params[k], rel=1e-12)]
    return v.ok("upstream") and changed == [c["name"] for c in f.facts.changed], {"changed": changed}


@INVARIANTS.asserts(
    "own_setting",
    ("closes", "does_not_close"),
    "each row is a published value both arms miss, and 'closes' iff one arm meets each at their setting",
)
def _own_rows(v, f):
    bad = []
    for r in f.facts.rows:
        ts = v.targets(title=r["title"])
        if not any(t.reimpl.holds is False and t.upstream.holds is False for t in ts):
            bad.append(f"{r['title']}: not missed by both arms")
        for arm in ("upstream", "reimpl"):
            if r[f"{arm}_within"] != within_tolerance(r[f"{arm}_at_own"] - r["paper"], r["tolerance"]):
                bad.append(f"{r['title']}: 'within' is not its distance ({arm})")
        if r["closed"] != (r["upstream_within"] or r["reimpl_within"] or bool(r["reimpl_boxed_within"])):
            bad.append(f"{r['title']}: 'closed'")
    closes = all(r["closed"] for r in f.facts.rows)
    if (f.state == "closes") != closes:
        bad.append("state")
    return not bad, {"contradicted": bad}
