"""Smoothed pinball (check) loss, written from the paper's Section 2.1.

The loss of a residual ``u = y - q`` at quantile level ``tau`` with smoothing
``kappa`` is::

    rho(u) = (1/kappa) * log(1 + exp(kappa * u)) + (tau - 1) * u

It is a smooth convex upper bound of the sharp check loss
``max(tau * u, (tau - 1) * u)``; the two differ by at most ``log(2)/kappa``,
attained at ``u = 0``.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

__all__ = [
    "check_loss_settings",
    "smoothed_pinball_loss",
    "smoothed_pinball_derivative",
    "check_loss",
    "literal_smoothed_pinball_loss",
    "smoothed_pinball_loss_and_derivative",
    "sum_of_logs",
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


def smoothed_pinball_loss_and_derivative(u, tau: float, kappa: float) -> tuple[np.ndarray, np.ndarray]:
    """Loss and derivative together, from one exponential.

    With ``x = kappa*u`` and ``e = exp(-|x|)`` (never overflows)::

        log(1 + exp(x)) = max(x, 0) + log1p(e)
        sigmoid(x)      = (1 if x >= 0 else e) / (1 + e)

    Same values as :func:`smoothed_pinball_loss` and
    :func:`smoothed_pinball_derivative` to rounding, at about two thirds of
    their combined cost (the optimiser's inner loop).
    """
    x = kappa * np.asarray(u, dtype=float)
    e = np.exp(-np.abs(x))
    loss = (np.maximum(x, 0.0) + np.log1p(e)) / kappa + (tau - 1.0) * (x / kappa)
    sig = np.where(x >= 0.0, 1.0, e) / (1.0 + e)
    return loss, sig + (tau - 1.0)


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
        edges = _EDGES.setdefault(n, np.arange(0, n, _RUN))
    return np.add.reduce(np.log(np.multiply.reduceat(factors, edges, axis=-1)), axis=-1)


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
