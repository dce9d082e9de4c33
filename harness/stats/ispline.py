"""Monotone I-spline quantile boundary (the "I-spline" row of the paper's Table 2, Appendix B.3).

Basis
-----
An M-spline of degree ``d - 1`` is a B-spline normalised to unit integral,
``M_j(z) = d * B_{j,d-1}(z) / (t_{j+d} - t_j)``, and the I-spline of degree
``d`` is its integral from the left end, ``I_j(z) = int_{-inf}^z M_j``
(Ramsay 1988, "Monotone regression splines in action"). On the clamped knot
vector ``t`` (first and last breakpoints repeated ``d + 1`` times) the
derivative identity of B-splines telescopes and gives the closed form::

    I_j(z) = sum_{i >= j} B_{i,d}(z),      j = 1 .. n_B - 1

with ``n_B = (#interior knots) + d + 1`` B-splines of degree ``d``. So each
``I_j`` is piecewise polynomial of degree ``d``, non-decreasing, 0 at and
below the first breakpoint and 1 at and above the last. "Cubic" here means
``d = 3``: piecewise-cubic I-splines, integrals of quadratic M-splines;
``n_intervals`` intervals give ``n_intervals + 2`` basis functions. Outside
the breakpoints the basis is extended as the constants 0 and 1.

Breakpoints are quantiles of the training ``z`` at ``0, 1/k, ..., 1``
(``k = n_intervals``, numpy's linear rule); repeated values (heavy ties in
``z``) are dropped, which can leave fewer than ``k`` intervals.

Model and objective
-------------------
::

    q(z) = y0 + L * sigmoid(a0 + sum_j w_j I_j(z)),   w_j >= 0, 0 <= y0, 0 <= L, y0 + L <= 1
    J    = (1/n) sum_i rho_{tau,kappa}(y_i - q(z_i)) + lam * sum_j w_j**2

(mean smoothed pinball, ridge on the spline weights only).

Optimiser
---------
Newton's method with the exact Hessian on the closed feasible set
(:func:`harness.stats._newton.active_set_newton`), in the natural coordinates
``x = (y0, h, a0, w)`` with ``h = y0 + L``, where ``q = y0 (1 - s) + h s``,
``s = sigmoid(eta)``, ``eta = D (a0, w)``, ``D = [1, I(z)]``, and the
constraints are linear::

    0 <= y0 <= h <= 1,   w_j >= 0

so a weight the data set to zero is reached exactly, and every solve stops at
the KKT point to rounding. With ``s' = s (1 - s)``, ``r1 = dJ/dq_i`` and
``r2 = d2J/dq_i2``::

    grad q = (1 - s, s, L s' D)
    d2q/dy0 d(a0, w) = -s' D,   d2q/dh d(a0, w) = s' D,   d2q/d(a0, w)2 = L s' (1 - 2 s) D D'
    grad J = sum_i r1_i grad q_i + (0, 0, 0, 2 lam w)
    hess J = sum_i r2_i grad q_i grad q_i' + sum_i r1_i hess q_i + diag(0, 0, 0, 2 lam)

Everything of ``s`` depends on a point only through its ``z``: it is computed
once per distinct ``z`` and the sums over points become sums over distinct
``z`` (:class:`harness.stats._ties.Ties`).

Starts and stages: the easier (tau, kappa) warm-up stages of
:class:`harness.stats.sigmoid.SigmoidQuantileRegressor`. Every start is solved
on the first stage; the ``n_keep`` best are carried through the later stages,
each stage started at the previous one's optimum (a first-stage optimum within
``SAME_SOLUTION`` of one already carried is not carried again: the later
stages would repeat it); the lowest final objective wins. (Until this round the
stages were L-BFGS-B solves in softplus coordinates, ``w = log(1 + exp(v))``,
with a final Newton polish; on claim 003's full-sample fits the Newton stages
reach the same optima, lower where the old solves stopped short:
``tests/stats/test_ispline_claim003.py``.)

Resampling: ``fit(z, y, init=params)`` is the Newton solve alone, at the final
(tau, kappa), from the given natural parameters -- inside a bootstrap each
resample starts from the full-sample optimum.
"""

