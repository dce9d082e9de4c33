"""The one-sided decision on an asserted ordering, and the label it gives: the rule, in one place.

A claim asserts an ordering, ``left < right`` or ``left > right``; its difference is ``d = left - right``.
An interval method (:mod:`harness.stats.methods`) gives the one-sided bounds ``L`` and ``U`` of ``d``; this
module turns them into a decision (:func:`decide`) and, with the decision's error measured on the claim's
design and the influence of single base models, into the ordering's label (:func:`ordering_state`). Standard
library only: the invariants and the renderer read it without numpy.
"""

from __future__ import annotations

import math


def claimed_side(relation: str) -> int:
    """``-1`` when the claim asserts ``left - right`` below 0 (``<``, ``<=``), ``+1`` above (``>``, ``>=``)."""
    if relation in ("<", "<="):
        return -1
    if relation in (">", ">="):
        return 1
    raise ValueError(f"not an ordering: {relation!r}")


def decide(lo: float, hi: float, side: int) -> str | None:
    """``supported`` / ``contradicted`` / ``inconclusive`` from the bounds ``(L, U)`` of the difference and the
    claimed side (:func:`claimed_side`); ``None`` when a bound is not finite (no decision could be read)."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return None
    below, above = hi < 0.0, lo > 0.0
    if (side < 0 and below) or (side > 0 and above):
        return "supported"
    if (side < 0 and above) or (side > 0 and below):
        return "contradicted"
    return "inconclusive"


#: A cluster with more than this share of the jackknife variance dominates a statistic: resampling clusters
#: cannot reproduce its law (the cluster bootstrap is not consistent there).
DOMINANT_SHARE = 0.5

#: What resampling says of one asserted ordering (:func:`ordering_state`).
ORDERING_STATES = ("supported", "contradicted", "inconclusive", "not assessed")


def ordering_state(
    decision: str | None,
    error_bound: float | None,
    error_against_bound: float | None,
    limit: float | None,
    carried: bool,
    dominated: bool = False,
) -> str:
    """The label of one asserted ordering: ``decision`` (:func:`decide`), gated by its measured error.

    ``not assessed`` without a decision or a coverage study; when one cluster ``dominated`` the difference (the
    cluster bootstrap does not apply); or unless the study shows, with 95% confidence, that the decision errs at
    most ``limit`` (1.5 alpha): ``error_bound`` is the upper confidence bound of the rate at which "supported"
    fires in the study's null world, ``error_against_bound`` that of "contradicted", which a contradiction needs
    as well. ``inconclusive`` when deleting one cluster would undo the decision (``carried``); else the decision.
    """
    if decision is None or error_bound is None or limit is None or dominated or error_bound > limit:
        return "not assessed"
    if decision == "contradicted" and (error_against_bound is None or error_against_bound > limit):
        return "not assessed"
    if decision != "inconclusive" and carried:
        return "inconclusive"
    return decision


def overall_state(states) -> str:
    """The claim's label: its orderings' common state, ``mixed`` when they differ."""
    states = list(states)
    if not states:
        raise ValueError("no ordering")
    return states[0] if len(set(states)) == 1 else "mixed"
