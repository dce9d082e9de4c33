"""Sigmoid quantile boundary fitted by smoothed pinball loss (paper Section 2.1).

Model::

    q(z; theta) = y0 + L * sigmoid(a + beta * z),   beta >= 0, 0 <= y0, y0 + L <= 1

Objective (the convention that reproduces the published numbers: the *mean*
of the loss over points, not the sum the paper writes, plus a ridge on the
slope only)::

    J(theta) = (1/n) * sum_i rho_{tau,kappa}(y_i - q(z_i; theta)) + lam * beta**2

The optimiser is our own: L-BFGS-B on an unconstrained reparameterisation
that satisfies the constraints by construction,

    y0   = sigmoid(u0)                      in (0, 1)
    L    = (1 - y0) * sigmoid(u1)           so 0 <= L and y0 + L <= 1
    beta = exp(v)                           > 0
    a + beta * z = c + beta * (z - zbar)    (centred for conditioning)

The only box is a numerical guard on ``v`` (``beta`` between ``e**-30`` and
``1e3`` per unit of z), far outside any slope the data can resolve; it keeps
line searches from overflowing ``exp``.

with analytic gradients, several starts, and optionally a warm-up through
easier (tau, kappa) stages before the final one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit, logit

from ._multistart import WARMUP_SCHEDULE, check_zy, multistart_continuation, warmup_stages
from .pinball import smoothed_pinball_loss, smoothed_pinball_loss_and_derivative

__all__ = [
    "SigmoidQuantileRegressor",
    "sigmoid_boundary",
    "sigmoid_objective",
    "WARMUP_SCHEDULE",
    "BETA_MAX",
]



def sigmoid_boundary(z, y0: float, L: float, a: float, beta: float) -> np.ndarray:
    """``y0 + L * sigmoid(a + beta * z)``."""
    return y0 + L * expit(a + beta * np.asarray(z, dtype=float))


def sigmoid_objective(params, z, y, *, tau: float, kappa: float, lam: float) -> float:
    """Mean smoothed pinball loss plus ``lam * beta**2`` at natural parameters.

    ``params`` is ``(y0, L, a, beta)``.
    """
    y0, L, a, beta = (float(p) for p in params)
    u = np.asarray(y, dtype=float) - sigmoid_boundary(z, y0, L, a, beta)
    return float(np.mean(smoothed_pinball_loss(u, tau, kappa)) + lam * beta**2)


@dataclass(frozen=True)
class _Problem:
    """Data and the stage's loss settings, with the value/gradient in theta.

    Without a box, ``theta = (u0, u1, c, v)`` and the sigmoid's argument is
    ``t = c + beta*(z - zbar)``. With a box (``zlo < zhi``), ``theta = (u0, u1,
    w, v)``, the midpoint ``z* = zlo + (zhi - zlo)*sigmoid(w)`` stays inside
    ``[zlo, zhi]`` and ``t = beta*(z - z*)``; the slope's limits are then
    bounds on ``v`` handled by L-BFGS-B.
    """

    z: np.ndarray
    y: np.ndarray
    zbar: float
    tau: float
    kappa: float
    lam: float
    zlo: float | None = None
    zhi: float | None = None

    def _shape(self, w_or_c: float, beta: float):
        """``(t, dt/d(third coordinate))`` for both parameterisations."""
        if self.zlo is None:
            return w_or_c + beta * (self.z - self.zbar), 1.0
        span = self.zhi - self.zlo
        sw = expit(w_or_c)
        zstar = self.zlo + span * sw
        return beta * (self.z - zstar), -beta * span * sw * (1.0 - sw)

    def natural(self, theta: np.ndarray) -> tuple[float, float, float, float]:
        u0, u1, c, v = theta
        y0 = float(expit(u0))
        L = float((1.0 - y0) * expit(u1))
        beta = float(np.exp(v))
        if self.zlo is None:
            return y0, L, float(c - beta * self.zbar), beta
        zstar = self.zlo + (self.zhi - self.zlo) * float(expit(c))
        return y0, L, -beta * zstar, beta

    def value_and_grad(self, theta: np.ndarray) -> tuple[float, np.ndarray]:
        u0, u1, c, v = theta
        y0, s1, beta = expit(u0), expit(u1), np.exp(v)
        L = (1.0 - y0) * s1
        t, dt_dc = self._shape(c, beta)
        s = expit(t)
        u = self.y - (y0 + L * s)
        n = u.size
        loss, dloss = smoothed_pinball_loss_and_derivative(u, self.tau, self.kappa)
        obj = np.sum(loss) / n + self.lam * beta**2
        # dJ/dq_i = -rho'(u_i) / n
        g = -dloss / n
        gs = g * s
        sum_g, sum_gs = g.sum(), gs.sum()
        gss = gs * (1.0 - s) * L  # dJ/dt_i
        # q = y0 + (1 - y0) s1 s  =>  dq/du0 = y0 (1-y0) (1 - s1 s), dq/du1 = (1-y0) s1 (1-s1) s
        # dt/dv = beta * (t / beta) = t when t is linear in beta, in both parameterisations
        # (t = c + beta*dz has dt/dv = beta*dz = t - c).
        dt_dv = t - c if self.zlo is None else t
        grad = np.array(
            [
                y0 * (1.0 - y0) * (sum_g - s1 * sum_gs),
                (1.0 - y0) * s1 * (1.0 - s1) * sum_gs,
                gss.sum() * dt_dc,
                np.sum(gss * dt_dv) + 2.0 * self.lam * beta**2,
            ]
        )
        return float(obj), grad


#: The numerical ceiling on the slope (per unit of z): far beyond any slope the data resolve; a fit that
#: reaches it is a step.
BETA_MAX = 1e3
_V_BOUNDS = (-30.0, float(np.log(BETA_MAX)))


def _theta_from_natural(y0: float, L: float, a: float, beta: float, zbar: float, eps: float = 1e-9,
                        box: tuple[float, float] | None = None):
    y0c = float(np.clip(y0, eps, 1.0 - eps))
    frac = float(np.clip(L / (1.0 - y0c), eps, 1.0 - eps))
    beta = max(beta, eps)
    if box is None:
        return np.array([logit(y0c), logit(frac), a + beta * zbar, np.log(beta)])
    zlo, zhi = box
    pos = float(np.clip((-a / beta - zlo) / (zhi - zlo), 1e-6, 1 - 1e-6))
    return np.array([logit(y0c), logit(frac), logit(pos), np.log(beta)])


class SigmoidQuantileRegressor:
    """Quantile boundary ``y0 + L*sigmoid(a + beta z)`` by smoothed pinball loss.

    Parameters
    ----------
    tau, kappa, lam : float
        Quantile level, smoothing, ridge weight on ``beta**2``.
    warm_start : bool
        Run the stages of :data:`WARMUP_SCHEDULE` (capped at the target
        ``tau``/``kappa``) before the final stage; ``False`` solves the final
        stage directly from every start ("cold start").
    n_random : int
        Random starts added to the deterministic grid of starts.
    n_keep : int
        Starts carried past the first stage (the best by first-stage objective).
    box : (float, float), optional
        Not part of the paper's model: restrict the slope to
        ``box[0] <= beta <= box[1]`` and the midpoint ``-a/beta`` to the range
        of the training ``z``, as the authors' released optimiser does. Used
        only to measure how much that box moves a result.
    rng : numpy.random.Generator, optional
        Source of the random starts. Required when ``n_random > 0``.

    Attributes
    ----------
    params_ : dict
        ``{"y0", "L", "a", "beta"}`` at the optimum.
    objective_ : float
        Final-stage objective at ``params_``.
    n_iter_ : int
        L-BFGS-B iterations summed over starts and stages.
    converged_ : bool
        Whether the winning start's final stage reported convergence.
    """

    def __init__(
        self,
        *,
        tau: float = 0.98,
        kappa: float = 50.0,
        lam: float = 1e-3,
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
    def _starts(self, z: np.ndarray, y: np.ndarray, zbar: float) -> list[np.ndarray]:
        """Deterministic grid of (midpoint, slope) shapes plus random ones.

        The level starts at a low quantile of ``y`` and the top at its
        ``tau``-quantile, so every start is a plausible upper envelope.
        """
        lo = float(np.quantile(y, 0.05))
        hi = float(np.quantile(y, self.tau))
        mids = np.quantile(z, [0.1, 0.5, 0.9])
        slopes = np.array([0.3, 1.0, 3.0])
        shapes = [(m, b) for m in mids for b in slopes]
        if self.n_random:
            if self.rng is None:
                raise ValueError("n_random > 0 needs an explicit rng (numpy.random.Generator)")
            m_r = self.rng.uniform(z.min(), z.max(), self.n_random)
            b_r = np.exp(self.rng.uniform(np.log(0.05), np.log(20.0), self.n_random))
            shapes += list(zip(m_r, b_r))
        span = (float(z.min()), float(z.max())) if self.box is not None else None
        if self.box is not None:
            shapes = [(m, float(np.clip(b, *self.box))) for m, b in shapes]
        return [_theta_from_natural(lo, max(hi - lo, 1e-3), -b * m, b, zbar, box=span) for m, b in shapes]

    def fit(self, z, y):
        z, y = check_zy(z, y)
        zbar = float(z.mean())
        if self.box is None:
            zlo = zhi = None
            v_bounds = _V_BOUNDS
        else:
            if not 0 < self.box[0] < self.box[1]:
                raise ValueError(f"box must be (beta_min, beta_max) with 0 < beta_min < beta_max, got {self.box}")
            zlo, zhi = float(z.min()), float(z.max())
            v_bounds = (float(np.log(self.box[0])), float(np.log(self.box[1])))
        problems = [_Problem(z, y, zbar, t, k, self.lam, zlo, zhi)
                    for t, k in warmup_stages(self.tau, self.kappa, self.warm_start)]
        # Intermediate stages only need to land in the right basin; the final
        # stage is solved to near machine precision.
        best, n_iter = multistart_continuation(
            [p.value_and_grad for p in problems], self._starts(z, y, zbar), n_keep=self.n_keep,
            bounds=[(None, None), (None, None), (None, None), v_bounds],
            intermediate_tol={"ftol": 1e-10, "gtol": 1e-7})
        y0, L, a, beta = problems[-1].natural(best.x)
        self.params_ = {"y0": y0, "L": L, "a": a, "beta": beta}
        self.objective_ = float(best.fun)
        self.n_iter_ = n_iter
        self.converged_ = bool(best.success)
        return self

    def predict(self, z) -> np.ndarray:
        p = self.params_
        return sigmoid_boundary(z, p["y0"], p["L"], p["a"], p["beta"])
