"""Smoothed pinball (check) loss, written from the paper's Section 2.1.

The loss of a residual ``u = y - q`` at quantile level ``tau`` with smoothing
``kappa`` is::

    rho(u) = (1/kappa) * log(1 + exp(kappa * u)) + (tau - 1) * u

It is a smooth convex upper bound of the sharp check loss
``max(tau * u, (tau - 1) * u)``; the two differ by at most ``log(2)/kappa``,
attained at ``u = 0``.
"""

from __future__ import annotations

import copy
import functools

import numpy as np
from scipy.special import expit

from ._kernel import NO_FACTORS, NO_STARTS, NO_WEIGHTS, loss_sums

__all__ = [
    "check_loss_settings",
    "smoothed_pinball_loss",
    "smoothed_pinball_derivative",
    "check_loss",
    "literal_smoothed_pinball_loss",
    "sum_of_logs",
    "LossPoints",
]

#: Factors in [1, 2] multiplied in runs of this many stay below 2**1000, inside the range of a double.
_RUN = 1000
_EDGES: dict[int, np.ndarray] = {}


def check_loss_settings(*, tau: float, kappa: float | None = None, lam: float | None = None) -> None:
    """Raise ``ValueError`` unless ``0 < tau < 1``, ``kappa > 0`` and ``lam >= 0`` (finite), where given."""
    checks = [("tau", tau, 0 < tau < 1, "in (0, 1)")]
    if kappa is not None:
        checks.append(("kappa", kappa, kappa > 0, "> 0"))
    if lam is not None:
        checks.append(("lam", lam, lam >= 0, ">= 0"))
    for name, value, ok, want in checks:
        if isinstance(value, bool) or not np.isfinite(value) or not ok:
            raise ValueError(f"{name} must be a finite number {want}, got {value!r}")


def smoothed_pinball_loss(u, tau: float, kappa: float) -> np.ndarray:
    """Elementwise smoothed pinball loss.

    Parameters
    ----------
    u : array_like
        Residuals ``y - q``.
    tau : float
        Quantile level in (0, 1).
    kappa : float
        Smoothing parameter, > 0. Larger is sharper.

    Returns
    -------
    ndarray
        ``log1p(exp(kappa*u))/kappa + (tau-1)*u``, computed with ``logaddexp``
        so that it neither overflows for large ``kappa*u`` nor loses the tail.

    Examples
    --------
    >>> float(smoothed_pinball_loss(0.0, 0.5, 10.0))  # log(2)/10
    0.06931471805599453
    """
    u = np.asarray(u, dtype=float)
    return np.logaddexp(0.0, kappa * u) / kappa + (tau - 1.0) * u


def smoothed_pinball_derivative(u, tau: float, kappa: float) -> np.ndarray:
    """``d rho / du = sigmoid(kappa*u) + tau - 1``."""
    u = np.asarray(u, dtype=float)
    return expit(kappa * u) + (tau - 1.0)


def sum_of_logs(factors: np.ndarray) -> np.ndarray:
    """``sum(log(factors), axis=-1)`` for factors in ``[1, 2]``, such as ``1 + exp(-|kappa u|)``.

    The log of their products over runs of 1000 (each below ``2**1000``): a few logarithms instead of
    one per element, which is most of the cost of the smoothed pinball loss's value (``log1p`` takes
    longer than the ``exp`` before it). The rounding of each factor (``1 + e`` drops ``e`` below
    ``2**-53``) and of each product adds at most ``2**-53`` to the sum per element, the same order as
    the rounding of a sum of ``log1p`` terms.

    Examples
    --------
    >>> e = np.exp(-np.linspace(0.0, 40.0, 5))
    >>> bool(abs(float(sum_of_logs(1.0 + e)) - float(np.log1p(e).sum())) < 1e-15)
    True
    """
    n = factors.shape[-1]
    edges = _EDGES.get(n)
    if edges is None:
        edges = np.arange(0, n, _RUN)
        if len(_EDGES) < 4096:  # one per sample size met; resamples of a cluster bootstrap vary in size
            _EDGES[n] = edges
    return np.add.reduce(np.log(np.multiply.reduceat(factors, edges, axis=-1)), axis=-1)


#: ``exp(-kappa |y - q|)`` is taken as a product of ``exp(-+kappa y)``, computed once, and
#: ``exp(+-kappa q)`` when ``kappa * max(1, |y|)`` is at most this (with ``0 <= q <= 1``): every
#: factor and product stays far inside the normal range of a double (``e**600``, ``e**-600``).
_SEPARABLE = 300.0


