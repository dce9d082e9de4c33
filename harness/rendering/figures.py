"""Figures of a report, drawn with matplotlib (Agg) when the claim runs: what every protocol shares."""

from __future__ import annotations

import io
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from ..claimfiles.multiverse_spec import same_value
from ..core.record import Figure, Record

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


def draw_figures(record: Record, plots: dict) -> list[tuple[Figure, bytes]]:
    """Every figure of ``record`` (none when the claim file turns figures off; none of the protocol's where the
    re-implementation did not measure every value it declares)."""
    from ..claimfiles.registry import PROTOCOLS

    if not record.claim.figures:
        return []
    out = []
    with style():
        if record.arms.reimpl.ok and not record.unmeasured:
            out += PROTOCOLS[record.claim.protocol].draw(record, plots)
        if record.multiverse is not None:
            out.append(specification_curve(record))
    return out


#: How a specification's reading looks in the specification curve (a claim of values only: one colour).
READING_STYLES = {
    "holds": {"color": "#1f6fb4", "label": "holds"},
    "fails": {"color": "#c0392b", "label": "fails"},
    "unsettled": {"color": "#e08a00", "label": "within noise"},
    None: {"color": "#7f7f7f", "label": "not judged"},
}
VALUES_ONLY = {"color": "#333333", "label": "specification"}


def _wrapped(text: str, width: int) -> str:
    return "\n".join(textwrap.wrap(text, width)) or text


def _curve_points(top, specs: list, judged: bool) -> None:
    """Each specification's estimate (and its interval, where the protocol gives one), coloured by reading."""
    xs = np.arange(len(specs))
    groups = [(READING_STYLES[r], [i for i, s in enumerate(specs) if s.reading == r]) for r in READING_STYLES]
    for style_, idx in groups if judged else [(VALUES_ONLY, list(range(len(specs))))]:
        if not idx:
            continue
        ys = [specs[i].curve for i in idx]
        if any(specs[i].curve_lo is not None for i in idx):
            err = [
                [y - val(specs[i].curve_lo) for y, i in zip(ys, idx)],
                [val(specs[i].curve_hi) - y for y, i in zip(ys, idx)],
            ]
            top.errorbar(xs[idx], ys, yerr=err, fmt="none", ecolor=style_["color"], elinewidth=0.9, alpha=0.6)
        top.scatter(xs[idx], ys, s=18, color=style_["color"], label=style_["label"], zorder=3)


def specification_curve(record: Record) -> tuple[Figure, bytes]:
    """The specification curve of the claim's analysis choices, as specr draws it: above, every analysis
    specification's estimate of the sorting quantity (with its interval where the protocol gives one), lowest
    first, coloured by how it reads the claim, the paper's specification ringed (and the paper's printed value
    as a line, where a value target gives one); below, for each specification, the alternative of each choice
    it takes. Other estimands are not on the curve (the report shows them apart)."""
    mv = record.multiverse
    ran = [s for s in mv.specifications if s.status == "ok" and s.curve is not None and not s.estimand]
    # ties in the sorting quantity put the paper's specification first, as the report's rank counts it (the
    # specifications strictly below it, plus one)
    order = sorted(range(len(ran)), key=lambda i: (ran[i].curve, not ran[i].paper, i))
    specs = [ran[i] for i in order]
    rows = [(c["name"], a) for c in mv.choices for a in c["alternatives"]]
    fig = new_figure(6.4, 2.9 + 0.17 * len(rows))
    top, bottom = fig.subplots(2, 1, sharex=True, height_ratios=[2.4, max(1.0, 0.2 * len(rows))])
    _curve_points(top, specs, judged=bool(mv.assertions))
    i = next((i for i, s in enumerate(specs) if s.paper), None)
    if i is not None:
        top.scatter([i], [specs[i].curve], s=90, facecolors="none", edgecolors="black", label="paper's specification")
        bottom.axvline(i, color="#bbbbbb", lw=6, zorder=0)
    printed = next((t["paper"] for t in mv.targets if t["quantity"] == mv.curve and t["paper"] is not None), None)
    if printed is not None:
        top.axhline(printed, color=PAPER["color"], lw=0.8, ls="--", label="paper's value")
    thresholds = sorted(
        {a["right"] for a in mv.assertions if a["left"] == mv.curve and not isinstance(a["right"], str)}
    )
    for i, t in enumerate(thresholds):  # what the claim reads the curve's quantity against
        top.axhline(t, color="#888888", lw=0.8, ls=":", label=None if i else "threshold the claim reads it against")
    label = mv.curve_label
    top.set_ylabel(_wrapped(label, 24) if len(label) <= 72 else "estimate (see the title)", fontsize=8)
    top.legend(loc="best", frameon=False, fontsize=7)
    interval = " with its interval" if any(s.curve_lo is not None for s in specs) else ""
    top.set_title(_wrapped(f"{len(specs)} specifications: {label}{interval}, lowest first", 72), fontsize=9)
    for r, (name, a) in enumerate(rows):
        cols = [i for i, s in enumerate(specs) if same_value(s.choices[name], a["value"])]
        bottom.scatter(cols, [r] * len(cols), s=10, marker="s", color="#333333")
    bottom.set_yticks(range(len(rows)))
    bottom.set_yticklabels([f"{name} = {a['text']}" for name, a in rows], fontsize=7)
    bottom.set_ylim(len(rows) - 0.5, -0.5)
    bottom.set_xlabel("specification (rank)")
    ticks = np.arange(len(specs))[:: 1 if len(specs) <= 30 else 5]
    bottom.set_xticks(ticks)
    bottom.set_xticklabels([str(i + 1) for i in ticks], fontsize=6)
    caption = (
        "Each analysis specification by the sorting quantity (ringed: the paper's), coloured by how it reads "
        "the claim, and below it the alternative of each choice it takes."
    )
    return done(record, "specification_curve", fig, caption=caption, section="multiverse")


