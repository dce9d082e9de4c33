"""Quantities of ``shift_test``: the post-release shift γ of a later benchmark on an earlier one."""

from __future__ import annotations

from ...core.quantities import Quantity

#: What the test measures, by name, with its label.
SHIFT_STATS = {
    "n_merged": "models in both exports",
    "n_support": "models in the common support",
    "n_pre": "models released before the cutoff",
    "n_post": "models released on or after the cutoff",
    "slope": "slope on logit(earlier benchmark)",
    "gamma": "post-release shift γ",
    "se": "standard error of γ",
    "t": "t statistic of γ",
    "p_value": "one-sided permutation p-value",
    "r2": "R²",
    "odds_ratio": "odds ratio exp(γ)",
    "null_mean": "centre of the permutation null",
    "upper95": "one-sided 95% upper bound on γ",
}
#: The kind of each that is not a value (:class:`~harness.core.quantities.Quantity`).
KINDS = dict.fromkeys(("n_merged", "n_support", "n_pre", "n_post"), "count") | dict.fromkeys(
    ("p_value", "r2"), "fraction"
)
#: Control ``inflate_post``: the test again with the planted shift.
INFLATED = {
    "gamma": "post-release shift γ with the planted shift",
    "p_value": "one-sided permutation p-value with the planted shift",
}
#: Control ``relabel_groups``: γ over random relabellings of the groups.
RELABELLED = {
    "gamma_mean": "mean γ over random relabellings",
    "gamma_sd": "standard deviation of γ over random relabellings",
}


def vocabulary(p: dict) -> dict[str, Quantity]:
    out = {k: Quantity(v, kind=KINDS.get(k, "value")) for k, v in SHIFT_STATS.items()}
    out["p_classical"] = Quantity("one-sided t-test p-value", "reimpl", "fraction")
    level = f"{1 - 2 * p['alpha']:.0%}" if isinstance(p.get("alpha"), (int, float)) else "the"
    out["gamma_lo"] = Quantity(f"lower end of {level} interval for γ (the test inverted)", "reimpl")
    out["gamma_hi"] = Quantity(f"upper end of {level} interval for γ (the test inverted)", "reimpl")
    if p.get("n_perm_precise"):
        out["p_value_precise"] = Quantity(
            f"permutation p-value from {p['n_perm_precise']} permutations", "reimpl", "fraction"
        )
        out["null_mean_precise"] = Quantity(f"centre of the null from {p['n_perm_precise']} permutations", "reimpl")
    if p.get("power"):
        out["power.at_observed"] = Quantity("power of the test at the observed shift", "reimpl", "fraction")
        out["power.min_detectable"] = Quantity("smallest shift detected with the target power", "reimpl")
    return out


def control_vocabulary(kind: str, p: dict, c: dict) -> dict[str, Quantity]:
    table = {"inflate_post": INFLATED, "relabel_groups": RELABELLED}.get(kind, {})
    return {k: Quantity(v, kind=KINDS.get(k, "value")) for k, v in table.items()}