class LossPoints:
    """The weighted mean smoothed pinball loss over fixed points ``y`` at a fixed ``(tau, kappa)``, at curves
    ``q = y0 + L s`` whose ``s`` is given once per distinct ``z`` (``ties``, the points in its order).

    ``weights`` (optional, positive) weigh the points: ``J = sum_i w_i rho(u_i) / sum_i w_i``; an integer
    weight has point ``i`` stand for ``w_i`` equal points (a resample's multiplicity). :meth:`at` gives ``J``
    and its derivatives in ``q``. With ``x = kappa (y - q)`` and ``e = exp(-|x|)``, one ``e`` per point serves
    all three::

        log(1 + exp(x)) = max(x, 0) - log(sigmoid(|x|)),   sigmoid(|x|) = 1 / (1 + e)
        dJ/dq  = -(sigmoid(x) + tau - 1) w / n
        d2J/dq2 = kappa * sigmoid(x) sigmoid(-x) w / n,   sigmoid(x) sigmoid(-x) = e / (1 + e)**2

    (``n = sum_i w_i``; unweighted, ``w = 1``), in one compiled pass over the points
    (:func:`harness.stats._kernel.loss_sums`; the logs of unweighted or count-weighted points as logs of products,
    as :func:`sum_of_logs` takes them). With ties, ``q`` is one value per distinct ``z``, and ``exp(-x)`` is
    ``exp(-kappa y) exp(kappa q)``: the factors of ``y`` are computed once, those of ``q`` once per distinct
    ``z``, and no exponential is taken per point per evaluation.
    """

    def __init__(self, y: np.ndarray, tau: float, kappa: float, ties, weights=None):
        self.y, self.tau, self.kappa, self.ties = y, tau, kappa, ties
        self.ky = kappa * y
        self.w = None if weights is None else np.asarray(weights, dtype=float)
        self.n = y.shape[-1] if weights is None else float(self.w.sum())
        self.w_tied = ties.sums(np.ones(y.shape[-1]) if weights is None else self.w)  # per distinct z
        # the compiled pass's weights (empty: none), and whether they are counts (a resample's): small integers
        self.w_kernel = NO_WEIGHTS if weights is None else self.w
        self.counts = weights is None or bool(np.all((self.w == np.round(self.w)) & (self.w <= 64)))
        self.factors = None
        if ties.sizes is not None and kappa * max(1.0, float(np.abs(y).max())) <= _SEPARABLE:
            up = np.exp(self.ky)
            self.factors = (1.0 / up, up)  # exp(-kappa y), exp(kappa y)

    def exp_terms(self, kq: np.ndarray) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
        """``(x, exp(-x), exp(-|x|))`` with ``x = kappa (y - q)``, for ``kappa q`` given per distinct ``z``
        (last axis; leading axes are curves): ``exp(-x)`` from the factors of ``y`` and ``q`` (``None``
        where they are not used: no ties, or outside the guard), ``exp(-|x|)`` the smaller of it and its
        inverse, or computed per point."""
        x = self.ky - self.ties.spread(kq)
        if self.factors is None:
            e = np.abs(x)
            np.negative(e, out=e)
            return x, None, np.exp(e, out=e)
        ex = self.factors[0] * self.ties.spread(np.exp(kq))
        return x, ex, np.minimum(ex, 1.0 / ex)

    def at(self, y0: float, L: float, s: np.ndarray):
        """``(J, derivatives)`` at ``q = y0 + L s``; ``derivatives()`` gives ``(r1, r2)``, ``dJ/dq_i`` and
        ``d2J/dq_i**2`` summed over the points of each distinct ``z`` (one compiled pass: :mod:`._kernel`)."""
        kq = s * (self.kappa * L)
        kq += self.kappa * y0
        J, r1, r2 = loss_sums(np.atleast_2d(kq), np.array([self.tau, self.kappa, 0.0, self.n]), *self.compiled)
        if kq.ndim == 1:
            return float(J[0]), lambda: (r1[0], r2[0])
        return J, lambda: (r1, r2)

    @functools.cached_property
    def compiled(self) -> tuple:
        """The points as the compiled functions of :mod:`harness.stats._kernel` take them: ``kappa y`` (2-D),
        ``exp(-kappa y)`` (or none), the ties' starts (or none), the weights (or none), whether they are counts, and
        the weights summed per distinct ``z``."""
        fneg = NO_FACTORS if self.factors is None else np.atleast_2d(self.factors[0])
        starts = NO_STARTS if self.ties.starts is None else self.ties.starts
        return np.atleast_2d(self.ky), fneg, starts, self.w_kernel, self.counts, self.w_tied

    def rows(self, ks: list[int]) -> LossPoints:
        """The points of the curves ``ks`` (increasing) of a stack of unweighted ``y`` (shape ``(K, n)``, one row a
        curve's points; :meth:`at` then takes ``y0``, ``L`` of shape ``(K, 1)`` and gives one ``J`` per row)."""
        if len(ks) == self.y.shape[0]:
            return self
        out = copy.copy(self)
        out.__dict__.pop("compiled", None)
        out.y, out.ky = self.y[ks], self.ky[ks]
        if self.factors is not None:
            out.factors = (self.factors[0][ks], self.factors[1][ks])
        return out


def check_loss(u, tau: float) -> np.ndarray:
    """The sharp pinball loss ``u * (tau - 1{u < 0})``."""
    u = np.asarray(u, dtype=float)
    return np.maximum(tau * u, (tau - 1.0) * u)


def literal_smoothed_pinball_loss(u, tau: float, kappa: float) -> np.ndarray:
    """The paper's expression evaluated literally, ``log(1 + exp(kappa*u))``.

    Kept only to check :func:`smoothed_pinball_loss` against the printed
    formula; it overflows for ``kappa*u`` above about 709.
    """
    u = np.asarray(u, dtype=float)
    with np.errstate(over="ignore"):
        return np.log(1.0 + np.exp(kappa * u)) / kappa + (tau - 1.0) * u
