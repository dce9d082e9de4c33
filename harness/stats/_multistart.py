"""The optimisation scheme the boundary estimators share.

Every start is solved on the first stage of a (tau, kappa) continuation; the
best ``n_keep`` are carried through the remaining stages; the lowest final
objective wins. Each stage is an L-BFGS-B solve with analytic gradients.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from scipy.optimize import minimize

__all__ = ["WARMUP_SCHEDULE", "warmup_stages", "check_zy", "multistart_continuation"]

#: Warm-up stages (tau, kappa) run before the final stage, as in the
#: published pipeline's continuation; the final stage is the target (tau, kappa).
WARMUP_SCHEDULE: tuple[tuple[float, float], ...] = ((0.90, 10.0), (0.95, 25.0))

TIGHT = {"ftol": 1e-15, "gtol": 1e-11}


def warmup_stages(tau: float, kappa: float, warm_start: bool) -> list[tuple[float, float]]:
    """The stages to solve: the warm-up (capped at the target) then the target itself."""
    if not warm_start:
        return [(tau, kappa)]
    warm = [(min(t, tau), min(k, kappa)) for t, k in WARMUP_SCHEDULE]
    return [s for s in warm if s != (tau, kappa)] + [(tau, kappa)]


def check_zy(z, y) -> tuple[np.ndarray, np.ndarray]:
    z = np.asarray(z, dtype=float)
    y = np.asarray(y, dtype=float)
    if z.ndim != 1 or z.shape != y.shape:
        raise ValueError(f"z and y must be 1-d of equal length, got {z.shape} and {y.shape}")
    if z.size < 4 or not (np.all(np.isfinite(z)) and np.all(np.isfinite(y))):
        raise ValueError("need at least 4 finite (z, y) points")
    return z, y


def multistart_continuation(
    stages: Sequence[Callable[[np.ndarray], tuple[float, np.ndarray]]],
    starts: Sequence[np.ndarray],
    *,
    n_keep: int,
    bounds=None,
    intermediate_tol: dict | None = None,
    maxiter: int = 2000,
):
    """Solve ``stages`` (value-and-gradient functions) from every start.

    Returns the winning ``OptimizeResult`` of the last stage and the number
    of L-BFGS-B iterations spent in all. ``intermediate_tol`` (default: the
    tight tolerances) applies to every stage but the last.
    """
    n_iter = 0
    loose = intermediate_tol or TIGHT
    last = len(stages) - 1

    def solve(i: int, theta0: np.ndarray):
        nonlocal n_iter
        res = minimize(
            stages[i],
            theta0,
            jac=True,
            method="L-BFGS-B",
            bounds=bounds,
            options={"maxiter": maxiter, **(TIGHT if i == last else loose)},
        )
        n_iter += int(res.nit)
        return res

    first = sorted((solve(0, th) for th in starts), key=lambda r: r.fun)
    finals = []
    for res in first[:n_keep]:
        for i in range(1, len(stages)):
            res = solve(i, res.x)
        finals.append(res)
    return min(finals, key=lambda r: r.fun), n_iter
