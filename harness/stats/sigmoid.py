"""Sigmoid quantile boundary fitted by smoothed pinball loss (paper Section 2.1).

Model::

    q(z; theta) = y0 + L * sigmoid(a + beta * z),   beta >= 0, 0 <= y0, y0 + L <= 1, L >= 0

Objective (the convention that reproduces the published numbers: the *mean*
of the loss over points, not the sum the paper writes, plus a ridge on the
slope only)::

    J(theta) = (1/n) * sum_i rho_{tau,kappa}(y_i - q(z_i; theta)) + lam * beta**2
    rho(u)   = log(1 + exp(kappa * u)) / kappa + (tau - 1) * u

With weights ``w_i > 0`` the mean is weighted, ``sum_i w_i rho_i / sum_i w_i`` (a base model's rows each
``1/n_g``; a resample's row drawn ``k`` times, ``k`` times its weight).

The optimiser is our own: Newton's method with the exact Hessian on the
closed feasible set (:func:`harness.stats._newton.active_set_newton`), in
the coordinates ``x = (y0, h, c, beta)`` with ``h = y0 + L`` the top of the
curve and the sigmoid's argument centred for conditioning,
``a + beta*z = c + beta*(z - zbar)``. In them ``q = y0*(1 - s) + h*s`` is
linear in ``(y0, h)`` and the constraints are linear::

    0 <= y0 <= h <= 1,   e**-30 <= beta <= 1e3

(the slope limits are a numerical guard far outside any slope the data can
resolve). With ``box`` the third coordinate is the midpoint ``m`` itself,
``a + beta*z = beta*(z - m)``, held in ``[min z, max z]``, and the slope
limits are the box's. Bounds such as ``y0 = 0`` or ``y0 + L = 1``, where
most of these boundaries sit, are reached exactly, not approached.

Starts and stages. The stages are the (tau, kappa) continuation of
:func:`harness.stats._multistart.warmup_stages` (with ``warm_start``) or the
target alone. The starts are a grid of 9 (midpoint, slope) shapes plus
``n_random`` random ones. Each start is screened on the first stage: its
shape held, ``(y0, h)`` is set to its optimum (a convex two-variable
problem; :func:`harness.stats._levels.optimal_levels` solves all the starts'
at once, and stops those that provably cannot be among the ``n_keep``
lowest). The ``n_keep`` starts with the lowest screened
objective are solved on the first stage and carried through the later
stages, each stage started at the previous one's optimum and solved to
rounding; a first-stage optimum within ``SAME_SOLUTION`` of one already
carried is not carried again (the later stages would repeat it). The lowest
final objective wins.

Resampling: ``fit(z, y, init=params)`` makes one solve at the final
(tau, kappa) from given natural parameters -- inside a bootstrap each
resample starts from the full-sample optimum.

Cost: a leaderboard's compute is shared by a base model's fine-tunes (claim
002's 3663 rows have 336 distinct ``z``), so the sigmoid and everything of it
are computed once per distinct ``z`` (:class:`harness.stats._ties.Ties`); per
point remain the loss and its two derivatives, from ``exp(-kappa |y - q|)``
taken as a product of a factor of ``y`` and one of ``q`` (no exponential per
point per evaluation; :class:`harness.stats.pinball.LossPoints`). Without a
box, the value, gradient and Hessian come from one compiled pass
(:func:`harness.stats._kernel.sigmoid_sums`).
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Mapping, Sequence

import numpy as np
from scipy.special import expit

from ._inputs import check_zy
from ._kernel import sigmoid_sums
from ._levels import Levels, optimal_levels
from ._multistart import WARMUP_SCHEDULE, warmup_stages
from ._newton import NewtonResult, active_set_newton, separate, solve_together
from ._ties import Ties
from .pinball import LossPoints, check_loss_settings, smoothed_pinball_loss

__all__ = [
    "SigmoidQuantileRegressor",
    "Refits",
    "fit_together",
    "fit_many",
    "sigmoid_boundary",
    "sigmoid_objective",
    "WARMUP_SCHEDULE",
    "BETA_MAX",
]

#: The numerical ceiling on the slope (per unit of z): far beyond any slope the data resolve; a fit that
#: reaches it is a step.
BETA_MAX = 1e3
#: Slope limits of the unboxed model (a numerical guard, not a modelling choice).
BETA_LIMITS = (float(np.exp(-30.0)), BETA_MAX)
#: Newton-decrement tolerances, relative to the objective: every solve of the
#: full problem goes to rounding; the screening of the starts needs less.
FTOL, SCREEN_FTOL = 1e-15, 1e-8
#: First-stage solutions closer than this (max-norm, natural coordinates) are one.
SAME_SOLUTION = 1e-6


def _read_only(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


#: The constraints ``A x <= b`` without a box: ``-y0 <= 0``, ``h <= 1``, ``y0 - h <= 0`` and the slope limits.
_CONSTRAINTS = (
    _read_only(np.array([[-1.0, 0, 0, 0], [0, 1.0, 0, 0], [1.0, -1.0, 0, 0], [0, 0, 0, -1.0], [0, 0, 0, 1.0]])),
    _read_only(np.array([0.0, 1.0, 0.0, -BETA_LIMITS[0], BETA_LIMITS[1]])),
)


def _clip(v, lo: float, hi: float) -> float:
    """``numpy.clip`` of one number, at a tenth of its cost."""
    return min(max(float(v), lo), hi)


def sigmoid_boundary(z, y0: float, L: float, a: float, beta: float) -> np.ndarray:
    """``y0 + L * sigmoid(a + beta * z)``."""
    return y0 + L * expit(a + beta * np.asarray(z, dtype=float))


def sigmoid_objective(params, z, y, *, tau: float, kappa: float, lam: float, weights=None) -> float:
    """Mean smoothed pinball loss (weighted by ``weights``, when given) plus ``lam * beta**2`` at natural
    parameters ``(y0, L, a, beta)``."""
    y0, L, a, beta = (float(p) for p in params)
    u = np.asarray(y, dtype=float) - sigmoid_boundary(z, y0, L, a, beta)
    return float(np.average(smoothed_pinball_loss(u, tau, kappa), weights=weights) + lam * beta**2)


class _Problem:
    """``J`` with its gradient and Hessian in ``x = (y0, h, c, beta)``, and the constraints.

    Without a box, ``t = c + beta*(z - zbar)``. With a box ``(beta_min, beta_max)``
    the third coordinate is the midpoint ``m`` itself, ``t = beta*(z - m)``, held
    in ``[min z, max z]``, and the slope in ``[beta_min, beta_max]``.

    Derivatives, per point, with ``s = sigmoid(t)``, ``s' = s(1 - s)``,
    ``r1 = dJ/dq = -rho'(u)/n`` and ``r2 = d2J/dq2 = rho''(u)/n``::

        grad q  = (1 - s, s, L s' t3, L s' t4),    t3 = dt/dx3, t4 = dt/dbeta
        d2q/dy0 dx_j = -s' t_j,  d2q/dh dx_j = s' t_j          (j = 3, 4)
        d2q/dx_j dx_k = L s' (1 - 2s) t_j t_k + L s' t_jk      (t_34 = -1 with a box, else 0)
        grad J  = sum_i r1_i grad q_i + (0, 0, 0, 2 lam beta)
        hess J  = sum_i r2_i grad q_i grad q_i' + sum_i r1_i hess q_i + diag(0, 0, 0, 2 lam)

    ``t3`` is a scalar (1, or ``-beta`` with a box) and ``t4`` the vector
    ``z - zbar`` (or ``z - m``). With ``x = kappa*u`` and ``e = exp(-|x|)``:
    ``log(1 + exp(x)) = max(x, 0) + log1p(e)``, ``rho' = sigmoid(x) + tau - 1``,
    ``rho'' = kappa * e / (1 + e)**2``.

    Everything of ``s`` (``grad q`` and the ``hess q`` terms) depends on the point only through
    its ``z``: it is computed once per distinct ``z`` and the sums over points become sums over
    distinct ``z`` of it times ``r1`` or ``r2`` summed within each (:class:`harness.stats._ties.Ties`;
    the points are kept in increasing ``z``).
    """

    def __init__(
        self, z, y, tau: float, kappa: float, lam: float, box: tuple[float, float] | None = None, weights=None
    ):
        order, ties = Ties.sorted(z)
        self.order = order
        z, y = z[order], y[order]
        self.z, self.y, self.tau, self.kappa, self.lam, self.box = z, y, tau, kappa, lam, box
        self.ties = ties
        # with weights, J is the weighted mean of rho (an integer weight: the row repeated that many times)
        self.weights = None if weights is None else weights[order]
        self.zbar = float(z.mean() if weights is None else (self.weights @ z) / self.weights.sum())
        self.points = LossPoints(y, tau, kappa, ties, self.weights)
        self.consts = np.array([tau, kappa, lam, self.points.n])
        self.dz = ties.values - self.zbar  # per distinct z, as everything of the shape
        if box is None:
            self.A, self.b = _CONSTRAINTS
        else:
            A, b = _CONSTRAINTS
            self.A = np.vstack([A, [[0.0, 0.0, -1.0, 0.0], [0.0, 0.0, 1.0, 0.0]]])
            self.b = np.r_[b[:3], -box[0], box[1], -float(z[0]), float(z[-1])]

    def with_stage(self, tau: float, kappa: float, lam: float | None = None) -> _Problem:
        """The same data and constraints at another ``(tau, kappa)`` (and ridge ``lam``, when given)."""
        out = copy.copy(self)
        out.tau, out.kappa = tau, kappa
        out.lam = self.lam if lam is None else lam
        out.points = (
            self.points
            if (tau, kappa) == (self.tau, self.kappa)
            else LossPoints(self.y, tau, kappa, self.ties, self.weights)
        )
        out.consts = np.array([tau, kappa, out.lam, out.points.n])
        return out

    # -- coordinates ------------------------------------------------------------
    def natural(self, x) -> tuple[float, float, float, float]:
        """``(y0, L, a, beta)`` of ``x``."""
        y0, h, c, beta = (float(v) for v in x)
        a = -beta * c if self.box is not None else c - beta * self.zbar
        return y0, h - y0, a, beta

    def from_natural(self, y0: float, L: float, a: float, beta: float) -> np.ndarray:
        """The feasible ``x`` nearest to ``(y0, L, a, beta)``, coordinate by coordinate."""
        beta = _clip(beta, -self.b[3], self.b[4])
        y0 = _clip(y0, 0.0, 1.0)
        h = _clip(y0 + L, y0, 1.0)
        if self.box is None:
            return np.array([y0, h, a + beta * self.zbar, beta])
        return np.array([y0, h, _clip(-a / beta, -self.b[5], self.b[6]), beta])

    # -- objective --------------------------------------------------------------
    def __call__(self, x):
        """``(J(x), derivatives)``; ``derivatives()`` gives the gradient and Hessian at ``x``. Unboxed, one compiled
        pass (:func:`harness.stats._kernel.sigmoid_sums`); with a box, ``t = beta*(z - m)``, ``t3 = -beta``."""
        if self.box is None:
            f, grad, H = self._sums(self.points, np.asarray(x, dtype=float)[None])
            return float(f[0]), lambda: (grad[0], H[0])
        y0, h, c, beta = np.asarray(x, dtype=float).tolist()
        L = h - y0
        d, t3 = self.ties.values - c, -beta
        s = expit(d * beta)
        f, loss_derivatives = self.points.at(y0, L, s)
        f += self.lam * beta**2

        def derivatives():
            r1, r2 = loss_derivatives()
            # per distinct z, rows 1 - s, s, s' = s (1 - s), s' t4: grad q = scale * G, scale = (1, 1, L t3, L)
            G = np.empty((4, s.size))
            a = np.subtract(1.0, s, out=G[0])
            G[1] = s
            sp = np.multiply(s, a, out=G[2])
            np.multiply(sp, d, out=G[3])
            sums = (G @ r1).tolist()
            Hq = ((G * r2) @ G.T).tolist()  # sum r2 G G'
            w = a - s  # 1 - 2s
            w *= sp
            w *= r1
            m0, m1, m2 = w.sum(), w @ d, w @ (d * d)
            sc = (1.0, 1.0, L * t3, L)
            grad = [sc[i] * sums[i] for i in range(4)]
            grad[3] += 2.0 * self.lam * beta
            H = [[sc[i] * sc[j] * Hq[i][j] for j in range(4)] for i in range(4)]
            # sum_i r1_i hess q_i: first the (y0 or h, shape) block, then the shape block
            sa, sad = sums[2], sums[3]
            H[0][2] -= t3 * sa
            H[1][2] += t3 * sa
            H[0][3] -= sad
            H[1][3] += sad
            H[2][2] += L * t3 * t3 * m0
            H[2][3] += L * t3 * m1 - L * sa  # t_34 = -1
            H[3][3] += L * m2 + 2.0 * self.lam
            for i, j in ((0, 1), (0, 2), (1, 2), (0, 3), (1, 3), (2, 3)):
                H[j][i] = H[i][j]  # the upper triangle holds the sums
            return np.array(grad), np.array(H)

        return f, derivatives

    def stacked(self, points: LossPoints, ks: list[int], xs: list[np.ndarray]) -> list:
        """``self(x)`` of the problems that differ from this one (unboxed) in ``y`` alone, the rows ``ks`` of
        ``points`` (a stack, :meth:`LossPoints.rows`), each at its ``x``: the sums of :meth:`__call__`, computed
        together."""
        return separate(*self._sums(points.rows(ks), np.array(xs)))

    def _sums(self, pts: LossPoints, X: np.ndarray):
        """``(J, gradients, Hessians)`` of the curves ``X`` (rows) on the points ``pts`` (one ``y``, or one per
        row), unboxed, in one compiled pass (:func:`harness.stats._kernel.sigmoid_sums`)."""
        return sigmoid_sums(X, self.consts, self.dz, *pts.compiled)

    def value_grad_hess(self, x) -> tuple[float, np.ndarray, np.ndarray]:
        f, derivatives = self(x)
        return (f, *derivatives())

    def solve(self, x0: np.ndarray) -> NewtonResult:
        """Newton from ``x0`` to the KKT point, to rounding."""
        return active_set_newton(self, x0, self.A, self.b, ftol=FTOL)

    def screen(self, starts: np.ndarray, keep: int | None = None) -> Levels:
        """For each start (a row of ``starts``), ``(y0, h)`` at their optimum for its shape ``(c, beta)``.

        With the shape held, ``q = y0*(1 - s) + h*s`` is linear in ``(y0, h)`` and ``J`` convex in
        them: :func:`harness.stats._levels.optimal_levels` solves every start's two-variable problem on
        ``0 <= y0 <= h <= 1`` at once, from the start's own ``(y0, h)``, to ``SCREEN_FTOL``.
        """
        c, beta = starts[:, 2:3], starts[:, 3:4]
        t = c + beta * self.dz if self.box is None else beta * (self.ties.values - c)
        return optimal_levels(
            expit(t), self.points, starts[:, :2], const=self.lam * beta[:, 0] ** 2, ftol=SCREEN_FTOL, keep=keep
        )


def _checked_weights(weights, z: np.ndarray) -> np.ndarray:
    w = np.asarray(weights, dtype=float)
    if w.shape != z.shape or not np.all(np.isfinite(w) & (w > 0)):
        raise ValueError(f"weights must be one finite positive number per row ({z.size}), got shape {w.shape}")
    return w


class SigmoidQuantileRegressor:
    """Quantile boundary ``y0 + L*sigmoid(a + beta z)`` by smoothed pinball loss.

    Minimises ``J = mean_i rho(y_i - q(z_i)) + lam*beta**2`` (the mean weighted, with weights) over
    ``0 <= y0 <= y0 + L <= 1``, ``beta >= 0`` by Newton's method with the
    exact Hessian (see the module docstring).

    Parameters
    ----------
    tau, kappa, lam : float
        Quantile level, smoothing, ridge weight on ``beta**2``.
    warm_start : bool
        Run the stages of :data:`WARMUP_SCHEDULE` (capped at the target
        ``tau``/``kappa``) before the final stage; ``False`` screens and
        solves the starts on the final stage directly ("cold start").
    n_random : int
        Random starts added to the deterministic grid of starts.
    n_keep : int
        Starts solved on the first stage and carried through the others: the
        best by first-stage objective with ``(y0, h)`` optimised for their shape.
    box : (float, float), optional
        Not part of the paper's model: restrict the slope to
        ``box[0] <= beta <= box[1]`` and the midpoint ``-a/beta`` to the range
        of the training ``z``, as the authors' released optimiser does. Used
        only to measure how much that box moves a result.
    rng : numpy.random.Generator, optional
        Source of the random starts. Required when ``n_random > 0``; each fit
        without ``init`` draws ``2 * n_random`` uniforms from it.

    Attributes
    ----------
    params_ : dict
        ``{"y0", "L", "a", "beta"}`` at the optimum.
    objective_ : float
        Final-stage objective at ``params_``.
    n_iter_ : int
        Newton steps summed over the screening, the starts and the stages.
    converged_ : bool
        Whether the winning final solve met the KKT test.
    """

    def __init__(
        self,
        *,
        tau: float,
        kappa: float,
        lam: float,
        warm_start: bool = True,
        n_random: int = 4,
        n_keep: int = 3,
        box: tuple[float, float] | None = None,
        rng: np.random.Generator | None = None,
    ):
        self.box = box
        self.tau = tau
        self.kappa = kappa
        self.lam = lam
        self.warm_start = warm_start
        self.n_random = n_random
        self.n_keep = n_keep
        self.rng = rng

    # -- fitting -------------------------------------------------------------
    def _starts(self, z: np.ndarray, y: np.ndarray, prob: _Problem) -> list[np.ndarray]:
        """Deterministic grid of (midpoint, slope) shapes plus random ones.

        The level starts at a low quantile of ``y`` and the top at its
        ``tau``-quantile, so every start is a plausible upper envelope.
        """
        lo, hi = (float(v) for v in np.quantile(y, [0.05, self.tau]))
        mids = np.quantile(z, [0.1, 0.5, 0.9])
        slopes = np.array([0.3, 1.0, 3.0])
        shapes = [(m, b) for m in mids for b in slopes]
        if self.n_random:
            if self.rng is None:
                raise ValueError("n_random > 0 needs an explicit rng (numpy.random.Generator)")
            m_r = self.rng.uniform(z.min(), z.max(), self.n_random)
            b_r = np.exp(self.rng.uniform(np.log(0.05), np.log(20.0), self.n_random))
            shapes += list(zip(m_r, b_r))
        if self.box is not None:
            shapes = [(m, float(np.clip(b, *self.box))) for m, b in shapes]
        return [prob.from_natural(lo, max(hi - lo, 1e-3), -b * m, b) for m, b in shapes]

    def fit(self, z, y, *, init: dict | None = None, weights=None):
        """Fit the boundary to ``(z, y)``.

        Parameters
        ----------
        z, y : array_like
            1-d, equal length, finite.
        init : dict, optional
            Natural parameters ``{"y0", "L", "a", "beta"}`` (e.g. another fit's
            ``params_``) to start from. Then no starts are drawn and no warm-up
            is run: one Newton solve at the final ``(tau, kappa)`` from ``init``
            (moved into the feasible set if outside it). Inside a bootstrap each
            resample starts from the full-sample optimum this way.
        weights : array_like, optional
            Positive numbers, one per row: the objective's mean is
            ``sum_i w_i rho(u_i) / sum_i w_i``. An integer weight has row ``i``
            stand for that many equal rows (a resample's rows drawn more than
            once, given once): the fit is the fit to the rows repeated. The
            multistart's starts read quantiles of the rows unweighted.

        Returns
        -------
        self
        """
        self._check_settings()
        z, y = check_zy(z, y, min_points=4)
        w = None if weights is None else _checked_weights(weights, z)
        final = _Problem(z, y, self.tau, self.kappa, self.lam, self.box, w)
        if init is not None:
            return self._solved(final, init)
        stages = [final.with_stage(t, k) for t, k in warmup_stages(self.tau, self.kappa, self.warm_start)]
        best, n_iter = self._multistart(stages, self._starts(z, y, final))
        return self._finish(final, best, n_iter)

    def _check_settings(self) -> None:
        check_loss_settings(tau=self.tau, kappa=self.kappa, lam=self.lam)
        if self.box is not None and not 0 < self.box[0] < self.box[1]:
            raise ValueError(f"box must be (beta_min, beta_max) with 0 < beta_min < beta_max, got {self.box}")

    def _solved(self, final: _Problem, init: dict):
        """One Newton solve of ``final`` from the natural parameters ``init``."""
        best = final.solve(final.from_natural(*(float(init[k]) for k in ("y0", "L", "a", "beta"))))
        return self._finish(final, best, best.nit)

    def _finish(self, final: _Problem, best: NewtonResult, n_iter: int):
        y0, L, a, beta = final.natural(best.x)
        self.params_ = {"y0": y0, "L": L, "a": a, "beta": beta}
        self.objective_ = float(best.fun)
        self.n_iter_ = n_iter
        self.converged_ = bool(best.converged)
        return self

    def _multistart(self, problems: list[_Problem], starts: list[np.ndarray]) -> tuple[NewtonResult, int]:
        """Screen the starts on the first stage; solve the ``n_keep`` best through every stage."""
        starts = np.array(starts)
        screened = problems[0].screen(starts, keep=self.n_keep)
        n_iter = int(screened.nit.sum())
        finals, carried = [], []
        for k in np.argsort(screened.fun, kind="stable")[: self.n_keep]:
            x = np.r_[screened.v[k], starts[k, 2:]]
            for i, prob in enumerate(problems):
                res = prob.solve(x)
                x = res.x
                n_iter += res.nit
                if i == 0:
                    # the later stages are deterministic in their start: one solve per first-stage optimum
                    if any(np.max(np.abs(res.x - c)) <= SAME_SOLUTION for c in carried):
                        break
                    carried.append(res.x)
            else:
                finals.append(res)
        return min(finals, key=lambda r: r.fun), n_iter

    @classmethod
    def refit_settings(cls, z, y, settings: Sequence[Mapping], inits: Sequence[Mapping], *, weights=None) -> list:
        """``[cls(**setting).fit(z, y, init=init, weights=weights) for setting, init in zip(settings, inits)]``,
        fit for fit, through one :class:`Refits` of the points."""
        refits = Refits(z, y, weights=weights, cls=cls)
        return [refits.fit(setting, init) for setting, init in zip(settings, inits, strict=True)]

    def predict(self, z) -> np.ndarray:
        p = self.params_
        return sigmoid_boundary(z, p["y0"], p["L"], p["a"], p["beta"])


class Refits:
    """Fits of one data set ``(z, y)`` (``weights`` as :meth:`SigmoidQuantileRegressor.fit`'s) at several loss
    settings, each ``cls(**setting).fit(z, y, init=init, weights=weights)`` fit for fit, with the points checked,
    sorted and grouped once and each ``(tau, kappa)``'s loss terms made once, when first needed: a bootstrap
    resample refitting several settings (``tau``, ``kappa``, ``lam``; other options as the constructor's,
    without ``rng``: no start is drawn) from their full-sample fits."""

    def __init__(self, z, y, *, weights=None, cls=SigmoidQuantileRegressor):
        self.z, self.y, self.weights, self.cls = z, y, weights, cls
        self.base, self.stages = None, {}

    def fit(self, setting: Mapping, init: Mapping) -> SigmoidQuantileRegressor:
        model = self.cls(**setting)
        model._check_settings()
        if self.base is None:
            zc, yc = check_zy(self.z, self.y, min_points=4)
            w = None if self.weights is None else _checked_weights(self.weights, zc)
            self.base = _Problem(zc, yc, model.tau, model.kappa, model.lam, model.box, w)
        elif model.box != self.base.box:
            raise ValueError(f"every setting must share the box, got {model.box} and {self.base.box}")
        key = (model.tau, model.kappa)
        if key not in self.stages:
            self.stages[key] = self.base.with_stage(*key)
        return model._solved(self.stages[key].with_stage(*key, lam=model.lam), init)


def fit_together(models: list[SigmoidQuantileRegressor], z, ys, inits: list[Mapping], weights=None) -> list:
    """``model.fit(z, y, init=init, weights=weights)`` of each model (all of the same settings) on the same ``z``
    and ``weights``, their Newton solves run in lockstep with their values and derivatives computed together
    (:func:`harness.stats._newton.solve_together`; with a box, one after the other): the one-at-a-time fits,
    to rounding (rarely, a rounding-level difference changes a step, and the two stop within the solves'
    tolerance of each other)."""
    m = models[0]
    if m.box is not None:
        return [model.fit(z, y, init=init, weights=weights) for model, y, init in zip(models, ys, inits)]
    m._check_settings()
    z, y = check_zy(z, ys[0], min_points=4)
    w = None if weights is None else _checked_weights(weights, z)
    final = _Problem(z, y, m.tau, m.kappa, m.lam, weights=w)
    ys = np.stack([final.y] + [check_zy(z, v, min_points=4)[1][final.order] for v in ys[1:]])
    points = LossPoints(ys, m.tau, m.kappa, final.ties, final.weights)
    starts = [final.from_natural(*(float(init[k]) for k in ("y0", "L", "a", "beta"))) for init in inits]
    results = solve_together(functools.partial(final.stacked, points), starts, final.A, final.b, ftol=FTOL)
    return [model._finish(final, r, r.nit) for model, r in zip(models, results)]


def fit_many(models: list[SigmoidQuantileRegressor], data: list[tuple], inits: list[Mapping]) -> list:
    """Each model fitted to its ``(z, y, weights)`` from its init, the solves run together (:func:`fit_together`)
    where the data sets share ``z`` and the weights."""
    z0, _, w0 = data[0]
    if all(np.array_equal(z, z0) and np.array_equal(w, w0) for z, _, w in data):
        return fit_together(models, z0, [y for _, y, _ in data], inits, weights=w0)
    return [m.fit(z, y, init=init, weights=w) for m, (z, y, w), init in zip(models, data, inits, strict=True)]
