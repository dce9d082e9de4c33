"""The findings of ``hyperparameters``, one model each, with the states it is declared for (see
:func:`harness.core.record.declares`): what :mod:`.protocol` states and what the template and :mod:`.invariants`
read. Fields in the order the protocol states them; ``reason``: why the authors' arm reported nothing, ``None``
where it ran. Pydantic only.
"""

from __future__ import annotations

from ...core.record import Facts, Num, Row, declared_findings, declares, scope_of


@declares("summary", "only_claimed", "claimed_and_others", "not_claimed", "neither")
class Summary(Facts):
    """Whether the claimed setting and the other settings probed come within reach of the reference."""

    within_settings: list[str]
    tau: Num
    kappa: Num
    lam: Num
    claimed_max_dev: Num
    claimed_within: bool
    within: Num
    n_others: int
    n_others_within: int
    closest: str
    closest_max_dev: Num
    eval_x: Num
    budget: str


@declares("audit", "all_found", "some_failed")
class Audit(Facts):
    """The authors' arm read the cited source lines: each entry as read, and the ones not found."""

    n: int
    n_found: int
    n_failed: int
    entries: list[Row]
    failed: list[str]


@declares("audit", "not_checked")
class AuditNotChecked(Facts):
    """The authors' arm did not report the audit: how many lines the claim file cites, and why."""

    n: int
    reason: str | None


@declares("loss", "checked")
class Loss(Facts):
    """The authors' loss function against the printed formula and the sharp check loss (their arm's numbers)."""

    tau: Num
    kappa: Num
    literal_max_gap: Num | None  # None: their loss gave NaN
    n_compared: int
    n_skipped_overflow: int
    sharp_sup_gap: Num | None
    sharp_min_gap: Num | None
    argmax_u: Num
    theory: Num
    sharp_rel_error: Num | None
    u_min: Num
    u_max: Num
    function: str


@declares("loss", "not_checked")
class LossNotChecked(Facts):
    """The authors' arm did not evaluate their loss, and why."""

    reason: str | None


@declares("sweeps", "measured")
class Sweeps(Facts):
    """The one-at-a-time sweeps, one row per grid value of each hyperparameter, both arms."""

    tau: list[Row]
    kappa: list[Row]
    lam: list[Row]
    beta_task: str
    claimed_tau: Num
    claimed_kappa: Num
    claimed_lam: Num


@declares("tau_tracking", "tracks", "does_not_track")
class TauTracking(Facts):
    """Whether mean coverage rises with τ, and its largest gap to τ."""

    largest: Num
    covers_above: bool
    n_levels: int


@declares("upstream_quirks", "none", "some")
class UpstreamQuirks(Facts):
    """Where the authors' fits depart from the stated setting: last stages and slopes on their box's limits."""

    ran: bool
    stage: list[Row]
    beta_min: list[str]
    beta_min_bound: str
    beta_max: list[Row]
    beta_max_bound: str


@declares("upstream_quirks", "not_run")
class UpstreamQuirksNotRun(Facts):
    """The authors' arm reported no settings: nothing to name."""

    ran: bool
    stage: list[Row]
    beta_min: list[str]
    beta_max: list[Row]


@declares("steep_slopes", "none", "some")
class SteepSlopes(Facts):
    """The re-implementation's slopes at their numerical ceiling, one row per setting."""

    rows: list[Row]
    ceiling: Num


@declares("mean_or_sum", "mean_only", "sum_only", "both", "neither")
class MeanOrSum(Facts):
    """Which convention of the loss, the code's mean or the printed sum, comes within reach of the reference."""

    n: int
    n_lam: Num
    lam: Num
    equivalent: Num
    mean_max_dev: Num
    sum_max_dev: Num | None  # None: the refit at the equivalent ridge gave a NaN boundary
    within: Num


@declares("control_move", "measured")
class ControlMove(Facts):
    """How the tau_override control moves coverage, the boundary and the gap to the reference."""

    id: str
    coverage_from: Num
    coverage_to: Num
    boundary_from: Num | None  # None: a task's boundary was NaN (a task outside the reference)
    boundary_to: Num | None
    max_dev: Num | None


#: Every finding of the protocol with its states (the protocol's ``FINDINGS``).
FINDINGS = declared_findings(scope_of(__name__))
