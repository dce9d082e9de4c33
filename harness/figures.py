"""Figures of a report, drawn with matplotlib (Agg) from its run record alone.

:func:`draw_figures` returns ``[(Figure, svg bytes), ...]`` for a record; the
caller writes them under ``reports/figures/<claim id>/`` beside the report.
Each protocol registers its drawing functions in :data:`FIGURES`; a protocol
without any gets no figure.

What a figure needs is in ``record.plots`` (written by the protocol's
``plots`` method during the run), in the arms' values and in the judged
targets and controls, so ``python -m harness render`` redraws every figure
without data, protocols or scipy. A drawing function draws what the record
has: an arm that did not run, a control that was not run, leave their marks
out and the figure says so in :attr:`~harness.record.Figure.missing`; a
record without plot data (the re-implementation did not run) gets no figure.

Byte-identical SVG for the same record and package versions: matplotlib's
own defaults (no user ``matplotlibrc``), :data:`RC` on top (a fixed
``svg.hashsalt``, text as text in DejaVu Sans metrics), no date or creator
metadata, no pyplot and so no global figure state.

The record stays modest: a scatter of thousands of models is stored as a
2-D histogram in compact text rows (:func:`read_density` reads it) and drawn
as a light density image; a curve is its values on a grid stored by its ends.
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from .record import Figure, Record

__all__ = ["draw_figures", "FIGURES", "RC", "MAX_SVG_BYTES", "read_density", "figures_for"]

#: protocol name -> functions ``f(record) -> list[(Figure, bytes)]``.
FIGURES: dict[str, list[Callable[[Record], list[tuple[Figure, bytes]]]]] = {}

#: A figure larger than this is a bug (a scatter that should have been a density); the tests check it.
MAX_SVG_BYTES = 200_000

#: rcParams on top of matplotlib's defaults for every figure.
RC: dict[str, Any] = {
    "svg.hashsalt": "claim-audit-harness",
    "svg.fonttype": "none",  # text stays text; its layout uses DejaVu Sans (shipped with matplotlib)
    "svg.image_inline": True,
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans", "Arial", "Helvetica", "Liberation Sans"],
    "font.size": 9.0,
    "axes.titlesize": 9.5,
    "axes.labelsize": 9.0,
    "legend.fontsize": 8.0,
    "xtick.labelsize": 8.0,
    "ytick.labelsize": 8.0,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "figure.dpi": 100,
    "savefig.dpi": 100,
    "path.simplify": True,
    "axes.unicode_minus": True,
}

#: How each arm, the paper and a control look in every figure.
REIMPL = {"color": "#1f6fb4", "label": "re-implementation"}
UPSTREAM = {"color": "#e07b00", "label": "authors' code"}
PAPER = {"color": "black", "label": "paper"}
CONTROL = {"color": "#6d6d6d"}
DRIFT_COLORS = ["#c0392b", "#e67e22", "#8e2c48", "#d4a017"]
STABLE_COLORS = ["#2c7fb8", "#41ab5d", "#756bb1", "#17becf", "#636363", "#1b9e77"]
Z_LABEL = "z = log₁₀(FLOPs / 10²¹)"


def figures_for(protocol: str):
    """Register a drawing function ``f(record) -> list[(Figure, bytes)]`` for ``protocol``."""

    def deco(fn):
        FIGURES.setdefault(protocol, []).append(fn)
        return fn

    return deco


def draw_figures(record: Record) -> list[tuple[Figure, bytes]]:
    """Every figure of ``record`` (none when the claim file turns figures off or the record has no plot data)."""
    if not record.claim.figures or not record.plots:
        return []
    out = []
    for draw in FIGURES.get(record.claim.protocol, []):
        with _style():
            out += draw(record)
    return out


# -- what the protocols store ----------------------------------------------------------------------------
#
# A grid is ``[lo, hi, n]`` (``numpy.linspace(lo, hi, n)``); a density is a 2-D histogram
# ``{"x": [lo, hi, nx], "y": [lo, hi, ny], "n", "inside", "rows"}`` with ``rows[j]`` the counts of the ``j``-th
# y bin from the bottom as space-separated integers, trailing zeros left out (written by the protocols'
# ``plots``, which do not import this module, so that a change of drawing redraws and does not rerun).


def _linspace(g) -> np.ndarray:
    return np.linspace(float(g[0]), float(g[1]), int(g[2]))


def read_density(d: dict) -> tuple[np.ndarray, list[float]]:
    """A stored density's counts as an array ``(ny, nx)`` (bottom row first) and its extent."""
    nx, ny = int(d["x"][2]), int(d["y"][2])
    counts = np.zeros((ny, nx))
    for j, row in enumerate(d["rows"]):
        vals = [int(c) for c in row.split()]
        counts[j, : len(vals)] = vals
    return counts, [d["x"][0], d["x"][1], d["y"][0], d["y"][1]]