# -- drawing ---------------------------------------------------------------------------------------------


@contextmanager
def style() -> Iterator[None]:
    import matplotlib
    import matplotlib.style

    with matplotlib.style.context("default"), matplotlib.rc_context(RC):
        yield


def new_figure(width: float, height: float):
    """A figure without pyplot (no global state), constrained layout."""
    from matplotlib.backends.backend_svg import FigureCanvasSVG
    from matplotlib.figure import Figure as MplFigure

    fig = MplFigure(figsize=(width, height), layout="constrained")
    FigureCanvasSVG(fig)
    return fig


def svg_bytes(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    return buf.getvalue()


def done(
    record: Record, name: str, fig, *, caption: str, section: str, missing: list[str] | None = None
) -> tuple[Figure, bytes]:
    path = f"figures/{record.claim.id}/{name}.svg"
    return Figure(name=name, path=path, caption=caption, section=section, missing=missing or []), svg_bytes(fig)


def upstream_missing(record: Record, what: str) -> list[str]:
    """``[what (why)]`` when the authors' arm did not run, else ``[]``."""
    up = record.arms.upstream
    if up.ok:
        return []
    return [f"{what} (the authors' arm {'was not run' if up.status == 'not run' else 'could not run'})"]


def upstream_label(record: Record, label: str = UPSTREAM["label"]) -> str:
    """The authors' arm's legend entry, saying so when it did not run."""
    return label if record.arms.upstream.ok else "authors' code: did not run"


def fmt(x, digits: int = 3) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def val(x) -> float:
    """A recorded number for plotting (``nan`` for a missing one)."""
    return float("nan") if x is None else float(x)


#: The markers of one value: the re-implementation's dot, the authors' ring over it, the paper's cross.
DOT = {"color": REIMPL["color"], "marker": "o", "ms": 5}
RING = {"mec": UPSTREAM["color"], "marker": "o", "ms": 9, "mfc": "none", "mew": 1.3}
CROSS = {"color": PAPER["color"], "marker": "x", "ms": 7, "mew": 1.6}


def legend_handles(*specs):
    from matplotlib.lines import Line2D

    return [Line2D([], [], **s) for s in specs]


def arm_legend(fig, record: Record, *extra, mine: dict | None = None, theirs: dict | None = None) -> None:
    """The legend below the figure: the two arms, a dot and a ring (``mine``, ``theirs``: what the figure draws
    otherwise), then each entry of ``extra`` given (a line's keywords, or a handle; a falsy one is left out)."""
    handles = legend_handles(
        {**DOT, "ls": "none", "label": REIMPL["label"], **(mine or {})},
        {**RING, "color": UPSTREAM["color"], "ls": "none", "label": upstream_label(record), **(theirs or {})},
    )
    handles += [legend_handles(e)[0] if isinstance(e, dict) else e for e in extra if e]
    fig.legend(handles=handles, loc="outside lower center", ncol=3, frameon=False)
