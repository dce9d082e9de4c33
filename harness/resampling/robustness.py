"""Does the evidence survive resampling the models, and can the resampling be trusted? The claim's bootstrap.

A claim file may ask for a bootstrap (``bootstrap:``: resamples, seed, the column that names a row's cluster,
the orderings the claim asserts, the interval ``method``, the one-sided level ``alpha``). Rows of the
leaderboard are not independent: fine-tunes of one base model share its compute and much of its scores. So
whole base models are resampled (:func:`harness.stats.resample.cluster_bootstrap`; a row without a base model
is its own cluster), the protocol's statistic is recomputed on each resample (each fit starting from the
full-sample optimum), and the record's :class:`~harness.core.record.Robustness` gives:

* per value, a two-sided interval by the claim's method (:mod:`harness.stats.methods`) with the coverage that
  method was measured to have on this claim's own design (:mod:`harness.resampling.calibration`);
* per asserted ordering, a **one-sided decision** (:func:`harness.stats.methods.decide`): the method's
  one-sided ``1 - alpha`` bound on the ordering's difference excludes 0 on the claimed side (*supported*), on
  the other (*contradicted*), or neither (*inconclusive*, with the least difference the design detects with 80%
  power). The coverage study measured how often that very decision fires when the difference is 0; unless it
  shows that error at most 1.5 alpha with 95% confidence, or without a study, the label is *not assessed*
  (:func:`harness.core.decisions.ordering_state`);
* per headline value and ordering, the **influence** of each base model: the statistic with that cluster
  deleted (the delete-one cluster jackknife), the few that move it most, by how much against the margin of the
  decision (the distance of the deciding bound from 0; for a value target, the distance of the value from the
  edge of its tolerance). Where deleting one cluster moves an ordering's difference towards 0 by more than its
  margin, the label is at most *inconclusive*; where one cluster carries more than half of the jackknife
  variance, the cluster bootstrap is not consistent there, and the label is *not assessed*, naming it.

The verdict does not depend on any of it. Resamples, jackknife values and subsamples run as tasks of the
fan-out layer (:mod:`harness.parallel.fanout`); each draws its resamples by index from seeded generators, so the result
does not depend on where or in what order they ran.
"""

from __future__ import annotations

import numpy as np

from ..core import progress
from ..core.decisions import DOMINANT_SHARE, ORDERING_STATES, claimed_side, decide, ordering_state, overall_state
from ..core.record import Robustness
from ..core.relations import literal_decimals, relation_holds
from ..parallel import fanout
from ..parallel.fanout import Task
from ..stats.influence import influence, without_each
from ..stats.intervals import cluster_jackknife, cluster_subsample
from ..stats.methods import decision_interval, method_named, needed
from ..stats.plain import plain
from ..stats.resample import BootstrapDraws, cluster_bootstrap, cluster_ids_from_labels, concat_draws
from .calibration import CALIBRATED, Design, comparison_name, design, read_study, resampled_quantities

__all__ = ["run_bootstrap", "CHUNK", "N_INFLUENTIAL"]

#: Resamples (or deleted clusters) per task sent to a worker process.
CHUNK = 10
#: How many of the clusters that move a quantity most the record names.
N_INFLUENTIAL = 5
_CATCH = (ValueError, FloatingPointError)


# -- the resamplings, as tasks of the fan-out layer -------------------------------------------------------------


def _chunks(n: int):
    return [range(a, min(a + CHUNK, n)) for a in range(0, n, CHUNK)]


def _bootstrap_chunk(statistic, n_rows, ids, n_resamples, seed, chunk):
    return cluster_bootstrap(
        statistic,
        n_rows,
        ids,
        n_resamples=n_resamples,
        rng=np.random.default_rng(seed),
        chunk=chunk,
        catch=_CATCH,
        with_rng=True,
    )


def _jackknife(statistic, n_rows, ids, n_groups, seed):
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), 1]))
    g = None if n_groups >= int(ids.max()) + 1 else n_groups
    return cluster_jackknife(statistic, n_rows, ids, n_groups=g, rng=rng, catch=_CATCH, with_rng=True)


def _subsamples(statistic, n_rows, ids, m, n_resamples, seed):
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), 2]))
    return cluster_subsample(statistic, n_rows, ids, m=m, n_resamples=n_resamples, rng=rng, catch=_CATCH, with_rng=True)


