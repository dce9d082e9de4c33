"""The figure of ``temporal_coverage``: signed coverage error by split, both arms, pooled and over bins."""

from __future__ import annotations

import math

import numpy as np

from ...core.record import Figure, Record
from ...rendering.figures import (
    DRIFT_COLORS,
    STABLE_COLORS,
    done,
    legend_handles,
    new_figure,
    upstream_label,
    upstream_missing,
    val,
)
from . import quantities as Q


def _coverage_panel(ax, record: Record, colors: dict, reading, title: str) -> None:
    """Signed coverage error per split (lines) and its mean (◆), both arms, for one reading of coverage
    (``reading``: a quantity's name to the name of that reading of it, pooled or bin-averaged)."""
    v, uv = record.arms.reimpl.values, record.arms.upstream.values if record.arms.upstream.ok else {}
    splits, drift = record.data["splits"], record.claim.params["drift_tasks"]
    n = len(splits)
    xs, x_mean = np.arange(n, dtype=float), n + 0.6
    ax.axhspan(-1, 0, color="#fbe3e0", zorder=0)
    ax.axhline(0, color="black", lw=0.8, zorder=1)
    ax.axvline(n - 0.2, color="0.6", lw=0.6)
    jitter = np.linspace(-0.12, 0.12, len(colors)) if len(colors) > 1 else np.zeros(1)
    for j, (x, c) in zip(jitter, colors.items()):
        names = [reading(Q.split(s["t"], x)) for s in splits]
        mean = reading(Q.signed_coverage(x))
        group = "drift" if x in drift else "stable"
        style = {"color": c, "lw": 2.0 if x in drift else 1.1, "ls": "-" if x in drift else (0, (4, 2))}
        ys = np.array([v[k] for k in names], dtype=float)
        ax.plot(xs + j, ys, marker="o", ms=5, label=f"{x} ({group})", zorder=3, **style)
        ax.plot([x_mean + j], [val(v[mean])], marker="D", ms=6, color=c, ls="none", zorder=3)
        hollow = {"mfc": "none", "mec": c, "mew": 1.1, "ls": "none", "zorder": 4}
        if any(k in uv for k in names):
            ax.plot(xs + j, np.array([uv.get(k) for k in names], dtype=float), marker="o", ms=9, **hollow)
        if uv.get(mean) is not None:
            ax.plot([x_mean + j], [uv[mean]], marker="D", ms=10, **hollow)
    n_val = [v.get(Q.n_validation(s["t"])) for s in splits]
    ticks = [
        f"{s['train']} → {s['val']}" + (f"\n(n = {k:.0f})" if k is not None else "") for s, k in zip(splits, n_val)
    ]
    ax.set_xticks(list(xs) + [x_mean], ticks + ["mean"])
    ax.set_xlim(-0.45, x_mean + 0.45)
    ax.set_title(title)


def draw(record: Record, plots: dict) -> list[tuple[Figure, bytes]]:
    """Signed coverage error by split of a ``temporal_coverage`` record, both arms, pooled and over bins."""
    drift = record.claim.params["drift_tasks"]
    stable = [x for x in record.claim.params["tasks"] if x not in drift]
    colors = {x: DRIFT_COLORS[i % len(DRIFT_COLORS)] for i, x in enumerate(drift)}
    colors |= {x: STABLE_COLORS[i % len(STABLE_COLORS)] for i, x in enumerate(stable)}
    fig = new_figure(8.6, 4.3)
    axes = fig.subplots(1, 2, sharey=True, squeeze=False)[0]
    readings = [
        (lambda name: name, "pooled over models (the claim)"),
        (Q.bin_averaged, "bin-averaged (the paper's Figure 2)"),
    ]
    for ax, (reading, title) in zip(axes, readings):
        _coverage_panel(ax, record, colors, reading, title)
    arms = [a.values for a in (record.arms.reimpl, record.arms.upstream) if a.ok]
    per_split = [reading(Q.split(s["t"], x)) for s in record.data["splits"] for x in colors for reading, _ in readings]
    values = [val(v.get(k)) for v in arms for k in per_split]
    values = [v for v in values if math.isfinite(v)]
    lo, hi = min(values + [0.0]), max(values + [0.0])
    pad = 0.08 * (hi - lo or 1.0)
    axes[0].set_ylim(lo - pad, hi + pad)
    axes[0].set_ylabel("signed coverage error, coverage − τ")
    fig.supxlabel("rolling split: fit on one period → test on the next (validation models)", fontsize=8)
    below = "below 0: more of the next period's models\nlie above the boundary than 1 − τ allows"
    kw = {"transform": axes[-1].transAxes, "fontsize": 7, "color": "#a03020", "va": "bottom", "ha": "right"}
    axes[-1].text(0.98, 0.02, below, **kw)
    handles, grey = axes[0].get_legend_handles_labels()[0], {"color": "0.3", "ls": "none", "marker": "o"}
    handles += legend_handles(
        {**grey, "ms": 5, "label": "re-implementation"},
        {**grey, "ms": 9, "mfc": "none", "label": upstream_label(record, "authors' code (hollow)")},
    )
    fig.legend(handles=handles, loc="outside right upper", frameon=False)
    missing = upstream_missing(record, "the authors' values")
    binned_up = [Q.bin_averaged(Q.split(s["t"], x)) for s in record.data["splits"] for x in colors]
    if record.arms.upstream.ok and not any(k in record.arms.upstream.values for k in binned_up):
        missing.append("the authors' bin-averaged values per split (their arm reports only the means)")
    caption = (
        "Signed coverage error per split and its mean (◆), both arms, over models (left) and over bins (right); "
        "drifting benchmarks solid, stable ones dashed."
    )
    return [done(record, "coverage_by_split", fig, caption=caption, section="result", missing=missing)]
