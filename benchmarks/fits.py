"""The sigmoid fit side by side with the authors' fitter, and from a known optimum.

``fit-vs-authors``: the six Table 1 fits of claim 002, each task's
:class:`~harness.stats.sigmoid.SigmoidQuantileRegressor` fit (the claim's
settings and its own starts: the generator as the claim's measurement reaches
that task; no optimum supplied) against the authors'
``fit_sigmoid_enhanced(z_sorted, y, tau, kappa_final, lambda_b, n_zstar_grid=10,
n_b_grid=10, n_random=100, seed=0)`` -- the call their CLI makes, see
``harness/authors/adapters/authors_sigmoid.py`` -- imported in this process from the
verified pinned checkout. Both get the same ``(z, y)`` (theirs sorted by
``z``, as their CLI does). Each repeat times our fit then theirs, task by task.

``fit-from-optimum``: on one bootstrap resample per task, a fresh fit (as
above) against ``fit(z, y, init=full_sample_params)``, the entry a bootstrap
uses, interleaved the same way.

Both print one line per task and a summary line; times are medians in ms.
"""

from __future__ import annotations

import copy
import statistics
import sys
import time

import numpy as np

from harness.authors.adapters.authors_sigmoid import CLI_FIT_ARGS as AUTHORS_ARGS
from harness.claimfiles.spec import load_claim
from harness.core.errors import UpstreamError
from harness.core.paths import PROJECT_ROOT
from harness.stats.leaderboard import task_arrays, with_log_compute
from harness.stats.sigmoid import SigmoidQuantileRegressor

CLAIM_FILE = "002_table1_boundary_1e24.yaml"
UPSTREAM = "prescriptive-scaling"
SETTINGS = ("tau", "kappa", "lam", "warm_start", "n_random")


def _claim_fits(tables):
    """``(settings, {label: (z, y, generator state)})`` for claim 002's six fits.

    The state is the one the claim's measurement generator (``SeedSequence(seed)``'s
    first child, as ``harness/build/runner.py`` makes it) has when it reaches the task.
    """
    claim = load_claim(PROJECT_ROOT / "claims" / CLAIM_FILE)
    p = claim.params.model_dump()
    frame = with_log_compute(tables.frame(p["table"]), p["tokens_col"], p["params_col"], float(p["multiplier"]))
    settings = {k: p[k] for k in SETTINGS}
    rng = np.random.default_rng(np.random.SeedSequence(claim.seed).spawn(1)[0])
    out = {}
    for label, col in p["tasks"].items():
        z, y = task_arrays(frame, col)
        out[label] = (z, y, copy.deepcopy(rng.bit_generator.state))
        SigmoidQuantileRegressor(rng=rng, **settings).fit(z, y)
    return settings, out


def _ours(settings, z, y, state, **fit_kw):
    rng = np.random.default_rng()
    rng.bit_generator.state = state
    model = SigmoidQuantileRegressor(rng=rng, **settings)
    t0 = time.perf_counter()
    model.fit(z, y, **fit_kw)
    return time.perf_counter() - t0, model.objective_


def _authors_fitter():
    """``fit_sigmoid_enhanced`` from the verified checkout, or the reason it cannot be had."""
    from harness.authors.checkout import verified_tree

    try:
        root, _ = verified_tree(UPSTREAM)
    except UpstreamError as exc:
        return None, str(exc)
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    from skill_frontier.core.sigmoid_quantile_optimizer import fit_sigmoid_enhanced

    return fit_sigmoid_enhanced, None


def _medians(cases: dict, repeats: int) -> dict:
    """``{key: (median seconds, objective)}``; every case once to warm up, then ``repeats``
    rounds, each running the cases in order (so the two sides alternate)."""
    times = {k: [] for k in cases}
    objective = {}
    for r in range(repeats + 1):
        for key, run in cases.items():
            secs, objective[key] = run()
            if r:
                times[key].append(secs)
    return {k: (statistics.median(v), objective[k]) for k, v in times.items()}


