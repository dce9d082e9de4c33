"""How a claim fares across its multiverse: the finding ``multiverse``, from the record's specifications alone.

**Distinct specifications.** Two specifications whose every measured value is equal (to the last bit, or
within :data:`SAME_RTOL` relative) are one result: counts are of distinct specifications ("k of n distinct
specifications"), and a choice none of whose alternatives changes any value, wherever its other choices
stand, is *inert*.

**States** (of the analysis specifications; other estimands are shown apart and never counted):

``holds_across_choices``
    no distinct specification fails an assertion of the claim (some may be unsettled: within the Monte Carlo
    error of their threshold);
``depends_on_choices``
    some hold and some fail; the choices it depends on are those that *flip* it, changed alone from the
    paper's specification (a flip is holds to fails or back, never to or from unsettled: a change within the
    measurement's own noise is not a flip), or, where none does alone, those the failing specifications
    change;
``holds_in_none``
    none holds and some fail;
``within_noise``
    none holds and none fails: every reading is within Monte Carlo error;
``values_only``
    the claim asserts values only (no ordering, no relation): its multiverse reports how far they move;
``none_judged``
    no analysis specification could be read (none ran, or a value was missing in each);
``not_run``
    the claim file declares no multiverse.

**Values.** Each headline value target shows its range across the distinct specifications against the
paper's value, in units of its tolerance; it is not held or failed per specification.

**The curve under the null** (where the record holds it): the observed number of significant specifications
and the median effect, each with its one-sided p-value against the null data sets, :func:`curve_p_value`.
"""

from __future__ import annotations

import math

from ..claimfiles.multiverse_spec import same_value
from ..core.record import Finding, MultiverseRecord
from ..core.relations import within_tolerance
from ..verdicts.common_findings import MULTIVERSE_STATES, Multiverse, MultiverseNotRun

__all__ = [
    "multiverse_finding",
    "analysis_choices_label",
    "same_results",
    "distinct_groups",
    "curve_p_value",
    "MULTIVERSE_STATES",
    "EDGE_SHARE",
    "SAME_RTOL",
]

#: The paper's specification is *at an edge* of the curve when it is among the lowest or highest this share
#: of the specifications that ran (at least the single lowest or highest), else *typical*.
EDGE_SHARE = 0.1
#: Two measured values are one result when they differ by at most this, relative to the larger.
SAME_RTOL = 1e-12


def same_results(a: dict, b: dict) -> bool:
    """Whether two specifications' values are one result: the same names, each pair equal or both missing, or
    within :data:`SAME_RTOL` relative."""
    if a.keys() != b.keys():
        return False
    for k, x in a.items():
        y = b[k]
        if x is None or y is None:
            if (x is None) != (y is None):
                return False
        elif x != y and abs(x - y) > SAME_RTOL * max(abs(x), abs(y)):
            return False
    return True


def distinct_groups(specs: list) -> list[list[int]]:
    """Indices of ``specs`` grouped by :func:`same_results` of their values, each group in order, groups in the
    order of their first member."""
    groups: list[list[int]] = []
    for i, s in enumerate(specs):
        home = next((g for g in groups if same_results(specs[g[0]].values, s.values)), None)
        if home is None:
            groups.append([i])
        else:
            home.append(i)
    return groups


def curve_p_value(observed: float, null) -> float:
    """One-sided p-value of a statistic of the curve against its null draws, ``(1 + #{T_r >= T}) / (R + 1)``
    (a draw within rounding of ``T`` counts as at least as large)."""
    import numpy as np  # here: the index and `harness list` read this module's labels, and a warm build needs none

    null = np.asarray(null, dtype=float)
    return float((1 + np.sum(null >= observed - 1e-12 * max(1.0, abs(observed)))) / (null.size + 1))


