"""The corpus variants of ``temporal_coverage`` (claim 001 edited): other quantile levels, periods, bin counts
and groups, and periods the authors' scripts cannot take.
"""

from __future__ import annotations

from harness.build.runner import one_line_reason
from harness.core.record import Arm
from harness.rendering.results import results_for

from . import Variant, chain, only_tasks, set_params

#: The authors' period scripts refusing the claim's periods, as their adapter's failure reaches the record.
PERIODS_REFUSED = (
    "the adapter protocols/temporal_coverage/adapter.py exited with status 1; last lines of stderr:\n"
    "Traceback (most recent call last):\n"
    '  File "<scratch>/launch.py", line 81, in <module>\n'
    "    answer = adapter.run(request)\n"
    '  File "harness/authors/adapters/authors_periods.py", line 127, in check_periods\n'
    "ValueError: the claim's periods are not those of the authors' code (their scripts cannot take others): "
    "period P1 = None..2024-04 is not their <=2024-06 = (1900, 1)..(2024, 6); "
    "period P2 = 2024-05..2024-08 is not their 2024-07..2024-09 = (2024, 7)..(2024, 9)"
)


def _temporal_cheap(raw):
    raw["params"].update(box_check=None, n_random=2)
    for c in raw["controls"]:
        c["params"]["n_relabellings"] = 2


def _three_periods(raw):
    raw["params"]["periods"] = raw["params"]["periods"][1:]
    raw["targets"] = [t for t in raw["targets"] if not t["quantity"].startswith("split3.")]


def _tau(tau):
    def edit(raw):
        raw["params"]["tau"] = tau
        raw["params"].pop("exceed_rate", None)
        for t in raw["targets"]:
            t["reason"] = t["reason"].replace("2%", "the share 1 − τ").replace("98%", "τ")

    return edit


TEMPORAL = [
    Variant(
        "c001_tau90",
        "001",
        chain(_temporal_cheap, _tau(0.9)),
        lambda rec: abs(results_for(rec).params["exceed_rate"] - 0.1) < 1e-12,
        slow=True,
    ),
    Variant("c001_tau50", "001", chain(_temporal_cheap, _tau(0.5)), slow=True),
    Variant("c001_two_splits", "001", chain(_temporal_cheap, _three_periods), slow=True),
    Variant("c001_bins3", "001", chain(_temporal_cheap, set_params(n_bins=3, min_bin_size=10)), slow=True),
    Variant("c001_bins20", "001", chain(_temporal_cheap, set_params(n_bins=20, min_bin_size=10)), slow=True),
    Variant(
        "c001_flipped_groups",
        "001",
        chain(_temporal_cheap, set_params(drift_tasks=["MMLU-Pro", "GPQA"])),
        lambda rec: rec.verdict.verdict != "reproduced",
        slow=True,
    ),
    Variant("c001_box", "001", set_params(n_random=2), slow=True),
]


def _other_periods(raw):
    raw["params"]["periods"] = [
        ["P1", None, "2024-04"],
        ["P2", "2024-05", "2024-08"],
        ["P3", "2024-09", "2024-12"],
        ["P4", "2025-01", "2025-03"],
    ]


def _refused_periods_arm(spec, tables, reimpl):
    return {"periods_refused": Arm(status="could not run", reason=one_line_reason(PERIODS_REFUSED, spec.id))}


ISSUE28 = [
    Variant(
        "c001_other_periods",
        "001",
        chain(_temporal_cheap, only_tasks("MATH Lvl 5", "BBH"), _other_periods),
        extra_arms=_refused_periods_arm,
        tags=("periods_refused", "knobs_off"),
        notes="their period scripts hard-code the paper's periods",
    ),
]

VARIANTS = [*TEMPORAL, *ISSUE28]
