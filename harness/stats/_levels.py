"""The level and top of a sigmoid-shaped quantile curve at their optimum, for many shapes at once.

A boundary ``q = y0 * (1 - s) + h * s`` whose shape ``s`` (the sigmoid at every point, values in
``[0, 1]``) is held is linear in ``(y0, h)``, so the mean smoothed pinball loss::

    J(y0, h) = (1/n) * sum_i rho_{tau,kappa}(y_i - q_i) + const

is convex in them (with weights, the weighted mean: :class:`harness.stats.pinball.LossPoints`), and on
the triangle ``0 <= y0 <= h <= 1`` it has its minimum at one point.
The multi-start screens its starts by this minimum, one shape per start (the starts' shapes held,
their level and top set to the best for it). With ``r1 = -rho'(u)``, ``r2 = rho''(u)`` and
``a = 1 - s``::

    grad J = (1/n) * (sum r1 a, sum r1 s)
    hess J = (1/n) * [[sum r2 a a, sum r2 a s], [sum r2 a s, sum r2 s s]]

(sums over points; ``s`` depends on the point through its ``z`` only, so with ties in ``z`` they
are sums over distinct ``z`` of ``r1`` and ``r2`` summed within each, :class:`harness.stats._ties.Ties`).

Method: Newton's method with the exact Hessian, each step going to the minimiser of the quadratic
model over the triangle, then halved until the Armijo condition ``J(v + alpha d) <= J(v) + 1e-4 *
alpha * grad'd`` holds (the triangle is convex, so every point of the step is feasible). The model
is a convex quadratic; its minimum on the triangle is its unconstrained minimum when that lies
inside, and otherwise the best of the minima along the three edges (each clipped to its edge) and
the three vertices. A bound of the triangle is so reached exactly. A shape stops when its model
promises less than ``ftol * |J|`` (at a KKT point the promise is 0): the test the active-set
solver (:mod:`harness.stats._newton`) makes on its working set, with the multipliers' signs
folded in. All shapes step in lockstep, one array operation for all of them, each leaving the
batch when it stops.

Two savings that leave the answer as it is:

* The steps from the starts are taken first on every ``thin``-th point, to ``thin_ftol``: the far
  moves cost an eighth. The minimum being unique, the steps on all the points that follow end where
  they would have from the starts.
* With ``keep``, only the ``keep`` lowest minima are wanted (the multi-start carries that many): a
  shape whose minimum provably lies above the ``keep``-th lowest value reached so far stops. ``J``
  is convex, so it lies above its tangent plane, and the plane is least on the triangle at a
  vertex: ``min J >= J(v) + min_vertices g'(w - v)``. Such a shape's value is where it stopped, an
  upper bound on its minimum, and it is not marked converged.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._ties import Ties
from .pinball import LossPoints, sum_of_logs

__all__ = ["Levels", "optimal_levels"]

_ARMIJO = 1e-4
#: The edges of 0 <= y0 <= h <= 1 as (start vertex, direction): y0 = 0, h = 1, y0 = h.
_EDGES = (((0.0, 0.0), (0.0, 1.0)), ((0.0, 1.0), (1.0, 0.0)), ((0.0, 0.0), (1.0, 1.0)))


@dataclass(frozen=True)
class Levels:
    """``v[k] = (y0, h)`` at the optimum for shape ``k``, ``fun[k]`` the objective there (the
    constant added), ``nit[k]`` Newton steps taken, ``converged[k]`` whether the test was met."""

    v: np.ndarray
    fun: np.ndarray
    nit: np.ndarray
    converged: np.ndarray


class _Shapes:
    """The rows of the shapes still stepping, per distinct ``z``: the products the derivatives sum
    (``a``, ``s``, ``a a``, ``a s``, ``s s``); ``s`` is spread to the points a block of rows at a time."""

    def __init__(self, s_distinct: np.ndarray):
        a = 1.0 - s_distinct
        self.products = (a, s_distinct, a * a, a * s_distinct, s_distinct * s_distinct)

    def rows(self, keep: np.ndarray) -> _Shapes:
        out = object.__new__(_Shapes)
        out.products = tuple(p[keep] for p in self.products)
        return out


#: Bytes of one temporary array: a block of rows this size stays in the core's cache and below the
#: size from which malloc maps fresh pages for every array (and gives them back when it is freed).
_BLOCK_BYTES = 64 * 1024


def _blocks(K: int, n: int):
    """Row slices of at most ``_BLOCK_BYTES`` of ``n`` doubles each (at least one row)."""
    step = max(1, _BLOCK_BYTES // (8 * n))
    return [slice(i, i + step) for i in range(0, K, step)]


def _evaluate(shapes: _Shapes, points: LossPoints, v):
    """``(J, grad, (h00, h01, h11))`` without ``J``'s constant for every row of ``shapes`` at its ``v``.

    A block of rows at a time, value and derivatives together: nothing of a block outlives it, so the
    memory in use stays small (the derivatives of a row whose step is then refused cost a few passes
    over its points; refusals are rare). ``e = exp(-|x|)`` as :class:`harness.stats.pinball.LossPoints`
    takes it; ``log(1 + exp(x)) = (x + |x|)/2 + log(1 + e)``: the sums of ``x`` and ``|x|`` stand in for
    a pass of ``max(x, 0)`` (a screen ranks starts; the cancellation costs digits far below its tolerance).
    """
    ties, kappa, tau, n, w = points.ties, points.kappa, points.tau, points.n, points.w
    s = shapes.products[1]
    f, half, r2 = np.empty(s.shape[0]), np.empty_like(s), np.empty_like(s)
    for rows in _blocks(s.shape[0], points.y.size):
        kq = s[rows] * (kappa * (v[rows, 1] - v[rows, 0]))[:, None]
        kq += kappa * v[rows, :1]
        x, ex, e = points.exp_terms(kq)
        e1 = 1.0 + e
        if w is None:
            ax_sum, sx, logs = np.add.reduce(np.abs(x), axis=1), np.add.reduce(x, axis=1), sum_of_logs(e1)
        else:
            ax_sum, sx, logs = np.abs(x) @ w, x @ w, np.log1p(e) @ w
        f[rows] = ((0.5 * (sx + ax_sum) + logs) / kappa + (tau - 1.0) / kappa * sx) / n
        if ex is None:
            np.divide(e, e1, out=e1)  # sigmoid(-|x|)
            sig = np.copysign(0.5 - e1, x)  # sigmoid(x) - 1/2
            half[rows] = ties.sums(sig if w is None else sig * w)
            e1 *= 1.0 - e1  # sigmoid(x) sigmoid(-x) = rho''(u) / kappa
        else:
            ex += 1.0
            sig = np.divide(1.0, ex, out=ex)  # sigmoid(x)
            half[rows] = ties.sums(sig if w is None else sig * w) - 0.5 * points.w_tied
            np.subtract(1.0, sig, out=e1)
            e1 *= sig  # sigmoid(x) sigmoid(-x)
        r2[rows] = ties.sums(e1 if w is None else e1 * w)
    r1 = (0.5 - tau) * points.w_tied - half  # 1 - tau - sigmoid(x) = -rho'(u)
    a, s, aa, as_, ss = shapes.products
    g = np.stack([np.vecdot(r1, a), np.vecdot(r1, s)], axis=1) / n
    c = kappa / n
    return f, g, (c * np.vecdot(r2, aa), c * np.vecdot(r2, as_), c * np.vecdot(r2, ss))


def _model_minimum(v, g, H):
    """``(w, decrease)``: the minimiser over the triangle of ``m(w) = g'(w - v) + (w - v)'H(w - v)/2``, and
    ``-m(w) >= 0``, for every row (a few rows: plain floats are quicker than array operations)."""
    w, decrease = np.empty_like(v), np.empty(v.shape[0])
    for k, row in enumerate(zip(*v.T.tolist(), *g.T.tolist(), *(h.tolist() for h in H))):
        w[k], decrease[k] = _triangle_minimum(*row)
    return w, decrease


def _triangle_minimum(v0, v1, g0, g1, a, b, c):
    """:func:`_model_minimum` of one row, ``H = [[a, b], [b, c]]``: ``((w0, w1), -m(w))``."""

    def model(w0, w1):
        d0, d1 = w0 - v0, w1 - v1
        return g0 * d0 + g1 * d1 + 0.5 * (a * d0 * d0 + 2.0 * b * d0 * d1 + c * d1 * d1)

    det = a * c - b * b
    if det > 0.0 and a > 0.0:
        n0, n1 = v0 - (c * g0 - b * g1) / det, v1 - (a * g1 - b * g0) / det
        if 0.0 <= n0 <= n1 <= 1.0:  # the unconstrained minimum is inside
            return (n0, n1), -model(n0, n1)
    cands = []
    for (p0, p1), (e0, e1) in _EDGES:
        # along (p0, p1) + t (e0, e1), t in [0, 1]: m'(t) = slope + t curv
        d0, d1 = p0 - v0, p1 - v1
        slope = e0 * (g0 + a * d0 + b * d1) + e1 * (g1 + b * d0 + c * d1)
        curv = e0 * e0 * a + 2.0 * e0 * e1 * b + e1 * e1 * c
        ts = (0.0, 1.0) if not curv > 0.0 else (min(max(-slope / curv, 0.0), 1.0),)
        cands += [(p0 + t * e0, p1 + t * e1) for t in ts]
    best = min(cands, key=lambda q: model(*q))
    return best, -model(*best)


def _lower_bounds(v, g):
    """``min over the triangle of g'(w - v)``, per row: at one of the vertices (0, 0), (0, 1), (1, 1)."""
    at_00 = -g[:, 0] * v[:, 0] - g[:, 1] * v[:, 1]
    at_01 = -g[:, 0] * v[:, 0] + g[:, 1] * (1.0 - v[:, 1])
    at_11 = g[:, 0] * (1.0 - v[:, 0]) + g[:, 1] * (1.0 - v[:, 1])
    return np.minimum(np.minimum(at_00, at_01), at_11)


