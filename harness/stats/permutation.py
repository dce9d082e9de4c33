"""A permutation test's Monte Carlo p-value decided at a level: its side of the level, refined where unclear.

A p-value from ``n`` random permutations estimates the exact permutation p-value with Monte Carlo error: were the
exact one the level ``alpha``, with standard error ``sqrt(alpha (1 - alpha) / n)``. Within :data:`MC_SIDE_SDS` of
those of ``alpha`` the estimate does not tell which side of it the exact one lies on.
:func:`refined_p_value` then draws further permutations from the same stream, doubling the count, until it does or
a cap is reached. Several looks at one stream widen the chance of a wrong side beyond that of one look; four
standard errors keep it small (two-sided normal tail 6e-5 per look).
"""

from __future__ import annotations

import math

__all__ = ["MC_SIDE_SDS", "mc_se", "side_margin", "side", "p_value_side", "refined_p_value"]

#: Which side of a level a permutation p-value lies on is settled when it lies more than this many Monte Carlo
#: standard errors of a p-value whose limit is the level, ``sqrt(alpha (1 - alpha) / n_perm)``, away from it.
MC_SIDE_SDS = 4.0


def mc_se(p: float, n: int) -> float:
    """Monte Carlo standard error of a proportion ``p`` estimated from ``n`` draws, ``sqrt(p (1 - p) / n)``."""
    return math.sqrt(p * (1.0 - p) / n)


def side_margin(level: float, n: int) -> float:
    """How far from ``level`` a proportion estimated from ``n`` draws must lie for its side of it to be settled:
    :data:`MC_SIDE_SDS` Monte Carlo standard errors of one whose limit is the level, ``sqrt(level (1 - level) / n)``."""
    return MC_SIDE_SDS * mc_se(level, n)


def side(value: float, level: float, margin: float) -> str:
    """``"below"`` or ``"above"`` ``level``, or ``"undecided"`` where ``|value - level| <= margin`` (an exact
    value, ``margin == 0``, is never undecided: it is below or not)."""
    if margin > 0 and abs(value - level) <= margin:
        return "undecided"
    return "below" if value < level else "above"


def p_value_side(p: float, n_perm: int, alpha: float) -> str:
    """The side of ``alpha`` of a p-value from ``n_perm`` permutations (:func:`side`, :func:`side_margin`)."""
    return side(p, alpha, side_margin(alpha, n_perm))


def refined_p_value(n_ge: int, n_perm: int, count_fresh, *, alpha: float, n_perm_max: int) -> dict:
    """The permutation p-value from ``n_ge`` of ``n_perm`` permutations, refined until its side of ``alpha`` is
    settled (:func:`p_value_side`).

    While undecided and fewer than ``n_perm_max`` permutations are drawn, ``count_fresh(b)`` draws ``b`` more
    (as many as so far, so the count doubles; the last batch stops at ``n_perm_max``) and returns how many reach
    the observed statistic. Still within its error of ``alpha`` at ``n_perm_max``, the decision is
    ``"undecided"``.

    Returns
    -------
    dict
        ``p_value, n_perm`` (drawn in all), ``n_perm_ge, p_value_mc_se`` (``sqrt(p (1 - p) / n_perm)``),
        ``decision``.
    """
    n, k = int(n_perm), int(n_ge)
    while True:
        p = (1.0 + k) / (n + 1.0)  # the +1 convention of harness.stats.shift.permutation_p_value
        decision = p_value_side(p, n, alpha)
        if decision != "undecided" or n >= n_perm_max:
            break
        b = min(n, int(n_perm_max) - n)
        k += int(count_fresh(b))
        n += b
    return {"p_value": p, "n_perm": n, "n_perm_ge": k, "p_value_mc_se": mc_se(p, n), "decision": decision}
