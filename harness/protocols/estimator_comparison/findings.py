"""The findings of ``estimator_comparison``, one model each, with the states it is declared for (see
:func:`harness.core.record.declares`): what :mod:`.protocol` states and what the template and :mod:`.invariants`
read. Fields in the order the protocol states them; ``*_upstream``: the authors' arm's, ``None`` where it did not
run or does not report the value; ``*_paper``: the paper's, ``None`` where the claim file gives none. A fact the
protocol states only in some runs (with ``box_check``, with the authors' arm, with the ``beta_zero`` control)
defaults to ``None`` and is left out of the record where it was not stated (:class:`~harness.core.record.Facts`).
Pydantic only.
"""

from __future__ import annotations

from ...core.record import Facts, Num, Row, declared_findings, declares, scope_of


@declares("summary", "measured")
class Summary(Facts):
    """The sigmoid's and the I-spline's pinball losses in both arms and the paper, the targets missed, and
    (with ``box_check``) the sigmoid refitted inside the authors' box."""

    n_pairs: int
    n_tasks: int
    n_splits: int
    missed: list[Row]
    pinball_id_sigmoid: Num
    pinball_id_sigmoid_paper: str | None
    pinball_id_sigmoid_upstream: Num | None
    pinball_id_ispline: Num
    pinball_id_ispline_paper: str | None
    pinball_id_ispline_upstream: Num | None
    pinball_ood_sigmoid: Num
    pinball_ood_sigmoid_paper: str | None
    pinball_ood_sigmoid_upstream: Num | None
    pinball_ood_ispline: Num
    pinball_ood_ispline_paper: str | None
    pinball_ood_ispline_upstream: Num | None
    has_paper: bool
    # stated with box_check only
    boxed_pinball_id: Num | None = None
    boxed_pinball_ood: Num | None = None
    n_boxed_cells: int | None = None
    boxed_missed: list[str] | None = None
    boxed_rescues: list[str] | None = None


@declares("table", "measured")
class Table(Facts):
    """Table 2: one row per estimator (both arms and the paper), each cell's distance from the paper, and the
    counts of cells within their tolerance."""

    rows: list[Row]
    cells: list[Row]
    n_cells: int
    all_holding: bool
    n_holding: int
    n_holding_upstream: int


@declares("comparisons", "measured")
class Comparisons(Facts):
    """The relation targets, one row each, and the OOD pinball gap (sigmoid minus I-spline) of both arms and the
    paper."""

    rows: list[Row]
    ood_gap: Num
    ood_gap_upstream: Num | None
    ood_gap_paper: Num | None


@declares("ood_reading", "better_calibrated", "not_better_calibrated")
class OodReading(Facts):
    """How the sigmoid and the I-spline compare out of distribution: on pinball loss (against the knot count's
    spread) and on calibration error, in both arms and the paper, and on how many task-period pairs."""

    loss_gap: Num
    loss_signed: Num
    loss_reading: str
    knot_spread: Num
    n_knot_counts: int
    loss_word: str
    loss_gap_upstream: Num | None
    loss_word_upstream: str | None
    loss_gap_paper: Num | None
    loss_word_paper: str | None
    calibration_gap: Num
    calibration_signed: Num
    calibration_word: str
    calibration_upstream: Num | None
    calibration_paper: Num | None
    n_pairs: int
    n_pairs_better: int


@declares("box", "measured")
class Box(Facts):
    """The sigmoid refitted inside the authors' optimiser box: its cells, its gaps, the free fits outside the
    box, and (with the authors' arm) how much of the gap between the arms the box explains."""

    box: list[Num]
    n_keep: int
    n_pairs: int
    rows: list[Row]
    gap_rows: list[Row]
    outside: list[Row]
    largest: Row | None  # None: no free fit lies outside the box
    total_shift: Num
    ood_cell_tolerance: str | None
    ood_cell_moves_beyond_tolerance: bool
    # stated with the authors' arm only
    arms: list[Row] | None = None
    ispline_arm_gap: Num | None = None  # None also where stated: the authors' arm reports no I-spline cell


@declares("beta_zero", "measured")
class BetaZero(Facts):
    """The control that fixes the sigmoid's slope at zero: one row per metric, and its OOD calibration error
    against the Constant's."""

    id: str
    rows: list[Row]
    calibration_ood: Num
    calibration_ood_constant: Num


@declares("shuffle_z", "measured")
class ShuffleZ(Facts):
    """The control that shuffles z: the sigmoid's ID advantage over the Constant, real and shuffled, and (with
    the ``beta_zero`` control) both against the loss-minimising level."""

    id: str
    n: int
    real: Num
    shuffled: Num
    smallest: Num
    largest: Num
    ratio: Num | None  # None: the real advantage is zero
    level: Num | None  # None without the beta_zero control
    # stated with the beta_zero control only
    shuffled_sigmoid: Num | None = None
    shuffled_ahead: Num | None = None
    real_ahead: Num | None = None


@declares("knots", "measured")
class Knots(Facts):
    """The I-spline at each knot count of the grid: its rows, each ordering's state, and the spread of its ID
    loss against the sigmoid/I-spline gap."""

    spread_exceeds_gap: bool
    rows: list[Row]
    counts: list[int]
    orderings: list[Row]
    id_min: Num
    id_max: Num
    ood_cal_min: Num
    ood_cal_max: Num
    id_spread: Num
    id_gap: Num


#: Every finding of the protocol with its states (the protocol's ``FINDINGS``).
FINDINGS = declared_findings(scope_of(__name__))
