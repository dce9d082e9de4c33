"""Checks of a smoothed pinball loss function against its definition (paper Section 2.1).

Two facts about ``rho(u) = log(1 + exp(kappa u))/kappa + (tau - 1) u``:

1. A stable implementation equals the printed formula wherever the latter can
   be evaluated in floating point (``exp(kappa u)`` does not overflow).
2. ``rho(u) - check(u) = log(1 + exp(-kappa |u|)) / kappa`` is non-negative
   and largest at ``u = 0``, so the sup-norm distance to the sharp check loss
   ``max(tau u, (tau - 1) u)`` is exactly ``log(2) / kappa``, for every ``tau``.

:func:`check_loss_function` applies both to any callable ``loss(u, tau,
kappa)``: this project's loss in the test suite, and the authors' loss in
their arm of the hyperparameter claim (the adapter loads this file by path,
so it imports numpy only).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["residual_grid", "printed_formula", "sharp_check_loss", "check_loss_function"]

#: exp overflows in double precision above about 709.78.
_EXP_SAFE = 700.0


def residual_grid(u_max: float = 1.0, n: int = 200_001) -> np.ndarray:
    """Symmetric grid on ``[-u_max, u_max]`` with ``u = 0`` on it (``n`` odd).

    Residuals of scores in [0, 1] against a boundary in [0, 1] lie in [-1, 1].
    """
    if n < 3 or n % 2 == 0:
        raise ValueError(f"n must be odd and >= 3 so that 0 is on the grid, got {n}")
    g = np.linspace(-u_max, u_max, n)
    g[n // 2] = 0.0
    return g


def printed_formula(u, tau: float, kappa: float) -> np.ndarray:
    """``log(1 + exp(kappa u)) / kappa + (tau - 1) u`` exactly as printed (overflows for large ``kappa u``)."""
    u = np.asarray(u, dtype=float)
    with np.errstate(over="ignore"):
        return np.log1p(np.exp(kappa * u)) / kappa + (tau - 1.0) * u


def sharp_check_loss(u, tau: float) -> np.ndarray:
    """The check (pinball) loss ``max(tau u, (tau - 1) u)``."""
    u = np.asarray(u, dtype=float)
    return np.maximum(tau * u, (tau - 1.0) * u)


def check_loss_function(loss, tau: float, kappa: float, u=None) -> dict:
    """Compare ``loss(u, tau, kappa)`` with the printed formula and with the sharp check loss.

    Parameters
    ----------
    loss : callable
        ``loss(u, tau, kappa) -> array`` (elementwise).
    tau, kappa : float
    u : array, optional
        Residuals to evaluate on (default :func:`residual_grid`).

    Returns
    -------
    dict
        ``literal_max_gap`` (largest ``|loss - printed formula|`` where the
        formula is finite), ``n_compared``, ``n_skipped_overflow``,
        ``sharp_sup_gap`` (largest ``loss - check``), ``sharp_min_gap``
        (smallest; >= 0 up to rounding for an upper bound), ``argmax_u``,
        ``theory = log(2)/kappa`` and ``sharp_rel_error = |sharp_sup_gap -
        theory| / theory``; ``u_min``, ``u_max``, ``tau``, ``kappa``.
    """
    u = residual_grid() if u is None else np.asarray(u, dtype=float)
    values = np.asarray(loss(u, tau, kappa), dtype=float)
    ok = kappa * u <= _EXP_SAFE
    literal = np.abs(values[ok] - printed_formula(u[ok], tau, kappa))
    d = values - sharp_check_loss(u, tau)
    i = int(np.argmax(d))
    theory = math.log(2.0) / kappa
    return {
        "tau": float(tau),
        "kappa": float(kappa),
        "literal_max_gap": float(literal.max()),
        "n_compared": int(ok.sum()),
        "n_skipped_overflow": int((~ok).sum()),
        "sharp_sup_gap": float(d[i]),
        "sharp_min_gap": float(d.min()),
        "argmax_u": float(u[i]),
        "theory": theory,
        "sharp_rel_error": abs(float(d[i]) - theory) / theory,
        "u_min": float(u.min()),
        "u_max": float(u.max()),
    }