def optimal_levels(
    s: np.ndarray,
    points: LossPoints,
    v0: np.ndarray,
    *,
    const=0.0,
    ftol: float,
    maxiter: int = 50,
    keep: int | None = None,
    thin: int = 8,
    thin_ftol: float = 1e-4,
) -> Levels:
    """Minimise ``J`` over ``(y0, h)`` for every shape, from ``v0``.

    Parameters
    ----------
    s : ndarray, shape (K, m)
        The sigmoid of each shape (a row each) at every distinct ``z`` of ``points.ties`` (at every
        point when they are not grouped).
    points : LossPoints
        The observations, the quantile level and the smoothing of the loss.
    v0 : ndarray, shape (K, 2) or (2,)
        Feasible starts ``(y0, h)``.
    const : float or ndarray, shape (K,)
        Added to each shape's objective (the ridge on its slope): it moves nothing but the values.
    ftol : float
        Stop a shape when its model promises at most ``ftol * |J|``.
    maxiter : int
        Most Newton steps per shape (and per pass).
    keep : int, optional
        Only the ``keep`` lowest minima are wanted (see the module docstring).
    thin, thin_ftol : int, float
        Step first on every ``thin``-th point to ``thin_ftol`` (when that leaves at least 50 points).

    Returns
    -------
    Levels
    """
    K = s.shape[0]
    const = np.broadcast_to(np.asarray(const, dtype=float), (K,))
    v0 = np.broadcast_to(v0, (K, 2))
    nit = np.zeros(K, dtype=int)
    y = points.y
    if thin > 1 and y.size >= 50 * thin:
        every = points.ties.spread(np.arange(s.shape[1]))[::thin]  # the distinct z of every thin-th point
        w = None if points.w is None else points.w[::thin]
        thinned = LossPoints(y[::thin], points.tau, points.kappa, Ties.none(), w)
        rough = _newton_levels(_Shapes(s.take(every, axis=1)), thinned, v0, const, thin_ftol, maxiter)
        v0, nit = rough.v, rough.nit
    done = _newton_levels(_Shapes(s), points, v0, const, ftol, maxiter, keep)
    return Levels(done.v, done.fun, done.nit + nit, done.converged)