from __future__ import annotations

import copy
import functools

import numpy as np
from scipy.interpolate import BSpline
from scipy.optimize import nnls
from scipy.special import expit

from ._inputs import check_zy
from ._kernel import ispline_sums
from ._multistart import warmup_stages
from ._newton import NewtonResult, active_set_newton, separate, solve_together
from ._ties import Ties, recent
from .pinball import LossPoints, check_loss_settings, smoothed_pinball_loss

__all__ = [
    "quantile_breakpoints",
    "clamped_knot_vector",
    "ispline_basis",
    "ispline_basis_derivative",
    "ispline_objective",
    "ISplineQuantileRegressor",
    "fit_together",
]


def quantile_breakpoints(z, n_intervals: int) -> np.ndarray:
    """Distinct quantiles of ``z`` at ``linspace(0, 1, n_intervals + 1)``.

    The first is ``min z`` and the last ``max z``; duplicates are dropped.
    """
    z = np.asarray(z, dtype=float)
    if int(n_intervals) != n_intervals or n_intervals < 1:
        raise ValueError(f"n_intervals must be a positive integer, got {n_intervals}")
    # numpy.quantile's linear rule, step by step (its call costs more than the fit's basis): at v = (n - 1) q,
    # a + (b - a) g between the sorted values a, b at floor(v) and the next, g = v - floor(v); b - (b - a)(1 - g)
    # where g >= 1/2; the maximum at q = 1
    s = np.sort(z)
    v = (s.size - 1) * np.linspace(0.0, 1.0, int(n_intervals) + 1)
    lo = np.floor(v)
    lo[v >= s.size - 1] = -1.0
    lo = lo.astype(np.intp)
    g = v - lo
    a, b = s[lo], s[np.where(lo < 0, -1, lo + 1)]
    d = b - a
    q = a + d * g
    np.subtract(b, d * (1.0 - g), out=q, where=g >= 0.5)
    bp = np.unique(q)
    if bp.size < 2:
        raise ValueError("z has a single distinct value: no interval for an I-spline")
    return bp


def clamped_knot_vector(breakpoints, degree: int = 3) -> np.ndarray:
    """Breakpoints with the first and last repeated ``degree + 1`` times."""
    bp = np.asarray(breakpoints, dtype=float)
    if bp.ndim != 1 or bp.size < 2 or np.any(bp[1:] - bp[:-1] <= 0):
        raise ValueError("breakpoints must be strictly increasing, at least two")
    return np.concatenate([np.full(degree, bp[0]), bp, np.full(degree, bp[-1])])


@functools.cache
def _identity(n: int) -> np.ndarray:
    out = np.eye(n)
    out.flags.writeable = False
    return out


def ispline_basis(z, breakpoints, degree: int = 3) -> np.ndarray:
    """I-spline basis ``I_j(z)``, ``j = 1 .. n_B - 1``, shape ``(len(z), n_interior + degree)``.

    Parameters
    ----------
    z : array_like
        Points; values outside the breakpoints are clamped (basis 0 below, 1 above).
    breakpoints : array_like
        Strictly increasing; the first and last are the boundary knots.
    degree : int
        Polynomial degree of the I-splines (3: cubic).

    Returns
    -------
    ndarray
        Non-decreasing columns in ``z``, each from 0 to 1.

    Examples
    --------
    >>> ispline_basis([-1.0, 0.0, 1.0, 2.0], [0.0, 0.5, 1.0]).round(12).tolist()[0]
    [0.0, 0.0, 0.0, 0.0]
    """
    bp = np.asarray(breakpoints, dtype=float)
    t = clamped_knot_vector(bp, degree)
    x = np.clip(np.atleast_1d(np.asarray(z, dtype=float)), bp[0], bp[-1])
    # every B-spline at every point: the spline with the identity for coefficients (the same values as
    # BSpline.design_matrix(x, t, degree).toarray(), without the sparse matrix: a third of the time)
    # (``construct_fast``: the knots are valid by construction, and BSpline's checks of them cost as much as the rest)
    B = BSpline.construct_fast(t, _identity(t.size - degree - 1), degree)(x)
    # I_j = sum_{i >= j} B_i: reverse cumulative sum, dropping the j = 0 column (== 1 on the support)
    return np.cumsum(B[:, ::-1], axis=1)[:, ::-1][:, 1:]


