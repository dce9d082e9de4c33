"""The budgets of work a claim file may ask for, checked when it is loaded (:func:`harness.claimfiles.spec.load_claim`).

Counts that are each within their caps can together ask for hours of work: a
claim's measurement, controls, bootstrap resamples and multiverse
specifications each redo the protocol's fits, its permutation tests redo
permuted refits, its coverage study redoes the claim's resampling on simulated
data sets. Each total is held to a budget, and a claim over it is told which
count to lower and to what.

``claim`` is a validated :class:`harness.claimfiles.spec.Claim` throughout (not imported:
:mod:`harness.claimfiles.spec` imports this module).
"""

from __future__ import annotations

from ..stats.methods import METHODS, needed, resampling_calls
from .multiverse_spec import n_specifications

__all__ = ["FIT_BUDGET", "PERMUTATION_BUDGET", "CALIBRATION_BUDGET", "budget_checks", "fits_per_run"]

#: Model fits a claim may ask for: its measurement, each control and each bootstrap resample redo the
#: protocol's fits (tasks x splits x settings x estimators); the claims ask for at most about 10,000.
FIT_BUDGET = 20_000
#: Permuted refits a claim may ask for (the permutation test, its eps table, its precise p-value, their
#: refinement up to its cap and the power study's replicates x permutations x 2 mean models, the shifts of a
#: replicate sharing its permutations in one product); the claims ask for about 9 million.
PERMUTATION_BUDGET = 32_000_000
#: Model fits a claim's coverage study may ask for (replicates x calls per replicate x fits per call); the
#: committed claims' studies may run 600 data sets, which is at most 5.8 million (004's).
CALIBRATION_BUDGET = 6_000_000


def fits_per_run(params) -> tuple[int, str]:
    """The model fits one run of a protocol's measurement makes, from its parameters, and how they are counted:
    tasks x rolling splits x settings of a sweep x estimators (each present only where the parameters have it)."""
    n, parts = 1, []
    tasks = getattr(params, "tasks", None)
    if isinstance(tasks, dict) and tasks:
        n, parts = n * len(tasks), [*parts, f"{len(tasks)} tasks"]
    periods = getattr(params, "periods", None)
    if isinstance(periods, list) and len(periods) > 1:
        n, parts = n * (len(periods) - 1), [*parts, f"{len(periods) - 1} splits"]
    grids = [getattr(params, g, None) for g in ("tau_grid", "kappa_grid", "lam_grid")]
    if any(isinstance(g, list) for g in grids):
        k = 1 + sum(len(g) for g in grids if isinstance(g, list))
        n, parts = n * k, [*parts, f"{k} settings"]
    if getattr(params, "ispline_intervals", None) is not None:  # the sigmoid and the I-spline
        n, parts = n * 2, [*parts, "2 estimators"]
    return n, " × ".join(parts) or "1"


def _over_budget(parts: list[tuple[str, int, int, str]], budget: int, unit: str, name: str) -> str | None:
    """``parts``: (key, count, work per count, words for the count). The problem at the largest part, or None."""
    total = sum(count * each for _, count, each, _ in parts)
    if total <= budget:
        return None
    key, count, each, words = max(parts, key=lambda p: p[1] * p[2])
    rest = total - count * each
    most = max((budget - rest) // each, 0) if each else 0
    return (
        f"{key}: {count:,} {words} make {count * each:,} {unit} ({total:,} with the rest of the claim), over the "
        f"budget of {budget:,} {unit} a claim may ask for (budgets.{name}); at most {most:,} here"
    )


def budget_checks(claim, params, cparams: dict, problems: list[str]) -> None:
    """Refuse counts that are each within their caps but together ask for hours of work."""
    fits, how = fits_per_run(params)
    each = f"× {fits} fits each ({how})"
    parts = [("params", 1, fits, f"run of the measurement {each}")]
    for i in range(len(claim.controls)):
        cp = cparams.get(i)
        name = next((k for k in ("n_relabellings", "n_shuffles") if hasattr(cp, k)), None)
        repeats = (getattr(cp, name) or getattr(params, name, None) or 1) if name else 1  # shuffle_z: the protocol's
        key = f"controls[{i}].params.{name}" if name else f"controls[{i}]"
        parts.append((key, repeats, fits, f"repetitions of the measurement {each}"))
    if claim.bootstrap is not None:
        parts.append(("bootstrap.n_resamples", claim.bootstrap.n_resamples, fits, f"resamples {each}"))
    if claim.multiverse is not None:
        n_specs = n_specifications(claim.multiverse, params.model_dump(mode="json"), excluded=False)
        parts.append(("multiverse.choices", n_specs, fits, f"specifications (before exclusions) {each}"))
    problem = _over_budget(parts, FIT_BUDGET, "model fits", "FIT_BUDGET")
    if problem:
        problems.append(problem)
    c = claim.bootstrap.calibration if claim.bootstrap is not None else None
    if c is not None:
        B = claim.bootstrap.n_resamples
        calls = resampling_calls(needed([METHODS[m] for m in c.methods], 10**6), B)
        words = f"simulated data sets × {calls:,} calls (the claim's resampling) × {fits} fits each ({how})"
        problem = _over_budget(
            [("bootstrap.calibration.replicates", c.replicates, calls * fits, words)],
            CALIBRATION_BUDGET,
            "model fits",
            "CALIBRATION_BUDGET",
        )
        if problem:
            problems.append(problem)
    n_perm = getattr(params, "n_perm", None)
    if not isinstance(n_perm, int):
        return
    eps = len(getattr(params, "eps_grid", None) or [])
    parts = [("params.n_perm", n_perm, 1 + eps, f"permutations × {1 + eps} (the test and its eps table)")]
    precise = getattr(params, "n_perm_precise", 0) or 0
    parts.append(("params.n_perm_precise", precise, 1, "permutations"))
    cap = getattr(params, "n_perm_max", None)
    if cap:
        decided = 1 + eps + bool(precise) + sum(not hasattr(cp, "n_draws") for cp in cparams.values())
        words = f"permutations at most × {decided} p-values (each refined only within its error of alpha)"
        parts.append(("params.n_perm_max", cap, decided, words))
    power = getattr(params, "power", None)
    if power is not None:
        words = f"replicates × {power.n_perm:,} permutations × 2 mean models (every shift on the same permutations)"
        parts.append(("params.power.n_replicates", power.n_replicates, 2 * power.n_perm, words))
    for i, cp in cparams.items():
        if hasattr(cp, "n_draws"):
            parts.append((f"controls[{i}].params.n_draws", cp.n_draws, 1, "relabelled refits"))
        else:
            parts.append((f"controls[{i}]", 1, n_perm, "rerun of the permutation test"))
    mv = claim.multiverse
    if mv is not None and mv.joint_null is not None:
        n_specs = n_specifications(mv.model_copy(update={"estimands": {}}), {}, excluded=False)
        words = f"null data sets × {n_specs} specifications × {n_perm:,} permutations"
        parts.append(("multiverse.joint_null.n_datasets", mv.joint_null.n_datasets, n_specs * n_perm, words))
    problem = _over_budget(parts, PERMUTATION_BUDGET, "permuted refits", "PERMUTATION_BUDGET")
    if problem:
        problems.append(problem)
