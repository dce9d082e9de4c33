"""Quantities of ``boundary_at_budget``: each benchmark's boundary at the budget, and its fit's coverage."""

from __future__ import annotations

from ...core.quantities import SCORE, Quantity, boxed, budget_text

#: The largest change of a boundary when the fits start the other way (cold instead of warm, or back).
ALT_START_MAX_SHIFT = "alt_start.max_shift"


def boundary(label: str) -> str:
    return f"boundary.{label}"


def coverage(label: str) -> str:
    return f"coverage.{label}"


def sharp(name: str) -> str:
    """Quantity ``name`` refitted at ``kappa_check`` (a large κ: nearly the sharp check loss)."""
    return f"kappa_check.{name}"


def alt_start_boundary(label: str) -> str:
    return f"alt_start.boundary.{label}"


def _cells(p: dict) -> dict[str, Quantity]:
    at = budget_text(p["eval_x"])
    out = {}
    for label in p["tasks"]:
        out[boundary(label)] = Quantity(f"{label} boundary at {at}", bounds=SCORE)
        out[coverage(label)] = Quantity(f"share of {label} scores on or below the fitted boundary", kind="fraction")
    return out


def vocabulary(p: dict) -> dict[str, Quantity]:
    at = budget_text(p["eval_x"])
    out = _cells(p)
    if p.get("robustness_cold_start"):
        for label in p["tasks"]:
            out[alt_start_boundary(label)] = Quantity(f"{label} boundary at {at}, other start", bounds=SCORE)
        out[ALT_START_MAX_SHIFT] = Quantity("largest change of a boundary under the other start")
    if p.get("box_check"):
        for label in p["tasks"]:
            out[boxed(boundary(label))] = Quantity(
                f"{label} boundary at {at}, inside the authors' box", "reimpl", bounds=SCORE
            )
    if p.get("kappa_check"):
        k = f"{p['kappa_check']:g}"
        for label in p["tasks"]:
            out[sharp(boundary(label))] = Quantity(
                f"{label} boundary at {at}, refitted at κ = {k}", "reimpl", bounds=SCORE
            )
            out[sharp(coverage(label))] = Quantity(
                f"share of {label} scores on or below the boundary refitted at κ = {k}", "reimpl", "fraction"
            )
    return out


def control_vocabulary(kind: str, p: dict, c: dict) -> dict[str, Quantity]:
    return _cells(p)
