"""How often does an interval method cover? A coverage study on a claim's own resampling design.

A report's resampling label is a one-sided decision read from a cluster-bootstrap
bound on a difference of 0.98-quantile boundaries, a statistic carried by the ~n(1 - tau) models above
it; the naive bootstrap is known to be unreliable for such extreme quantiles
(Chernozhukov & Fernandez-Val 2011, REStud 78:559; Bickel & Sakov 2008). This
module *measures* the coverage of interval methods (:mod:`harness.stats.intervals`)
on the design the claim really uses -- its rows, its base-model clusters, its
statistic with its fits -- instead of assuming it.

The simulated world: the empirical one (iterated bootstrap)
-----------------------------------------------------------
The world is the real data itself (Hall & Martin 1988, Biometrika 75:661;
Hall 1992, Section 3.11; Davison & Hinkley 1997, Section 5.6): its
population is the ``G`` real clusters, each drawn with probability ``1/G``.
A simulated data set is a cluster resample of the real data (``G`` clusters
with replacement, kept whole), and the *truth* is the statistic on the full
real data, ``theta_hat``. That truth is exact in this world: the functional
the estimator targets -- the minimiser of the mean smoothed pinball loss plus
ridge per *row*, i.e. the ratio ``E[sum of a cluster's losses] / E[cluster
size]`` over the cluster distribution, then read off at the budget (or the
period-split coverage built on such fits) -- evaluated at the uniform
distribution over the real clusters is the same computation on all real
rows. Each simulated data set ``D*`` is then treated as the analyst treats the
real data: its ``G`` drawn clusters (a cluster drawn twice is two clusters of
``D*``) are resampled again to build each interval, and the study records
whether the interval covers ``theta_hat``.

Why not the parametric world "fitted boundary plus residuals resampled by
cluster, the truth being the fitted curve": in that world the fitted curve is
*not* the true tau-quantile. (i) Residuals of a smoothed (kappa = 50) and
ridged pinball fit do not have their tau-quantile at 0: in-sample coverage is
only near tau (the fits' ``coverage`` detail), so the world's quantile is the
curve *plus* the residuals' tau-quantile, a discrete quantile with its own
convention. (ii) Residual clusters attached to other clusters' compute (they
must also match in size) make the world homoscedastic, whereas the real upper
tail changes with compute -- the world's quantile at the budget is then
``fitted(z) + `` a *marginal* residual quantile, and its difficulty is not the
real one. (iii) Scores are bounded in [0, 1]; curve plus residual leaves that
range and clipping moves upper quantiles. (iv) Even with a correct quantile,
the estimator converges to the *smoothed-loss* functional of the world, not
to its exact quantile, so coverage would mix smoothing bias into interval
error; that functional is only known by Monte Carlo (a fit on a huge world
sample), not exactly. The empirical world has none of these problems.

Its limits, stated: coverage measured here is coverage when sampling from the
empirical distribution; it stands for the real coverage to the extent the
first-level resampling mimics real sampling. For an extreme quantile the
world's population has exactly the real data's ~n(1 - tau) top points, with
ties from duplicated clusters in every ``D*`` -- the same feature that can make
the naive bootstrap inconsistent can make its measured coverage optimistic or
pessimistic. A method that fails here fails in a world that is, by
construction, as close to the data as possible; a method that passes here has
passed a necessary test, not a sufficient one.

Warm starts
-----------
The claim's statistic starts every fit from the full real-data optimum (as
the reports' bootstrap does: "each resample's fits start from the full-sample
optimum"). In this world that optimum is the truth's own: the estimate on
``D*`` and every resample of ``D*`` start from it. That is fair -- each fit
is a Newton solve to convergence of a smooth objective, which does not
remember its start -- unless the objective has several local optima, where
starting at the truth's would favour covering it. The study says so in its
output (``warm_start``).

A design may also give ``rebase(indices, rng) -> (values, statistic)``: the
statistic on those rows *and* a statistic whose fits start from that
estimate's. The study then starts every resample of ``D*`` from ``D*``'s own
estimate -- what the claim's bootstrap does with the real data, whose
resamples start from the real estimate -- and only the estimate on ``D*``
starts from the truth's optimum. That is more faithful to the claim's
procedure, and cheaper where a fit takes Newton steps in proportion to how
far it starts from its optimum (a resample of ``D*`` lies about one
resampling step from ``D*``'s estimate, and two from the truth's).

Work, seeds, and determinism
----------------------------
Replicate ``r`` (one simulated data set with all its intervals) is one task,
seeded by ``numpy.random.SeedSequence(seed).spawn(R)[r]``; inside it the
streams are ``SeedSequence(entropy, spawn_key=(r, j))`` for ``j`` = 0 the data
set, 1 its estimate, 2 the bootstrap, 3 the jackknife grouping, 4 the
subsamples (shared by every method of a kind, i.e. common random numbers
across methods). Tasks run through :func:`map_tasks` (serial, or the caller's fan-out; was a
:func:`harness.parallel.fanout.process_pool`) and results are gathered in task
order, so the output is byte-identical however the tasks are spread. The output
holds no timing.

Decisions
---------
A claim's label on an ordering is a one-sided decision
(:func:`harness.stats.methods.decide`): "supported" when the method's
one-sided ``1 - alpha`` bound on the difference excludes 0 on the claimed
side. Its error rate is the chance that it fires when the difference is
exactly 0. The study measures it in a *null world* built from the same
fits: every draw, jackknife value and estimate of a data set is moved by
``-truth``, so the truth of every quantity is 0 there, and the method's
bounds are read again (:class:`_Recentred`). ``supports_below`` is the share
of data sets whose upper bound ``U`` lies below 0 there (a claim "below 0"
would be called supported), ``supports_above`` the share with ``L > 0``;
each with its binomial Monte Carlo standard error. For a method that moves
with its draws (percentile, basic, BCa and subsampling all do), this is the
share of real-world data sets whose one-sided bound misses the truth on
that side -- the error of the decision that is made, not the coverage of a
two-sided interval beside it. A decision counts as calibrated only where the
study shows, with 95% confidence, an error of at most ``limit = 1.5 alpha``
(the one-sided Clopper-Pearson upper bound; Bonferroni over the looks of a
sequential study, which stops once each ordering's claimed decision has its
bound on one side of the limit).

Power: if the law of the estimate and its resamples moves with the truth (a
location shift), a true difference ``-delta`` below 0 is called supported in
data set ``r`` exactly when its null-world ``U_r < delta``. The least
``delta`` detected in :data:`POWER` (80%) of the data sets,
``detectable_below``, is the ``ceil(0.8 R)``-th smallest ``U_r``;
``detectable_above`` likewise from ``-L_r``. A data set without a bound
counts as not detecting.

Coverage
--------
Per method and quantity: ``c = (replicates whose interval covers the truth) /
R``, a replicate without an interval (a failed estimate, or a method that
could not give one) counting as not covering; Monte Carlo standard error
``sqrt(c (1 - c) / R)`` (binomial). Also the shares missing below and above
(a one-sided comparison fails on one side only), mean and median width, the
share of replicates whose own estimate lies outside its interval, failures.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np
from scipy.stats import beta as beta_dist

from .intervals import SUBSAMPLE_RULE, Interval, cluster_jackknife, cluster_subsample
from .methods import Basic, BCa, Percentile, Subsampling, decision_interval, needed
from .plain import plain
from .resample import cluster_bootstrap, cluster_bootstrap_indices, cluster_ids_from_labels

__all__ = [
    "DEFAULT_METHODS",
    "WORLD",
    "WARM_START_NOTE",
    "REBASED_WARM_START_NOTE",
    "map_tasks",
    "coverage_study",
    "ideal_percentile_coverage",
    "study_json",
    "coverage_table",
]

#: The simulated world, in words (see the module docstring).
WORLD = (
    "empirical world (iterated cluster bootstrap, Hall & Martin 1988): each simulated data set is a resample of "
    "the G real clusters with replacement; the truth is the statistic on the full real data, exact in this world"
)
#: What the warm starts do, in words.
WARM_START_NOTE = (
    "every fit (each simulated data set's estimate and every resample of it) starts from the full real-data "
    "optimum, as the reports' bootstrap does; in this world that is the truth's own optimum, which is fair for "
    "fits solved to convergence and would favour coverage only where the objective has several local optima"
)
#: What the warm starts do when the design can start the resamples of a data set from its own estimate.
REBASED_WARM_START_NOTE = (
    "each simulated data set's estimate starts from the full real-data optimum (the truth's own in this world); "
    "every resample and jackknife value of that data set starts from the data set's own estimate, as the claim's "
    "bootstrap starts each resample from the full-sample estimate. Fair for fits solved to convergence; only where "
    "the objective has several local optima could the first start favour the truth"
)


# -- interval methods ------------------------------------------------------------------------------------------

#: Percentile, basic; BCa with the delete-one and with a 20-group cluster jackknife; subsampling with and without
#: the finite population correction (the last two share their subsamples, the bootstrap ones their draws).
DEFAULT_METHODS = (
    Percentile(),
    Basic(),
    BCa(),
    BCa(n_groups=20, name="bca_grouped20"),
    Subsampling(),
    Subsampling(fpc=False, name="subsampling_nofpc"),
)


# -- the fan-out -----------------------------------------------------------------------------------------------


def map_tasks(fn: Callable, tasks: Iterable, map_fn: Callable | None = None, on_result: Callable | None = None):
    """``[fn(t) for t in tasks]``, in task order: through ``map_fn`` (the caller's fan-out, e.g.
    :class:`harness.parallel.fanout.Mapper`; its own progress) when given, else one after the other, calling
    ``on_result(i, n)`` as results ``1 .. i`` are in. The one place this module fans out."""
    tasks = list(tasks)
    if map_fn is not None:
        return list(map_fn(fn, tasks))
    out = []
    for i, t in enumerate(tasks):
        out.append(fn(t))
        if on_result is not None:
            on_result(i + 1, len(tasks))
    return out


# -- one replicate ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class _Design:
    statistic: Callable
    cluster_ids: np.ndarray
    quantities: tuple[str, ...]
    truth: dict
    rebase: Callable | None = None


def _on_rows(indices, rng, *, statistic, rows):
    """The statistic on rows ``rows[indices]`` of the real data (a simulated data set's rows)."""
    return statistic(rows[indices], rng)


def _stream(seq: np.random.SeedSequence, j: int) -> np.random.Generator:
    """Generator of stream ``j`` of a replicate: ``SeedSequence(entropy, spawn_key=key + (j,))`` (stateless)."""
    return np.random.default_rng(np.random.SeedSequence(seq.entropy, spawn_key=(*seq.spawn_key, j)))


def _resample(key, stat, n_rows, ids, n_resamples, seq, catch):
    kind = key[0]
    if kind == "bootstrap":
        return cluster_bootstrap(
            stat, n_rows, ids, n_resamples=n_resamples, rng=_stream(seq, 2), catch=catch, with_rng=True
        )
    G = int(ids.max()) + 1
    if kind == "jackknife":
        g = None if key[1] >= G else key[1]
        return cluster_jackknife(stat, n_rows, ids, n_groups=g, rng=_stream(seq, 3), catch=catch, with_rng=True)
    if kind == "subsample":
        return cluster_subsample(
            stat, n_rows, ids, m=key[1], n_resamples=n_resamples, rng=_stream(seq, 4), catch=catch, with_rng=True
        )
    raise ValueError(f"unknown resampling {key!r}")


class _Recentred:
    """Draws (or jackknife values) moved by ``-shift``: the same fits seen from the null world, where the truth
    of every quantity is 0."""

    def __init__(self, resampling, shift: dict):
        self.names = resampling.names
        self.values = resampling.values - np.array([shift[n] for n in self.names], dtype=float)[None, :]

    def column(self, name: str) -> np.ndarray:
        return self.values[:, self.names.index(name)]


def _replicate(task) -> dict:
    """One simulated data set: its estimate, every method's interval of every quantity and whether it covers the
    truth, and, at one-sided level ``alpha``, the bounds each method reads in the null world."""
    from threadpoolctl import threadpool_limits

    design, methods, n_resamples, level, catch, seq, alpha = task
    with threadpool_limits(limits=1, user_api="blas"):
        ids = design.cluster_ids
        G = int(ids.max()) + 1
        world = cluster_bootstrap_indices(ids, 1, _stream(seq, 0))
        rows = world[0]
        slots = np.repeat(np.arange(G), world.cluster_size[world.cluster_draws[0]])
        statistic = design.statistic
        n_rows = rows.size
        calls, raised = 1, 0
        try:
            if design.rebase is None:
                full = statistic(rows, _stream(seq, 1))
            else:  # the resamples of this data set start from its own estimate
                full, statistic = design.rebase(rows, _stream(seq, 1))
            est = {q: float(full[q]) for q in design.quantities}
        except catch:
            raised += 1
            est = {q: math.nan for q in design.quantities}
        stat = partial(_on_rows, statistic=statistic, rows=rows)
        resamples = {}
        for key in needed(methods, G):
            res = _resample(key, stat, n_rows, slots, n_resamples, seq, catch)
            resamples[key] = res
            calls += res.values.shape[0]
            raised += res.n_raised
        null = {k: _Recentred(r, design.truth) for k, r in resamples.items() if r.names}
        out = {}
        for q in design.quantities:
            truth, e = design.truth[q], est[q]
            per = {}
            for m in methods:
                if np.isfinite(e):
                    iv = m.interval(q, e, resamples, G, level)
                else:
                    iv = Interval(math.nan, math.nan, level, m.name, 0, 0, {"why": "the estimate failed"})
                rec = {
                    "lo": iv.lo,
                    "hi": iv.hi,
                    "covers": iv.covers(truth),
                    "below": bool(iv.ok and truth < iv.lo),
                    "above": bool(iv.ok and truth > iv.hi),
                    "estimate_outside": bool(iv.ok and not iv.lo <= e <= iv.hi),
                    "n_failed": iv.n_failed,
                }
                for k in ("z0", "acceleration", "m", "scale"):
                    if k in iv.info:
                        rec[k] = iv.info[k]
                if alpha is not None:
                    # the null world: every draw and the estimate moved by -truth, so the truth is 0 there
                    b = (
                        decision_interval(m, q, e - truth, null, G, alpha)
                        if np.isfinite(e) and len(null) == len(resamples)
                        else None
                    )
                    rec["null_bounds"] = [math.nan, math.nan] if b is None else [b.lo, b.hi]
                per[m.name] = rec
            out[q] = per
    return {"estimate": est, "calls": calls, "raised": raised, "intervals": out}


# -- the study -------------------------------------------------------------------------------------------------


def _restricted(indices, rng, *, statistic, names):
    out = statistic(indices, rng)
    return {k: out[k] for k in names}


def _restricted_rebase(indices, rng, *, rebase, names):
    out, statistic = rebase(indices, rng)
    return {k: out[k] for k in names}, partial(_restricted, statistic=statistic, names=names)


def _mean(xs) -> float | None:
    xs = [x for x in xs if x is not None and math.isfinite(x)]
    return float(statistics.fmean(xs)) if xs else None


#: The power at which a study states the smallest difference the decision detects.
POWER = 0.8


def _summary(reps: list[dict], q: str, method: str, n_rep: int) -> dict:
    recs = [r["intervals"][q][method] for r in reps]
    covered = sum(r["covers"] for r in recs)
    c = covered / n_rep
    widths = [r["hi"] - r["lo"] for r in recs if math.isfinite(r["lo"]) and math.isfinite(r["hi"])]
    out = {
        "coverage": c,
        "mc_se": math.sqrt(c * (1.0 - c) / n_rep),
        "n_covered": int(covered),
        "n_intervals": len(widths),
        "n_no_interval": n_rep - len(widths),
        "miss_below": sum(r["below"] for r in recs) / n_rep,
        "miss_above": sum(r["above"] for r in recs) / n_rep,
        "estimate_outside": sum(r["estimate_outside"] for r in recs) / n_rep,
        "mean_width": _mean(widths),
        "median_width": float(statistics.median(widths)) if widths else None,
        "failed_draws": int(sum(r["n_failed"] for r in recs)),
    }
    for k in ("z0", "acceleration"):
        if any(k in r for r in recs):
            out[f"mean_{k}"] = _mean([r.get(k) for r in recs])
    return out


def _nth(values: list[float], share: float) -> float | None:
    """The ``ceil(share * n)``-th smallest of ``values``: the least ``d`` such that at least ``share`` of them lie
    at or below it (``None`` when it is not finite: too many data sets gave no bound)."""
    v = sorted(values)
    x = v[max(0, math.ceil(share * len(v)) - 1)]
    return x if math.isfinite(x) else None


#: A decision counts as calibrated where its study shows, with :data:`CONFIDENCE`, an error of at most
#: ``LIMIT_FACTOR * alpha``: the burden of proof is on the label.
LIMIT_FACTOR, CONFIDENCE = 1.5, 0.95


def error_bounds(k: int, n: int, looks: int = 1) -> tuple[float, float]:
    """One-sided Clopper-Pearson bounds ``(lower, upper)`` of a rate seen ``k`` times in ``n``, each at
    confidence ``1 - (1 - CONFIDENCE) / looks`` (Bonferroni over a sequential study's looks)."""
    a = (1.0 - CONFIDENCE) / looks
    lower = 0.0 if k == 0 else float(beta_dist.ppf(a, k, n - k + 1))
    upper = 1.0 if k == n else float(beta_dist.ppf(1.0 - a, k + 1, n - k))
    return lower, upper


def _decisions(reps: list[dict], q: str, method: str, n_rep: int, alpha: float, looks: int = 1) -> dict:
    """The one-sided decisions of ``method`` on ``q`` in the null world (module docstring, "Decisions")."""
    bounds = [r["intervals"][q][method]["null_bounds"] for r in reps]
    lo = [b[0] if math.isfinite(b[0]) else -math.inf for b in bounds]
    hi = [b[1] if math.isfinite(b[1]) else math.inf for b in bounds]
    n_below, n_above = sum(h < 0.0 for h in hi), sum(low > 0.0 for low in lo)
    upper, lower = n_below / n_rep, n_above / n_rep
    return {
        "alpha": alpha,
        "supports_below": upper,
        "supports_below_mc_se": math.sqrt(upper * (1.0 - upper) / n_rep),
        "supports_below_bounds": error_bounds(n_below, n_rep, looks),
        "supports_above": lower,
        "supports_above_mc_se": math.sqrt(lower * (1.0 - lower) / n_rep),
        "supports_above_bounds": error_bounds(n_above, n_rep, looks),
        "limit": LIMIT_FACTOR * alpha,
        "n_no_bound": sum(not (math.isfinite(b[0]) and math.isfinite(b[1])) for b in bounds),
        "detectable_below": _nth(hi, POWER),
        "detectable_above": _nth([-x for x in lo], POWER),
    }


def settled(reps: list[dict], quantities, sides, method: str, alpha: float, looks: int) -> bool:
    """Whether the claimed decision of ``method`` on each of ``quantities`` (``sides``: -1 where the claim puts the
    difference below 0, +1 above) has its error bounded on one side of the limit: upper bound at most it, or lower
    bound above it (a sequential study stops there). The opposite decision's error is measured on the same data
    sets but does not hold the study: a contradiction whose error bound is then above the limit is not assessed."""
    limit = LIMIT_FACTOR * alpha
    for q, side in zip(quantities, sides, strict=True):
        d = _decisions(reps, q, method, len(reps), alpha, looks)
        lower, upper = d["supports_below_bounds" if side < 0 else "supports_above_bounds"]
        if lower <= limit < upper:
            return False
    return True


def ideal_percentile_coverage(n_resamples: int, level: float = 0.95, n_sim: int = 20000, seed: int = 0) -> dict:
    """Coverage of an *ideal* percentile interval read from ``B`` draws: the reference for a study at that ``B``.

    The estimate is ``N(theta, 1)`` and the ``B`` draws come from its exact
    law about the estimate, ``N(theta_hat, 1)``; the interval is read with
    numpy's "linear" quantiles as :func:`harness.stats.intervals.percentile`
    does. Its coverage is below ``level`` only because ``B`` is finite: the
    type-7 quantile of few draws sits inside the true one and is noisy (about
    0.934 at ``B = 100``, 0.941 at ``B = 200`` for 95%). A deterministic
    simulation of ``n_sim`` cases from ``seed``; returns ``coverage``,
    ``mc_se``, ``n_sim``.
    """
    rng = np.random.default_rng(seed)
    a = 1.0 - float(level)
    hits = 0
    for start in range(0, n_sim, 2000):
        k = min(2000, n_sim - start)
        est = rng.normal(size=k)
        draws = est[:, None] + rng.normal(size=(k, int(n_resamples)))
        lo, hi = np.quantile(draws, [a / 2.0, 1.0 - a / 2.0], axis=1)
        hits += int(np.sum((lo <= 0.0) & (hi >= 0.0)))
    c = hits / n_sim
    return {"coverage": c, "mc_se": math.sqrt(c * (1.0 - c) / n_sim), "n_sim": int(n_sim)}


def coverage_study(
    resampling,
    *,
    seed: int,
    n_replicates: int = 100,
    n_resamples: int = 100,
    level: float = 0.95,
    quantities: Sequence[str] | None = None,
    methods: Sequence = DEFAULT_METHODS,
    map_fn: Callable | None = None,
    catch: tuple[type[BaseException], ...] = (ValueError, FloatingPointError),
    name: str | None = None,
    on_result: Callable | None = None,
    alpha: float | None = 0.05,
    batch: int | None = None,
    stop: Callable | None = None,
) -> dict:
    """Measure the coverage of interval methods on a design, in the empirical world (module docstring).

    Parameters
    ----------
    resampling : harness.resampling.robustness.Resampling
        Or any object with ``n_rows``, ``cluster_labels`` (one per row; a
        missing label is a cluster of its own) and a picklable
        ``statistic(indices, rng) -> {quantity: float}``; ``rows`` (words) is
        copied to the output when present. With a (picklable) ``rebase``, not
        ``None`` (see "Warm starts"), each data set's resamples start from its
        own estimate.
    seed : int
        Root of every random stream (see "Work, seeds, and determinism").
    n_replicates : int
        ``R``, simulated data sets.
    n_resamples : int
        ``B``, resamples per interval: bootstrap resamples (shared by the
        percentile and BCa methods) and, separately, subsamples.
    level : float
        Nominal coverage of every interval.
    quantities : sequence of str, optional
        The quantities to study (default: all the statistic returns). The
        statistic is wrapped to return only these.
    methods : sequence
        Interval methods (:class:`Percentile`, :class:`BCa`,
        :class:`Subsampling`, or objects with the same ``name``, ``needs``,
        ``interval``, ``describe``); names must be distinct.
    map_fn : callable, optional
        How the replicates are spread (:func:`map_tasks`); does not change the result.
    catch : tuple of exception types
        Exceptions of the statistic that mark one call as failed (as the reports' bootstrap does).
    name : str, optional
        Design name for the output.
    on_result : callable, optional
        Progress callback ``on_result(done, total)``.
    alpha : float or None
        One-sided level of the decisions measured beside the coverage (see "Decisions"); ``None``: none.
    batch, stop : int, callable, optional
        A sequential study: the data sets run ``batch`` at a time, and it ends before ``n_replicates`` once
        ``stop(replicates so far, looks)`` is true; ``looks`` is ``ceil(n_replicates / batch)``, the Bonferroni
        factor of the decisions' error bounds.

    Returns
    -------
    dict
        Plain JSON types only (``nan`` already ``None``; :func:`study_json` gives the canonical text):
        ``world``, ``warm_start``, ``design`` (rows, clusters, quantities,
        truth), ``nominal_level``, ``n_replicates``, ``n_resamples``, ``seed``,
        ``seeding``, ``methods`` (each with its resampling, jackknife grouping,
        ``m`` and its rule, rate, scale), ``statistic_calls``, ``coverage``
        (quantity -> method -> ``coverage``, ``mc_se``, ``n_covered``,
        ``n_intervals``, ``n_no_interval``; ``miss_below`` the share with the
        truth *below* the interval (``truth < lo``) and ``miss_above`` with it
        above (``truth > hi``); ``estimate_outside`` the share whose own
        estimate lies outside its interval; ``mean_width``, ``median_width``;
        ``failed_draws`` the non-finite resample draws summed over replicates;
        for BCa ``mean_z0``, ``mean_acceleration``), ``reference`` (the
        coverage of an ideal percentile interval of ``B`` draws,
        :func:`ideal_percentile_coverage`), ``estimates``
        (quantity -> mean, standard deviation and bias of the simulated
        estimates: the world's sampling law), ``replicates`` (each data set's
        estimate and intervals).
    """
    level = float(level)
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")
    R, B = int(n_replicates), int(n_resamples)
    if R < 1 or B < 2:
        raise ValueError(f"need n_replicates >= 1 and n_resamples >= 2, got {R} and {B}")
    names = [m.name for m in methods]
    if len(set(names)) != len(names):
        raise ValueError(f"method names must be distinct, got {names}")
    ids = cluster_ids_from_labels(resampling.cluster_labels)
    if ids.size != int(resampling.n_rows):
        raise ValueError(f"{ids.size} cluster labels for {resampling.n_rows} rows")
    G = int(ids.max()) + 1
    root = np.random.SeedSequence(int(seed))
    seqs = root.spawn(R + 1)  # 0 .. R-1: the replicates; R: the truth's own generator
    batch = R if batch is None else int(batch)
    looks = -(-R // batch)
    full = resampling.statistic(np.arange(ids.size), np.random.default_rng(seqs[R]))
    qs = tuple(quantities) if quantities is not None else tuple(full)
    missing = [q for q in qs if q not in full]
    if missing:
        raise KeyError(f"the statistic gives no {missing}; it gives {sorted(full)}")
    truth = {q: float(full[q]) for q in qs}
    bad = [q for q, v in truth.items() if not math.isfinite(v)]
    if bad:
        raise ValueError(f"the statistic on the full data is not finite for {bad}")
    stat = partial(_restricted, statistic=resampling.statistic, names=qs)
    rebase = getattr(resampling, "rebase", None)
    design = _Design(
        stat, ids, qs, truth, None if rebase is None else partial(_restricted_rebase, rebase=rebase, names=qs)
    )
    if alpha is not None and not 0.0 < alpha < 0.5:
        raise ValueError(f"alpha must be in (0, 0.5), got {alpha}")
    reps: list[dict] = []
    for start in range(0, R, batch):
        tasks = [
            (design, tuple(methods), B, level, tuple(catch), seqs[r], alpha)
            for r in range(start, min(R, start + batch))
        ]
        reps += map_tasks(_replicate, tasks, map_fn, on_result)
        if stop is not None and stop(reps, looks=looks):
            break
    R_max, R = R, len(reps)

    calls = [r["calls"] for r in reps]
    coverage = {q: {m: _summary(reps, q, m, R) for m in names} for q in qs}
    estimates = {}
    for q in qs:
        e = [r["estimate"][q] for r in reps if math.isfinite(r["estimate"][q])]
        estimates[q] = {
            "truth": truth[q],
            "n_finite": len(e),
            "mean": _mean(e),
            "sd": float(statistics.stdev(e)) if len(e) > 1 else None,
            "bias": (_mean(e) - truth[q]) if e else None,
        }
    return plain(
        {
            "kind": "coverage study",
            "world": WORLD,
            "warm_start": WARM_START_NOTE if rebase is None else REBASED_WARM_START_NOTE,
            "design": {
                "name": name,
                "rows": getattr(resampling, "rows", None),
                "n_rows": int(ids.size),
                "n_clusters": G,
                "quantities": list(qs),
                "truth": truth,
            },
            "nominal_level": level,
            "n_replicates": R,
            "max_replicates": R_max,
            "looks": looks,
            "batch": batch if looks > 1 else None,
            "n_resamples": B,
            "seed": int(seed),
            "seeding": (
                "replicate r: numpy.random.SeedSequence(seed).spawn(R)[r]; inside it SeedSequence(entropy, "
                "spawn_key=(r, j)), j = 0 data set, 1 estimate, 2 bootstrap, 3 jackknife grouping, 4 subsamples; "
                "the truth's generator is spawn(R + 1)[R], R the most data sets the study may run"
            ),
            "coverage_rule": (
                "covered: lo <= truth <= hi; a replicate without an interval counts as not covered; "
                "mc_se = sqrt(c (1 - c) / R)"
            ),
            "reference": {
                "ideal_percentile_at_B": ideal_percentile_coverage(B, level),
                "what": (
                    "coverage of an ideal percentile interval (normal estimate, draws from its exact law) read from B "
                    "draws with numpy's linear quantiles: what the finite B alone costs"
                ),
            },
            "methods": {m.name: m.describe(G) for m in methods},
            "subsample_rule": SUBSAMPLE_RULE,
            "statistic_calls": {
                "total": int(sum(calls)),
                "per_replicate": int(max(calls)) if calls else 0,
                "raised": int(sum(r["raised"] for r in reps)),
            },
            "coverage": coverage,
            **(
                {}
                if alpha is None
                else {
                    "decisions": {q: {m: _decisions(reps, q, m, R, alpha, looks) for m in names} for q in qs},
                    "decision_rule": (
                        f"the method's equal-tailed interval at level 1 - 2 alpha (alpha = {alpha:g}) gives the "
                        "one-sided bounds L and U; in the null world every draw and estimate is moved by -truth; "
                        "supports_below: the share of data sets with U < 0 there (a claim 'below 0' supported though "
                        "the truth is 0), supports_above: with L > 0; each with one-sided Clopper-Pearson bounds at "
                        f"confidence 1 - {1 - CONFIDENCE:g} / looks; limit = {LIMIT_FACTOR:g} alpha; "
                        f"detectable_below / above: the least shift detected in {POWER:.0%} of data sets, if the "
                        "law of the estimate moves with the truth (a location shift)"
                    ),
                }
            ),
            "estimates": estimates,
            "replicates": [
                {
                    "estimate": r["estimate"],
                    "intervals": {q: {m: [v["lo"], v["hi"]] for m, v in r["intervals"][q].items()} for q in qs},
                    **(
                        {}
                        if alpha is None
                        else {
                            "null_bounds": {q: {m: v["null_bounds"] for m, v in r["intervals"][q].items()} for q in qs}
                        }
                    ),
                }
                for r in reps
            ],
        }
    )


def study_json(result: dict) -> str:
    """The study's canonical JSON text (insertion order, one-space indent, ``nan`` as ``null``, final newline)."""
    return json.dumps(plain(result), indent=1, ensure_ascii=False, allow_nan=False) + "\n"


def coverage_table(result: dict) -> str:
    """A fixed-width text table: per quantity and method, coverage +- MC s.e., misses below/above, mean width."""
    ideal = result.get("reference", {}).get("ideal_percentile_at_B")
    lines = [
        f"nominal {result['nominal_level']:.2f}, R = {result['n_replicates']} data sets, "
        f"B = {result['n_resamples']} resamples each"
        + (f" (an ideal percentile interval of B draws covers {ideal['coverage']:.3f})" if ideal else ""),
        f"{'quantity':<28} {'method':<18} {'coverage':>15} {'below':>6} {'above':>6} {'width':>8} "
        f"{'est.out':>7} {'no iv':>5} {'failed':>6}",
    ]
    for q, per in result["coverage"].items():
        for m, s in per.items():
            w = s["mean_width"]
            lines.append(
                f"{q:<28} {m:<18} {s['coverage']:>7.3f} ± {s['mc_se']:.3f} {s['miss_below']:>6.3f} "
                f"{s['miss_above']:>6.3f} {(f'{w:.4f}' if w is not None else '-'):>8} {s['estimate_outside']:>7.3f} "
                f"{s['n_no_interval']:>5d} {s['failed_draws']:>6d}"
            )
    return "\n".join(lines)
