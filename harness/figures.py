"""Figures of a report, drawn with matplotlib (Agg) from its run record alone.

:func:`draw_figures` returns ``[(Figure, svg bytes), ...]`` for a record; the
caller writes them under ``reports/figures/<claim id>/`` beside the report.
Each protocol registers its drawing functions in :data:`FIGURES`; a protocol
without any gets no figure.
"""

from __future__ import annotations

from collections.abc import Callable

from .record import Figure, Record

__all__ = ["draw_figures", "FIGURES"]

#: protocol name -> functions ``f(record) -> list[(Figure, bytes)]``.
FIGURES: dict[str, list[Callable[[Record], list[tuple[Figure, bytes]]]]] = {}


def draw_figures(record: Record) -> list[tuple[Figure, bytes]]:
    """Every figure of ``record`` (none when the claim file turns figures off)."""
    if not record.claim.figures:
        return []
    out = []
    for draw in FIGURES.get(record.claim.protocol, []):
        out += draw(record)
    return out