def fit_vs_authors(tables, repeats: int) -> list[str]:
    settings, fits = _claim_fits(tables)
    theirs, why_not = _authors_fitter()
    cases = {}
    for label, (z, y, state) in fits.items():
        cases[label, "ours"] = lambda z=z, y=y, state=state: _ours(settings, z, y, state)
        if theirs is not None:
            order = np.argsort(z)
            zs, ys = z[order], y[order]

            def run_theirs(zs=zs, ys=ys):
                t0 = time.perf_counter()
                res = theirs(
                    zs, ys, tau=settings["tau"], kappa_final=settings["kappa"], lambda_b=settings["lam"], **AUTHORS_ARGS
                )
                return time.perf_counter() - t0, float(res.objective)

            cases[label, "authors"] = run_theirs
    med = _medians(cases, repeats)
    n = {len(z) for z, _, _ in fits.values()}
    args = ", ".join(f"{k}={v}" for k, v in settings.items())
    lines = [
        f"fit-vs-authors: claim 002's six fits ({'/'.join(map(str, sorted(n)))} points), one BLAS thread, "
        f"median of {repeats} repeats, sides interleaved; J = final objective as each side reports it",
        f"  ours: SigmoidQuantileRegressor({args}), the claim's starts; "
        f"authors: fit_sigmoid_enhanced(tau, kappa_final, lambda_b, "
        + ", ".join(f"{k}={v}" for k, v in AUTHORS_ARGS.items())
        + ")",
    ]
    width = max(map(len, fits))
    ratios = []
    for label in fits:
        t_ours, j_ours = med[label, "ours"]
        line = f"{label:<{width}}  ours {t_ours * 1e3:7.1f} ms  J {j_ours:.13f}"
        if theirs is not None:
            t_theirs, j_theirs = med[label, "authors"]
            ratios.append(t_theirs / t_ours)
            line += f"  | authors {t_theirs * 1e3:7.1f} ms  J {j_theirs:.13f}  | ratio {ratios[-1]:.1f}x"
        lines.append(line)
    if theirs is None:
        lines.append(f"authors' side skipped: {why_not}")
    else:
        lines.append(f"min ratio {min(ratios):.1f}x")
    return lines


def fit_from_optimum(tables, repeats: int) -> list[str]:
    settings, fits = _claim_fits(tables)
    boot = np.random.default_rng(0)
    cases = {}
    for label, (z, y, state) in fits.items():
        rng = np.random.default_rng()
        rng.bit_generator.state = state
        full = SigmoidQuantileRegressor(rng=rng, **settings).fit(z, y).params_
        i = boot.integers(0, z.size, z.size)
        cases[label, "fresh"] = lambda z=z[i], y=y[i], state=state: _ours(settings, z, y, state)
        cases[label, "init"] = lambda z=z[i], y=y[i], state=state, full=full: _ours(settings, z, y, state, init=full)
    med = _medians(cases, repeats)
    lines = [
        f"fit-from-optimum: one bootstrap resample per task, median of {repeats} repeats, interleaved; "
        "fresh = the claim's starts and stages, init = one solve from the full-sample optimum"
    ]
    width = max(map(len, fits))
    speedups = []
    for label in fits:
        (t_f, j_f), (t_i, j_i) = med[label, "fresh"], med[label, "init"]
        speedups.append(t_f / t_i)
        lines.append(
            f"{label:<{width}}  fresh {t_f * 1e3:6.2f} ms  J {j_f:.13f}  | init {t_i * 1e3:6.2f} ms  "
            f"J {j_i:.13f}  | J init - fresh {j_i - j_f:+.1e}  | speed-up {speedups[-1]:.1f}x"
        )
    lines.append(f"min speed-up {min(speedups):.1f}x")
    return lines


COMPARISONS = {"fit-vs-authors": fit_vs_authors, "fit-from-optimum": fit_from_optimum}
