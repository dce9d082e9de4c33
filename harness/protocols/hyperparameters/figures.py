"""Figures of ``hyperparameters``: the one-at-a-time sweeps of τ, κ and λ."""

from __future__ import annotations

import math

import numpy as np

from ...core.quantities import budget_text
from ...core.record import Figure, Record
from ...rendering.figures import CONTROL, REIMPL, UPSTREAM, arm_legend, done, new_figure, upstream_missing
from . import quantities as Q

_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
_CONTROL_NOTE = {"textcoords": "offset points", "ha": "center", "va": "top", "fontsize": 6.5, "color": CONTROL["color"]}


def _tick(x: float) -> str:
    """A grid value for a tick: ``10⁻⁴`` for a small power of ten, else the shortest form (``0.98``, ``50``)."""
    if 0 < x < 0.01:
        e = math.log10(x)
        if abs(e - round(e)) < 1e-9:
            return "10" + str(int(round(e))).translate(_SUPERSCRIPT)
    return f"{x:g}"


def _position(value: float, grid: list[float], xs) -> float:
    """Where a value goes on a sweep's axis of grid positions: beside the grid value it equals, between the two
    it lies between, or beyond the end it lies past, so that a control sits in order with the sweep."""
    order = sorted(range(len(grid)), key=lambda i: grid[i])
    g, x = [grid[i] for i in order], [float(xs[i]) for i in order]
    if value < g[0]:
        return x[0] - 0.8
    if value > g[-1]:
        return x[-1] + 0.8
    exact = [x[i] for i, v in enumerate(g) if math.isclose(v, value)]
    return exact[0] + 0.25 if exact else float(np.interp(value, g, x))


def draw(record: Record, plots: dict) -> list[tuple[Figure, bytes]]:
    """The one-at-a-time sweeps of a ``hyperparameters`` record: each setting's largest distance from the
    reference (Table 1), both arms, and the tau_override controls'."""
    p, up = record.claim.params, record.arms.upstream
    setting, within, budget = {k: p[k] for k in Q.HYPER_SYMBOLS}, p["within"], budget_text(p["eval_x"])
    grids = {param: p[f"{param}_grid"] for param in Q.HYPER_SYMBOLS}
    arms = {"reimpl": record.arms.reimpl.values, "upstream": up.values if up.ok else {}}
    devs = {  # each arm's largest distance at each setting of each sweep
        param: {arm: [v.get(Q.sweep(param, x, "max_dev")) for x in grid] for arm, v in arms.items()}
        for param, grid in grids.items()
    }
    controls = [
        (c.params["tau"], record.arms.reimpl.controls[c.id].values[Q.claimed("max_dev")])
        for c in record.controls
        if c.control == "tau_override" and c.reimpl.ran
    ]
    fig = new_figure(7.6, 3.2)
    axes = fig.subplots(1, len(grids), sharey=True, squeeze=False)[0]
    positive = [d for by_arm in devs.values() for ds in by_arm.values() for d in ds if (d or 0) > 0]
    floor = min(positive + [within]) / 3  # the log scale's floor, for a distance of zero
    for ax, (param, grid) in zip(axes, grids.items()):
        xs = np.arange(len(grid), dtype=float)
        sym = Q.HYPER_SYMBOLS[param]
        for i in [i for i, x in enumerate(grid) if x == setting[param]]:
            ax.axvspan(i - 0.35, i + 0.35, color="#e8f0e0", zorder=0)
        for arm, line in (
            ("reimpl", {"color": REIMPL["color"], "ms": 5, "mfc": REIMPL["color"], "ls": "-", "zorder": 5}),
            ("upstream", {"color": UPSTREAM["color"], "ms": 8, "mfc": "none", "ls": (0, (4, 2)), "zorder": 4}),
        ):
            ys = np.array([max(d, floor) if d is not None else np.nan for d in devs[param][arm]])
            if not np.all(np.isnan(ys)):
                ax.plot(xs, ys, marker="o", lw=0.9, **line)
        for tau, dev in controls if param == "tau" else []:
            x, y = _position(tau, grid, xs), max(dev, floor)
            ax.plot([x], [y], marker="s", ms=5, color=CONTROL["color"], ls="none", zorder=6)
            ax.annotate(f"control\nτ = {tau:g}", (x, y), xytext=(0, -8), **_CONTROL_NOTE)
        ax.axhline(within, color="#a03020", lw=0.9, ls="--", zorder=2)
        ax.set_yscale("log")
        ax.set_xticks(xs, [_tick(x) for x in grid])
        ax.set_xlabel(f"{sym} (claimed {_tick(setting[param])}, shaded)")
        outside = [_position(tau, grid, xs) for tau, _ in controls] if param == "tau" else []
        ax.set_xlim(min([-0.5, *(x - 0.6 for x in outside)]), max([xs[-1] + 0.5, *(x + 0.6 for x in outside)]))
        fixed = ", ".join(f"{Q.HYPER_SYMBOLS[k]} = {_tick(x)}" for k, x in setting.items() if k != param)
        ax.set_title(f"{sym} swept ({fixed})", fontsize=8.5)
    axes[0].set_ylabel(f"largest |boundary − reference|\nat {budget}")
    kw = {"transform": axes[0].get_yaxis_transform(), "va": "bottom", "fontsize": 7, "color": "#a03020"}
    axes[0].text(0.02, within, f" reach {within:g}", **kw)
    reach = {"color": "#a03020", "ls": "--", "label": f"the claim's reach: within {within:g} of every reference value"}
    control = {"color": CONTROL["color"], "marker": "s", "ms": 5, "ls": "none", "label": "τ-override control"}
    theirs = {"ms": 8, "mew": 1.0, "ls": (0, (4, 2))}
    arm_legend(fig, record, reach, control if controls else None, mine={"ls": "-"}, theirs=theirs)
    missing = upstream_missing(record, "the authors' sweeps")
    caption = (
        f"One-at-a-time sweeps of τ, κ and λ: the largest distance of the boundaries at {budget} "
        f"from the claim's reference values (log scale); look at which settings come within {within:g}, the claimed "
        "one shaded."
    )
    return [done(record, "sweeps", fig, caption=caption, section="result", missing=missing)]
