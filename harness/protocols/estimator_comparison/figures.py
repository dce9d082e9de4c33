"""Figures of ``estimator_comparison``: every estimator's metrics beside the paper's."""

from __future__ import annotations

import numpy as np

from ...core.record import Figure, Record
from ...rendering.figures import CROSS, DOT, RING, arm_legend, done, new_figure, upstream_missing
from . import quantities as Q


def _metrics(values: dict, estimator: str) -> dict:
    return {m: values.get(Q.metric(m, estimator)) for m in Q.METRICS}


def _rows(record: Record) -> list[dict]:
    """Each estimator's four metrics for both arms and the paper, then the sigmoid's under each control."""
    arms = record.arms
    uv = arms.upstream.values if arms.upstream.ok else {}
    paper = {t.quantity: t.paper for t in record.targets if t.relation == "~"}
    rows = [
        {
            "label": Q.ESTIMATOR_NAMES[e][0].upper() + Q.ESTIMATOR_NAMES[e][1:],
            "kind": "estimator",
            "reimpl": _metrics(arms.reimpl.values, e),
            "upstream": _metrics(uv, e) if uv else None,
            "paper": _metrics(paper, e),
        }
        for e in Q.ESTIMATORS
    ]
    for c in record.controls:
        if not c.reimpl.ran:
            continue
        mine = arms.reimpl.controls[c.id]
        theirs = arms.upstream.controls[c.id].values if arms.upstream.ok and c.id in arms.upstream.controls else None
        if c.control == "beta_zero":
            row = {"label": "Sigmoid, β = 0", "reimpl": _metrics(mine.values, "sigmoid")}
            row["upstream"] = _metrics(theirs, "sigmoid") if theirs else None
        elif c.control == "shuffle_z":
            # the authors' shuffled sigmoid's ID loss: the Constant's minus the advantage (its definition)
            row = {
                "label": "Sigmoid, z shuffled",
                "reimpl": {m: mine.details["sigmoid_shuffled"].get(m) for m in Q.METRICS},
            }
            constant = uv.get(Q.metric("pinball_id", "constant"))
            up = theirs and theirs.get(Q.ADVANTAGE_ID) is not None and constant is not None
            row["upstream"] = {"pinball_id": constant - theirs[Q.ADVANTAGE_ID]} if up else None
        else:
            continue
        rows.append({**row, "kind": c.control})
    return rows


def _estimators(record: Record) -> list[tuple[Figure, bytes]]:
    rows = _rows(record)
    panels = (
        ("pinball", 1e3, f"mean smoothed pinball loss\n(×10⁻³, κ = {record.claim.params['kappa']:g})"),
        ("calibration", 1.0, "calibration error\n(mean |coverage − τ| over bins)"),
    )
    lines = [(r, split) for r in rows for split in ("id", "ood")]
    fig = new_figure(7.6, 0.24 * len(lines) + 1.7)
    axes = fig.subplots(1, 2, sharey=True)
    ys = -np.arange(len(lines), dtype=float)
    n_est = sum(r["kind"] == "estimator" for r in rows)
    for ax, (metric, scale, xlabel) in zip(axes, panels):
        for y, (r, split) in zip(ys, lines):
            m = f"{metric}_{split}"
            for values, marker, z in ((r.get("paper", {}), CROSS, 5), (r.get("upstream") or {}, RING, 4)):
                if values.get(m) is not None:
                    ax.plot([values[m] * scale], [y], ls="none", zorder=z, **marker)
            if r["reimpl"].get(m) is not None:
                ax.plot([r["reimpl"][m] * scale], [y], ls="none", zorder=6, **DOT)
        for k in range(1, len(rows)):
            ax.axhline(ys[2 * k] + 0.5, color="0.85" if k != n_est else "0.4", lw=0.6 if k != n_est else 1.0)
        if len(rows) > n_est:
            ax.axhspan(ys[-1] - 0.5, ys[2 * n_est] + 0.5, color="0.95", zorder=0)
        ax.set_xlabel(xlabel)
        ax.grid(axis="x", color="0.9", lw=0.5)
    names = [f"{r['label']}{'' if r['kind'] == 'estimator' else ' (control)'}, ID" for r in rows]
    axes[0].set_yticks(ys, [name if s == "id" else "OOD" for name in names for s in ("id", "ood")])
    axes[0].set_ylim(ys[-1] - 0.6, 0.6)
    has_paper = any(r.get("paper", {}).get(m) is not None for r in rows for m in r.get("paper", {}))
    arm_legend(fig, record, has_paper and {**CROSS, "ls": "none", "label": "paper"})
    missing = upstream_missing(record, "the authors' values")
    if any(r["kind"] == "shuffle_z" and r["upstream"] for r in rows):  # it has the ID pinball loss only
        missing.append("the authors' shuffled-z values other than ID pinball (their arm reports only the ID advantage)")
    n_pairs = len(record.arms.reimpl.details["pair_gaps"])
    caption = (
        f"Each estimator's loss and calibration in and out of distribution (means over {n_pairs} task-period "
        f"pairs), the sigmoid under each control shaded: look at the sigmoid against the I-spline on OOD "
        f"calibration, and at how far the controls move it."
    )
    return [done(record, "estimators", fig, caption=caption, section="result", missing=missing)]


