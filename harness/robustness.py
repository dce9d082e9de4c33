"""Does the evidence survive resampling the models, and can the resampling be trusted? The claim's bootstrap.

A claim file may ask for a bootstrap (``bootstrap:``: resamples, seed, the
column that names a row's cluster, the comparisons the claim asserts, the
interval ``method``). Rows of the leaderboard are not independent: fine-tunes
of one base model share its compute and much of its scores. So whole base
models are resampled (:func:`harness.stats.resample.cluster_bootstrap`; a row
without a base model is its own cluster), the protocol's statistic is
recomputed on each resample (each fit starting from the full-sample optimum),
and the record's :class:`~harness.record.Robustness` gives, per quantity, an
interval by the claim's method (percentile; BCa with a 20-group cluster
jackknife; or m-out-of-n cluster subsampling, :mod:`harness.stats.intervals`)
with the coverage that method was measured to have on this claim's own design
(:mod:`harness.calibration`), and per asserted comparison its state
(:func:`harness.stats.resample.comparison_state`): ``does not hold`` when it is
false on the full sample, ``not assessed`` when the interval of its difference
was not shown to cover (coverage outside :data:`harness.calibration.CALIBRATED`,
or no study), else ``robust`` or ``fragile`` by the share of resamples in which
it holds (resampling evidence, with its Monte Carlo error: not a probability
that the claim is true). The claim's state is its worst comparison's. The
verdict does not depend on it.

Resamples, jackknife values and subsamples run as tasks of the fan-out layer
(:mod:`harness.fanout`); each draws its resamples by index from seeded
generators, so the result does not depend on where or in what order they ran.
"""

from __future__ import annotations

import numpy as np

from . import fanout, progress
from .calibration import CALIBRATED, Design, comparison_name, design, read_study
from .fanout import Task
from .record import Robustness, plain
from .relations import literal_decimals, relation_holds
from .stats.resample import (
    COMPARISON_STATES,
    BootstrapDraws,
    cluster_bootstrap,
    cluster_ids_from_labels,
    comparison_label,
    comparison_share,
    comparison_state,
    concat_draws,
    overall_state,
)

__all__ = ["run_bootstrap", "CHUNK", "METHOD_WORDS"]

#: Resamples per task sent to a worker process.
CHUNK = 10
#: Groups of the cluster jackknife that gives the BCa interval its acceleration.
JACKKNIFE_GROUPS = 20
#: How each interval method is said in a report.
METHOD_WORDS = {
    "percentile": "percentile interval of the cluster bootstrap",
    "bca": "BCa interval of the cluster bootstrap (acceleration from a 20-group cluster jackknife)",
    "subsampling": "m-out-of-n cluster subsampling interval (m = ceil(G^(2/3)) clusters without replacement)",
}


def _chunk(statistic, n_rows, ids, n_resamples, seed, chunk):
    return cluster_bootstrap(
        statistic,
        n_rows,
        ids,
        n_resamples=n_resamples,
        rng=np.random.default_rng(seed),
        chunk=chunk,
        catch=(ValueError, FloatingPointError),
        with_rng=True,
    )


def _draws(res: Design, ids, n_resamples: int, seed: int):
    """Every resample's statistic, by chunks of :data:`CHUNK` sent through the fan-out layer."""
    chunks = [range(a, min(a + CHUNK, n_resamples)) for a in range(0, n_resamples, CHUNK)]
    tasks = [
        Task(
            f"bootstrap resamples {ch.start + 1}-{ch.stop}",
            _chunk,
            (res.statistic, res.n_rows, ids, n_resamples, seed, ch),
        )
        for ch in chunks
    ]
    return concat_draws(fanout.run(tasks, stage="bootstrap chunks"))


def _jackknife(statistic, n_rows, ids, seed):
    from .stats.intervals import cluster_jackknife

    rng = np.random.default_rng(np.random.SeedSequence([int(seed), 1]))
    return cluster_jackknife(
        statistic,
        n_rows,
        ids,
        n_groups=JACKKNIFE_GROUPS,
        rng=rng,
        catch=(ValueError, FloatingPointError),
        with_rng=True,
    )


def _subsample_chunk(statistic, n_rows, ids, m, n_resamples, seed, chunk):
    """Subsamples ``chunk`` of ``n_resamples`` (``m`` clusters each, without replacement), all drawn up front from
    the one generator so that any chunk gives what the whole run gives."""
    from .stats.intervals import cluster_subsample_indices

    rng = np.random.default_rng(np.random.SeedSequence([int(seed), 2]))
    resamples = cluster_subsample_indices(ids, m, n_resamples, rng)
    children = np.random.SeedSequence(int(rng.integers(0, 2**63))).spawn(n_resamples)
    rows, names, raised = [], None, 0
    for i in chunk:
        try:
            out = statistic(resamples[i], np.random.default_rng(children[i]))
            names = names or tuple(out)
            rows.append([float(out[k]) for k in names])
        except (ValueError, FloatingPointError):
            raised += 1
            rows.append(None)
    width = len(names or ())
    values = np.array([r if r is not None else [np.nan] * width for r in rows], dtype=float).reshape(len(rows), width)
    G = int(ids.max()) + 1
    return BootstrapDraws(names or (), values, np.asarray(list(chunk), dtype=np.intp), n_resamples, G, n_rows, raised)