# -- drawing ---------------------------------------------------------------------------------------------


@contextmanager
def _style() -> Iterator[None]:
    import matplotlib
    import matplotlib.style

    with matplotlib.style.context("default"), matplotlib.rc_context(RC):
        yield


def _new(width: float, height: float):
    """A figure without pyplot (no global state), constrained layout."""
    from matplotlib.backends.backend_svg import FigureCanvasSVG
    from matplotlib.figure import Figure as MplFigure

    fig = MplFigure(figsize=(width, height), layout="constrained")
    FigureCanvasSVG(fig)
    return fig


def _svg(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    return buf.getvalue()


def _done(
    record: Record, name: str, fig, *, caption: str, section: str, missing: list[str] | None = None
) -> tuple[Figure, bytes]:
    path = f"figures/{record.claim.id}/{name}.svg"
    return Figure(name=name, path=path, caption=caption, section=section, missing=missing or []), _svg(fig)


def _upstream_missing(record: Record, what: str) -> list[str]:
    """``[what (why)]`` when the authors' arm did not run, else ``[]``."""
    up = record.arms.upstream
    if up.ok:
        return []
    return [f"{what} (the authors' arm {'was not run' if up.status == 'not run' else 'could not run'})"]


def _upstream_label(record: Record, label: str = UPSTREAM["label"]) -> str:
    """The authors' arm's legend entry, saying so when it did not run."""
    return label if record.arms.upstream.ok else "authors' code: did not run"


def _fmt(x, digits: int = 3) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def _val(x) -> float:
    """A recorded number for plotting (``nan`` for a missing one)."""
    return float("nan") if x is None else float(x)


def _legend_handles(*specs):
    from matplotlib.lines import Line2D

    return [Line2D([], [], **s) for s in specs]


# -- boundary_at_budget ----------------------------------------------------------------------------------


@figures_for("boundary_at_budget")
def _boundaries(record: Record) -> list[tuple[Figure, bytes]]:
    P = record.plots
    labels = list(P.get("tasks", {}))
    if not labels:
        return []
    ncols = min(3, len(labels))
    nrows = math.ceil(len(labels) / ncols)
    fig = _new(3.0 * ncols + 0.4, 2.45 * nrows + 0.55)
    axes = fig.subplots(nrows, ncols, squeeze=False, sharex=True, sharey=True)
    zs, z_eval, ctl = _linspace(P["z_grid"]), P["z_eval"], P.get("control")
    missing = _upstream_missing(record, "the authors' boundaries")
    if record.arms.upstream.ok and any(P["tasks"][x]["curves"].get("upstream") is None for x in labels):
        missing.append("some of the authors' boundary curves (their arm reports no fitted parameters for them)")
    if ctl is None:
        missing.append("a τ-override control curve (no such control ran)")
    for ax, label in zip(axes.flat, labels):
        T = P["tasks"][label]
        counts, extent = read_density(T["density"])
        shade = np.log1p(counts)
        ax.imshow(
            shade,
            origin="lower",
            extent=extent,
            aspect="auto",
            cmap="Greys",
            interpolation="none",
            vmin=0.0,
            vmax=max(shade.max(), 1.0) * 1.8,
            zorder=0,
        )
        curves, at = T["curves"], T["at_eval"]
        if curves.get("control") is not None:
            ax.plot(zs, np.array(curves["control"], dtype=float), color=CONTROL["color"], ls=":", lw=1.3, zorder=2)
        if curves.get("reimpl") is not None:
            ax.plot(zs, np.array(curves["reimpl"], dtype=float), color=REIMPL["color"], lw=1.6, zorder=3)
        if curves.get("upstream") is not None:
            ax.plot(
                zs, np.array(curves["upstream"], dtype=float), color=UPSTREAM["color"], lw=1.4, ls=(0, (4, 2)), zorder=4
            )
        ax.axvline(z_eval, color="0.55", lw=0.7, ls="--", zorder=1)
        if at.get("control") is not None:
            ax.plot([z_eval], [at["control"]], "o", ms=4, color=CONTROL["color"], zorder=5)
        if at.get("reimpl") is not None:
            ax.plot([z_eval], [at["reimpl"]], "o", ms=5, color=REIMPL["color"], zorder=6)
        if at.get("upstream") is not None:
            ax.plot([z_eval], [at["upstream"]], "o", ms=8, mfc="none", mec=UPSTREAM["color"], mew=1.3, zorder=7)
        if at.get("paper") is not None:
            ax.plot([z_eval], [at["paper"]], "x", ms=7, mew=1.6, color=PAPER["color"], zorder=8)
        ax.set_title(label)
        lines = [
            f"paper {at['paper_text']}" if at.get("paper_text") else "paper —",
            f"mine {_fmt(at.get('reimpl'), 4)}",
            f"authors' {_fmt(at.get('upstream'), 4)}",
        ]
        ax.text(
            0.03,
            0.97,
            "\n".join(lines),
            transform=ax.transAxes,
            ha="left",
            va="top",
            fontsize=7,
            color="0.2",
            linespacing=1.25,
        )
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
    handles = _legend_handles(
        {
            "color": REIMPL["color"],
            "lw": 1.6,
            "marker": "o",
            "ms": 5,
            "label": f"τ = {tau:g} boundary, re-implementation",
        },
        {
            "color": UPSTREAM["color"],
            "lw": 1.4,
            "ls": (0, (4, 2)),
            "marker": "o",
            "ms": 8,
            "mfc": "none",
            "label": _upstream_label(record),
        },
        {
            "color": PAPER["color"],
            "ls": "none",
            "marker": "x",
            "ms": 7,
            "mew": 1.6,
            "label": f"paper (Table 1) at {P['budget']}",
        },
    )
    if ctl is not None:
        handles += _legend_handles(
            {
                "color": CONTROL["color"],
                "lw": 1.3,
                "ls": ":",
                "marker": "o",
                "ms": 4,
                "label": f"control {ctl['id']}: τ = {ctl['tau']:g}",
            }
        )
    d = P["tasks"][labels[0]]["density"]
    cell = f"{(d['x'][1] - d['x'][0]) / d['x'][2]:.2g} × {(d['y'][1] - d['y'][0]) / d['y'][2]:.2g}"
    handles.append(Patch(color="0.75", label=f"models (counts on a {cell} grid of z and score)"))
    fig.legend(handles=handles, loc="outside lower center", ncol=3, frameon=False)
    n = sum(T["density"]["n"] for T in P["tasks"].values()) // len(labels)
    caption = (
        f"Each benchmark's boundary at {P['budget']} (dashed vertical line, z = {z_eval:g}): look at whether "
        f"both arms' τ = {tau:g} curves pass through the paper's ×"
        + (f" and how far the τ = {ctl['tau']:g} control moves it" if ctl else "")
        + f"; grey shading is the ~{n} models' density (counts on a grid, not the points)."
    )
    return [_done(record, "boundaries", fig, caption=caption, section="result", missing=missing)]


# -- shift_test ------------------------------------------------------------------------------------------


@figures_for("shift_test")
def _shift_null(record: Record) -> list[tuple[Figure, bytes]]:
    P = record.plots
    null = P.get("null")
    if not null:
        return []
    fig = _new(7.2, 4.6)
    ax = fig.add_subplot()
    edges = _linspace([null["edges"][0], null["edges"][1], null["edges"][2] + 1])
    counts = np.asarray(null["counts"], dtype=float)
    g = P["gamma"]["reimpl"]
    centres = (edges[:-1] + edges[1:]) / 2
    tail = centres >= g
    ax.bar(
        centres,
        counts,
        width=np.diff(edges),
        color="0.78",
        edgecolor="none",
        label=f"permutation null ({P['n_perm']} label permutations within {P['n_bins']} strata)",
    )
    ax.bar(
        centres[tail],
        counts[tail],
        width=np.diff(edges)[tail],
        color="#9ecae1",
        edgecolor="none",
        label=f"permuted γ ≥ observed: p = {P['p_value']['reimpl']:.3f}",
    )
    top = counts.max() if counts.size else 1.0
    ax.axvline(0.0, color="0.3", lw=0.6)
    ax.axvline(g, color=REIMPL["color"], lw=2.0, label=f"observed γ = {g:.3f} (re-implementation)")
    ax.axvline(
        P["null_mean"]["reimpl"],
        color="black",
        lw=1.2,
        ls="--",
        label=f"null centre (mean permuted γ) {P['null_mean']['reimpl']:.3f}",
    )
    missing = []
    if P["gamma"].get("upstream") is not None:
        ax.axvline(
            P["gamma"]["upstream"],
            color=UPSTREAM["color"],
            lw=1.4,
            ls=(0, (4, 2)),
            label=f"authors' code: γ = {P['gamma']['upstream']:.3f}, p = {_fmt(P['p_value']['upstream'])}",
        )
        if P["null_mean"].get("upstream") is not None:
            ax.plot(
                [P["null_mean"]["upstream"]],
                [top * 1.02],
                "v",
                color=UPSTREAM["color"],
                ms=6,
                label=f"authors' null centre {P['null_mean']['upstream']:.3f}",
            )
    else:
        missing += _upstream_missing(record, "the authors' γ and null centre")
    for c in P.get("controls", []):
        if c["kind"] == "inflate_post":
            ax.axvline(
                c["gamma"],
                color="#2ca02c",
                lw=1.4,
                ls="-.",
                label=f"control {c['id']} (+{c['shift']:g} planted): γ = {c['gamma']:.3f}, p = {c['p_value']:.4f}",
            )
        elif c["kind"] == "relabel_groups":
            ax.errorbar(
                [c["mean"]],
                [top * 1.12],
                xerr=[c["sd"]],
                fmt="s",
                color="#9467bd",
                ms=5,
                capsize=3,
                label=f"control {c['id']}: mean γ ± sd over {c['n']} random labellings",
            )
    ax.set_ylim(0, top * 1.2)
    ax.set_xlabel("γ, post-release shift of logit(AIME-2025) at fixed logit(MATH-500) (logits)")
    ax.set_ylabel("permutations (count)")
    fig.legend(loc="outside lower center", ncol=2, frameon=False, fontsize=7.5)
    inflate = next((c for c in P.get("controls", []) if c["kind"] == "inflate_post"), None)
    caption = (
        "The observed γ against its stratified permutation null: look at how far the null's centre sits "
        "from zero and how much of the null lies beyond the observed γ (the p-value)"
        + (
            f"; the planted-shift control's γ is tested against its own null (centre "
            f"{inflate['null_mean']:.2f}), not this one"
            if inflate
            else ""
        )
        + "."
    )
    return [_done(record, "null", fig, caption=caption, section="result", missing=missing)]


@figures_for("shift_test")
def _shift_eps(record: Record) -> list[tuple[Figure, bytes]]:
    P = record.plots
    sens = P.get("eps_sensitivity")
    if not sens or not sens.get("reimpl"):
        return []
    fig = _new(7.2, 2.8)
    ax_g, ax_p = fig.subplots(1, 2)
    missing = [] if sens.get("upstream") else _upstream_missing(record, "the authors' ε table")
    for rows, style in ((sens["reimpl"], REIMPL), (sens.get("upstream") or [], UPSTREAM)):
        if not rows:
            continue
        e = [r["eps"] for r in rows]
        hollow = style is UPSTREAM
        kw = {
            "color": style["color"],
            "marker": "o",
            "ms": 8 if hollow else 5,
            "mfc": "none" if hollow else None,
            "ls": (0, (4, 2)) if hollow else "-",
            "lw": 1.2,
            "label": style["label"],
        }
        ax_g.plot(e, [r["gamma"] for r in rows], **kw)
        ax_p.plot(e, [r["p_value"] for r in rows], **kw)
    ax_p.axhline(P["alpha"], color="black", lw=0.8, ls="--", label=f"α = {P['alpha']:g}")
    for ax in (ax_g, ax_p):
        ax.set_xscale("log")
        ax.set_xlabel("ε, clip of the scores before the logit")
        ax.axvline(P["eps"], color="0.6", lw=0.7, ls=":")
    ax_g.set_ylabel("γ (logits)")
    ax_p.set_ylabel("one-sided permutation p-value")
    ax_p.set_ylim(0, max(0.3, max(r["p_value"] for r in sens["reimpl"]) * 1.2))
    ax_p.legend(frameon=False, loc="best")
    caption = (
        f"How the clip ε of scores at 0 or 100% moves γ (left) and its p-value (right); the claim's "
        f"ε = {P['eps']:g} is the dotted line: look at whether p crosses α = {P['alpha']:g} anywhere."
    )
    return [_done(record, "eps_sensitivity", fig, caption=caption, section="result", missing=missing)]


@figures_for("shift_test")
def _shift_power(record: Record) -> list[tuple[Figure, bytes]]:
    P = record.plots
    pw = P.get("power")
    if not pw:
        return []
    fig = _new(6.4, 3.2)
    ax = fig.add_subplot()
    for key, style, label in (
        ("linear", {"color": REIMPL["color"], "ls": "-", "marker": "o"}, "residual bootstrap of the fitted Equation 3"),
        (
            "strata",
            {"color": "0.45", "ls": "--", "marker": "s"},
            "sensitivity version: one intercept per stratum (◇ at its own γ)",
        ),
    ):
        cur = pw[key]
        s, pv, se = (np.asarray(cur[k], dtype=float) for k in ("shifts", "power", "mc_se"))
        ax.errorbar(s, pv, yerr=1.96 * se, capsize=2, ms=4, lw=1.2, label=label, **style)
        at = cur["at_observed"]
        ax.plot([at["shift"]], [at["power"]], marker="D", ms=7, mfc="white", mec=style["color"], mew=1.4, ls="none")
    at = pw["linear"]["at_observed"]
    ax.axhline(pw["target"], color="black", lw=0.8, ls="--", label=f"target power {pw['target']:.0%}")
    ax.axhline(P["alpha"], color="0.5", lw=0.7, ls=":", label=f"α = {P['alpha']:g} (the rate at no shift)")
    ax.axvline(at["shift"], color=REIMPL["color"], lw=0.8, ls=":")
    ax.annotate(
        f"observed γ = {at['shift']:.2f}: power {at['power']:.0%}",
        (at["shift"], at["power"]),
        xytext=(8, -14),
        textcoords="offset points",
        fontsize=7.5,
        color=REIMPL["color"],
    )
    if pw["linear"].get("min_detectable") is not None:
        md = pw["linear"]["min_detectable"]
        ax.annotate(
            f"{pw['target']:.0%} power at c ≈ {md:.2f}",
            (md, pw["target"]),
            xytext=(8, -14),
            textcoords="offset points",
            fontsize=7.5,
        )
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("planted shift c (logits)")
    ax.set_ylabel(f"power (share of data sets with p < {P['alpha']:g})")
    ax.legend(frameon=False, loc="lower right", fontsize=7.5)
    caption = (
        f"Measured power of the test on its own design ({pw['n_replicates']} simulated data sets per planted "
        f"shift, bars ±1.96 Monte Carlo s.e.): look at the power at the observed γ (◇) against the "
        f"{pw['target']:.0%} line."
    )
    return [_done(record, "power", fig, caption=caption, section="after_controls")]


# -- temporal_coverage -----------------------------------------------------------------------------------


def _task_colors(P: dict) -> dict[str, str]:
    out = {x: DRIFT_COLORS[i % len(DRIFT_COLORS)] for i, x in enumerate(P["drift"])}
    out.update({x: STABLE_COLORS[i % len(STABLE_COLORS)] for i, x in enumerate(P["stable"])})
    return out


def _pp(values) -> np.ndarray:
    """Shares as percentage points (``nan`` for a missing one)."""
    return 100.0 * np.array([_val(x) for x in values], dtype=float)


def _coverage_panel(ax, P: dict, colors: dict, keys: tuple[str, str, str, str], title: str) -> None:
    """Signed coverage error per split (lines) and its mean (◆), both arms, for one reading of coverage."""
    per_split, per_split_up, mean, mean_up = keys
    splits, order = P["splits"], P["drift"] + P["stable"]
    n = len(splits)
    xs, x_mean = np.arange(n, dtype=float), n + 0.6
    ax.axhspan(-100, 0, color="#fbe3e0", zorder=0)
    ax.axhline(0, color="black", lw=0.8, zorder=1)
    ax.axvline(n - 0.2, color="0.6", lw=0.6)
    jitter = np.linspace(-0.12, 0.12, len(order)) if len(order) > 1 else np.zeros(1)
    for j, x in zip(jitter, order):
        T, c = P["tasks"][x], colors[x]
        drift = T["group"] == "drift"
        style = {"color": c, "lw": 2.0 if drift else 1.1, "ls": "-" if drift else (0, (4, 2))}
        ax.plot(xs + j, _pp(T[per_split]), marker="o", ms=5, label=f"{x} ({T['group']})", zorder=3, **style)
        ax.plot([x_mean + j], [100 * _val(T[mean])], marker="D", ms=6, color=c, ls="none", zorder=3)
        if T.get(per_split_up) is not None:
            ax.plot(xs + j, _pp(T[per_split_up]), marker="o", ms=9, mfc="none", mec=c, mew=1.1, ls="none", zorder=4)
        if T.get(mean_up) is not None:
            ax.plot(
                [x_mean + j], [100 * T[mean_up]], marker="D", ms=10, mfc="none", mec=c, mew=1.1, ls="none", zorder=4
            )
    ax.set_xticks(
        list(xs) + [x_mean],
        [
            f"{s['train']} → {s['val']}\n(n = {s['n']:.0f})" if s.get("n") is not None else f"{s['train']} → {s['val']}"
            for s in splits
        ]
        + ["mean"],
    )
    ax.set_xlim(-0.45, x_mean + 0.45)
    ax.set_title(title)


@figures_for("temporal_coverage")
def _coverage_by_split(record: Record) -> list[tuple[Figure, bytes]]:
    P = record.plots
    if not P.get("tasks"):
        return []
    colors = _task_colors(P)
    binned = all(T.get("bin_averaged") is not None for T in P["tasks"].values())
    fig = _new(8.6 if binned else 7.4, 4.3)
    axes = fig.subplots(1, 2 if binned else 1, sharey=True, squeeze=False)[0]
    _coverage_panel(
        axes[0], P, colors, ("reimpl", "upstream", "mean", "mean_upstream"), "pooled over models (the claim)"
    )
    if binned:
        _coverage_panel(
            axes[1],
            P,
            colors,
            ("bin_averaged", "bin_averaged_upstream", "bin_averaged_mean", "bin_averaged_mean_upstream"),
            "bin-averaged (the paper's Figure 2)",
        )
    keys = ("reimpl", "upstream", "bin_averaged", "bin_averaged_upstream") if binned else ("reimpl", "upstream")
    values = [100 * _val(v) for T in P["tasks"].values() for k in keys for v in (T.get(k) or [])]
    values = [v for v in values if math.isfinite(v)]
    lo, hi = min(values + [0.0]), max(values + [0.0])
    pad = 0.08 * (hi - lo or 1.0)
    axes[0].set_ylim(lo - pad, hi + pad)
    axes[0].set_ylabel("signed coverage error, coverage − τ (percentage points)")
    fig.supxlabel("rolling split: fit on one period → test on the next (validation models)", fontsize=8)
    axes[-1].text(
        0.98,
        0.02,
        "below 0: more of the next period's models\nlie above the boundary than 1 − τ allows",
        transform=axes[-1].transAxes,
        fontsize=7,
        color="#a03020",
        va="bottom",
        ha="right",
    )
    handles, _ = axes[0].get_legend_handles_labels()
    handles += _legend_handles(
        {"color": "0.3", "ls": "none", "marker": "o", "ms": 5, "label": "re-implementation"},
        {
            "color": "0.3",
            "ls": "none",
            "marker": "o",
            "ms": 9,
            "mfc": "none",
            "label": _upstream_label(record, "authors' code (hollow)"),
        },
    )
    fig.legend(handles=handles, loc="outside right upper", frameon=False)
    missing = _upstream_missing(record, "the authors' values")
    if binned and record.arms.upstream.ok and not any(T.get("bin_averaged_upstream") for T in P["tasks"].values()):
        missing.append("the authors' bin-averaged values per split (their arm reports only the means)")
    caption = (
        f"Out-of-period signed coverage error of each benchmark's τ = {P['tau']:g} boundary per rolling split "
        f"and its mean (◆), both arms"
        + (
            ", pooled over models (left) and averaged over compute bins as in the paper's Figure 2 (right)"
            if binned
            else ""
        )
        + ": look at whether the drift benchmarks (solid) fall below zero on every split while the stable "
        "ones (dashed) stay above it."
    )
    return [_done(record, "coverage_by_split", fig, caption=caption, section="result", missing=missing)]


@figures_for("temporal_coverage")
def _shuffled_time(record: Record) -> list[tuple[Figure, bytes]]:
    P = record.plots
    C = P.get("control")
    if not C:
        return []
    colors = _task_colors(P)
    order = P["drift"] + P["stable"]
    fig = _new(7.4, 3.3)
    ax, ax_s = fig.subplots(1, 2, width_ratios=[3.2, 1])
    xs = np.arange(len(order), dtype=float)
    for i, x in enumerate(order):
        T = P["tasks"][x]
        each = 100 * np.asarray(C["signed_each"][x], dtype=float)
        ax.plot(np.full(each.size, i + 0.15), each, "o", ms=3, color=CONTROL["color"], alpha=0.7)
        ax.plot([i + 0.15], [100 * C["signed"][x]], "_", ms=14, mew=2, color=CONTROL["color"])
        ax.plot([i - 0.15], [100 * T["mean"]], "D", ms=6, color=colors[x])
        if T.get("mean_upstream") is not None:
            ax.plot([i - 0.15], [100 * T["mean_upstream"]], "D", ms=10, mfc="none", mec=colors[x], mew=1.1)
        if C.get("upstream_signed") and C["upstream_signed"].get(x) is not None:
            ax.plot([i + 0.15], [100 * C["upstream_signed"][x]], "_", ms=14, mew=1.2, color=UPSTREAM["color"])
    ax.axhline(0, color="black", lw=0.8)
    ax.set_xticks(xs, [f"{x}\n({P['tasks'][x]['group']})" for x in order], fontsize=7.5)
    ax.set_ylabel("signed coverage error (pp)")
    sep_each = 100 * np.asarray(C["separation_each"], dtype=float)
    real = 100 * P["groups"]["separation"]
    ax_s.plot(np.full(sep_each.size, 1.0), sep_each, "o", ms=3, color=CONTROL["color"], alpha=0.7)
    ax_s.plot([1.0], [100 * C["separation"]], "_", ms=14, mew=2, color=CONTROL["color"])
    ax_s.plot([0.0], [real], "D", ms=6, color="black")
    if P["groups"].get("upstream_separation") is not None:
        ax_s.plot([0.0], [100 * P["groups"]["upstream_separation"]], "D", ms=10, mfc="none", mec="black", mew=1.1)
    if C.get("upstream_separation") is not None:
        ax_s.plot([1.0], [100 * C["upstream_separation"]], "_", ms=14, mew=1.2, color=UPSTREAM["color"])
    for cond in C.get("conditions", []):
        if cond["quantity"] == "separation" and cond["measure"] == "ratio" and cond["reference"] == "baseline":
            ax_s.axhline(real * cond["threshold"], color="#a03020", lw=0.8, ls="--")
            ax_s.text(
                0.5,
                real * cond["threshold"],
                f"must fall below\n{cond['threshold']:g} × real",
                fontsize=7,
                color="#a03020",
                va="bottom",
                ha="center",
            )
    ax_s.axhline(0, color="black", lw=0.8)
    ax_s.set_xlim(-0.5, 1.5)
    ax_s.set_xticks([0.0, 1.0], ["real", "shuffled"], fontsize=7.5)
    ax_s.set_ylabel("separation, stable − drift (pp)")
    handles = _legend_handles(
        {"color": "0.3", "marker": "D", "ms": 6, "ls": "none", "label": "real periods (hollow: authors' code)"},
        {
            "color": CONTROL["color"],
            "marker": "o",
            "ms": 3,
            "ls": "none",
            "label": f"each of {C['n']} relabellings (bar: mean)",
        },
        {
            "color": UPSTREAM["color"],
            "marker": "_",
            "ms": 14,
            "mew": 1.2,
            "ls": "none",
            "label": "authors' code: mean relabelled",
        },
    )
    fig.legend(handles=handles, loc="outside lower center", ncol=3, frameon=False)
    missing = [] if C.get("upstream_signed") else _upstream_missing(record, "the authors' relabelled values")
    caption = (
        f"Control {C['id']}: the period labels shuffled among the models; look at whether the drift "
        f"benchmarks' under-coverage and the stable − drift gap vanish once time is cut from the models."
    )
    return [_done(record, "shuffled_time", fig, caption=caption, section="controls", missing=missing)]


# -- estimator_comparison --------------------------------------------------------------------------------


@figures_for("estimator_comparison")
def _estimators(record: Record) -> list[tuple[Figure, bytes]]:
    P = record.plots
    rows = P.get("rows")
    if not rows:
        return []
    panels = (
        ("pinball", 1e3, f"mean smoothed pinball loss\n(×10⁻³, κ = {P['kappa']:g})"),
        ("calibration", 1.0, "calibration error\n(mean |coverage − τ| over bins)"),
    )
    lines = [(r, split) for r in rows for split in ("id", "ood")]
    fig = _new(7.6, 0.24 * len(lines) + 1.7)
    axes = fig.subplots(1, 2, sharey=True)
    ys = -np.arange(len(lines), dtype=float)
    n_est = sum(r["kind"] == "estimator" for r in rows)
    for ax, (metric, scale, xlabel) in zip(axes, panels):
        for y, (r, split) in zip(ys, lines):
            m = f"{metric}_{split}"
            if r.get("paper", {}).get(m) is not None:
                ax.plot([r["paper"][m] * scale], [y], "x", ms=7, mew=1.6, color=PAPER["color"], zorder=5)
            if r.get("upstream") and r["upstream"].get(m) is not None:
                ax.plot(
                    [r["upstream"][m] * scale], [y], "o", ms=9, mfc="none", mec=UPSTREAM["color"], mew=1.3, zorder=4
                )
            if r["reimpl"].get(m) is not None:
                ax.plot([r["reimpl"][m] * scale], [y], "o", ms=5, color=REIMPL["color"], zorder=6)
        for k in range(1, len(rows)):
            ax.axhline(ys[2 * k] + 0.5, color="0.85" if k != n_est else "0.4", lw=0.6 if k != n_est else 1.0)
        if len(rows) > n_est:
            ax.axhspan(ys[-1] - 0.5, ys[2 * n_est] + 0.5, color="0.95", zorder=0)
        ax.set_xlabel(xlabel)
        ax.grid(axis="x", color="0.9", lw=0.5)
    axes[0].set_yticks(
        ys,
        [
            ("OOD" if s == "ood" else f"{r['label']}{'' if r['kind'] == 'estimator' else ' (control)'}, ID")
            for r, s in lines
        ],
    )
    axes[0].set_ylim(ys[-1] - 0.6, 0.6)
    handles = _legend_handles(
        {"color": REIMPL["color"], "marker": "o", "ms": 5, "ls": "none", "label": REIMPL["label"]},
        {
            "color": UPSTREAM["color"],
            "marker": "o",
            "ms": 9,
            "mfc": "none",
            "mew": 1.3,
            "ls": "none",
            "label": _upstream_label(record),
        },
        {"color": PAPER["color"], "marker": "x", "ms": 7, "mew": 1.6, "ls": "none", "label": "paper (Table 2)"},
    )
    fig.legend(handles=handles, loc="outside lower center", ncol=3, frameon=False)
    missing = _upstream_missing(record, "the authors' values")
    shuffled = next((r for r in rows if r["kind"] == "shuffle_z"), None)
    if (
        shuffled
        and shuffled.get("upstream")
        and not any(
            shuffled["upstream"].get(m) is not None for m in ("pinball_ood", "calibration_id", "calibration_ood")
        )
    ):
        missing.append("the authors' shuffled-z values other than ID pinball (their arm reports only the ID advantage)")
    caption = (
        f"Each estimator's loss and calibration in distribution (fit period) and out of distribution (next "
        f"period), means over {P['n_pairs']} task-period pairs, with the sigmoid under each control (shaded): "
        f"look at the sigmoid against the I-spline on OOD calibration, and at how far the controls move it."
    )
    return [_done(record, "estimators", fig, caption=caption, section="result", missing=missing)]


# -- hyperparameters -------------------------------------------------------------------------------------


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _tick(x: float) -> str:
    """A grid value for a tick: ``10⁻⁴`` for a small power of ten, else the shortest form (``0.98``, ``50``)."""
    if 0 < x < 0.01:
        e = math.log10(x)
        if abs(e - round(e)) < 1e-9:
            return "10" + str(int(round(e))).translate(_SUPERSCRIPT)
    return f"{x:g}"


@figures_for("hyperparameters")
def _sweeps(record: Record) -> list[tuple[Figure, bytes]]:
    P = record.plots
    sweeps = P.get("sweeps")
    if not sweeps:
        return []
    fig = _new(7.6, 3.2)
    axes = fig.subplots(1, len(sweeps), sharey=True, squeeze=False)[0]
    within = P["within"]
    values = [
        r[arm]
        for rows in sweeps.values()
        for r in rows
        for arm in ("reimpl", "upstream")
        if r.get(arm) is not None and r[arm] > 0
    ]
    floor = min(values + [within]) / 3
    for ax, (param, rows) in zip(axes, sweeps.items()):
        xs = np.arange(len(rows), dtype=float)
        sym = P["symbols"].get(param, param)
        claimed = [i for i, r in enumerate(rows) if r["value"] == P["claimed"][param]]
        for i in claimed:
            ax.axvspan(i - 0.35, i + 0.35, color="#e8f0e0", zorder=0)
        for arm, style in (("reimpl", REIMPL), ("upstream", UPSTREAM)):
            ys = np.array([max(_val(r.get(arm)), floor) if r.get(arm) is not None else np.nan for r in rows])
            if np.all(np.isnan(ys)):
                continue
            hollow = arm == "upstream"
            ax.plot(
                xs,
                ys,
                marker="o",
                ms=8 if hollow else 5,
                mfc="none" if hollow else style["color"],
                color=style["color"],
                lw=0.9,
                ls=(0, (4, 2)) if hollow else "-",
                zorder=4 if hollow else 5,
            )
        for c in P.get("controls", []) if param == "tau" else []:
            ax.plot([xs[-1] + 0.8], [max(c["max_dev"], floor)], marker="s", ms=5, color=CONTROL["color"], ls="none")
            ax.annotate(
                f"control\n{c['id']}\n(τ = {c['tau']:g})",
                (xs[-1] + 0.8, max(c["max_dev"], floor)),
                xytext=(0, -8),
                textcoords="offset points",
                ha="center",
                va="top",
                fontsize=6.5,
                color=CONTROL["color"],
            )
        ax.axhline(within, color="#a03020", lw=0.9, ls="--", zorder=2)
        ax.set_yscale("log")
        ax.set_xticks(xs, [_tick(r["value"]) for r in rows])
        ax.set_xlabel(f"{sym} (claimed {_tick(P['claimed'][param])}, shaded)")
        ax.set_xlim(-0.5, xs[-1] + (1.4 if param == "tau" and P.get("controls") else 0.5))
        fixed = ", ".join(f"{P['symbols'].get(k, k)} = {_tick(x)}" for k, x in P["claimed"].items() if k != param)
        ax.set_title(f"{sym} swept ({fixed})", fontsize=8.5)
    axes[0].set_ylabel(f"largest |boundary − Table 1|\nat {P['budget']}")
    axes[0].text(
        0.02,
        within,
        f" reach {within:g}",
        transform=axes[0].get_yaxis_transform(),
        va="bottom",
        fontsize=7,
        color="#a03020",
    )
    handles = _legend_handles(
        {"color": REIMPL["color"], "marker": "o", "ms": 5, "label": REIMPL["label"]},
        {
            "color": UPSTREAM["color"],
            "marker": "o",
            "ms": 8,
            "mfc": "none",
            "ls": (0, (4, 2)),
            "label": _upstream_label(record),
        },
        {"color": "#a03020", "ls": "--", "label": f"the claim's reach: within {within:g} of every Table 1 cell"},
    )
    fig.legend(handles=handles, loc="outside lower center", ncol=3, frameon=False)
    missing = _upstream_missing(record, "the authors' sweeps")
    caption = (
        f"One-at-a-time sweeps of τ, κ and λ: the largest distance of the six boundaries at {P['budget']} "
        f"from Table 1 (log scale); look at whether only the claimed value (shaded) comes within {within:g}."
    )
    return [_done(record, "sweeps", fig, caption=caption, section="result", missing=missing)]