BOXED = {"color": "#2a9d4b", "label": "re-implementation in the authors' box"}
_SQUARE = {"color": BOXED["color"], "marker": "s", "ms": 4.5}


def _differences(record: Record) -> list[tuple[Figure, bytes]]:
    """The headline cells' distances from the paper in units of their tolerance: the differences of about
    1e-5 that decide the verdict, which the other figure's scale cannot show; with box_check, the
    re-implementation's refit in the box too."""
    v = record.arms.reimpl.values
    cells = [
        {
            "title": t.title,
            "reimpl": t.reimpl.delta / t.tolerance if t.reimpl.delta is not None and t.tolerance else None,
            "upstream": t.upstream.delta / t.tolerance if t.upstream.delta is not None and t.tolerance else None,
            "boxed": (
                (v[Q.boxed(t.quantity)] - t.paper) / t.tolerance
                if t.tolerance and v.get(Q.boxed(t.quantity)) is not None
                else None
            ),
            "tolerance_text": t.tolerance_text,
        }
        for t in record.targets
        if t.relation == "~" and t.role == "headline"
    ]
    if not cells:
        return []
    fig = new_figure(6.4, 0.42 * len(cells) + 1.3)
    ax = fig.subplots()
    ys = -np.arange(len(cells), dtype=float)
    ax.axvspan(-1.0, 1.0, color="0.92", zorder=0)
    ax.axvline(0.0, color="0.5", lw=0.8, zorder=1)
    has_boxed = any(c.get("boxed") is not None for c in cells)
    for y, c in zip(ys, cells):
        for key, dy, marker, z in (("upstream", 0, RING, 4), ("boxed", 0.18, _SQUARE, 5), ("reimpl", 0, DOT, 6)):
            if c.get(key) is not None:
                ax.plot([c[key]], [y + dy], ls="none", zorder=z, **marker)
    ax.set_yticks(ys, [f"{c['title']} (± {c['tolerance_text']})" for c in cells])
    ax.set_ylim(ys[-1] - 0.6, 0.6)
    ax.set_xlabel("value − paper, in units of the cell's tolerance (shaded: within it)")
    ax.grid(axis="x", color="0.9", lw=0.5)
    arm_legend(fig, record, has_boxed and {**_SQUARE, "ls": "none", **BOXED})
    caption = (
        "Each headline cell's distance from the paper in units of its tolerance (outside the shaded band, it "
        "fails): look at which arm lands outside"
        + (", and where the refit inside the authors' box lands." if has_boxed else ".")
    )
    missing = upstream_missing(record, "the authors' values")
    return [done(record, "differences", fig, caption=caption, section="result", missing=missing)]


def draw(record: Record, plots: dict) -> list[tuple[Figure, bytes]]:
    """Every figure of a ``estimator_comparison`` record."""
    return [*_estimators(record), *_differences(record)]