def ispline_basis_derivative(z, breakpoints, degree: int = 3) -> np.ndarray:
    """``dI_j/dz = M_j(z) = degree * B_{j,degree-1}(z) / (t_{j+degree} - t_j)``.

    Zero strictly outside the breakpoints; one-sided (from inside) at them.
    """
    bp = np.asarray(breakpoints, dtype=float)
    t = clamped_knot_vector(bp, degree)
    z = np.atleast_1d(np.asarray(z, dtype=float))
    x = np.clip(z, bp[0], bp[-1])
    # degree-1 B-splines on the same knots without their outermost repeats: column i is B_{i+1, degree-1}
    Bm = BSpline.design_matrix(x, t[1:-1], degree - 1).toarray()
    n_b = t.size - degree - 1
    j = np.arange(1, n_b)
    M = degree * Bm / (t[j + degree] - t[j])
    M[(z < bp[0]) | (z > bp[-1])] = 0.0
    return M


def ispline_objective(params, z, y, breakpoints, *, tau: float, kappa: float, lam: float, degree: int = 3) -> float:
    """``J`` of the module docstring at natural parameters ``(y0, L, a0, w)``."""
    y0, L, a0, w = params
    w = np.asarray(w, dtype=float)
    eta = a0 + ispline_basis(z, breakpoints, degree) @ w
    u = np.asarray(y, dtype=float) - (y0 + L * expit(eta))
    return float(np.mean(smoothed_pinball_loss(u, tau, kappa)) + lam * float(w @ w))


#: Newton-decrement tolerance of the natural-coordinate solve, relative to the objective: to rounding.
FTOL = 1e-15
#: First-stage solutions closer than this (max-norm, in x) are one.
SAME_SOLUTION = 1e-6


@functools.cache
def _constraints(p: int) -> tuple[np.ndarray, np.ndarray]:
    """``A x <= b`` of ``x = (y0, h, a0, w_1..w_p)``: ``-y0 <= 0``, ``h <= 1``, ``y0 - h <= 0``, ``-w_j <= 0``."""
    A = np.zeros((3 + p, 3 + p))
    A[0, 0], A[1, 1], A[2, :2] = -1.0, 1.0, (1.0, -1.0)
    A[3:, 3:] = -np.eye(p)
    b = np.zeros(3 + p)
    b[1] = 1.0
    A.flags.writeable = b.flags.writeable = False
    return A, b