def _resamplings(method, d: Design, ids, n_resamples: int, seed: int) -> dict:
    """Every resampling the claim's method needs, keyed as the method asks for it."""
    G = int(ids.max()) + 1
    out = {}
    for key in needed([method], G):
        if key[0] == "bootstrap":
            tasks = [
                Task(
                    f"bootstrap resamples {ch.start + 1}-{ch.stop}",
                    _bootstrap_chunk,
                    (d.statistic, d.n_rows, ids, n_resamples, seed, ch),
                )
                for ch in _chunks(n_resamples)
            ]
            out[key] = concat_draws(fanout.run(tasks))
        elif key[0] == "jackknife":
            task = Task(f"cluster jackknife ({key[1]} groups)", _jackknife, (d.statistic, d.n_rows, ids, key[1], seed))
            (out[key],) = fanout.run([task])
        elif key[0] == "subsample":
            task = Task(
                f"{n_resamples} subsamples", _subsamples, (d.statistic, d.n_rows, ids, key[1], n_resamples, seed)
            )
            (out[key],) = fanout.run([task])
        else:
            raise ValueError(f"unknown resampling {key!r}")
    return out


def _deleted(d: Design, ids, seed: int) -> BootstrapDraws:
    """The delete-one cluster jackknife: the statistic without each cluster, every cluster once."""
    G = int(ids.max()) + 1
    tasks = [
        Task(f"without clusters {ch.start + 1}-{ch.stop}", without_each, (d.statistic, d.n_rows, ids, ch, seed, _CATCH))
        for ch in _chunks(G)
    ]
    return concat_draws(fanout.run(tasks))


# -- what the record says -----------------------------------------------------------------------------------------


def _cluster_names(labels, ids) -> list:
    """Each cluster's label (``None`` for a row without one, a cluster of its own)."""
    labels = list(labels)
    first = np.full(int(ids.max()) + 1, -1, dtype=np.intp)
    for row in range(ids.size - 1, -1, -1):
        first[ids[row]] = row
    out = []
    for row in first:
        v = labels[row]
        out.append(
            None if v is None or (isinstance(v, float) and not np.isfinite(v)) or str(v).strip() == "" else str(v)
        )
    return out


def _influence(deleted: BootstrapDraws, name: str, estimate, names: list, sizes, margin, against: int = 0) -> dict:
    """:func:`harness.stats.influence.influence` of ``name``, its clusters named with their rows."""
    column = deleted.column(name) if name in deleted.names else np.full(len(names), np.nan)
    out = influence(column, estimate if name in deleted.names else None, margin, k=N_INFLUENTIAL, against=against)
    out["top"] = [{"cluster": names[c], "rows": int(sizes[c]), "delta": delta} for c, delta in out["top"]]
    if out["dominant"] is not None:
        c, share = out["dominant"]
        out["dominant"] = {"cluster": names[c], "rows": int(sizes[c]), "share": share}
    return out


def _coverage(study: dict | None, quantity: str, method: str) -> dict:
    """The measured coverage of ``method`` on ``quantity`` in the claim's study, and whether it is calibrated."""
    row = ((study or {}).get("coverage") or {}).get(quantity, {}).get(method)
    if not row or row.get("coverage") is None:
        return {"coverage": None, "coverage_mc_se": None, "calibrated": None}
    lo, hi = CALIBRATED
    return {"coverage": row["coverage"], "coverage_mc_se": row["mc_se"], "calibrated": lo <= row["coverage"] <= hi}


def _measured_error(study: dict | None, quantity: str, method: str) -> dict:
    """The study's measured error rates of the one-sided decision of ``method`` on the ordering ``quantity``
    (:func:`harness.resampling.calibration.run_study`'s ``orderings``)."""
    rows = [o for o in (study or {}).get("orderings", []) if o["quantity"] == quantity]
    row = rows[0]["by_method"].get(method) if rows else None
    if not row:
        row = {}
    keys = ("error", "error_mc_se", "error_bound", "error_against", "error_against_bound", "limit", "detectable")
    return {k: row.get(k) for k in keys}