def _tally(specs: list) -> dict:
    """Counts of distinct results among ``specs`` (that ran), by reading."""
    reps = [specs[g[0]] for g in distinct_groups(specs)]
    return {
        "n": len(specs),
        "n_distinct": len(reps),
        "k": sum(s.reading == "holds" for s in reps),
        "fails": sum(s.reading == "fails" for s in reps),
        "unsettled": sum(s.reading == "unsettled" for s in reps),
        "undetermined": sum(s.reading is None for s in reps),
    }


def _alone(specs: list, s, name: str) -> list:
    """The specifications that differ from ``s`` in choice ``name`` alone."""
    return [
        o
        for o in specs
        if not same_value(o.choices[name], s.choices[name])
        and all(same_value(o.choices[c], s.choices[c]) for c in s.choices if c != name)
    ]


def _choice_facts(c: dict, ran: list, paper) -> dict:
    name = c["name"]
    alts = []
    for a in c["alternatives"]:
        mine = [s for s in ran if same_value(s.choices[name], a["value"])]
        alts.append({"text": a["text"], "reason": a["reason"], "paper": a["paper"], **_tally(mine)})
    pairs = [(s, o) for s in ran for o in _alone(ran, s, name)]
    neighbours = _alone(ran, paper, name) if paper.status == "ok" else []
    settled = {"holds", "fails"}
    flipping = [o for o in neighbours if {o.reading, paper.reading} == settled]
    unsettling = [o for o in neighbours if o.reading == "unsettled" and paper.reading in settled]
    return {
        "name": name,
        "words": c["words"],
        "why": c["why"],
        "paper_text": c["paper_text"],
        "alternatives": alts,
        "inert": bool(pairs) and all(s.reading == o.reading and _same(s, o) for s, o in pairs),
        "flips": bool(flipping),
        "flipped_by": _texts(c, name, flipping),
        "unsettled_by": _texts(c, name, unsettling),
        "n_neighbours": len(neighbours),
    }


def _same(s, o) -> bool:
    return same_results(s.values, o.values)


def _texts(c: dict, name: str, specs: list) -> list[str]:
    return [a["text"] for a in c["alternatives"] if any(same_value(s.choices[name], a["value"]) for s in specs)]


def _measured(a: dict, s) -> float | None:
    """What an assertion reads on a specification: its quantity, or for an ordering of two quantities their
    difference (left - right)."""
    left = s.values.get(a["left"])
    if a["right_label"] is None or left is None:
        return left
    right = s.values.get(a["right"])
    return None if right is None else left - right


def _assertion_facts(mv: MultiverseRecord, reps: list, paper) -> list[dict]:
    out = []
    for i, a in enumerate(mv.assertions):
        lefts = [m for m in (_measured(a, s) for s in reps) if m is not None]
        readings = [s.readings[i] for s in reps]
        out.append(
            {
                "label": a["label"],
                "kind": a["kind"],
                "measure": a["left_label"] if a["right_label"] is None else f"{a['left_label']} − {a['right_label']}",
                "margin": a["margin"],
                "k": readings.count("holds"),
                "fails": readings.count("fails"),
                "unsettled": readings.count("unsettled"),
                "n": len(reps),
                "lo": min(lefts) if lefts else None,
                "hi": max(lefts) if lefts else None,
                "paper_value": _measured(a, paper) if paper.status == "ok" else None,
                "paper_reading": paper.readings[i] if paper.status == "ok" else None,
            }
        )
    return out


def _driver(q: str, ran: list, paper, names: list[str]) -> dict | None:
    """The choice whose change alone, from the paper's specification, moves the value of ``q`` most."""
    if paper.status != "ok" or paper.values.get(q) is None:
        return None
    best = None
    for name in names:
        for o in _alone(ran, paper, name):
            v = o.values.get(q)
            if v is not None and (best is None or abs(v - paper.values[q]) > abs(best["shift"])):
                best = {"name": name, "shift": v - paper.values[q]}
    return best if best is not None and best["shift"] != 0 else None