class _Natural:
    """``J`` with its gradient and Hessian in ``x = (y0, h, a0, w)``, and the constraints ``A x <= b``.

    ``basis`` holds ``I(z)`` of the points ``y``, one row per point; or, with ``ties``, one row per
    distinct ``z`` of the points (``y`` in increasing ``z``): ``eta``, ``s`` and the rows of ``grad q``
    are then computed once per distinct ``z`` (:class:`harness.stats._ties.Ties`). :meth:`of` sorts
    and groups the points.
    """

    def __init__(self, basis: np.ndarray, y: np.ndarray, tau: float, kappa: float, lam: float, ties=None):
        p = basis.shape[1]
        self.ties = Ties.none() if ties is None else ties
        self.order = None
        self.D = np.empty((basis.shape[0], p + 1))
        self.D[:, 0], self.D[:, 1:] = 1.0, basis
        self.y, self.tau, self.kappa, self.lam = y, tau, kappa, lam
        self.points = LossPoints(y, tau, kappa, self.ties)
        self.A, self.b = _constraints(p)

    @classmethod
    def of(cls, z, y, breakpoints, degree: int, tau: float, kappa: float, lam: float) -> _Natural:
        """The problem of the points ``(z, y)`` in increasing ``z``, the basis at each distinct ``z``."""
        order, ties = Ties.sorted(z)
        bp = np.asarray(breakpoints, dtype=float)
        basis = recent(("ispline", z.tobytes(), bp.tobytes(), degree), lambda: ispline_basis(ties.values, bp, degree))
        out = cls(basis, y[order], tau, kappa, lam, ties)
        out.order = order
        return out

    def with_stage(self, tau: float, kappa: float) -> _Natural:
        """The same data and constraints at another ``(tau, kappa)``."""
        out = copy.copy(self)
        out.tau, out.kappa = tau, kappa
        out.points = LossPoints(self.y, tau, kappa, self.ties)
        return out

    def from_natural(self, params: dict) -> np.ndarray:
        """The feasible ``x`` nearest to ``params`` (``y0, L, a0, w``), coordinate by coordinate."""
        y0 = min(max(float(params["y0"]), 0.0), 1.0)  # np.clip's value, on plain floats
        h = min(max(y0 + float(params["L"]), y0), 1.0)
        return np.concatenate([(y0, h, float(params["a0"])), np.maximum(np.asarray(params["w"], dtype=float), 0.0)])

    def from_fit(self, params: dict, z: np.ndarray) -> np.ndarray:
        """A start from another fit whose knots give another number of basis functions: its ``(y0, L)``, and
        the ``(a0, w >= 0)`` whose ``eta`` is nearest to that fit's ``eta`` at ``z`` in least squares (NNLS,
        with ``a0 = a0+ - a0-``)."""
        eta = params["a0"] + ispline_basis(z, params["breakpoints"], params["degree"]) @ np.asarray(params["w"])
        if self.order is not None:  # the fit's eta at the points, in this problem's order
            eta = eta[self.order]
        D = self.ties.spread(self.D.T).T
        coef = nnls(np.column_stack([D[:, 0], -D[:, 0], D[:, 1:]]), eta)[0]
        return self.from_natural({**params, "a0": coef[0] - coef[1], "w": coef[2:]})

    @staticmethod
    def natural(x: np.ndarray) -> tuple[float, float, float, np.ndarray]:
        return float(x[0]), float(x[1] - x[0]), float(x[2]), np.asarray(x[3:], dtype=float)

    def __call__(self, x):
        """``(J(x), derivatives)``; ``derivatives()`` gives the gradient and Hessian at ``x``."""
        f, grad, H = self._sums(self.points, np.asarray(x, dtype=float)[None])
        return float(f[0]), lambda: (grad[0], H[0])

    def _sums(self, pts: LossPoints, X: np.ndarray):
        """``(J, gradients, Hessians)`` of the curves ``X`` (rows) on the points ``pts`` (one ``y``, or one per
        row), in one compiled pass (:func:`harness.stats._kernel.ispline_sums`)."""
        consts = np.array([pts.tau, pts.kappa, self.lam, pts.n])
        return ispline_sums(X, consts, self.D, *pts.compiled)

    def solve(self, x0: np.ndarray) -> NewtonResult:
        """Newton from the feasible ``x0`` to the KKT point, to rounding."""
        return active_set_newton(self, x0, self.A, self.b, ftol=FTOL)

    def start(self, init: dict, z: np.ndarray) -> np.ndarray:
        """The feasible start nearest to another fit's ``params_`` (:meth:`ISplineQuantileRegressor.fit`)."""
        return self.from_natural(init) if len(init["w"]) == self.D.shape[1] - 1 else self.from_fit(init, z)

    def stacked(self, points: LossPoints, ks: list[int], xs: list[np.ndarray]) -> list:
        """``self(x)`` of the problems that differ from this one in ``y`` alone, the rows ``ks`` of ``points`` (a
        stack, :meth:`LossPoints.rows`), each at its ``x``: the sums of :meth:`__call__`, computed together."""
        return separate(*self._sums(points.rows(ks), np.array(xs)))


