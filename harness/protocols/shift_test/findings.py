"""The findings of ``shift_test``, one model each, with the states it is declared for (see
:func:`harness.core.record.declares`): what :mod:`.protocol` states and what the template and :mod:`.invariants`
read. Fields in the order the protocol states them; ``upstream_*``: the authors' arm's, ``None`` where it did not
run. Pydantic only.
"""

from __future__ import annotations

from ...core.record import Facts, Num, Row, declared_findings, declares, scope_of


@declares("summary", "measured")
class Summary(Facts):
    """The test's headline numbers and their readings against the claim's level."""

    gamma: Num
    odds_ratio: Num
    p_value: Num
    n_support: Num
    positive: bool
    significant: bool
    alpha: Num
    upstream_gamma: Num | None
    upstream_p: Num | None
    cutoff: str
    n_perm: int
    p_precise: Num | None  # with n_perm_precise
    n_perm_precise: int | None
    p_classical: Num
    classical_significant: bool
    paper_p_text: str | None  # the paper's p-value as printed, when a target holds one


@declares("result", "measured")
class Result(Facts):
    """The regression's numbers, both arms and the paper, one row each, and the design's counts."""

    rows: list[Row]
    n_merged: Num
    n_support: Num
    n_pre: Num
    n_post: Num
    n_perm: int
    n_bins: int
    mc_se: Num


@declares("monte_carlo", "single")
class MonteCarloSingle(Facts):
    """One permutation run: its Monte Carlo standard error only."""

    mc_se: Num


@declares("monte_carlo", "side_settled", "side_uncertain")
class MonteCarlo(Facts):
    """The p-value's limit from the precise run, and whether its side of the level is settled."""

    limit: Num
    n_perm_precise: int
    n_perm: int
    sd: Num
    alpha: Num
    sds: Num
    paper_text: str | None
    paper_sds: Num | None
    paper_side: str | None
    upstream_sds: Num | None
    upstream_side: str | None


@declares(
    "null_centre",
    "both_not_significant",
    "only_classical_significant",
    "only_permutation_significant",
    "both_significant",
)
class NullCentre(Facts):
    """Where the permutation null is centred, and each test's side of the level."""

    null_mean: Num
    null_sd: Num
    off_centre: bool
    off_centre_sds: Num
    upstream_null_mean: Num | None
    t: Num
    df: Num
    p_classical: Num
    p_value: Num
    alpha: Num


@declares("eps_sensitivity", "same_side", "crosses")
class EpsSensitivity(Facts):
    """The test at each clip of the logit: one row per eps."""

    rows: list[Row]
    alpha: Num
    below: list[Num]
    claimed_eps: Num
    gamma_min: Num
    gamma_max: Num
    p_min: Num
    p_max: Num


@declares("power", "not_run")
class PowerNotRun(Facts):
    """The claim asks for no power study."""


@declares("power", "adequate", "underpowered", "rejected")
class Power(Facts):
    """The test's measured power on its own design (the linear and the strata alternative)."""

    p_value: Num
    power_reached: bool
    target: Num
    alpha: Num
    n_replicates: int
    n_perm: int
    curve: list[Row]
    observed: Num
    at_observed: Num
    at_observed_se: Num
    min_detectable: Num | None  # None: no shift of the grid reaches the target
    min_detectable_lo: Num | None
    min_detectable_hi: Num | None
    min_detectable_z: Num
    max_power: Num
    size: Num | None  # the power at shift 0, when the grid holds it
    strata_observed: Num
    strata_at_observed: Num
    strata_at_observed_se: Num
    strata_min_detectable: Num | None


@declares("planted", "detected", "missed")
class Planted(Facts):
    """The control that plants a shift in the post-release models."""

    id: str
    shift: Num
    gamma: Num
    p_value: Num
    alpha: Num
    upstream_gamma: Num | None
    upstream_p: Num | None
    upstream_detected: bool | None


@declares("relabelled", "measured")
class Relabelled(Facts):
    """The control that shuffles the release labels."""

    id: str
    n: int
    mean: Num
    sd: Num
    upstream_mean: Num | None
    upstream_sd: Num | None
    observed: Num


@declares("upper_bound", "not_rejected", "rejected")
class UpperBound(Facts):
    """The one-sided 95% upper bound on γ."""

    se: Num
    upper95: Num
    n_support: Num
    p_value: Num
    alpha: Num


@declares("gamma_interval", "excludes_zero", "includes_zero")
class GammaInterval(Facts):
    """The interval for γ from inverting the test, with its measured coverage where the power study ran."""

    gamma: Num
    lo: Num
    hi: Num
    level: Num
    one_sided: Num
    alpha: Num
    n_perm: int
    coverage: Num | None
    coverage_mc_se: Num | None
    coverage_at: Num | None
    n_replicates: int | None
    se_lo: Num
    se_hi: Num


#: Every finding of the protocol with its states (the protocol's ``FINDINGS``).
FINDINGS = declared_findings(scope_of(__name__))