def _movement(mv: MultiverseRecord, reps: list, paper, ran: list) -> list[dict]:
    """Each value target's range across the distinct specifications, against the paper's value in units of
    its tolerance (None where the tolerance is 0), and the choice that moves it most alone."""
    out = []
    names = [c["name"] for c in mv.choices]
    for t in mv.targets:
        vals = [s.values.get(t["quantity"]) for s in reps if s.values.get(t["quantity"]) is not None]
        lo, hi = (min(vals), max(vals)) if vals else (None, None)
        tol, printed = t["tolerance"], t["paper"]
        farthest = None if lo is None else max(abs(lo - printed), abs(hi - printed))

        def units(x, tol=tol, printed=printed):
            return None if x is None or not tol else (x - printed) / tol

        out.append(
            {
                **t,
                "lo": lo,
                "hi": hi,
                "n": len(vals),
                "paper_value": paper.values.get(t["quantity"]) if paper.status == "ok" else None,
                "lo_tol": units(lo),
                "hi_tol": units(hi),
                "spread": None if lo is None else hi - lo,
                "spread_tol": None if lo is None or not tol else (hi - lo) / tol,
                "moves": lo is not None and hi != lo,
                "paper_inside": None if lo is None else bool(lo <= printed <= hi),
                "within_tolerance": None if lo is None else within_tolerance(farthest, tol),
                "driver": _driver(t["quantity"], ran, paper, names),
            }
        )
    return out


def _curve_facts(mv: MultiverseRecord, ran: list, paper) -> dict:
    curve = [s.curve for s in ran if s.curve is not None]
    position, rank = None, None
    if paper.status == "ok" and paper.curve is not None and len(curve) > 1:
        below = sum(v < paper.curve for v in curve)
        rank = below + 1
        edge = max(1, math.floor(EDGE_SHARE * len(curve)))
        position = "lowest" if below < edge else ("highest" if len(curve) - rank < edge else "typical")
    return {
        "curve": mv.curve,
        "curve_label": mv.curve_label,
        "curve_lo": min(curve) if curve else None,
        "curve_hi": max(curve) if curve else None,
        "n_curve": len(curve),
        "paper_curve": paper.curve,
        "paper_rank": rank,
        "paper_position": position,
        "at_edge": position in ("lowest", "highest"),
        "has_interval": any(s.curve_lo is not None for s in ran),
    }


def _estimand_facts(mv: MultiverseRecord) -> list[dict]:
    """Each other estimand: what it changes, why, and how it reads (shown apart, never counted)."""
    described = {c["name"]: c for c in mv.estimands}
    out = []
    for s in (s for s in mv.specifications if s.estimand):
        ((name, value),) = s.choices.items()
        c = described[name]
        alt = next(a for a in c["alternatives"] if same_value(a["value"], value))
        out.append(
            {
                "name": name,
                "words": c["words"],
                "why": c["why"],
                "text": alt["text"],
                "paper_text": c["paper_text"],
                "reason": alt["reason"],
                "status": s.status,
                "failed_reason": s.reason,
                "reading": s.reading,
                "readings": [
                    {"label": a["label"], "reading": r, "value": _measured(a, s) if s.status == "ok" else None}
                    for a, r in zip(mv.assertions, s.readings)
                ],
                "curve": s.curve,
                "curve_lo": s.curve_lo,
                "curve_hi": s.curve_hi,
            }
        )
    return out


def _joint_null_facts(jn: dict | None) -> dict | None:
    if jn is None:
        return None
    import numpy as np

    S, alpha = jn["n_specifications"], jn["alpha"]
    shares = np.asarray(jn["null_significant"], dtype=float) / S
    medians = np.asarray(jn["null_median"], dtype=float)
    p_share = curve_p_value(jn["observed_significant"] / S, shares)
    p_median = curve_p_value(jn["observed_median"], medians)
    return {
        "n_datasets": jn["n_datasets"],
        "seed": jn["seed"],
        "alpha": alpha,
        "effect_label": jn["effect_label"],
        "n_specifications": S,
        "k_significant": jn["observed_significant"],
        "share": jn["observed_significant"] / S,
        "null_share_mean": float(shares.mean()),
        "null_share_q95": float(np.quantile(shares, 0.95)),
        "p_share": p_share,
        "median": jn["observed_median"],
        "null_median_mean": float(medians.mean()),
        "null_median_q95": float(np.quantile(medians, 0.95)),
        "p_median": p_median,
        "shows_effect": p_share < alpha or p_median < alpha,
    }


