"""How far a claim's resampling can be trusted: the coverage of its interval methods, measured on its own design.

A claim's ``bootstrap:`` block may ask for a study (``calibration:``). ``python -m harness calibrate`` (``make
calibration``) runs it with :func:`harness.stats.calibration.coverage_study`: data sets drawn from the claim's
own data by resampling its clusters (the empirical world, in which the truth is the statistic on the full
data: exact), on each of them the claim's measurement and every interval method, and the share of data sets
whose 95% interval covers the truth, with its Monte Carlo error; and, for each comparison the claim asserts, how
often the one-sided decision on it would call it supported in a null world where its difference is exactly 0
(the decision's own error rate) and the least difference it detects with 80% power. Each data set is
resampled as often as the claim's bootstrap resamples the real data (its ``n_resamples``). The study is
written beside the reports (``reports/calibration/<id>.json``, ``.md`` and a figure), and the reports' lock
(:mod:`harness.core.claimslock`) holds what it was made from (the claim's parameters and bootstrap, its tables,
the code it measures with) and its JSON's sha256: :func:`read_study` tells the claim's run whether it is there,
unedited and up to date.

What is studied: the claim's interval quantities and, for each comparison it asserts, the difference of its
two sides (``comparison[i]``: ``left - right``), whose interval is what a comparison's resampling rests on.
Every data set is a task of the fan-out layer (:mod:`harness.parallel.fanout`).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from ..core.decisions import claimed_side
from ..core.paths import REPORTS_DIR

__all__ = [
    "CALIBRATED",
    "STUDY_DIR",
    "comparison_name",
    "design",
    "study_deps",
    "study_path",
    "read_study",
    "run_study",
]

#: A method counts as calibrated on a quantity when its measured coverage at nominal 0.95 lies in this range.
CALIBRATED = (0.90, 0.99)
STUDY_DIR = REPORTS_DIR / "calibration"


def comparison_name(i: int) -> str:
    """The resampled difference of comparison ``i`` (its left side minus its right)."""
    return f"comparison[{i}]"


def with_differences(indices, rng, *, statistic, comparisons):
    """``statistic`` plus, for each ``(left, relation, right)``, ``comparison[i] = left - right``."""
    return _differences(dict(statistic(indices, rng)), comparisons)


def _differences(out: dict, comparisons) -> dict:
    for i, (left, _, right) in enumerate(comparisons):
        r = out.get(right, math.nan) if isinstance(right, str) else float(right)
        out[comparison_name(i)] = out.get(left, math.nan) - r
    return out


def rebased_with_differences(indices, rng, *, rebase, comparisons):
    """A protocol's ``rebase`` (:class:`harness.protocols.base.Resampling`) with the comparisons' differences:
    the values on these rows with theirs, and the statistic of their resamples with theirs."""
    values, statistic = rebase(indices, rng)
    values = _differences(dict(values), comparisons)
    return values, partial(with_differences, statistic=statistic, comparisons=comparisons)


def _comparisons(b) -> list[tuple]:
    return [(c.left, c.relation, c.right) for c in b.comparisons]


@dataclass(frozen=True)
class Design:
    """What the study and the claim's bootstrap resample: rows, clusters, the statistic with the differences."""

    n_rows: int
    cluster_labels: object
    statistic: object
    rows: str
    quantities: tuple[str, ...]
    rebase: object = None


def resampled_quantities(spec) -> list[str]:
    """The quantities a claim's bootstrap gives an interval of: its ``quantities``, else its headline targets
    read against the paper."""
    b = spec.claim.bootstrap
    return list(b.quantities) or [t.quantity for t in spec.claim.targets if t.role == "headline" and t.relation == "~"]


def design(spec, tables, reimpl, params=None) -> Design:
    """The claim's resampling (its protocol's, from the re-implementation's fits) with the comparisons'
    differences added; ``params`` replaces the claim's parameters (the study's narrower design)."""
    b = spec.claim.bootstrap
    comps = _comparisons(b)
    names = resampled_quantities(spec)
    read = list(dict.fromkeys(names + [side for c in comps for side in (c[0], c[2]) if isinstance(side, str)]))
    res = spec.protocol.resampling(params or spec.params, tables, reimpl, cluster_col=b.cluster_col, quantities=read)
    stat = partial(with_differences, statistic=res.statistic, comparisons=comps)
    names += [comparison_name(i) for i in range(len(comps))]
    rebase = None if res.rebase is None else partial(rebased_with_differences, rebase=res.rebase, comparisons=comps)
    return Design(res.n_rows, res.cluster_labels, stat, res.rows, tuple(names), rebase)


def study_deps(spec, lock) -> dict:
    """What a claim's study is made from, by hash (:func:`harness.core.claimslock.study_deps`): its parameters and
    bootstrap block, its tables, the code it measures with, the packages."""
    from ..core.claimslock import study_deps as deps
    from ..core.provenance import package_versions

    design = {"params": spec.params.model_dump(mode="json"), "bootstrap": spec.claim.bootstrap.model_dump(mode="json")}
    return deps(spec.protocol.name, design, spec.claim.inputs, lock, package_versions())


def study_path(claim_id: str, folder: Path = STUDY_DIR) -> Path:
    return Path(folder) / f"{claim_id}.json"