def _newton_levels(shapes: _Shapes, points: LossPoints, v0, const, ftol, maxiter, keep=None) -> Levels:
    """:func:`optimal_levels` on the points given, from ``v0``."""
    K = v0.shape[0]
    v = np.array(v0, dtype=float)
    nit = np.zeros(K, dtype=int)
    converged = np.zeros(K, dtype=bool)
    f, g, H = _evaluate(shapes, points, v)
    fun = f + const
    live = np.arange(K)  # the rows still stepping; shapes, g and H hold theirs alone
    for it in range(maxiter + 1):
        w, decrease = _model_minimum(v[live], g, H)
        stop = decrease <= ftol * np.maximum(np.abs(fun[live]), 1e-300)
        converged[live[stop]] = True
        if keep is not None and keep < K:
            # rows whose minimum provably lies above the keep-th lowest value now reached stop unsolved
            stop |= fun[live] + _lower_bounds(v[live], g) > np.partition(fun, keep - 1)[keep - 1]
        if it == maxiter or stop.all():
            break
        if stop.any():
            live, w, g, *H = (a[~stop] for a in (live, w, g, *H))
            shapes = shapes.rows(~stop)
        d = w - v[live]
        slope = np.vecdot(g, d)
        alpha = np.ones(live.size)
        g_new, H_new = np.empty_like(g), [np.empty_like(h) for h in H]
        moved = np.zeros(live.size, dtype=bool)
        todo = np.arange(live.size)  # positions in live still searching along their step
        while todo.size:
            rows, whole = live[todo], todo.size == live.size
            vt = v[rows] + alpha[todo, None] * d[todo]
            sub = shapes if whole else shapes.rows(todo)
            ft, gt, Ht = _evaluate(sub, points, vt)
            ft += const[rows]
            ok = ft <= fun[rows] + _ARMIJO * alpha[todo] * slope[todo]
            if ok.any():
                took = todo[ok]
                g_new[took] = gt[ok]
                for h, ht in zip(H_new, Ht):
                    h[took] = ht[ok]
                v[rows[ok]], fun[rows[ok]] = vt[ok], ft[ok]
                nit[rows[ok]] += 1
                moved[took] = True
            alpha[todo] *= 0.5
            # a step cut below the rounding of v finds no decrease: as good as the arithmetic allows
            tiny = alpha[todo] * np.abs(d[todo]).max(axis=1) <= 1e-16 * (1.0 + np.abs(v[rows]).max(axis=1))
            todo = todo[~ok & ~tiny]
        g, H = g_new, H_new
        if not moved.all():
            live, g, *H = (a[moved] for a in (live, g, *H))
            shapes = shapes.rows(moved)
            if not live.size:
                break
    return Levels(v, fun, nit, converged)