def _state(mv: MultiverseRecord, t: dict) -> str:
    if not mv.assertions:
        return "values_only"
    if t["k"] + t["fails"] + t["unsettled"] == 0:
        return "none_judged"
    if t["fails"] == 0:
        return "holds_across_choices" if t["k"] else "within_noise"
    return "depends_on_choices" if t["k"] else "holds_in_none"


def multiverse_finding(mv: MultiverseRecord | None) -> Finding:
    """How the claim fares across its multiverse, in states a report words (see the module docstring)."""
    if mv is None:
        return MultiverseNotRun(why="the claim file declares no multiverse").stated("not_run")
    analysis = [s for s in mv.specifications if not s.estimand]
    ran = [s for s in analysis if s.status == "ok"]
    reps = [ran[g[0]] for g in distinct_groups(ran)]
    paper = next(s for s in analysis if s.paper)
    tally = _tally(ran)
    state = _state(mv, tally)
    targets = _movement(mv, reps, paper, ran)
    choices = [_choice_facts(c, ran, paper) for c in mv.choices]
    flips = [c["name"] for c in choices if c["flips"]]
    failing = [s for s in reps if s.reading == "fails"]
    involved = [
        c["name"]
        for c in mv.choices
        if any(not same_value(s.choices[c["name"]], paper.choices[c["name"]]) for s in failing)
    ]
    facts = {
        **tally,
        "n": len(analysis),
        "n_ran": len(ran),
        "n_failed": len(analysis) - len(ran),
        "n_excluded": mv.excluded,
        "left_out": mv.left_out,
        "n_choices": len(choices),
        "n_assertions": len(mv.assertions),
        "few_assertions": len(mv.assertions) <= 3,  # few enough to be named in the label's sentence
        "few_targets": len(mv.targets) <= 2,  # few enough for a sentence each
        "n_targets": len(mv.targets),
        "paper_reading": paper.reading if paper.status == "ok" else None,
        "paper_ran": paper.status == "ok",
        "flips": flips,
        "n_flips": len(flips),
        "depends_on": (flips or involved) if state == "depends_on_choices" else [],
        "alone": bool(flips),
        "inert": [c["name"] for c in choices if c["inert"]],
        "n_inert": sum(c["inert"] for c in choices),
        "choices": choices,
        "assertions": _assertion_facts(mv, reps, paper),
        "targets": targets,
        "n_moving": sum(bool(t["moves"]) for t in targets),
        "widest": max(
            (t for t in targets if t["spread_tol"] is not None and t["moves"]),
            key=lambda t: t["spread_tol"],
            default=None,
        ),
        **_curve_facts(mv, ran, paper),
        "estimands": _estimand_facts(mv),
        "n_estimands": sum(s.estimand for s in mv.specifications),
        "joint_null": _joint_null_facts(mv.joint_null),
        "failed": [{"choices": s.choices, "reason": s.reason} for s in analysis if s.status != "ok"][:5],
    }
    return Multiverse.of(state, **facts)


def analysis_choices_label(f: Finding | None) -> str:
    """The finding in the few words of the index and ``harness list``: its state with k of n distinct
    specifications (``holds across choices (9 of 9)``)."""
    if f is None or f.state == "not_run":
        return "not run"
    x = f.facts
    of = f"{x['k']} of {x['n_distinct']}"
    return {
        "holds_across_choices": f"holds across choices ({of})",
        "depends_on_choices": f"depends on {', '.join(x['depends_on'])} ({of})",
        "holds_in_none": f"holds in none ({of})",
        "within_noise": f"within Monte Carlo error ({of})",
        "values_only": f"values only ({x['n_distinct']} distinct)",
        "none_judged": "not judged",
    }[f.state]