def _ordering(c, i, spec, reimpl, resamples, method, alpha, G, measured, deleted, names, sizes) -> dict:
    """One asserted ordering: its decision, the decision's measured error, its influence, its state."""
    q = comparison_name(i)
    right = c.right
    left_v = reimpl.values.get(c.left)
    right_v = reimpl.values.get(right) if isinstance(right, str) else right
    full = None if left_v is None or right_v is None else relation_holds(c.relation, left_v, right_v)
    diff = None if full is None else left_v - right_v
    side = claimed_side(c.relation)
    lo = hi = None
    decision = None
    if diff is not None:
        iv = decision_interval(method, q, diff, resamples, G, alpha)
        lo, hi = float(iv.lo), float(iv.hi)
        decision = decide(lo, hi, side)
    # the margin: how far the deciding bound (the claimed side's, or the other's when it contradicts) lies from 0,
    # and the direction of a move that would bring it back to 0 (up for a bound below 0)
    margin, against = None, 0
    if decision in ("supported", "contradicted"):
        deciding = hi if (side < 0) == (decision == "supported") else lo
        margin, against = abs(deciding), (1 if deciding < 0 else -1)
    err = _measured_error(measured, q, method.name)
    infl = _influence(deleted, q, diff, names, sizes, margin, against)
    carried = bool(infl["beyond_margin"])
    carriers = [t for t in infl["top"] if carried and t["delta"] * against > margin]
    dominant = infl["dominant"] if infl["dominant"] and infl["dominant"]["share"] > DOMINANT_SHARE else None
    state = ordering_state(
        decision, err["error_bound"], err["error_against_bound"], err["limit"], carried, dominant is not None
    )
    right_words = spec.label_of(right) if isinstance(right, str) else f"{right:g}"
    return {
        "label": c.label or f"{spec.label_of(c.left)} {c.relation} {right_words}",
        "words": f"{spec.label_of(c.left)} {c.relation} {right_words}",
        "side": "below" if side < 0 else "above",
        "holds_full": full,
        "difference": diff,
        "lower": lo,
        "upper": hi,
        "bound": hi if side < 0 else lo,
        "bound_against": lo if side < 0 else hi,
        "decision": decision,
        **err,
        "calibrated": None if err["error_bound"] is None else bool(err["error_bound"] <= err["limit"]),
        "margin": margin,
        "influence": infl,
        "carried_by": carriers,
        "dominated_by": dominant,
        "state": state,
        "noise_rule": _measured_error(measured, q, "normal"),  # the multiverse's reading by noise, as measured
    }


def _applies(iv: dict) -> bool:
    """Whether the bootstrap gives this interval, so that a report prints it: no cluster dominates the statistic,
    its study measured it covering at least as often as a calibrated one must (over-coverage only makes it
    conservative), and it holds its own estimate."""
    lo, hi, est, cov = iv["lo"], iv["hi"], iv["estimate"], iv.get("coverage")
    dominant = (iv.get("influence") or {}).get("dominant")
    if dominant and dominant["share"] > DOMINANT_SHARE:
        return False
    return None not in (lo, hi, est, cov) and cov >= CALIBRATED[0] and lo <= est <= hi


def _value_margin(t, estimate):
    """How far a value target's value lies from the edge of its tolerance (``None`` without one)."""
    if t is None or t.relation != "~" or t.paper is None or t.tolerance is None or estimate is None:
        return None
    return abs(t.tolerance - abs(estimate - t.paper))


