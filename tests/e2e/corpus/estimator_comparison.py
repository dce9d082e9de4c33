"""The corpus variants of ``estimator_comparison`` (claim 003 edited): another τ with relations only, other bin
counts, the authors' box.
"""

from __future__ import annotations

from harness.rendering.results import results_for

from . import Variant, chain, set_params


def _estimator_cheap(raw):
    raw["params"].update(n_random=2, knot_grid=[2, 3], n_shuffles=1, box_check=None)
    for c in raw["controls"]:
        if c["control"] == "shuffle_z":
            c["params"]["n_shuffles"] = 1


def _no_printed_cell(rec):
    """Relations only: no cell of the table shows a paper value, and every relation on a gap is an ordering row."""
    res = results_for(rec)
    assert all(v["paper"] is None for row in res.table for k, v in row.items() if k != "estimator")
    assert len(res.orderings) == len([t for t in rec.targets if t.quantity.startswith("gap.")]) > 0


def _estimator_relations(raw):
    raw["targets"] = [t for t in raw["targets"] if t.get("relation", "~") != "~"]
    raw["controls"] = [c for c in raw["controls"] if c["control"] == "shuffle_z"]


VARIANTS = [
    Variant(
        "c003_tau90_relations",
        "003",
        chain(_estimator_cheap, set_params(tau=0.9), _estimator_relations),
        _no_printed_cell,
        slow=True,
        notes="no cell with a paper value",
    ),
    Variant("c003_bins3", "003", chain(_estimator_cheap, set_params(n_bins=3, min_bin_size=10)), slow=True),
    Variant("c003_box", "003", chain(_estimator_cheap, set_params(box_check=[0.05, 50.0])), slow=True),
]
