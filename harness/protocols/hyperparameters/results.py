"""What ``hyperparameters``' report states: the settings' gaps to the reference, coverage per τ, the authors'
fits: the checks of their code and where they depart from the setting asked for."""

from __future__ import annotations

from functools import cached_property

from ...rendering.results import Results as BaseResults
from . import quantities as Q

#: A fitted slope at this share of the re-implementation's numerical ceiling is a step, not a sigmoid.
STEEP = 0.999
_PARAMS = ("tau", "kappa", "lam")


class Results(BaseResults):
    @cached_property
    def claimed(self) -> dict[str, float]:
        return {p: float(self.params[p]) for p in _PARAMS}

    def _words(self, setting: dict) -> str:
        """``κ = 10`` for the setting that moves κ alone; ``the claimed setting`` for the claimed one."""
        moved = [Q.setting_text(p, setting[p]) for p in _PARAMS if float(setting[p]) != self.claimed[p]]
        return ", ".join(moved) or "the claimed setting"

    def _gaps(self, setting: dict) -> dict:
        """A setting in words, with each arm's largest gap to the reference there."""
        gap = self._name(setting, "max_dev")
        return {"setting": self._words(setting), "mine": self.mine.get(gap), "theirs": self.theirs.get(gap)}

    @cached_property
    def settings(self) -> list[dict]:
        """One row per probed setting, the claimed one first: its largest gap to the reference (in accuracy) in
        each arm and whether the re-implementation's lies within the claim's reach; its largest shift from the
        claimed boundaries and the fitted slope of ``beta_task``."""
        within = float(self.params["within"])
        rows = [("tau", self.claimed["tau"])]
        rows += [(p, float(x)) for p in _PARAMS for x in self.params[f"{p}_grid"] if float(x) != self.claimed[p]]
        out = []
        for p, x in rows:
            setting = {**self.claimed, p: x}
            shift, beta = self._name(setting, "max_shift"), self._name(setting, "beta")
            row = self._gaps(setting)
            out.append(
                row
                | {
                    "within": row["mine"] is not None and row["mine"] <= within,
                    "shift": self.mine.get(shift),
                    "beta": self.mine.get(beta),
                    "theirs_beta": self.theirs.get(beta),
                }
            )
        return out

    @cached_property
    def within_settings(self) -> list[str]:
        return [r["setting"] for r in self.settings if r["within"]]

    @cached_property
    def sum_convention(self) -> dict | None:
        """The printed sum (ridge λ / n on the mean) refitted at run time: its largest gap to the reference beside
        the mean's (``None``: the run stored no such evidence)."""
        s = self.evidence.get("sum")
        if s is None:
            return None
        within = s["max_dev"] is not None and s["max_dev"] <= float(self.params["within"])
        return {**s, "within": within}

    @cached_property
    def coverage(self) -> list[dict]:
        """Per τ of the sweep (ascending): the share of models above the fitted curves against the 1 − τ asked."""
        out = []
        for tau in sorted(float(t) for t in self.params["tau_grid"]):
            name = Q.sweep("tau", tau, "coverage_mean")
            above = 1.0 - self.mine[name]
            theirs = self.theirs.get(name)
            out.append(
                {
                    "tau": tau,
                    "above": above,
                    "asked": 1.0 - tau,
                    "ratio": above / (1.0 - tau),
                    "theirs_above": None if theirs is None else 1.0 - theirs,
                }
            )
        return out

    @cached_property
    def audit(self) -> dict | None:
        """The cited source lines as the authors' arm read them, counted by the constant each is cited for
        (``None``: their arm did not report the audit)."""
        a = self.their_details.get("audit")
        if a is None:
            return None
        by_constant: dict[str, dict] = {}
        for e in a["entries"]:
            row = by_constant.setdefault(e["constant"], {"constant": e["constant"], "n": 0, "n_found": 0})
            row["n"] += 1
            row["n_found"] += bool(e["found"])
        return {"n": a["n"], "n_found": a["n_found"], "by_constant": list(by_constant.values())}

    def _name(self, setting: dict, stat: str) -> str:
        """The quantity of a statistic at a setting: its sweep row's (the claimed setting's row on any grid that
        holds it, or ``claimed.max_dev``), or ``""`` when no row holds that setting."""
        moved = [p for p in _PARAMS if float(setting[p]) != self.claimed[p]]
        if len(moved) == 1:
            return Q.sweep(moved[0], float(setting[moved[0]]), stat)
        if moved:
            return ""
        if stat == "max_dev":
            return Q.claimed(stat)
        rows = [p for p in _PARAMS if self.claimed[p] in map(float, self.params[f"{p}_grid"])]
        return Q.sweep(rows[0], self.claimed[rows[0]], stat) if rows else ""

    @cached_property
    def departures(self) -> list[dict]:
        """Settings where a fit is not the smooth sigmoid asked for, with both arms' largest gap to the reference:
        in the authors' arm (from their own trace) a last stage at another (τ, κ), every slope on the lower limit
        of their box, or some slopes on its upper limit; in the re-implementation, slopes at its numerical
        ceiling (a step)."""
        rows: dict[str, dict] = {}

        def row(setting: dict) -> dict:
            words = self._words(setting)
            if words not in rows:
                flags = {"last_stage": None, "all_at_lower": False, "at_upper": [], "steep": []}
                rows[words] = self._gaps(setting) | flags
            return rows[words]

        settings = self.their_details.get("settings", {})
        quirks = self.their_details.get("quirks", {})
        upper = quirks.get("beta_max_bound", "")
        for key, s in settings.items():
            last = None if s["final_stage_is_setting"] else s["final_stage"]
            lower = key in quirks["all_tasks_beta_at_min"]
            at_upper = [k for k, f in s["fits"].items() if upper in f["bounds_active"]]
            if last is not None or lower or at_upper:
                row(s).update(last_stage=last, all_at_lower=lower, at_upper=at_upper)
        d = self.mine_details
        for s in d.get("settings", {}).values():
            steep = [k for k, f in s["fits"].items() if f["beta"] >= STEEP * d["beta_ceiling"]]
            if steep:
                row(s)["steep"] = steep
        return list(rows.values())

    @cached_property
    def bounds(self) -> dict:
        """The limits of the slope: the authors' box (lower, upper) and the re-implementation's ceiling."""
        q = self.their_details.get("quirks", {})
        return {
            "lower": q.get("beta_bound", "").partition("=")[2] or None,
            "upper": q.get("beta_max_bound", "").partition("=")[2] or None,
            "ceiling": self.mine_details.get("beta_ceiling"),
        }
