"""The level and top of a sigmoid-shaped quantile curve at their optimum, for many shapes at once.

A boundary ``q = y0 * (1 - s) + h * s`` whose shape ``s`` (the sigmoid at every point, values in
``[0, 1]``) is held is linear in ``(y0, h)``, so the mean smoothed pinball loss::

    J(y0, h) = (1/n) * sum_i rho_{tau,kappa}(y_i - q_i) + const

is convex in them, and on the triangle ``0 <= y0 <= h <= 1`` it has its minimum at one point.
The multi-start screens its starts by this minimum, one shape per start (the starts' shapes held,
their level and top set to the best for it). With ``r1 = -rho'(u)``, ``r2 = rho''(u)`` and
``a = 1 - s``::

    grad J = (1/n) * (sum r1 a, sum r1 s)
    hess J = (1/n) * [[sum r2 a a, sum r2 a s], [sum r2 a s, sum r2 s s]]

Method: Newton's method with the exact Hessian, each step going to the minimiser of the quadratic
model over the triangle, then halved until the Armijo condition ``J(v + alpha d) <= J(v) + 1e-4 *
alpha * grad'd`` holds (the triangle is convex, so every point of the step is feasible). The model
is a convex quadratic; its minimum on the triangle is its unconstrained minimum when that lies
inside, and otherwise the best of the minima along the three edges (each clipped to its edge) and
the three vertices. A bound of the triangle is so reached exactly. A shape stops when its model
promises less than ``ftol * |J|`` (at a KKT point the promise is 0): the test the active-set
solver (:mod:`harness.stats._newton`) makes on its working set, with the multipliers' signs
folded in. All shapes step in lockstep, one array operation for all of them, each leaving the
batch when it stops; the cost is the few passes over the points, not the per-shape overhead of a
separate solve.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .pinball import sum_of_logs

__all__ = ["Levels", "optimal_levels"]

_ARMIJO = 1e-4
#: Vertices of 0 <= y0 <= h <= 1, and its edges as (start vertex, end vertex).
_VERTICES = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
_EDGES = ((0, 1), (1, 2), (0, 2))


@dataclass(frozen=True)
class Levels:
    """``v[k] = (y0, h)`` at the optimum for shape ``k``, ``fun[k]`` the objective there (the
    constant added), ``nit[k]`` Newton steps taken, ``converged[k]`` whether the test was met."""

    v: np.ndarray
    fun: np.ndarray
    nit: np.ndarray
    converged: np.ndarray


def _values(S, ky, v, kappa: float, tau: float):
    """``J`` without its constant for the rows of ``S`` at ``v`` (one row each), and what the
    derivatives reuse: ``x = kappa * u``, ``e = exp(-|x|)`` and ``1 + e``."""
    n = S.shape[1]
    x = (ky - kappa * v[:, :1]) - (kappa * (v[:, 1] - v[:, 0]))[:, None] * S
    e = np.exp(-np.abs(x))
    e1 = 1.0 + e
    f = ((np.maximum(x, 0.0).sum(axis=1) + sum_of_logs(e1)) / kappa + (tau - 1.0) / kappa * x.sum(axis=1)) / n
    return f, (x, e, e1)


def _derivatives(S, A, parts, kappa: float, tau: float):
    """Gradient ``(K, 2)`` and Hessian ``(h00, h01, h11)`` (each ``(K,)``) from :func:`_values`' parts."""
    x, e, e1 = parts
    n = S.shape[1]
    inv = 1.0 / e1
    e_inv = e * inv
    r1 = (1.0 - tau) - np.where(x >= 0.0, inv, e_inv)
    r2 = e_inv * inv
    g = np.stack([np.vecdot(r1, A), np.vecdot(r1, S)], axis=1) / n
    ra = r2 * A
    c = kappa / n
    return g, (c * np.vecdot(ra, A), c * np.vecdot(ra, S), c * np.vecdot(r2 * S, S))


