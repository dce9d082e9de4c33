"""Newton's method with the exact Hessian on a small polytope ``{x : A x <= b}``.

For the few-parameter boundary fits (the sigmoid has four) where a Hessian
costs about as much as a gradient. A primal active-set method:

0. The working set ``W`` starts as the constraints the start meets exactly
   (when they are linearly independent; a fit started at the optimum of an
   earlier stage or sample is usually on the same bounds); item 3 drops those
   the solution does not hold.
1. On the working set ``W`` (constraints held as equalities), with ``Z`` an
   orthonormal basis of the null space of ``A_W``, the reduced gradient and
   Hessian are ``Z'g`` and ``Z'HZ``. The step is ``p = -Z V diag(1/|w|) V'Z'g``
   from the eigen-decomposition ``Z'HZ = V diag(w) V'``, with ``|w|`` floored
   at ``1e-10 * max|w|`` (the exact Newton step where the reduced Hessian is
   positive definite, a descent direction where it is not).
2. The step is cut at the first constraint outside ``W`` it would cross
   (which then joins ``W``), and halved until the Armijo condition
   ``f(x + a p) <= f(x) + 1e-4 a g'p`` holds. When the cut step fails that
   condition, the face's own Newton step is tried once first: from the point
   where ``p`` meets the constraint, the step of item 1 on ``W`` with that
   constraint added (itself cut at the next constraint, landed on exactly and
   added). If it ends below the same Armijo bound it is taken, and the
   constraint (or two) join ``W``; else the halving goes on from ``p``. This is
   for a minimum on a bound that a curved valley leads to: the straight step
   overshoots along the bound's normal, and halving it approaches the bound
   geometrically (claim 002's MUSR fit took 8 steps to reach ``y0 = 0`` at
   the first stage; with the face's step, 3).
3. When the predicted decrease ``g'p / 2`` (the Newton decrement) falls to
   ``ftol * max(|f|, 1e-300)`` on ``W``, the multipliers ``l`` of
   ``g + A_W' l = 0`` are checked: if one is negative the constraint is
   dropped and the solve goes on, otherwise the point satisfies the KKT
   conditions and the solve stops. The same test is made when no step along
   ``p`` decreases ``f`` but the decrease ``p`` promised is below
   ``1e-12 * |f|`` (the rounding floor of ``f``); a line search that fails
   with more than that promised ends the solve unconverged.
4. When the unit step was taken uncut and decreased ``f`` by more than
   ``EXPAND`` times the decrease its quadratic model promised (``-g'p / 2``),
   the model is underestimating how far the descent goes along ``p``: the step
   is doubled while ``f`` keeps falling, up to the first constraint outside
   ``W`` (landed on exactly, and added to ``W``) or ``2**EXPAND_DOUBLINGS``.
   This is for the flat, curving valleys of an objective whose infimum lies
   far out or at a bound -- a sigmoid sharpening towards a step, where ``f``
   behaves like ``f_inf + C exp(-delta beta)`` and each Newton step advances
   ``beta`` by only ``1 / delta`` -- which plain Newton crawls along for
   hundreds of steps. Near a non-degenerate minimum the ratio of actual to
   predicted decrease tends to 1, so the expansion is not tried there and the
   iterates are those of plain Newton.

Far from a minimum this is a damped Newton method; near a non-degenerate
minimum the unit step is taken and convergence is quadratic.

:func:`solve_together` runs the solves of several problems on the same
constraints in lockstep, each taking its own steps, so that their values and
derivatives are computed together (a resample's fits of several tasks on the
same ``z``: a few numpy calls on stacked arrays instead of a few per problem).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.linalg.lapack import dsyev

__all__ = ["NewtonResult", "active_set_newton", "separate", "solve_together"]

_ARMIJO = 1e-4
_EIG_FLOOR = 1e-10
_ROUNDING = 1e-12
#: Expand an uncut unit step whose decrease beats its model's by this factor (item 4 of the docstring).
EXPAND = 1.2
EXPAND_DOUBLINGS = 30


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


#: Per (constraints, working set): the null-space basis of the held rows, the map from the gradient to their
#: multipliers, the free coordinates when the rows are bounds, and whether the rows are linearly independent.
#: Every fit of a model shares its few constraint matrices.
_BASES: dict[tuple, tuple[np.ndarray | None, np.ndarray | None, tuple[int, ...] | None, bool]] = {}


def _working_set(A: np.ndarray, rows: tuple[int, ...], akey: tuple):
    """``(Z, M, free, independent)``: an orthonormal basis ``Z`` of the null space of ``A_W`` and
    ``M = pinv(A_W')``, so that the multipliers of ``g + A_W' l = 0`` are ``l = -M g`` (least squares); both
    ``None`` when ``W`` is empty (``Z`` is then the identity, and the solver skips it). ``free``: when every row
    of ``A_W`` is a multiple of a unit vector (a bound), the coordinates no row holds, in increasing order
    (``Z'v`` is then ``v[free]``, up to the signs and order of ``Z``'s columns); else ``None``. ``independent``:
    whether the rows of ``A_W`` are linearly independent (numpy's ``matrix_rank`` rule on its singular values).
    ``akey`` is ``(A.shape, A.tobytes())``."""
    key = (akey, rows)
    out = _BASES.get(key)
    if out is None:
        A_w = A[list(rows)]
        bounds = all(np.count_nonzero(r) == 1 for r in A_w)
        free = tuple(i for i in range(A.shape[1]) if not np.any(A_w[:, i])) if bounds else None
        if rows:
            _, sv, vt = np.linalg.svd(A_w)
            independent = bool(sv.min() > sv.max() * max(A_w.shape) * np.finfo(float).eps)
            Z = vt[len(rows) :].T
            M = np.linalg.pinv(A_w.T)
            Z.flags.writeable = M.flags.writeable = False
            out = (Z, M, free, independent)
        else:
            out = (None, None, free, True)
        if len(_BASES) < 4096:
            _BASES[key] = out
    return out


def _first_blocking(Ap: np.ndarray, slack: np.ndarray, work: tuple[int, ...], limit: float) -> tuple[float, int | None]:
    """``(step, constraint)``: how far along ``p`` (at most ``limit``) before a constraint outside the working set
    is crossed, and which (``None`` when none is within ``limit``); ``Ap = A p``, ``slack = b - A x``."""
    step, block = limit, None
    for i, (a_p, sl) in enumerate(zip(Ap.tolist(), slack.tolist())):  # a few rows: plain floats are quicker
        if a_p > 0.0 and i not in work and sl < step * a_p:
            step, block = max(sl, 0.0) / a_p, i
    return step, block


def _newton_step(g: np.ndarray, H: np.ndarray, Z: np.ndarray | None, free: tuple[int, ...] | None) -> np.ndarray:
    """``-Z V diag(1/|w|) V'Z'g`` from ``Z'HZ = V diag(w) V'``, ``|w|`` floored at ``_EIG_FLOOR * max|w|``
    (item 1 of the module docstring). With one or two free coordinates (``free``) and the reduced Hessian
    positive definite above the floor, the same step ``-(Z'HZ)^-1 Z'g`` in closed form (plain floats)."""
    if free is not None and len(free) <= 2:
        step = _small_step(g, H, free)
        if step is not None:
            return step
    w, V = _eigh(H if Z is None else Z.T @ H @ Z)
    wabs = np.abs(w)
    top = max(float(wabs[0]), float(wabs[-1])) if w.size else 0.0  # dsyev sorts w ascending
    wabs = np.maximum(wabs, _EIG_FLOOR * max(top, 1e-300))
    p = -(V @ ((V.T @ (g if Z is None else Z.T @ g)) / wabs))
    return p if Z is None else Z @ p


def _small_step(g: np.ndarray, H: np.ndarray, free: tuple[int, ...]) -> np.ndarray | None:
    """The Newton step on at most two free coordinates, or ``None`` when the reduced Hessian is not positive
    definite with its smaller eigenvalue above ``_EIG_FLOOR`` times the larger (the eigen-decomposition's case)."""
    p = np.zeros(g.size)
    if not free:  # every coordinate held
        return p
    if len(free) == 1:
        (i,) = free
        h = float(H[i, i])
        if not h > 0.0:
            return None
        p[i] = -float(g[i]) / h
        return p
    i, j = free
    a, b, c = float(H[i, i]), float(H[i, j]), float(H[j, j])
    half = 0.5 * (a + c)
    r = math.hypot(0.5 * (a - c), b)
    if not half - r > _EIG_FLOOR * (half + r):  # eigenvalues half -+ r; also false for NaN
        return None
    gi, gj = float(g[i]), float(g[j])
    det = a * c - b * b
    p[i], p[j] = (b * gj - c * gi) / det, (b * gi - a * gj) / det
    return p


def _eigh(M: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``numpy.linalg.eigh`` of a small symmetric matrix through LAPACK's ``dsyev`` directly (a third of the
    call overhead, which is most of the cost at 4 x 4)."""
    if M.shape[0] == 0:
        return np.empty(0), np.empty((0, 0))
    w, V, info = dsyev(M)
    if info != 0:
        return np.linalg.eigh(M)
    return w, V


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
    solve = _solve(x0, A, b, ftol, maxiter)
    try:
        x = next(solve)
        while True:
            x = solve.send(fun(x))
    except StopIteration as done:
        return done.value


def solve_together(evaluate, starts, A, b, *, ftol: float = 1e-15, maxiter: int = 200) -> list[NewtonResult]:
    """:func:`active_set_newton` of several problems on the same constraints, one from each of ``starts``, run in
    lockstep: ``evaluate(ks, xs)`` gives ``fun_k(x)`` of problem ``k`` at ``x`` for every pending pair at once (a
    list, in their order), so that the problems' values can be computed together. Each solve takes the steps it
    would take alone."""
    solves = [_solve(x0, A, b, ftol, maxiter) for x0 in starts]
    out: list[NewtonResult | None] = [None] * len(solves)
    pending = {k: next(s) for k, s in enumerate(solves)}
    while pending:
        ks = list(pending)
        values = evaluate(ks, [pending[k] for k in ks])
        pending = {}
        for k, v in zip(ks, values):
            try:
                pending[k] = solves[k].send(v)
            except StopIteration as done:
                out[k] = done.value
    return out


def separate(f: np.ndarray, grad: np.ndarray, H: np.ndarray) -> list:
    """The ``fun(x)`` pairs of a stack of problems from their values, gradients and Hessians (a row each): the
    ``evaluate`` of :func:`solve_together`."""
    return [(v, functools.partial(_pair, g, h)) for v, g, h in zip(f.tolist(), grad, H)]


def _pair(g: np.ndarray, H: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return g, H


def _solve(x0, A, b, ftol, maxiter):
    """The solve of :func:`active_set_newton` as a generator: it yields each point whose ``fun`` it needs, is sent
    ``fun(x)``, and returns the :class:`NewtonResult`."""
    x = np.array(x0, dtype=float)
    akey = (A.shape, A.tobytes())
    f, derivatives = yield x
    g, H = derivatives()
    nfev, nit = 1, 0
    work = _starting_set(A, b, x, akey)
    stalled = False
    for _ in range(4 * maxiter):  # Newton steps, and changes of the working set without a step
        Z, M, free, _ = _working_set(A, work, akey)
        p = _newton_step(g, H, Z, free)
        slope = float(g @ p)
        if stalled or -0.5 * slope <= ftol * max(abs(f), 1e-300):
            stalled = False
            if not work:
                return NewtonResult(x, f, nit, nfev, True, work)
            mult = M @ -g
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
        step, block = _first_blocking(Ap, slack, work, 1.0)
        if step == 0.0:
            work = tuple(sorted(work + (block,)))
            continue
        nit += 1
        alpha, bend, bent, cut = step, block is not None, None, None
        while True:
            trial = x + alpha * p
            if alpha == step and block is not None:  # land exactly on the blocking constraint
                a = A[block]
                trial += (b[block] - a @ trial) * a / (a @ a)
            ft, derivatives = yield trial
            nfev += 1
            if ft <= f + _ARMIJO * alpha * slope:
                break
            if bend:  # once: the face's own Newton step from where p met it (item 2 of the module docstring)
                bend = False
                bent = yield from _bend(trial, derivatives, A, b, tuple(sorted(work + (block,))), akey)
                if bent is not None:
                    nfev += 1
                    if bent[1] <= f + _ARMIJO * alpha * slope:
                        break
                    bent = None
            alpha *= 0.5
            if cut is None:  # the step below which x + alpha p rounds to x
                cut = 1e-16 * (1.0 + float(np.abs(x).max())) / float(np.abs(p).max())
            if alpha <= cut:
                alpha = 0.0
                break
        if alpha == 0.0:
            # No decrease to be had along p. If the decrease it promised is within the
            # rounding of f, x is as good as the arithmetic allows on this working set.
            if -0.5 * slope > _ROUNDING * max(abs(f), 1e-300):
                return NewtonResult(x, f, nit, nfev, False, work)
            stalled = True
            continue
        if bent is not None:
            x, f, derivatives, work = bent
            g, H = derivatives()
            continue
        if alpha == 1.0 and block is None and f - ft > -EXPAND * 0.5 * slope:
            trial, ft, derivatives, nfev, block, step, alpha = yield from _expand(
                x, p, ft, derivatives, A, b, Ap, slack, work, nfev
            )
        x, f = trial, ft
        g, H = derivatives()
        if block is not None and alpha == step:
            work = tuple(sorted(work + (block,)))
    return NewtonResult(x, f, nit, nfev, False, work)


def _starting_set(A: np.ndarray, b: np.ndarray, x: np.ndarray, akey: tuple) -> tuple[int, ...]:
    """The constraints ``x`` meets exactly (item 0 of the module docstring): rows that are not zero, when they are
    linearly independent (else none)."""
    nonzero = _NONZERO_ROWS.get(akey)
    if nonzero is None:
        nonzero = frozenset(np.flatnonzero(np.any(A != 0, axis=1)).tolist())
        if len(_NONZERO_ROWS) < 4096:
            _NONZERO_ROWS[akey] = nonzero
    on = tuple(i for i in np.flatnonzero(A @ x == b).tolist() if i in nonzero)
    return on if len(on) < 2 or _working_set(A, on, akey)[3] else ()


#: Per constraints (``akey``): the rows of ``A`` that are not zero.
_NONZERO_ROWS: dict[tuple, frozenset[int]] = {}


def _bend(x, derivatives, A, b, work, akey):
    """From ``x`` on the face of ``work``, its Newton step, cut at the first constraint outside ``work`` (landed on
    exactly, and added): ``(trial, f(trial), derivatives, working set)``, or ``None`` when it does not descend."""
    g, H = derivatives()
    Z, _, free, _ = _working_set(A, work, akey)
    p = _newton_step(g, H, Z, free)
    if not float(g @ p) < 0.0:
        return None
    step, block = _first_blocking(A @ p, b - A @ x, work, 1.0)
    trial = x + step * p
    if block is not None:
        a = A[block]
        trial += (b[block] - a @ trial) * a / (a @ a)
        work = tuple(sorted(work + (block,)))
    ft, derivatives = yield trial
    return trial, ft, derivatives, work


def _expand(x, p, ft, derivatives, A, b, Ap, slack, work, nfev):
    """Follow ``p`` past the unit step, doubling while ``f`` falls (item 4 of the module docstring).

    Returns ``(trial, f(trial), derivatives, nfev, block, step, alpha)`` with ``block`` the constraint landed on
    (``None`` when the doubling stopped before one) and ``alpha == step`` exactly when it joins the working set."""
    reach, rblock = _first_blocking(Ap, slack, work, float(2**EXPAND_DOUBLINGS))
    trial, alpha = x + p, 1.0
    while alpha < reach:
        a_try = min(2.0 * alpha, reach)
        t2 = x + a_try * p
        if a_try == reach and rblock is not None:  # land exactly on the constraint
            a = A[rblock]
            t2 += (b[rblock] - a @ t2) * a / (a @ a)
        f2, d2 = yield t2
        nfev += 1
        if not f2 < ft:
            break
        trial, ft, derivatives, alpha = t2, f2, d2, a_try
    if alpha == reach and rblock is not None:
        return trial, ft, derivatives, nfev, rblock, reach, reach
    return trial, ft, derivatives, nfev, None, 1.0, alpha