def _state(spec, lock, folder: Path) -> tuple[str, list[str], dict | None]:
    """``(state, why, study)``: "not asked", "absent", "unreadable", "edited" (its bytes are not those the lock
    names), "stale" (not in the lock, or what it is made from changed: ``why``) or "measured"."""
    from ..core.claimslock import edited, entry, stale_reasons

    path = study_path(spec.id, folder)
    if spec.claim.bootstrap is None or spec.claim.bootstrap.calibration is None:
        return "not asked", [], None
    if not path.is_file():
        return "absent", ["no study yet"], None
    try:
        study = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "unreadable", ["its file is unreadable"], None
    reports, found = Path(folder).parent, entry(Path(folder).parent, "studies", spec.id)
    why = stale_reasons((found or {}).get("deps"), study_deps(spec, lock))
    if why:
        return "stale", why, study
    bad = edited(reports, found, f"{Path(folder).name}/{path.name}")
    if bad:
        return "edited", [bad], None
    return "measured", [], study


def read_study(spec, lock, folder: Path = STUDY_DIR) -> tuple[str, dict | None]:
    """``(state, study)``: "measured" (there, unedited and up to date), "not asked", "absent", "stale",
    "unreadable" or "edited" (its bytes are not those the reports' lock names)."""
    state, _, study = _state(spec, lock, folder)
    return state, study


def run_study(spec, tables, reimpl) -> dict:
    """The claim's coverage study: its design, its methods, R data sets of B resamples each, on the fan-out.
    ``reimpl`` is the re-implementation's measurement (:func:`harness.build.runner.measurement_arm`): the fits every
    resample starts from."""
    from ..core.schema import validate_plain
    from ..parallel.fanout import Mapper
    from ..stats.calibration import coverage_study, settled
    from ..stats.methods import METHODS

    b, c = spec.claim.bootstrap, spec.claim.bootstrap.calibration
    params = (
        validate_plain(spec.protocol.Params, {**spec.params.model_dump(mode="json"), **c.params}) if c.params else None
    )
    d = design(spec, tables, reimpl, params)
    result = coverage_study(
        d,
        seed=b.seed,
        n_replicates=c.replicates,
        n_resamples=b.n_resamples,
        level=b.level,
        alpha=b.alpha,
        quantities=d.quantities,
        methods=[METHODS[n] for n in c.methods],
        map_fn=Mapper("calibration data sets"),
        name=f"claim {spec.id}",
        batch=c.batch,
        stop=partial(
            settled,
            quantities=[comparison_name(i) for i in range(len(b.comparisons))],
            sides=[claimed_side(c2.relation) for c2 in b.comparisons],
            method=b.method,
            alpha=b.alpha,
        ),
    )
    labels = {q: spec.label_of(q) for q in d.quantities}
    labels.update(
        {comparison_name(i): (c2.label or f"{c2.left} {c2.relation} {c2.right}") for i, c2 in enumerate(b.comparisons)}
    )
    lo, hi = CALIBRATED
    for per in result["coverage"].values():
        for row in per.values():
            row["calibrated"] = lo <= row["coverage"] <= hi
    orderings = [
        _ordering_errors(result, comparison_name(i), labels[comparison_name(i)], claimed_side(c2.relation), b.method)
        for i, c2 in enumerate(b.comparisons)
    ]
    return {
        "claim": spec.id,
        "method_of_the_claim": b.method,
        "joint": _joint_errors(result, b),
        "calibrated_range": list(CALIBRATED),
        "labels": labels,
        "orderings": orderings,
        "narrowed": dict(c.params or {}),
        **result,
    }


def _ordering_errors(result: dict, quantity: str, label: str, side: int, claim_method: str) -> dict:
    """One asserted ordering's decision, per method: the measured rate at which it calls the ordering supported
    (``error``) or contradicted (``error_against``) where the difference is 0, each with its upper confidence bound,
    the limit, whether the bound is within it, and the least difference detected with 80% power."""
    mine, theirs = ("below", "above") if side < 0 else ("above", "below")
    by_method = {}
    for m, row in result["decisions"][quantity].items():
        by_method[m] = {
            "error": row[f"supports_{mine}"],
            "error_mc_se": row[f"supports_{mine}_mc_se"],
            "error_against": row[f"supports_{theirs}"],
            "error_against_mc_se": row[f"supports_{theirs}_mc_se"],
            "error_bound": row[f"supports_{mine}_bounds"][1],
            "error_against_bound": row[f"supports_{theirs}_bounds"][1],
            "limit": row["limit"],
            "calibrated": row[f"supports_{mine}_bounds"][1] <= row["limit"],
            "detectable": row[f"detectable_{mine}"],
        }
    return {
        "quantity": quantity,
        "label": label,
        "side": "below" if side < 0 else "above",
        "by_method": by_method,
        "claim_method": claim_method,
        "claim_calibrated": by_method.get(claim_method, {}).get("calibrated"),
    }


def _joint_errors(result: dict, b) -> dict | None:
    """With several orderings, the claim-level error of the claim's method in the null world (every difference 0):
    the share of data sets calling *every* ordering supported (intersection-union: the claim as a conjunction),
    and calling *at least one* supported (what counting the supported ones would risk)."""
    from ..stats.calibration import error_bounds

    if len(b.comparisons) < 2:
        return None
    sides = [claimed_side(c.relation) for c in b.comparisons]
    hits = []
    for rep in result["replicates"]:
        bounds = [rep["null_bounds"][comparison_name(i)][b.method] for i in range(len(sides))]
        hits.append([(hi < 0.0) if side < 0 else (lo > 0.0) for (lo, hi), side in zip(bounds, sides)])
    n = len(hits)
    every, some = sum(all(h) for h in hits), sum(any(h) for h in hits)
    looks = result["looks"]
    return {
        "every": every / n,
        "every_bound": error_bounds(every, n, looks)[1],
        "any": some / n,
        "any_bound": error_bounds(some, n, looks)[1],
    }


def stale_reasons(spec, lock, folder: Path = STUDY_DIR) -> list[str]:
    """Why the claim's study must be measured again, in words (empty: it need not)."""
    return _state(spec, lock, folder)[1]
