"""What ``shift_test``'s report states: Equation 3's fit, each p-value of γ and its decision, the clips, the power."""

from __future__ import annotations

from functools import cached_property

from ...rendering.results import Results as BaseResults
from ...rendering.results import span
from ...stats.permutation import MC_SIDE_SDS, mc_se, p_value_side, side
from .quantities import SHIFT_STATS


class Results(BaseResults):
    @cached_property
    def regression(self) -> list[dict]:
        """The fit of Equation 3, one row per quantity: both arms' values and the digits to print."""
        digits = {"n_merged": 0, "n_support": 0, "slope": 4, "gamma": 4, "se": 4, "t": 4, "r2": 4}
        return [
            {"label": SHIFT_STATS[k], "mine": self.mine[k], "theirs": self.theirs.get(k), "digits": d}
            for k, d in digits.items()
        ]

    def _permutation(self, source: str, p: float, asked: int, used: dict | None, null_centre=None) -> dict:
        """A permutation p-value's row: ``n_perm`` the permutations its decision took (``used``, the record's
        :func:`harness.stats.permutation.refined_p_value` summary, where it has one; else the ``asked``), and
        ``refined_from`` the ``asked`` where more were drawn (else None)."""
        n = used["n_perm"] if used else asked
        return {
            "source": source,
            "n_perm": n,
            "refined_from": asked if n != asked else None,
            "p": p,
            "mc_se": mc_se(p, n),
            "decision": p_value_side(p, n, self.params["alpha"]),
            "null_centre": null_centre,
        }

    @cached_property
    def p_values(self) -> list[dict]:
        """Every p-value of the observed γ, in this order: this run's (the one the targets judge), the authors'
        run's, the precise run's (``n_perm_precise``), each with its Monte Carlo s.e. and decision, where they ran;
        last the textbook one-sided t-test's (exact: s.e. 0, ``n_perm`` None). ``null_centre``: the γ the test
        weighs the observed one against (the mean permuted γ; 0 for the t-test)."""
        n, n_precise, v = self.params["n_perm"], self.params["n_perm_precise"], self.mine
        used = self.mine_details.get("permutations", {})
        rows = [self._permutation("run", v["p_value"], n, used.get("run"), v["null_mean"])]
        if "p_value" in self.theirs:
            rows.append(self._permutation("authors", self.theirs["p_value"], n, None, self.theirs.get("null_mean")))
        if "p_value_precise" in v:
            p = v["p_value_precise"]
            rows.append(self._permutation("precise", p, n_precise, used.get("precise"), v["null_mean_precise"]))
        t_test = {"source": "t_test", "n_perm": None, "p": v["p_classical"], "mc_se": 0.0, "null_centre": 0.0}
        return [*rows, {**t_test, "decision": side(v["p_classical"], self.params["alpha"], 0.0)}]

    @cached_property
    def permutation_decision(self) -> str:
        """The permutation test's decision from its most precise p-value (the precise run's where it ran)."""
        rows = {r["source"]: r for r in self.p_values}
        return rows.get("precise", rows["run"])["decision"]

    @cached_property
    def tests_differ(self) -> bool:
        """The t-test decides otherwise than the permutation test, whose decision is not undecided."""
        return self.permutation_decision not in ("undecided", self.p_values[-1]["decision"])

    @cached_property
    def eps_rows(self) -> list[dict]:
        """The test at each clip ε of the scores, with each p-value's Monte Carlo s.e. and decision."""
        n = self.params["n_perm"]
        return [
            {**r, **self._permutation("clip", r["p_value"], r.get("n_perm", n), None)}
            for r in self.mine_details["eps_sensitivity"]
        ]

    @cached_property
    def eps_reading(self) -> str:
        """``"same"`` (every clip decided, all alike), ``"crosses"`` (some clip below the level, another above) or
        ``"undecided"`` (no crossing, but some clip within Monte Carlo error of the level)."""
        sides = {r["decision"] for r in self.eps_rows}
        if {"below", "above"} <= sides:
            return "crosses"
        return "undecided" if "undecided" in sides else "same"

    @cached_property
    def eps_gamma(self) -> dict:
        return span(r["gamma"] for r in self.eps_rows)

    @cached_property
    def interval(self) -> dict:
        """The ``1 - 2 alpha`` interval for γ from inverting the test on its own permutations; its lower end is
        the one-sided ``1 - alpha`` bound, so it excludes 0 exactly where this run's p is below alpha."""
        lo, hi = self.mine["gamma_lo"], self.mine["gamma_hi"]
        return {"lo": lo, "hi": hi, "level": 1 - 2 * self.params["alpha"], "excludes_zero": lo > 0}

    @cached_property
    def power(self) -> dict | None:
        """The measured power on the claim's own design (None where the claim asks for none). ``state``:
        ``"rejected"`` where the test rejects (no null result to weigh), else the power at the fitted γ against the
        target: ``"adequate"``, ``"underpowered"`` or ``"undecided"`` (within Monte Carlo error of it)."""
        pw = self.mine_details.get("power")
        if pw is None:
            return None
        cfg, main = self.params["power"], pw["linear"]
        at = main["at_observed"]
        vs_target = side(at["power"], cfg["target"], MC_SIDE_SDS * at["mc_se"])
        state = {"below": "underpowered", "above": "adequate", "undecided": "undecided"}[vs_target]
        return {
            "state": "rejected" if self.permutation_decision == "below" else state,
            **{k: cfg[k] for k in ("target", "n_replicates", "n_perm")},
            "at_observed": at["power"],
            "at_observed_se": at["mc_se"],
            "coverage": at["coverage"],
            "coverage_se": at["coverage_mc_se"],
            "min_detectable": main["minimal_shift"],  # its shift, and the curve's max_power
            "min_range": main["minimal_shift_range"],  # lo, hi
            "strata": pw["strata"]["at_observed"],  # the shift and power with one intercept per stratum
        }

    @cached_property
    def power_rows(self) -> list[dict]:
        """The power curve per planted shift, Equation 3's beside the one with an intercept per stratum."""
        pw = self.mine_details.get("power")
        if pw is None:
            return []
        a, b = pw["linear"]["curve"], pw["strata"]["curve"]
        return [
            {"shift": s, "power": p, "mc_se": se, "strata_power": sp, "strata_mc_se": sse}
            for s, p, se, sp, sse in zip(a["shifts"], a["power"], a["mc_se"], b["power"], b["mc_se"])
        ]

    @cached_property
    def planted(self) -> dict[str, dict]:
        """Each planted-shift control (``inflate_post``) by id: its p-value with Monte Carlo s.e. and decision."""
        out, arm = {}, self.record.arms.reimpl
        for c in self.record.controls:
            values = self.control_values(c.id)
            if c.control == "inflate_post" and "p_value" in values:
                used = arm.controls[c.id].details.get("permutations")
                out[c.id] = self._permutation("run", values["p_value"], self.params["n_perm"], used)
        return out