def run_bootstrap(spec, tables, reimpl, targets) -> Robustness:
    """The claim's bootstrap as a :class:`Robustness` (``not run`` when the claim asks for none)."""
    b = spec.claim.bootstrap
    if b is None:
        return Robustness(state="not run", facts={"why": "the claim file asks for no resampling"})
    if not reimpl.ok:
        return Robustness(state="not run", facts={"why": "the re-implementation did not run"})
    progress.stage(f"bootstrap: {b.n_resamples} resamples")
    d = design(spec, tables, reimpl)
    ids = cluster_ids_from_labels(d.cluster_labels)
    G = int(ids.max()) + 1
    method = method_named(b.method)
    resamples = _resamplings(method, d, ids, b.n_resamples, b.seed)
    draws = resamples[("bootstrap",)] if ("bootstrap",) in resamples else next(iter(resamples.values()))
    deleted = _deleted(d, ids, b.seed)
    names, sizes = _cluster_names(d.cluster_labels, ids), np.bincount(ids)
    study_state, study = read_study(spec, tables.lock)
    measured = study if study_state == "measured" else None

    quantities = resampled_quantities(spec)
    by_target = {t.quantity: t for t in targets}
    intervals = []
    for name in quantities:
        if name not in draws.names:
            continue
        column = draws.column(name)
        t = by_target.get(name)
        estimate = reimpl.values.get(name)
        iv = method.interval(name, estimate, resamples, G, b.level).to_dict()
        finite = column[np.isfinite(column)]
        bounded = iv["lo"] is not None and np.isfinite(iv["lo"])
        unit = 10.0 ** -literal_decimals(t.paper_text) if (t is not None and t.paper_text) else None
        width = iv["hi"] - iv["lo"] if bounded else None
        intervals.append(
            {
                "quantity": name,
                "label": spec.label_of(name),
                "estimate": estimate,
                "median": float(np.median(finite)) if finite.size else None,
                "estimate_outside": estimate is not None and bounded and not (iv["lo"] <= estimate <= iv["hi"]),
                "lo": iv["lo"],
                "hi": iv["hi"],
                "n_used": iv["n_used"],
                "n_failed": iv["n_failed"],
                **_coverage(measured, name, b.method),
                "paper_text": t.paper_text if t else None,
                "decimals": t.decimals if t else 4,
                "paper_inside": (
                    None if t is None or t.paper is None or not bounded else bool(iv["lo"] <= t.paper <= iv["hi"])
                ),
                "width": width,
                "printed_unit": unit,
                "wider_than_printed": None if (unit is None or width is None) else width > unit,
                "influence": _influence(deleted, name, estimate, names, sizes, _value_margin(t, estimate)),
            }
        )
        intervals[-1]["shown"] = _applies(intervals[-1])
    comparisons = [
        _ordering(c, i, spec, reimpl, resamples, method, b.alpha, G, measured, deleted, names, sizes)
        for i, c in enumerate(b.comparisons)
    ]
    state = overall_state([c["state"] for c in comparisons]) if comparisons else "intervals only"
    by_state = {s: [c["label"] for c in comparisons if c["state"] == s] for s in ORDERING_STATES}
    tail = spec.protocol.tail_support(spec.params, tables, reimpl) if hasattr(spec.protocol, "tail_support") else {}
    for row in tail.get("rows", []):
        row["label"] = spec.label_of(row["label"]) if row["label"] in spec.vocabulary else row["label"]
    calibration = {
        "state": study_state,
        "study": f"calibration/{spec.id}.md" if study is not None else None,
        "replicates": (study or {}).get("n_replicates"),
        "resamples": (study or {}).get("n_resamples"),
        "ideal": ((study or {}).get("reference") or {}).get("ideal_percentile_at_B", {}).get("coverage"),
        "range": list(CALIBRATED),
        "uncalibrated": [iv["label"] for iv in intervals if iv["calibrated"] is False],
        "joint": (study or {}).get("joint"),
    }
    wide = [iv["label"] for iv in intervals if iv["wider_than_printed"]]
    influence_rows = [
        {"label": r["label"], "estimate": est, **{k: r["influence"][k] for k in ("margin", "top", "n_beyond")}}
        for r, est in [(iv, iv["estimate"]) for iv in intervals] + [(c, c["difference"]) for c in comparisons]
        if r["influence"]["top"]
    ]
    facts = {
        "rows": d.rows,
        "cluster_col": b.cluster_col,
        "estimate_outside": [iv["label"] for iv in intervals if iv["estimate_outside"]],
        "n_comparisons": len(comparisons),
        "one_comparison": len(comparisons) == 1,
        "all_wider_than_printed": bool(wide) and len(wide) == sum(iv["printed_unit"] is not None for iv in intervals),
        "n_wider_than_printed": len(wide),
        "wider_than_printed": wide,
        "n_with_paper": sum(iv["printed_unit"] is not None for iv in intervals),
        "n_resamples": b.n_resamples,
        "n_clusters": G,
        "n_rows": d.n_rows,
        "n_raised": draws.n_raised,
        "n_deleted_failed": deleted.n_raised,
        "level": b.level,
        "alpha": b.alpha,
        "seed": b.seed,
        "intervals": intervals,
        "comparisons": comparisons,
        "influence_rows": influence_rows,
        "by_state": by_state,
        "method": b.method,
        "method_words": method.words,
        "calibration": calibration,
        "tail": tail,
        "start": "each resample's fits start from the full-sample optimum",
    }
    return Robustness(state=state, facts=plain(facts))
