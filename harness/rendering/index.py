"""The index of the verdicts, ``reports/README.md``, and the one-line summaries ``list`` prints."""

from __future__ import annotations

from ..core.record import Record
from .results import results_for

#: A claim without a ``title`` is shown by its first words, cut at a word's end within this many characters.
TITLE_CHARS = 80

_WHY = {
    "reimpl_could_not_run": "the re-implementation did not run",
    "unmeasured": "not measured: {}",
    "headline_missed": "headline target fails: {}",
    "rescued_by_authors": "{} met only by the authors' code",
    "supporting_missed": "supporting target fails: {}",
    "controls_unbroken": "control did not break: {}",
    "arms_disagree": "the arms disagree on {}",
    "all_hold": "every target holds",
}


def short_title(record: Record, limit: int = TITLE_CHARS) -> str:
    """The claim file's title, else the claim's first words, cut at the end of a word (never inside one)."""
    if record.claim.title:
        return record.claim.title
    text = record.claim.claim
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    cut = cut[: cut.rfind(" ")] if " " in cut else cut
    return cut.rstrip(" ,;:(") + "…"


def _names(titles: list[str], most: int = 2) -> str:
    shown = [f"*{t}*" for t in titles[:most]]
    more = len(titles) - len(shown)
    return ", ".join(shown) + (f" and {more} more" if more else "")


def why(record: Record) -> str:
    """The reason for the verdict in a few words, from the verdict's reasons (the report says it in full)."""
    return "; ".join(_WHY[r.state].format(_names(r.titles)) for r in record.verdict.reasons)


def summary_rows(records: list[Record]) -> list[dict]:
    return [
        {
            "id": rec.claim.id,
            "title": short_title(rec),
            "verdict": rec.verdict.verdict,
            "why": why(rec),
            "robustness": rec.robustness.state if rec.robustness else "not run",
            "multiverse": r.multiverse,
            "upstream": rec.arms.upstream.status,
            "n_targets": len(rec.targets),
            "n_holding": r.n_holding,
        }
        for rec in sorted(records, key=lambda r: r.claim.id)
        for r in [results_for(rec)]
    ]


def papers(records: list[Record], known: dict) -> list[dict]:
    """The papers of ``records`` in the order of their first claim, each with its rows and its setup (from
    ``known``, the paper files by id; None for a paper whose file is gone); claims of no paper come last."""
    groups: dict = {}
    for rec in sorted(records, key=lambda r: r.claim.id):
        groups.setdefault(rec.claim.paper.id if rec.claim.paper else None, []).append(rec)
    return [
        {"ref": recs[0].claim.paper, "rows": summary_rows(recs), "setup": getattr(known.get(pid), "setup", None)}
        for pid, recs in sorted(groups.items(), key=lambda group: group[0] is None)
    ]


def index_markdown(records: list[Record]) -> str:
    """``reports/README.md``: every claim with its verdict and why, by paper; the terms; each paper's setup."""
    from ..claimfiles.papers import load_papers
    from ..core.paths import CLAIMS_DIR
    from .render import render_page

    studies = [
        (r.claim.id, r.robustness.facts["calibration"]["study"])
        for r in sorted(records, key=lambda r: r.claim.id)
        if r.robustness is not None and (r.robustness.facts.get("calibration") or {}).get("study")
    ]
    return render_page("index.md.j2", papers=papers(records, load_papers(CLAIMS_DIR)), studies=studies)
