"""The findings of ``temporal_coverage``, one model each, with the states it is declared for (see
:func:`harness.core.record.declares`): what :mod:`.protocol` states and what the template and :mod:`.invariants`
read. Fields in the order the protocol states them; ``upstream_*``: the authors' arm's, ``None`` where it did not
run or does not report the value. Pydantic only.
"""

from __future__ import annotations

from ...core.record import Facts, Num, Row, declared_findings, declares, scope_of


@declares("groups", "measured")
class Groups(Facts):
    """The drift and the stable group's mean signed coverage error, their readings, and the drift tasks' rows."""

    drift: list[str]
    stable: list[str]
    drift_mean: Num
    stable_mean: Num
    separation: Num
    drift_reading: str
    stable_reading: str
    exceed_rate: Num
    n_splits: int
    upstream_drift: Num | None
    upstream_stable: Num | None
    drift_tasks: list[Row]


@declares("coverage_table", "measured")
class CoverageTable(Facts):
    """The result table: one row per benchmark, and the group means of both arms."""

    rows: list[Row]
    drift_mean: Num
    stable_mean: Num
    separation: Num
    upstream_drift: Num | None
    upstream_stable: Num | None
    upstream_separation: Num | None


@declares("in_sample", "all_covered", "some_under")
class InSample(Facts):
    """The in-sample signed coverage errors: the smallest, and the benchmarks below zero."""

    smallest: Num
    under: list[Row]


@declares("split_table", "measured")
class SplitTable(Facts):
    """The signed coverage error split by split: the splits' sizes and one row per benchmark."""

    splits: list[Row]
    rows: list[Row]


@declares("drift_splits", "measured")
class DriftSplits(Facts):
    """Each drift benchmark's pattern over the splits (every split, carried by one, mixed, none)."""

    rows: list[Row]


@declares("stable_splits", "none_negative", "some_negative")
class StableSplits(Facts):
    """The splits on which a stable benchmark is below zero, each and by benchmark."""

    negatives: list[Row]
    by_task: list[Row]


@declares("arm_split_gap", "measured")
class ArmSplitGap(Facts):
    """The largest gap between the arms over the splits both report."""

    largest: Num | None  # None: no split value of the authors' arm to compare
    n: int


@declares("bin_averaged", "same_outcomes", "outcomes_change")
class BinAveraged(Facts):
    """Every target judged again on the bin-averaged values, and the verdict that reading would give."""

    rows: list[Row]
    changed: list[str]
    n_mapped: int
    n_targets: int
    verdict: str
    same_verdict: bool
    table: list[Row]
    separation: Num
    separation_bin_averaged: Num
    separation_bin_averaged_upstream: Num | None


@declares("stable_bins", "none_negative", "some_negative")
class StableBins(Facts):
    """The splits on which a stable benchmark is below zero over bins, each and by benchmark."""

    negatives: list[Row]
    by_task: list[Row]


@declares("box", "measured")
class Box(Facts):
    """The refit inside the authors' optimiser box: the free fits outside it, and what it moves and flips."""

    box: list[Num]
    n_keep: int
    n_fits: int
    outside: list[Row]
    rows: list[Row]
    separation: Row  # free, boxed, upstream (None where the authors' arm did not run)
    moved: list[str]
    largest_move: Num | None  # None: the box moves no benchmark
    flips: list[str]


@declares("box_arms", "no_difference", "differ")
class BoxArms(Facts):
    """How much of each difference between the arms the box removes."""

    n_compared: int
    n_differ: int
    closes: list[Row]
    threshold: Num
    n_rest: int
    largest_rest: Num | None  # None: the box closes every difference, or none is left


@declares("relabelled", "none_under", "some_under")
class Relabelled(Facts):
    """The control that permutes the period labels: the separation and the benchmarks' means under it."""

    id: str
    n: int
    separation: Num
    separation_min: Num
    separation_max: Num
    separation_real: Num
    drift: list[Row]
    smallest: Num
    largest: Num
    under: list[Row]


#: Every finding of the protocol with its states (the protocol's ``FINDINGS``).
FINDINGS = declared_findings(scope_of(__name__))