def _model_minimum(v, g, H):
    """``(w, decrease)``: the minimiser over the triangle of ``m(w) = g'(w - v) + (w - v)'H(w - v)/2``, and
    ``-m(w) >= 0``, for every row."""
    h00, h01, h11 = H

    def model(w):
        d0, d1 = w[..., 0] - v[:, None, 0], w[..., 1] - v[:, None, 1]
        quad = h00[:, None] * d0 * d0 + 2.0 * h01[:, None] * d0 * d1 + h11[:, None] * d1 * d1
        return g[:, None, 0] * d0 + g[:, None, 1] * d1 + 0.5 * quad

    K = v.shape[0]
    cands = [np.broadcast_to(_VERTICES, (K, 3, 2))]
    for i, j in _EDGES:
        p0, e = _VERTICES[i], _VERTICES[j] - _VERTICES[i]
        # along w = p0 + t e: m'(t) = e'g + e'H(p0 - v) + t e'He
        d0, d1 = p0[0] - v[:, 0], p0[1] - v[:, 1]
        slope = e[0] * (g[:, 0] + h00 * d0 + h01 * d1) + e[1] * (g[:, 1] + h01 * d0 + h11 * d1)
        curv = e[0] * e[0] * h00 + 2.0 * e[0] * e[1] * h01 + e[1] * e[1] * h11
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.clip(np.where(curv > 0.0, -slope / curv, 0.0), 0.0, 1.0)
        cands.append((p0 + t[:, None] * e)[:, None, :])
    det = h00 * h11 - h01 * h01
    with np.errstate(divide="ignore", invalid="ignore"):
        newton = v - np.stack([h11 * g[:, 0] - h01 * g[:, 1], h00 * g[:, 1] - h01 * g[:, 0]], axis=1) / det[:, None]
    inside = (det > 0.0) & (h00 > 0.0) & (newton[:, 0] >= 0.0) & (newton[:, 0] <= newton[:, 1]) & (newton[:, 1] <= 1.0)
    cands.append(np.where(inside[:, None], newton, v)[:, None, :])
    W = np.concatenate(cands, axis=1)
    m = model(W)
    best = np.argmin(m, axis=1)
    rows = np.arange(K)
    return W[rows, best], -m[rows, best]


def optimal_levels(
    S: np.ndarray, y: np.ndarray, v0: np.ndarray, *, tau: float, kappa: float, const=0.0, ftol: float, maxiter: int = 50
) -> Levels:
    """Minimise ``J`` over ``(y0, h)`` for every shape (row of ``S``), from ``v0``.

    Parameters
    ----------
    S : ndarray, shape (K, n)
        The sigmoid of each shape at every point.
    y : ndarray, shape (n,)
        The observations.
    v0 : ndarray, shape (K, 2) or (2,)
        Feasible starts ``(y0, h)``.
    tau, kappa : float
        Quantile level and smoothing of the loss.
    const : float or ndarray, shape (K,)
        Added to each shape's objective (the ridge on its slope): it moves nothing but the values.
    ftol : float
        Stop a shape when its model promises at most ``ftol * |J|``.
    maxiter : int
        Most Newton steps per shape.

    Returns
    -------
    Levels
    """
    K = S.shape[0]
    const = np.broadcast_to(np.asarray(const, dtype=float), (K,))
    v = np.array(np.broadcast_to(v0, (K, 2)), dtype=float)
    nit = np.zeros(K, dtype=int)
    converged = np.zeros(K, dtype=bool)
    ky = kappa * y
    A = 1.0 - S
    f, parts = _values(S, ky, v, kappa, tau)
    g, H = _derivatives(S, A, parts, kappa, tau)
    fun = f + const
    live = np.arange(K)  # the rows still stepping; S, A, g and H hold theirs alone
    for it in range(maxiter + 1):
        w, decrease = _model_minimum(v[live], g, H)
        stop = decrease <= ftol * np.maximum(np.abs(fun[live]), 1e-300)
        converged[live[stop]] = True
        if it == maxiter or stop.all():
            break
        if stop.any():
            live, S, A, w, g, *H = (a[~stop] for a in (live, S, A, w, g, *H))
        d = w - v[live]
        slope = np.vecdot(g, d)
        alpha = np.ones(live.size)
        g_new, H_new = np.empty_like(g), [np.empty_like(h) for h in H]
        moved = np.zeros(live.size, dtype=bool)
        todo = np.arange(live.size)  # positions in live still searching along their step
        while todo.size:
            rows, whole = live[todo], todo.size == live.size
            vt = v[rows] + alpha[todo, None] * d[todo]
            S_t = S if whole else S[todo]
            ft, parts = _values(S_t, ky, vt, kappa, tau)
            ft += const[rows]
            ok = ft <= fun[rows] + _ARMIJO * alpha[todo] * slope[todo]
            if ok.any():
                took = todo[ok]
                if not ok.all():
                    S_t, parts = S_t[ok], tuple(a[ok] for a in parts)
                gk, Hk = _derivatives(S_t, A if whole and ok.all() else A[took], parts, kappa, tau)
                g_new[took] = gk
                for h, hk in zip(H_new, Hk):
                    h[took] = hk
                v[rows[ok]], fun[rows[ok]] = vt[ok], ft[ok]
                nit[rows[ok]] += 1
                moved[took] = True
            alpha[todo] *= 0.5
            # a step cut below the rounding of v finds no decrease: as good as the arithmetic allows
            tiny = alpha[todo] * np.abs(d[todo]).max(axis=1) <= 1e-16 * (1.0 + np.abs(v[rows]).max(axis=1))
            todo = todo[~ok & ~tiny]
        g, H = g_new, H_new
        if not moved.all():
            live, S, A, g, *H = (a[moved] for a in (live, S, A, g, *H))
            if not live.size:
                break
    return Levels(v, fun, nit, converged)
