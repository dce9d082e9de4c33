"""The relations a claim asserts, and how a number is written: the one place the target rule lives. Pure
functions that import nothing of the harness, so that every layer can use them without importing another.
"""

from __future__ import annotations

from decimal import Decimal

#: Rounding slack when a value is compared with a tolerance (values that round to the boundary count).
TOL_SLACK = 1e-12


def relation_holds(op: str, left: float, right: float) -> bool:
    """``left op right``; ``abs<`` is ``|left| < right``."""
    return {"<": left < right, "<=": left <= right, ">": left > right, ">=": left >= right, "abs<": abs(left) < right}[
        op
    ]


def within_tolerance(difference: float, tolerance: float) -> bool:
    """Whether two values ``difference`` apart are within ``tolerance`` of each other (with :data:`TOL_SLACK`):
    the comparison of every ``~`` target, of the two arms on one target, of a value moved by an analysis choice."""
    return abs(difference) <= tolerance + TOL_SLACK


def target_holds(relation: str, value: float, *, paper=None, tolerance=None, rhs=None) -> bool:
    """Whether a measured ``value`` meets a target: within ``tolerance`` of ``paper`` (``relation == "~"``,
    with :data:`TOL_SLACK`), else ``value relation rhs``."""
    if relation == "~":
        return within_tolerance(value - paper, tolerance)
    return relation_holds(relation, value, rhs)


def literal_decimals(text: str | None) -> int:
    """Decimals a number is written with: ``"0.700"`` -> 3, ``"90"`` -> 0, ``"4.08e-3"`` -> 5."""
    return max(0, -Decimal(text.strip()).as_tuple().exponent) if text else 0
