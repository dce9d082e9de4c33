"""Newton's method with the exact Hessian on a small polytope ``{x : A x <= b}``.

For the few-parameter boundary fits (the sigmoid has four) where a Hessian
costs about as much as a gradient. A primal active-set method:

1. On the working set ``W`` (constraints held as equalities), with ``Z`` an
   orthonormal basis of the null space of ``A_W``, the reduced gradient and
   Hessian are ``Z'g`` and ``Z'HZ``. The step is ``p = -Z V diag(1/|w|) V'Z'g``
   from the eigen-decomposition ``Z'HZ = V diag(w) V'``, with ``|w|`` floored
   at ``1e-10 * max|w|`` (the exact Newton step where the reduced Hessian is
   positive definite, a descent direction where it is not).
2. The step is cut at the first constraint outside ``W`` it would cross
   (which then joins ``W``), and halved until the Armijo condition
   ``f(x + a p) <= f(x) + 1e-4 a g'p`` holds.
3. When the predicted decrease ``g'p / 2`` (the Newton decrement) falls to
   ``ftol * max(|f|, 1e-300)`` on ``W``, the multipliers ``l`` of
   ``g + A_W' l = 0`` are checked: if one is negative the constraint is
   dropped and the solve goes on, otherwise the point satisfies the KKT
   conditions and the solve stops. The same test is made when no step along
   ``p`` decreases ``f`` but the decrease ``p`` promised is below
   ``1e-12 * |f|`` (the rounding floor of ``f``); a line search that fails
   with more than that promised ends the solve unconverged.

Far from a minimum this is a damped Newton method; near a non-degenerate
minimum the unit step is taken and convergence is quadratic.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = ["NewtonResult", "active_set_newton"]

_ARMIJO = 1e-4
_EIG_FLOOR = 1e-10
_ROUNDING = 1e-12


@dataclass(frozen=True)
class NewtonResult:
    """``x`` the solution, ``fun`` its value, ``nit`` Newton steps taken, ``nfev`` objective
    values computed, ``converged`` whether the KKT test was met, ``active`` the working set."""

    x: np.ndarray
    fun: float
    nit: int
    nfev: int
    converged: bool
    active: tuple[int, ...]


def _null_space(A: np.ndarray, rows: tuple[int, ...]) -> np.ndarray:
    if not rows:
        return np.eye(A.shape[1])
    _, _, vt = np.linalg.svd(A[list(rows)])
    return vt[len(rows) :].T


def active_set_newton(
    fun: Callable[[np.ndarray], tuple[float, Callable[[], tuple[np.ndarray, np.ndarray]]]],
    x0: np.ndarray,
    A: np.ndarray,
    b: np.ndarray,
    *,
    ftol: float = 1e-15,
    maxiter: int = 200,
) -> NewtonResult:
    """Minimise ``f`` over ``{x : A x <= b}`` from the feasible point ``x0``.

    Parameters
    ----------
    fun : callable
        ``fun(x)`` returns ``(f(x), derivatives)``; ``derivatives()`` returns
        the gradient and the Hessian at ``x`` (asked only of accepted points,
        so it may reuse what ``fun`` computed for the value).
    x0 : ndarray
        Feasible start (``A x0 <= b``; not checked).
    A, b : ndarray
        The constraints, one row each; those active at once must be linearly
        independent.
    ftol : float
        Stop when the Newton decrement on the working set is at most
        ``ftol * |f|`` and no multiplier is negative.
    maxiter : int
        Most Newton steps.

    Returns
    -------
    NewtonResult
    """
    x = np.array(x0, dtype=float)
    f, derivatives = fun(x)
    g, H = derivatives()
    nfev, nit = 1, 0
    work: tuple[int, ...] = ()
    bases: dict[tuple[int, ...], np.ndarray] = {}
    stalled = False
    for _ in range(4 * maxiter):  # Newton steps, and changes of the working set without a step
        Z = bases.get(work)
        if Z is None:
            Z = bases[work] = _null_space(A, work)
        gr = Z.T @ g
        w, V = np.linalg.eigh(Z.T @ H @ Z)
        wabs = np.abs(w)
        wabs = np.maximum(wabs, _EIG_FLOOR * max(wabs.max(initial=0.0), 1e-300))
        p = -Z @ (V @ ((V.T @ gr) / wabs))
        slope = float(g @ p)
        if stalled or -0.5 * slope <= ftol * max(abs(f), 1e-300):
            stalled = False
            if not work:
                return NewtonResult(x, f, nit, nfev, True, work)
            mult = np.linalg.lstsq(A[list(work)].T, -g, rcond=None)[0]
            k = int(np.argmin(mult))
            if mult[k] >= 0.0:
                return NewtonResult(x, f, nit, nfev, True, work)
            work = work[:k] + work[k + 1 :]
            continue
        if nit == maxiter:
            break
        # largest step before a constraint outside the working set is crossed
        Ap = A @ p
        slack = b - A @ x
        step, block = 1.0, None
        for i in np.flatnonzero(Ap > 0.0):
            if i not in work and slack[i] < step * Ap[i]:
                step, block = max(slack[i], 0.0) / Ap[i], int(i)
        if step == 0.0:
            work = tuple(sorted(work + (block,)))
            continue
        nit += 1
        alpha = step
        while True:
            trial = x + alpha * p
            if alpha == step and block is not None:  # land exactly on the blocking constraint
                a = A[block]
                trial += (b[block] - a @ trial) * a / (a @ a)
            ft, derivatives = fun(trial)
            nfev += 1
            if ft <= f + _ARMIJO * alpha * slope:
                break
            alpha *= 0.5
            if alpha * np.max(np.abs(p)) <= 1e-16 * (1.0 + np.max(np.abs(x))):
                alpha = 0.0
                break
        if alpha == 0.0:
            # No decrease to be had along p. If the decrease it promised is within the
            # rounding of f, x is as good as the arithmetic allows on this working set.
            if -0.5 * slope > _ROUNDING * max(abs(f), 1e-300):
                return NewtonResult(x, f, nit, nfev, False, work)
            stalled = True
            continue
        x, f = trial, ft
        g, H = derivatives()
        if block is not None and alpha == step:
            work = tuple(sorted(work + (block,)))
    return NewtonResult(x, f, nit, nfev, False, work)
