"""The files of a claim's coverage study (``reports/calibration/<id>.json``, ``.md``, ``.svg``): render-side,
apart from :mod:`harness.resampling.calibration`, so that drawing code is never part of what a run's key covers."""

from __future__ import annotations

from pathlib import Path

from ..resampling.calibration import STUDY_DIR


def write_study(result: dict, folder: Path = STUDY_DIR) -> dict[str, bytes]:
    """The study's files (``<id>.md``, ``<id>.svg``, ``<id>.json``), relative to ``folder``, written in that order
    (its entry in the lock names the JSON file's sha256: the caller writes it after them)."""
    from ..core.fileio import write_files
    from ..stats.calibration import study_json
    from .render import render_page

    cid = result["claim"]
    files = {
        f"{cid}.md": render_page("calibration.md.j2", study=result, figure=f"{cid}.svg").encode("utf-8"),
        f"{cid}.svg": _figure(result),
        f"{cid}.json": study_json(result).encode("utf-8"),
    }
    write_files(folder, files)
    return files


def _colour(name: str) -> str:
    from ..stats.methods import METHODS

    return getattr(METHODS.get(name), "colour", "black")


def _rows(ax, groups: list) -> None:
    """Per group (the first at the top), one row per method: its point with an error bar ``(below, above)``."""
    y, ticks, names = 0, [], []
    for name, points in reversed(groups):
        for m, x, below, above in points:
            ax.errorbar([x], [y], xerr=[[below], [above]], fmt="o", ms=4, color=_colour(m), capsize=2)
            y += 1
        ticks.append(y - (len(points) + 1) / 2)
        names.append(name if len(name) <= 48 else name[:47] + "…")
        y += 0.6
    ax.set_yticks(ticks)
    ax.set_yticklabels(names)


def _figure(result: dict) -> bytes:
    """Per asserted ordering, each method's measured error of "supported" to its upper bound, against the nominal
    level and the limit; per quantity, each method's coverage against the nominal level, the trusted range and what
    an ideal percentile interval of B draws reaches, with two Monte Carlo standard errors."""
    from matplotlib.lines import Line2D

    from .figures import new_figure, style, svg_bytes

    cov, n = result["coverage"], result["n_replicates"]
    qs = list(cov)
    methods = list(next(iter(cov.values())))
    orderings = result.get("orderings") or []
    n_top = len(orderings) * len(methods)
    n_bottom = len(qs) * len(methods)
    with style():
        fig = new_figure(9.0, 0.2 * (n_top + n_bottom) + 0.35 * (len(orderings) + len(qs)) + 2.2)
        fig.get_layout_engine().set(w_pad=0.15, h_pad=0.1)
        heights = [max(n_top, 1) + len(orderings), n_bottom + len(qs)] if orderings else [1]
        axes = fig.subplots(len(heights), 1, gridspec_kw={"height_ratios": heights}, squeeze=False)[:, 0]
        if orderings:
            ax = axes[0]
            alpha = result["decisions"][orderings[0]["quantity"]][methods[0]]["alpha"]
            limit = orderings[0]["by_method"][methods[0]]["limit"]
            ax.axvline(alpha, color="black", lw=0.8, ls="--", label=f"nominal one-sided level {alpha:.0%}")
            ax.axvspan(0.0, limit, color="#e8f3e8", zorder=0, label=f"trusted: at most {limit:.1%}")
            by = [(o["label"], [(m, o["by_method"][m]) for m in methods]) for o in orderings]
            _rows(
                ax, [(label, [(m, d["error"], 0.0, d["error_bound"] - d["error"]) for m, d in ds]) for label, ds in by]
            )
            ax.set_xlim(0.0, max(0.3, max(o["by_method"][m]["error_bound"] for o in orderings for m in methods) + 0.05))
            ax.set_title("Decisions on the asserted orderings", loc="left", fontsize=9)
            ax.set_xlabel(f"called supported where the difference is 0 ({n} data sets, to the 95% bound)")
            ax.legend(loc="lower right", fontsize=7, frameon=False)
        ax = axes[-1]
        lo, hi = result["calibrated_range"]
        ax.axvspan(lo, hi, color="#e8f3e8", zorder=0, label=f"trusted range [{lo:.0%}, {hi:.0%}]")
        ax.axvline(result["nominal_level"], color="black", lw=0.8, ls="--", label="nominal level")
        label = f"ideal percentile interval at B = {result['n_resamples']}"
        ax.axvline(
            result["reference"]["ideal_percentile_at_B"]["coverage"], color="#888888", lw=0.8, ls=":", label=label
        )
        by = [(result["labels"].get(q, q), [(m, cov[q][m]) for m in methods]) for q in qs]
        _rows(ax, [(label, [(m, r["coverage"], 2 * r["mc_se"], 2 * r["mc_se"]) for m, r in rs]) for label, rs in by])
        ax.set_title("Two-sided intervals of the values", loc="left", fontsize=9)
        ax.set_xlabel(f"coverage of the {result['nominal_level']:.0%} interval ({n} data sets, ±2 MC s.e.)")
        ax.set_xlim(-0.02, 1.02)
        handles = ax.get_legend_handles_labels()[0] + [
            Line2D([], [], marker="o", ls="none", color=_colour(m), label=m) for m in methods
        ]
        ax.legend(handles=handles, loc="lower left", fontsize=7, frameon=False)
        return svg_bytes(fig)
