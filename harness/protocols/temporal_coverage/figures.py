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


def _coverage_panel(ax, P: dict, colors: dict, keys: tuple[str, str, str, str], title: str) -> None:
    """Signed coverage error per split (lines) and its mean (◆), both arms, for one reading of coverage."""
    per_split, per_split_up, mean, mean_up = keys
    splits, order = P["splits"], P["drift"] + P["stable"]
    n = len(splits)
    xs, x_mean = np.arange(n, dtype=float), n + 0.6
    ax.axhspan(-1, 0, color="#fbe3e0", zorder=0)
    ax.axhline(0, color="black", lw=0.8, zorder=1)
    ax.axvline(n - 0.2, color="0.6", lw=0.6)
    jitter = np.linspace(-0.12, 0.12, len(order)) if len(order) > 1 else np.zeros(1)
    for j, x in zip(jitter, order):
        T, c = P["tasks"][x], colors[x]
        drift = T["group"] == "drift"
        style = {"color": c, "lw": 2.0 if drift else 1.1, "ls": "-" if drift else (0, (4, 2))}
        ax.plot(
            xs + j,
            np.array(T[per_split], dtype=float),
            marker="o",
            ms=5,
            label=f"{x} ({T['group']})",
            zorder=3,
            **style,
        )
        ax.plot([x_mean + j], [val(T[mean])], marker="D", ms=6, color=c, ls="none", zorder=3)
        hollow = {"mfc": "none", "mec": c, "mew": 1.1, "ls": "none", "zorder": 4}
        if T.get(per_split_up) is not None:
            ax.plot(xs + j, np.array(T[per_split_up], dtype=float), marker="o", ms=9, **hollow)
        if T.get(mean_up) is not None:
            ax.plot([x_mean + j], [T[mean_up]], marker="D", ms=10, **hollow)
    ticks = [f"{s['train']} → {s['val']}" + (f"\n(n = {s['n']:.0f})" if s.get("n") is not None else "") for s in splits]
    ax.set_xticks(list(xs) + [x_mean], ticks + ["mean"])
    ax.set_xlim(-0.45, x_mean + 0.45)
    ax.set_title(title)


def draw(record: Record, P: dict) -> list[tuple[Figure, bytes]]:
    """Signed coverage error by split of a ``temporal_coverage`` record, both arms, pooled and over bins."""
    if not P.get("tasks"):
        return []
    colors = {x: DRIFT_COLORS[i % len(DRIFT_COLORS)] for i, x in enumerate(P["drift"])}
    colors |= {x: STABLE_COLORS[i % len(STABLE_COLORS)] for i, x in enumerate(P["stable"])}
    binned = all(T.get("bin_averaged") is not None for T in P["tasks"].values())
    fig = new_figure(8.6 if binned else 7.4, 4.3)
    axes = fig.subplots(1, 2 if binned else 1, sharey=True, squeeze=False)[0]
    panels = [(("reimpl", "upstream", "mean", "mean_upstream"), "pooled over models (the claim)")]
    if binned:
        b = "bin_averaged"
        panels.append(((b, f"{b}_upstream", f"{b}_mean", f"{b}_mean_upstream"), "bin-averaged (the paper's Figure 2)"))
    for ax, (keys, title) in zip(axes, panels):
        _coverage_panel(ax, P, colors, keys, title)
    values = [val(v) for T in P["tasks"].values() for ks, _ in panels for k in ks[:2] for v in (T.get(k) or [])]
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
    if binned and record.arms.upstream.ok and not any(T.get("bin_averaged_upstream") for T in P["tasks"].values()):
        missing.append("the authors' bin-averaged values per split (their arm reports only the means)")
    caption = (
        "Signed coverage error per split and its mean (◆), both arms"
        + (", over models (left) and over bins (right)" if binned else "")
        + "; drifting benchmarks solid, stable ones dashed."
    )
    return [done(record, "coverage_by_split", fig, caption=caption, section="result", missing=missing)]
