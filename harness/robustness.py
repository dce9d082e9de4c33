"""Does the evidence survive resampling the models? The cluster bootstrap of a claim's measurement.

A claim file may ask for a bootstrap (``bootstrap:``: resamples, seed, the
column that names a row's cluster, the comparisons the claim asserts). Rows
of the leaderboard are not independent: fine-tunes of one base model share
its compute and much of its scores. So whole base models are resampled
(:func:`harness.stats.resample.cluster_bootstrap`; a row without a base model
is its own cluster), the protocol's statistic is recomputed on each resample
(each fit starting from the full-sample optimum), and the record's
:class:`~harness.record.Robustness` gives, per quantity, a percentile
interval, and per asserted comparison, the share of resamples in which it
holds: ``robust`` when every comparison holds in at least the claim's share
(95% by default), otherwise ``fragile``, naming the comparison. The verdict
does not depend on it.

Resamples run by chunks, each a task of the fan-out layer (:mod:`harness.fanout`);
every chunk starts from the same seeded generator and draws its resamples by
index, so the result does not depend on where or in what order chunks ran.
"""

from __future__ import annotations

import numpy as np

from . import fanout, progress
from .fanout import Task
from .protocols.base import Resampling
from .record import Robustness, plain
from .relations import literal_decimals, relation_holds
from .stats.resample import (
    cluster_bootstrap,
    cluster_ids_from_labels,
    comparison_label,
    comparison_share,
    concat_draws,
    percentile_interval,
    robustness_finding,
)

__all__ = ["run_bootstrap", "CHUNK"]

#: Resamples per task sent to a worker process.
CHUNK = 10


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


def _draws(res: Resampling, ids, n_resamples: int, seed: int):
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


def run_bootstrap(spec, tables, reimpl, targets) -> Robustness:
    """The claim's bootstrap as a :class:`Robustness` (``not run`` when the claim asks for none)."""
    b = spec.claim.bootstrap
    if b is None:
        return Robustness(state="not run", facts={"why": "the claim file asks for no resampling"})
    if not reimpl.ok:
        return Robustness(state="not run", facts={"why": "the re-implementation did not run"})
    progress.stage(f"bootstrap: {b.n_resamples} resamples")
    res = spec.protocol.resampling(spec.params, tables, reimpl, cluster_col=b.cluster_col)
    ids = cluster_ids_from_labels(res.cluster_labels)
    draws = _draws(res, ids, b.n_resamples, b.seed)

    names = list(b.quantities) or [t.quantity for t in targets if t.role == "headline" and t.relation == "~"]
    by_target = {t.quantity: t for t in targets}
    intervals = []
    for name in names:
        if name not in draws.names:
            continue
        column = draws.column(name)
        iv = percentile_interval(column, b.level)
        t = by_target.get(name)
        estimate = reimpl.values.get(name)
        finite = column[np.isfinite(column)]
        median = float(np.median(finite)) if finite.size else None
        outside = estimate is not None and bool(np.isfinite(iv["lo"])) and not (iv["lo"] <= estimate <= iv["hi"])
        unit = 10.0 ** -literal_decimals(t.paper_text) if (t is not None and t.paper_text) else None
        width = iv["hi"] - iv["lo"] if np.isfinite(iv["lo"]) else None
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
                "paper_text": t.paper_text if t else None,
                "decimals": t.decimals if t else 4,
                "paper_inside": (
                    None
                    if t is None or t.paper is None or not np.isfinite(iv["lo"])
                    else bool(iv["lo"] <= t.paper <= iv["hi"])
                ),
                "width": width,
                "printed_unit": unit,
                "wider_than_printed": None if (unit is None or width is None) else width > unit,
            }
        )
    comparisons, shares = [], {}
    for c in b.comparisons:
        right = c.right
        comp = (c.left, c.relation, right)
        share = comparison_share(draws, comp)
        label = c.label or comparison_label(comp)
        right_words = spec.label_of(right) if isinstance(right, str) else f"{right:g}"
        left_v, right_v = reimpl.values.get(c.left), reimpl.values.get(right) if isinstance(right, str) else right
        full = None if left_v is None or right_v is None else relation_holds(c.relation, left_v, right_v)
        comparisons.append(
            {
                "label": label,
                "words": f"{spec.label_of(c.left)} {c.relation} {right_words}",
                "holds_full": full,
                "share": share["share"],
                "mc_se": share["mc_se"],
                "n_undetermined": share["n_undetermined"],
            }
        )
        shares[label] = share["share"]
    decision = robustness_finding(shares, b.robust_share) if shares else {"finding": "intervals only", "failing": []}
    state = decision["finding"]
    wide = [iv["label"] for iv in intervals if iv["wider_than_printed"]]
    facts = {
        "rows": res.rows,
        "cluster_col": b.cluster_col,
        "estimate_outside": [iv["label"] for iv in intervals if iv["estimate_outside"]],
        "n_fragile": len(decision["failing"]),
        "n_comparisons": len(comparisons),
        "one_comparison": len(comparisons) == 1,
        "all_wider_than_printed": bool(wide) and len(wide) == sum(iv["printed_unit"] is not None for iv in intervals),
        "n_wider_than_printed": len(wide),
        "wider_than_printed": wide,
        "n_with_paper": sum(iv["printed_unit"] is not None for iv in intervals),
        "n_resamples": b.n_resamples,
        "n_clusters": draws.n_clusters,
        "n_rows": res.n_rows,
        "n_raised": draws.n_raised,
        "level": b.level,
        "threshold": b.robust_share,
        "seed": b.seed,
        "intervals": intervals,
        "comparisons": comparisons,
        "fragile": decision["failing"],
        "start": "each resample's fits start from the full-sample optimum",
    }
    return Robustness(state=state, facts=plain(facts))
