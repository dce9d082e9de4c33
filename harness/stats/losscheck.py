"""Checks of the smoothed pinball loss against its definition (paper Section 2.1).

Two facts about ``rho(u) = log(1 + exp(kappa u))/kappa + (tau - 1) u``:

1. The stable form used in the fitter (``logaddexp``) equals the printed
   formula wherever the latter can be evaluated in floating point.
2. ``rho(u) - check(u) = log(1 + exp(-kappa |u|)) / kappa`` is non-negative
   and largest at ``u = 0``, so the sup-norm distance to the sharp check loss
   ``max(tau u, (tau - 1) u)`` is exactly ``log(2) / kappa``, for every ``tau``.
"""

from __future__ import annotations

import math

import numpy as np

from .pinball import check_loss, literal_smoothed_pinball_loss, smoothed_pinball_loss

__all__ = ["residual_grid", "literal_formula_gap", "sharp_loss_gap"]

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


def literal_formula_gap(tau: float, kappa: float, u=None) -> dict:
    """Largest ``|smoothed_pinball_loss - literal formula|`` on a grid.

    Points where ``exp(kappa u)`` would overflow are left out of the
    comparison (the literal formula is undefined there in floating point)
    and counted.

    Returns
    -------
    dict
        ``tau, kappa, max_abs_gap, n_compared, n_skipped_overflow, u_min, u_max``.
    """
    u = residual_grid() if u is None else np.asarray(u, dtype=float)
    ok = kappa * u <= _EXP_SAFE
    gap = np.abs(smoothed_pinball_loss(u[ok], tau, kappa) - literal_smoothed_pinball_loss(u[ok], tau, kappa))
    return {"tau": float(tau), "kappa": float(kappa), "max_abs_gap": float(gap.max()),
            "n_compared": int(ok.sum()), "n_skipped_overflow": int((~ok).sum()),
            "u_min": float(u.min()), "u_max": float(u.max())}


def sharp_loss_gap(tau: float, kappa: float, u=None) -> dict:
    """Sup-norm distance to the sharp check loss vs ``log(2)/kappa``.

    Returns
    -------
    dict
        ``tau, kappa, sup_gap`` (max over the grid of ``rho - check``),
        ``min_gap`` (>= 0 up to rounding, about -2e-16: the smoothed loss is an
        upper bound),
        ``argmax_u``, ``theory = log(2)/kappa``,
        ``rel_error = |sup_gap - theory| / theory``.
    """
    u = residual_grid() if u is None else np.asarray(u, dtype=float)
    d = smoothed_pinball_loss(u, tau, kappa) - check_loss(u, tau)
    i = int(np.argmax(d))
    theory = math.log(2.0) / kappa
    return {"tau": float(tau), "kappa": float(kappa), "sup_gap": float(d[i]), "min_gap": float(d.min()),
            "argmax_u": float(u[i]), "theory": theory, "rel_error": abs(float(d[i]) - theory) / theory}