class ISplineQuantileRegressor:
    """Monotone quantile boundary ``y0 + L*sigmoid(a0 + sum_j w_j I_j(z))``, ``w >= 0``.

    Parameters
    ----------
    tau, kappa : float
        Quantile level and smoothing of the loss.
    lam : float
        Ridge weight on ``sum_j w_j**2``.
    n_intervals : int
        Intervals between quantile breakpoints of the training ``z`` (the one
        free choice the paper leaves open).
    degree : int
        Degree of the I-splines (3: piecewise cubic).
    warm_start : bool
        Solve the stages of :data:`harness.stats._multistart.WARMUP_SCHEDULE`
        (capped at the target) before the final one.
    n_random : int
        Random starts added to the deterministic ones.
    n_keep : int
        Starts carried past the first stage.
    rng : numpy.random.Generator, optional
        Source of the random starts; required when ``n_random > 0``.

    Attributes
    ----------
    params_ : dict
        ``{"y0", "L", "a0", "w": [...], "breakpoints": [...], "degree"}``.
    objective_ : float
        Final-stage objective.
    n_iter_ : int
        Newton steps over all starts and stages.
    converged_ : bool
        Whether the winning final-stage solve met the KKT test.
    """

    def __init__(
        self,
        *,
        tau: float,
        kappa: float,
        lam: float,
        n_intervals: int = 3,
        degree: int = 3,
        warm_start: bool = True,
        n_random: int = 4,
        n_keep: int = 3,
        rng: np.random.Generator | None = None,
    ):
        self.tau = tau
        self.kappa = kappa
        self.lam = lam
        self.n_intervals = n_intervals
        self.degree = degree
        self.warm_start = warm_start
        self.n_random = n_random
        self.n_keep = n_keep
        self.rng = rng

    def _starts(self, y: np.ndarray, p: int) -> list[np.ndarray]:
        """Envelopes from a low quantile of ``y`` to its ``tau``-quantile, various shapes: ``x = (y0, h, a0, w)``."""
        lo = float(np.clip(np.quantile(y, 0.05), 1e-6, 1 - 1e-3))
        hi = float(np.quantile(y, self.tau))
        frac = float(np.clip((hi - lo) / (1.0 - lo), 1e-6, 1 - 1e-6))
        head = [lo, lo + (1.0 - lo) * frac]
        shapes = [(a0, np.full(p, total / p)) for a0 in (-3.0, -1.0) for total in (2.0, 6.0)]
        if self.n_random:
            if self.rng is None:
                raise ValueError("n_random > 0 needs an explicit rng (numpy.random.Generator)")
            for _ in range(self.n_random):
                a0 = self.rng.uniform(-5.0, 1.0)
                w = self.rng.dirichlet(np.ones(p)) * np.exp(self.rng.uniform(np.log(0.5), np.log(15.0)))
                shapes.append((a0, np.maximum(w, 1e-3)))
        return [np.r_[head, a0, w] for a0, w in shapes]

    def _multistart(self, problems: list[_Natural], starts: list[np.ndarray]) -> tuple[NewtonResult, int]:
        """Solve every start on the first stage; carry the ``n_keep`` best through the others."""
        first = sorted((problems[0].solve(x0) for x0 in starts), key=lambda r: r.fun)
        n_iter = sum(r.nit for r in first)
        finals, carried = [], []
        for res in first[: self.n_keep]:
            # the later stages are deterministic in their start: one solve per first-stage optimum
            if any(np.max(np.abs(res.x - c)) <= SAME_SOLUTION for c in carried):
                continue
            carried.append(res.x)
            for prob in problems[1:]:
                res = prob.solve(res.x)
                n_iter += res.nit
            finals.append(res)
        return min(finals, key=lambda r: r.fun), n_iter

    def fit(self, z, y, *, init: dict | None = None):
        """Fit the boundary to ``(z, y)``.

        ``init`` (another fit's ``params_``: ``y0, L, a0, w``) starts one
        Newton solve at the final ``(tau, kappa)`` from those values (moved
        into the feasible set if outside it) instead of the multi-start
        continuation; the knots are this data's own. Inside a bootstrap each
        resample starts from the full-sample fit this way. When this data's
        knots give another number of basis functions (tied quantiles), the
        start is the ``(a0, w)`` whose ``eta`` is nearest to ``init``'s on this
        data (``init`` then needs its ``breakpoints`` and ``degree``).
        """
        self._check_settings()
        z, y = check_zy(z, y, min_points=4)
        bp = recent(("breakpoints", z.tobytes(), self.n_intervals), lambda: quantile_breakpoints(z, self.n_intervals))
        final = _Natural.of(z, y, bp, self.degree, self.tau, self.kappa, self.lam)
        if init is not None:
            best = final.solve(final.start(init, z))
            n_iter = best.nit
        else:
            stages = [final.with_stage(t, k) for t, k in warmup_stages(self.tau, self.kappa, self.warm_start)]
            best, n_iter = self._multistart(stages, self._starts(y, final.D.shape[1] - 1))
        return self._fitted(final, bp, best, n_iter)

    def _check_settings(self) -> None:
        check_loss_settings(tau=self.tau, kappa=self.kappa, lam=self.lam)
        if isinstance(self.n_intervals, bool) or int(self.n_intervals) != self.n_intervals or self.n_intervals < 1:
            raise ValueError(f"n_intervals must be a positive integer, got {self.n_intervals!r}")

    def _fitted(self, final: _Natural, bp: np.ndarray, best: NewtonResult, n_iter: int):
        y0, L, a0, w = final.natural(best.x)
        self.params_ = {
            "y0": y0,
            "L": L,
            "a0": a0,
            "w": [float(v) for v in w],
            "breakpoints": [float(b) for b in bp],
            "degree": int(self.degree),
        }
        self.objective_ = float(best.fun)
        self.n_iter_ = n_iter
        self.converged_ = bool(best.converged)
        return self

    def predict(self, z) -> np.ndarray:
        # sum_j w_j I_j = sum_i c_i B_i with c_0 = 0, c_i = w_1 + ... + w_i: one spline, not the basis's columns
        p = self.params_
        bp = np.asarray(p["breakpoints"], dtype=float)
        x = np.clip(np.atleast_1d(np.asarray(z, dtype=float)), bp[0], bp[-1])
        c = np.concatenate([[0.0], np.cumsum(p["w"])])
        eta = p["a0"] + BSpline.construct_fast(clamped_knot_vector(bp, p["degree"]), c, p["degree"])(x)
        return p["y0"] + p["L"] * expit(eta)


def fit_together(models: list[ISplineQuantileRegressor], z, ys, inits: list[dict]) -> list[ISplineQuantileRegressor]:
    """``model.fit(z, y, init=init)`` of each model (all of the same settings) on the same ``z``: one basis, and
    the Newton solves run in lockstep, their values and derivatives computed together
    (:func:`harness.stats._newton.solve_together`): the one-at-a-time fits, to rounding (rarely, a rounding-level
    difference changes a step, and the two stop within the solves' tolerance of each other). A resample's fits
    of the tasks scored on the same rows are such a set."""
    m = models[0]
    m._check_settings()
    z, y = check_zy(z, ys[0], min_points=4)
    bp = quantile_breakpoints(z, m.n_intervals)
    final = _Natural.of(z, y, bp, m.degree, m.tau, m.kappa, m.lam)
    ys = np.stack([check_zy(z, y, min_points=4)[1][final.order] for y in ys])
    points = LossPoints(ys, m.tau, m.kappa, final.ties)
    starts = [final.start(init, z) for init in inits]
    results = solve_together(functools.partial(final.stacked, points), starts, final.A, final.b, ftol=FTOL)
    return [model._fitted(final, bp, r, r.nit) for model, r in zip(models, results)]
