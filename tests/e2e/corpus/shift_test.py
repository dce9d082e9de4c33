"""The corpus variants of ``shift_test`` (claim 000 edited): other cutoffs, bin counts, clips and levels, a
precise p-value, a plant too small to detect.
"""

from __future__ import annotations

from reference import approx

from harness.rendering.results import results_for

from . import Variant, all_of, chain, set_params


def _result(name, *states, key=None):
    """The results object's fact ``name`` (its ``key`` where it is a dict) is one of ``states``."""

    def expect(rec):
        fact = getattr(results_for(rec), name)
        got = fact[key] if key else fact
        assert got in states, (name, got, states)

    return expect


def _shift_power(raw):
    raw["params"]["power"] = {"shifts": [0.0, 0.5, 1.0, 2.0], "n_replicates": 40, "n_perm": 199, "target": 0.8}
    raw["params"]["n_perm_precise"] = 0


def _shift_cheap(raw):
    raw["params"]["n_perm"] = 999
    raw["params"].pop("power", None)
    raw["params"]["n_perm_precise"] = 0
    for c in raw["controls"]:
        if c["control"] == "relabel_groups":
            c["params"]["n_draws"] = 50


def _relations_only(raw):
    raw["targets"] = [t for t in raw["targets"] if t.get("relation") in (">", "<")]


VARIANTS = [
    Variant(
        "c000_cutoff_2024_09_12",
        "000",
        chain(set_params(cutoff="2024-09-12"), _shift_cheap, _shift_power, _relations_only),
        all_of(_result("power", "rejected", key="state"), _result("interval", True, key="excludes_zero")),
        notes="33 models, 7 before the cutoff: the test rejects",
    ),
    Variant("c000_cutoff_2025_08_01", "000", chain(set_params(cutoff="2025-08-01"), _shift_cheap, _relations_only)),
    Variant("c000_bins3", "000", chain(set_params(n_bins=3), _shift_cheap, _shift_power)),
    Variant("c000_bins20", "000", chain(set_params(n_bins=20), _shift_cheap)),
    Variant(
        "c000_eps",
        "000",
        chain(set_params(eps=0.01, eps_grid=[0.01, 0.1, 0.3]), _shift_cheap, _relations_only),
        lambda rec: rec.arms.reimpl.values["gamma"] == approx("shift_test.gamma_at_eps_0.01"),
    ),
    Variant(
        "c000_precise",
        "000",
        chain(_shift_cheap, set_params(n_perm_precise=20000)),
        _result("permutation_decision", "above", "below", "undecided"),
    ),
    Variant(
        "c000_small_plant",
        "000",
        chain(_shift_cheap, lambda raw: raw["controls"][0]["params"].update(shift=0.05)),
        all_of(
            lambda rec: results_for(rec).planted["synthetic_inflation"]["decision"] in ("above", "undecided"),
            lambda rec: rec.controls[0].reimpl.broke is False and rec.verdict.verdict == "partially reproduced",
        ),
    ),
    Variant("c000_alpha20", "000", chain(set_params(alpha=0.2), _shift_cheap, _shift_power, _relations_only)),
]