def _method_draws(method: str, d, ids, n_resamples: int, seed: int):
    """What the claim's interval method needs beyond the bootstrap draws: jackknife values or subsamples."""
    if method == "bca":
        (jack,) = fanout.run(
            [Task("cluster jackknife (20 groups)", _jackknife, (d.statistic, d.n_rows, ids, seed))], stage="jackknife"
        )
        return jack
    if method == "subsampling":
        from .stats.intervals import subsample_size

        m = subsample_size(int(ids.max()) + 1)
        chunks = [range(a, min(a + CHUNK, n_resamples)) for a in range(0, n_resamples, CHUNK)]
        tasks = [
            Task(
                f"subsamples {ch.start + 1}-{ch.stop}",
                _subsample_chunk,
                (d.statistic, d.n_rows, ids, m, n_resamples, seed, ch),
            )
            for ch in chunks
        ]
        return m, concat_draws(fanout.run(tasks, stage="subsample chunks"))
    return None


def _interval(method: str, draws, extra, name: str, estimate, level: float, n_clusters: int):
    from .stats import intervals as iv

    column = draws.column(name)
    if method == "bca" and estimate is not None:
        return iv.bca(column, estimate, extra.column(name), level)
    if method == "subsampling" and estimate is not None:
        m, sub = extra
        return iv.subsampling(sub.column(name), estimate, m=m, n_clusters=n_clusters, level=level)
    return iv.percentile(column, level)


def _coverage(study: dict | None, quantity: str, method: str) -> dict:
    """The measured coverage of ``method`` on ``quantity`` in the claim's study, and whether it is calibrated."""
    row = ((study or {}).get("coverage") or {}).get(quantity, {}).get(method)
    if not row or row.get("coverage") is None:
        return {"coverage": None, "coverage_mc_se": None, "calibrated": None}
    lo, hi = CALIBRATED
    return {"coverage": row["coverage"], "coverage_mc_se": row["mc_se"], "calibrated": lo <= row["coverage"] <= hi}


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
    draws = _draws(d, ids, b.n_resamples, b.seed)
    extra = _method_draws(b.method, d, ids, b.n_resamples, b.seed)
    study_state, study = read_study(spec, tables.lock)
    measured = study if study_state == "measured" else None
    n_clusters = draws.n_clusters

    names = list(b.quantities) or [t.quantity for t in targets if t.role == "headline" and t.relation == "~"]
    by_target = {t.quantity: t for t in targets}
    intervals = []
    for name in names:
        if name not in draws.names:
            continue
        column = draws.column(name)
        t = by_target.get(name)
        estimate = reimpl.values.get(name)
        iv = _interval(b.method, draws, extra, name, estimate, b.level, n_clusters).to_dict()
        finite = column[np.isfinite(column)]
        median = float(np.median(finite)) if finite.size else None
        bounded = iv["lo"] is not None and np.isfinite(iv["lo"])
        outside = estimate is not None and bounded and not (iv["lo"] <= estimate <= iv["hi"])
        unit = 10.0 ** -literal_decimals(t.paper_text) if (t is not None and t.paper_text) else None
        width = iv["hi"] - iv["lo"] if bounded else None
        intervals.append(
            {
                "quantity": name,
                "label": spec.label_of(name),
                "estimate": estimate,
                "median": median,
                "estimate_outside": outside,
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
            }
        )
    comparisons = []
    for i, c in enumerate(b.comparisons):
        right = c.right
        comp = (c.left, c.relation, right)
        share = comparison_share(draws, comp)
        label = c.label or comparison_label(comp)
        right_words = spec.label_of(right) if isinstance(right, str) else f"{right:g}"
        left_v, right_v = reimpl.values.get(c.left), reimpl.values.get(right) if isinstance(right, str) else right
        full = None if left_v is None or right_v is None else relation_holds(c.relation, left_v, right_v)
        cov = _coverage(measured, comparison_name(i), b.method)
        comparisons.append(
            {
                "label": label,
                "words": f"{spec.label_of(c.left)} {c.relation} {right_words}",
                "holds_full": full,
                "difference": None if full is None else left_v - right_v,
                "share": share["share"],
                "mc_se": share["mc_se"],
                "n_undetermined": share["n_undetermined"],
                **cov,
                "state": comparison_state(full, share["share"], b.robust_share, cov["calibrated"]),
            }
        )
    state = overall_state([c["state"] for c in comparisons]) if comparisons else "intervals only"
    by_state = {s: [c["label"] for c in comparisons if c["state"] == s] for s in COMPARISON_STATES}
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
    }
    wide = [iv["label"] for iv in intervals if iv["wider_than_printed"]]
    facts = {
        "rows": d.rows,
        "cluster_col": b.cluster_col,
        "estimate_outside": [iv["label"] for iv in intervals if iv["estimate_outside"]],
        "n_fragile": len(by_state["fragile"]),
        "n_comparisons": len(comparisons),
        "one_comparison": len(comparisons) == 1,
        "all_wider_than_printed": bool(wide) and len(wide) == sum(iv["printed_unit"] is not None for iv in intervals),
        "n_wider_than_printed": len(wide),
        "wider_than_printed": wide,
        "n_with_paper": sum(iv["printed_unit"] is not None for iv in intervals),
        "n_resamples": b.n_resamples,
        "n_clusters": draws.n_clusters,
        "n_rows": d.n_rows,
        "n_raised": draws.n_raised,
        "level": b.level,
        "threshold": b.robust_share,
        "seed": b.seed,
        "intervals": intervals,
        "comparisons": comparisons,
        "fragile": by_state["fragile"],
        "not_holding": by_state["does not hold"],
        "not_assessed": by_state["not assessed"],
        "method": b.method,
        "method_words": METHOD_WORDS[b.method],
        "calibration": calibration,
        "tail": tail,
        "start": "each resample's fits start from the full-sample optimum",
    }
    return Robustness(state=state, facts=plain(facts))
