"""The findings of ``boundary_at_budget``, one model each, with the states it is declared for (see
:func:`harness.core.record.declares`): what :mod:`.protocol` states and what the template and :mod:`.invariants`
read. Fields in the order the protocol states them; ``upstream_*``: the authors' arm's, ``None`` where it did not
run. Pydantic only.
"""

from __future__ import annotations

from ...core.record import Facts, Num, Row, declared_findings, declares, scope_of


@declares("result", "measured")
class Result(Facts):
    """Each benchmark's boundary at the budget, both arms, the paper and the control, one row each."""

    budget: str
    eval_x: Num
    z_eval: Num
    n_models: int
    n_tasks: int
    rows: list[Row]
    n_paper: int
    one_paper: bool
    all_paper: bool
    largest_reimpl: Num | None  # None: no paper value measured
    largest_upstream: Num | None
    tolerances: list[str]
    n_holding_reimpl: int
    n_holding_upstream: int
    all_holding_reimpl: bool
    all_holding_upstream: bool
    control_id: str | None  # None: no tau_override control ran
    control_tau: Num | None


@declares("eval_support", "inside", "upper_tail", "edge", "small_table", "beyond", "below")
class EvalSupport(Facts):
    """Where the evaluation point sits in the data, and how many models stand behind the boundary there."""

    z_eval: Num
    z_min: Num
    z_max: Num
    n_at_or_above: int
    n_models: int
    share: Num
    thin_share: Num
    edge_models: Num
    edge_models_count: int
    expected_above: Num
    expected_above_all: Num
    small_table: bool
    tau: Num


@declares("start_robustness", "not_run")
class StartRobustnessNotRun(Facts):
    """The claim asks for no other start."""


@declares("start_robustness", "measured")
class StartRobustness(Facts):
    """How far the other start moves the boundaries, against the smallest tolerance, and why the authors' move."""

    alternative: str
    reimpl_shift: Num
    upstream_shift: Num | None
    tolerance: Num
    tolerance_text: str | None  # None: no tolerance, judged against the printed precision
    against: str
    reimpl_within: bool
    upstream_within: bool | None
    upstream_causes: list[Row]
    objective_gap: Num


@declares("control_shifts", "measured")
class ControlShifts(Facts):
    """How far each control moves the boundaries, one row per control that ran."""

    controls: list[Row]


@declares("explanation", "explained")
class Explanation(Facts):
    """Why the arms' values differ, benchmark by benchmark: one row each, with its cause."""

    rows: list[Row]
    differing: list[Row]
    setting: Row | None  # None: no row's cause is the setting
    n_differing: int
    different_data: list[str]
    box_measured: bool
    box: list[Num] | None  # None: no box_check
    objective_gap: Num
    kappa_stages: list[Num]
    warm_start: bool


@declares("own_setting", "not_reported")
class OwnSettingNotReported(Facts):
    """The authors' arm did not run or did not report their own setting."""


@declares("own_setting", "same", "no_common_miss")
class OwnSetting(Facts):
    """The setting the authors' own code path fits this table with, and where it differs from the claim's."""

    tau: Num
    kappa: Num
    lam: Num
    changed: list[Row]
    where: list[Row]
    path: str | None


@declares("own_setting", "closes", "does_not_close")
class OwnSettingRefit(OwnSetting):
    """The authors' own setting (its facts first), refitted there for every published value both arms miss."""

    rows: list[Row]
    titles: list[str]
    one: bool
    n_rows: int
    n_closed: int
    n_upstream_within: int
    n_reimpl_within: int
    largest_miss: Num
    smallest_miss: Num
    upstream_gap: Num
    reimpl_gap: Num
    reimpl_within: bool
    boxed: bool
    reimpl_boxed_gap: Num | None  # None: no box_check
    n_reimpl_boxed_within: int | None


#: Every finding of the protocol with its states (the protocol's ``FINDINGS``).
FINDINGS = declared_findings(scope_of(__name__))
