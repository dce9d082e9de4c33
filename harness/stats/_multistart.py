"""What the boundary estimators' multi-start schemes share: the warm-up stages (their inputs are checked by
:mod:`harness.stats._inputs`).

Every start is solved on the first stage of a (tau, kappa) continuation; the best ``n_keep`` are
carried through the remaining stages; the lowest final objective wins. Each estimator solves its
stages with :func:`harness.stats._newton.active_set_newton`.
"""

from __future__ import annotations

__all__ = ["WARMUP_SCHEDULE", "warmup_stages"]

#: Warm-up stages (tau, kappa) run before the final stage, as in the
#: published pipeline's continuation; the final stage is the target (tau, kappa).
WARMUP_SCHEDULE: tuple[tuple[float, float], ...] = ((0.90, 10.0), (0.95, 25.0))


def warmup_stages(tau: float, kappa: float, warm_start: bool) -> list[tuple[float, float]]:
    """The stages to solve: the warm-up (capped at the target) then the target itself."""
    if not warm_start:
        return [(tau, kappa)]
    warm = [(min(t, tau), min(k, kappa)) for t, k in WARMUP_SCHEDULE]
    return [s for s in warm if s != (tau, kappa)] + [(tau, kappa)]
