"""The files of a claim's coverage study (``reports/calibration/<id>.json``, ``.md``, ``.svg``): render-side,
apart from :mod:`harness.calibration`, so that drawing code is never part of what a run's key covers."""

from __future__ import annotations

from pathlib import Path

from .calibration import CALIBRATED, STUDY_DIR

__all__ = ["write_study", "sealed_study_json"]


def sealed_study_json(result: dict) -> str:
    """The study's JSON text with its seal (:mod:`harness.seal`): :func:`harness.calibration.read_study` refuses
    a study whose content no longer matches it (edited by hand, by a merge or a tool), or one without it."""
    import json

    from .seal import sealed_text
    from .stats.calibration import study_json

    return sealed_text(json.loads(study_json(result)))


def write_study(result: dict, folder: Path = STUDY_DIR) -> dict[str, bytes]:
    """The study's files (``<id>.json``, sealed, ``<id>.md``, ``<id>.svg``), relative to ``folder``, written
    together."""
    from .fileio import write_together
    from .render import render_study

    cid = result["claim"]
    svg = _figure(result)
    files = {
        f"{cid}.json": sealed_study_json(result).encode("utf-8"),
        f"{cid}.md": render_study(result, f"{cid}.svg").encode("utf-8"),
        f"{cid}.svg": svg,
    }
    Path(folder).mkdir(parents=True, exist_ok=True)
    write_together(folder, f"calibration-{cid}", files)
    return files


def _figure(result: dict) -> bytes:
    """Coverage of each method on each quantity, with its Monte Carlo error, against the nominal level, the
    calibrated range and what an ideal percentile interval of B draws reaches."""
    from .figures import REIMPL, new_figure, style, svg_bytes

    cov = result["coverage"]
    qs = list(cov)
    methods = list(next(iter(cov.values())))
    colors = {"percentile": REIMPL["color"], "bca": "#e07b00", "subsampling": "#41ab5d"}
    with style():
        fig = new_figure(7.4, 0.34 * len(qs) * len(methods) + 1.6)
        ax = fig.add_subplot(111)
        lo, hi = CALIBRATED
        ax.axvspan(lo, hi, color="#e8f3e8", zorder=0, label=f"calibrated range [{lo:.2f}, {hi:.2f}]")
        ax.axvline(result["nominal_level"], color="black", lw=0.8, ls="--", label="nominal level")
        ideal = result["reference"]["ideal_percentile_at_B"]["coverage"]
        ax.axvline(
            ideal, color="#888888", lw=0.8, ls=":", label=f"ideal percentile interval at B = {result['n_resamples']}"
        )
        y, ticks, names = 0, [], []
        for q in reversed(qs):
            for m in methods:
                row = cov[q][m]
                c, se = row["coverage"], row["mc_se"]
                ax.errorbar([c], [y], xerr=[[2 * se], [2 * se]], fmt="o", ms=4, color=colors.get(m, "black"), capsize=2)
                y += 1
            ticks.append(y - (len(methods) + 1) / 2)
            names.append(result["labels"].get(q, q))
            y += 0.6
        ax.set_yticks(ticks)
        ax.set_yticklabels([n if len(n) <= 48 else n[:47] + "…" for n in names])
        ax.set_xlabel(f"coverage of the 95% interval over {result['n_replicates']} simulated data sets (±2 MC s.e.)")
        ax.set_xlim(max(0.0, min(min(cov[q][m]["coverage"] for q in qs for m in methods) - 0.1, 0.7)), 1.0)
        from matplotlib.lines import Line2D

        handles = ax.get_legend_handles_labels()[0] + [
            Line2D([], [], marker="o", ls="none", color=colors.get(m, "black"), label=m) for m in methods
        ]
        ax.legend(handles=handles, loc="lower left", fontsize=7, frameon=False)
        return svg_bytes(fig)
