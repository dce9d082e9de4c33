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
    arm_legend,
    done,
    fmt,
    new_figure,
    upstream_missing,
)
from ...stats.sigmoid import sigmoid_boundary
from . import quantities as Q

_CONTROL_LINE, _CONTROL_DOT = {"color": CONTROL["color"], "ls": ":", "lw": 1.3}, {"marker": "o", "ms": 4}


def _curve(fit: dict | None, zs) -> np.ndarray | None:
    """A fit's boundary on the grid ``zs`` (to 5 decimals), ``None`` without fitted parameters."""
    if not fit or "params" not in fit:
        return None
    q = fit["params"]
    return np.array([round(float(c), 5) for c in sigmoid_boundary(zs, q["y0"], q["L"], q["a"], q["beta"])])


def draw(record: Record, P: dict) -> list[tuple[Figure, bytes]]:
    """Each benchmark's boundary at the budget of a ``boundary_at_budget`` record, both arms and the control (none
    without plot data: the models' counts)."""
    if not P:
        return []
    labels, p, arms, extent = list(P["densities"]), record.claim.params, record.arms, P["extent"]
    ncols = min(3, len(labels))
    nrows = math.ceil(len(labels) / ncols)
    fig = new_figure(3.0 * ncols + 0.4, 2.45 * nrows + 0.55)
    axes = fig.subplots(nrows, ncols, squeeze=False, sharex=True, sharey=True)
    zs, z_eval = np.linspace(extent[0], extent[1], 81), math.log10(p["eval_x"])  # the boundaries' grid
    paper = {t.quantity: t for t in record.targets if t.relation == "~" and t.quantity.startswith("boundary.")}
    ctl = next((c for c in record.controls if c.control == "tau_override" and c.reimpl.ran), None)
    by_arm = {
        "control": arms.reimpl.controls[ctl.id] if ctl else None,
        "reimpl": arms.reimpl,
        "upstream": arms.upstream if arms.upstream.ok else None,
    }
    missing = upstream_missing(record, "the authors' boundaries")
    if arms.upstream.ok and any(_curve(arms.upstream.details.get("fits", {}).get(x), zs) is None for x in labels):
        missing.append("some of the authors' boundary curves (their arm reports no fitted parameters for them)")
    if ctl is None:
        missing.append("a τ-override control curve (no such control ran)")
    for ax, label in zip(axes.flat, labels):
        shade = np.log1p(np.array(P["densities"][label], dtype=float))
        kw = {"origin": "lower", "aspect": "auto", "cmap": "Greys", "interpolation": "none", "zorder": 0}
        ax.imshow(shade, extent=extent, vmin=0.0, vmax=max(shade.max(), 1.0) * 1.8, **kw)
        name, t = Q.boundary(label), paper.get(Q.boundary(label))
        for arm, z, line, point in (
            ("control", 2, _CONTROL_LINE, {**_CONTROL_DOT, "color": CONTROL["color"]}),
            ("reimpl", 3, {"color": REIMPL["color"], "lw": 1.6}, DOT),
            ("upstream", 4, {"color": UPSTREAM["color"], "lw": 1.4, "ls": (0, (4, 2))}, {**RING, "ms": 8}),
        ):
            a = by_arm[arm]
            curve = _curve(a.details.get("fits", {}).get(label), zs) if a else None
            if curve is not None:
                ax.plot(zs, curve, zorder=z, **line)
            if a and a.values.get(name) is not None:
                ax.plot([z_eval], [a.values[name]], ls="none", zorder=z + 3, **point)
        ax.axvline(z_eval, color="0.55", lw=0.7, ls="--", zorder=1)
        if t and t.paper is not None:
            ax.plot([z_eval], [t.paper], ls="none", zorder=8, **CROSS)
        ax.set_title(label)
        lines = [f"paper {t.paper_text}"] if t and t.paper_text else []
        mine, theirs = arms.reimpl.values.get(name), by_arm["upstream"] and by_arm["upstream"].values.get(name)
        lines += [f"mine {fmt(mine, 4)}", f"authors' {fmt(theirs, 4)}"]
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

    tau = p["tau"]
    mine = {"lw": 1.6, "ls": "-", "label": f"τ = {tau:g} boundary, re-implementation"}
    budget = Q.budget_text(p["eval_x"])
    cross = {**CROSS, "ls": "none", "label": f"the paper's value at {budget}"}
    control = {**_CONTROL_LINE, **_CONTROL_DOT, "label": f"τ = {ctl.params['tau']:g} control"} if ctl else None
    ny, nx = np.shape(P["densities"][labels[0]])
    cell = f"{(extent[1] - extent[0]) / nx:.2g} × {(extent[3] - extent[2]) / ny:.2g}"
    models = Patch(color="0.75", label=f"models (counts on a {cell} grid of z and score)")
    theirs = {"lw": 1.4, "ms": 8, "mew": 1.0, "ls": (0, (4, 2))}
    arm_legend(fig, record, paper and cross, control, models, mine=mine, theirs=theirs)
    n = int(sum(np.sum(d) for d in P["densities"].values())) // len(labels)
    caption = (
        f"Each benchmark's boundary at {budget} (dashed vertical line, z = {z_eval:g}): look at "
        + (f"whether both arms' τ = {tau:g} curves pass through the paper's ×" if paper else "the two arms' curves")
        + (f" and how far the τ = {ctl.params['tau']:g} control moves them" if ctl else "")
        + f"; grey shading is the ~{n} models' density (counts on a grid, not the points)."
    )
    return [done(record, "boundaries", fig, caption=caption, section="result", missing=missing)]
