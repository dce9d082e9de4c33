"""Figures of ``boundary_at_budget``: each benchmark's boundary at the budget, both arms and the control."""

from __future__ import annotations

import math

import numpy as np

from ...core.record import Figure, Record
from ...rendering.figures import (
    CONTROL,
    CROSS,
    DOT,
    REIMPL,
    RING,
    UPSTREAM,
    Z_LABEL,
    arm_handles,
    done,
    fmt,
    legend_handles,
    linspace,
    new_figure,
    read_density,
    upstream_missing,
)

_CONTROL_LINE, _CONTROL_DOT = {"color": CONTROL["color"], "ls": ":", "lw": 1.3}, {"marker": "o", "ms": 4}


def draw(record: Record, P: dict) -> list[tuple[Figure, bytes]]:
    """Each benchmark's boundary at the budget of a ``boundary_at_budget`` record, both arms and the control."""
    labels = list(P.get("tasks", {}))
    if not labels:
        return []
    ncols = min(3, len(labels))
    nrows = math.ceil(len(labels) / ncols)
    fig = new_figure(3.0 * ncols + 0.4, 2.45 * nrows + 0.55)
    axes = fig.subplots(nrows, ncols, squeeze=False, sharex=True, sharey=True)
    zs, z_eval, ctl = linspace(P["z_grid"]), P["z_eval"], P.get("control")
    missing = upstream_missing(record, "the authors' boundaries")
    if record.arms.upstream.ok and any(P["tasks"][x]["curves"].get("upstream") is None for x in labels):
        missing.append("some of the authors' boundary curves (their arm reports no fitted parameters for them)")
    if ctl is None:
        missing.append("a τ-override control curve (no such control ran)")
    for ax, label in zip(axes.flat, labels):
        T = P["tasks"][label]
        counts, extent = read_density(T["density"])
        shade = np.log1p(counts)
        kw = {"origin": "lower", "aspect": "auto", "cmap": "Greys", "interpolation": "none", "zorder": 0}
        ax.imshow(shade, extent=extent, vmin=0.0, vmax=max(shade.max(), 1.0) * 1.8, **kw)
        curves, at = T["curves"], T["at_eval"]
        for arm, z, line, point in (
            ("control", 2, _CONTROL_LINE, {**_CONTROL_DOT, "color": CONTROL["color"]}),
            ("reimpl", 3, {"color": REIMPL["color"], "lw": 1.6}, DOT),
            ("upstream", 4, {"color": UPSTREAM["color"], "lw": 1.4, "ls": (0, (4, 2))}, {**RING, "ms": 8}),
        ):
            if curves.get(arm) is not None:
                ax.plot(zs, np.array(curves[arm], dtype=float), zorder=z, **line)
            if at.get(arm) is not None:
                ax.plot([z_eval], [at[arm]], ls="none", zorder=z + 3, **point)
        ax.axvline(z_eval, color="0.55", lw=0.7, ls="--", zorder=1)
        if at.get("paper") is not None:
            ax.plot([z_eval], [at["paper"]], ls="none", zorder=8, **CROSS)
        ax.set_title(label)
        lines = [f"paper {at['paper_text']}"] if at.get("paper_text") else []
        lines += [f"mine {fmt(at.get('reimpl'), 4)}", f"authors' {fmt(at.get('upstream'), 4)}"]
        kw = {"transform": ax.transAxes, "ha": "left", "va": "top", "fontsize": 7, "color": "0.2", "linespacing": 1.25}
        ax.text(0.03, 0.97, "\n".join(lines), **kw)
        ax.set_xlim(extent[0], extent[1])
        ax.set_ylim(extent[2], extent[3])
    for ax in axes.flat[len(labels) :]:
        ax.set_axis_off()
    for ax in axes[-1]:
        ax.set_xlabel(Z_LABEL)
    for ax in axes[:, 0]:
        ax.set_ylabel("score (accuracy)")
    from matplotlib.patches import Patch

    tau = P["tau"]
    handles = arm_handles(
        record,
        {"lw": 1.6, "ls": "-", "label": f"τ = {tau:g} boundary, re-implementation"},
        {"lw": 1.4, "ms": 8, "mew": 1.0, "ls": (0, (4, 2))},
    )
    if has_paper := P.get("has_paper", True):
        handles += legend_handles({**CROSS, "ls": "none", "label": f"the paper's value at {P['budget']}"})
    if ctl is not None:
        handles += legend_handles({**_CONTROL_LINE, **_CONTROL_DOT, "label": f"τ = {ctl['tau']:g} control"})
    d = P["tasks"][labels[0]]["density"]
    cell = f"{(d['x'][1] - d['x'][0]) / d['x'][2]:.2g} × {(d['y'][1] - d['y'][0]) / d['y'][2]:.2g}"
    handles.append(Patch(color="0.75", label=f"models (counts on a {cell} grid of z and score)"))
    fig.legend(handles=handles, loc="outside lower center", ncol=3, frameon=False)
    n = sum(T["density"]["n"] for T in P["tasks"].values()) // len(labels)
    caption = (
        f"Each benchmark's boundary at {P['budget']} (dashed vertical line, z = {z_eval:g}): look at "
        + (f"whether both arms' τ = {tau:g} curves pass through the paper's ×" if has_paper else "the two arms' curves")
        + (f" and how far the τ = {ctl['tau']:g} control moves them" if ctl else "")
        + f"; grey shading is the ~{n} models' density (counts on a grid, not the points)."
    )
    return [done(record, "boundaries", fig, caption=caption, section="result", missing=missing)]
