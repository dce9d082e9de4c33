"""What ``parametric_loss``'s report states: the estimates beside Hoffmann et al.'s, the likelihoods, what follows."""

from __future__ import annotations

from functools import cached_property
from statistics import NormalDist

from ...rendering.results import Results as BaseResults
from .quantities import BATCHES, PARAMS

#: The fall of a log-likelihood that a 95% profile-likelihood interval admits: half the 0.95 quantile of χ² with
#: one degree of freedom, ``z_0.975² / 2`` (1.92).
PROFILE_95 = NormalDist().inv_cdf(0.975) ** 2 / 2


class Results(BaseResults):
    batches = BATCHES

    def _pair(self, name: str) -> dict:
        return {"mine": self.mine.get(name), "theirs": self.theirs.get(name)}

    @cached_property
    def named(self) -> set[str]:
        return {t.quantity for t in self.record.targets} | {
            r.quantity for c in self.record.controls for k in c.reimpl.conditions for r in k.rows
        }

    @cached_property
    def estimates(self) -> list[dict]:
        """One row per parameter: the refit (both arms), Hoffmann's method where it ran, the bootstrap s.e."""
        return [
            {"label": w, **self._pair(f"fit.{k}"), "grid": self.mine.get(f"grid.{k}"), "se": self.mine.get(f"se.{k}")}
            for k, w in PARAMS.items()
        ]

    @cached_property
    def likelihoods(self) -> list[dict]:
        """The refit and Hoffmann's two sets of values under one likelihood, each tested against the refit."""
        hoffmann = (("tex", "Hoffmann et al., TeX source"), ("printed", "Hoffmann et al., printed"))
        return [{"label": "refit", "loglik": self._pair("fit.loglik"), "lr": None, "p": None}] + [
            {"label": words, **{k: self._pair(f"{k}.{which}") for k in ("loglik", "lr", "p")}}
            for which, words in hoffmann
        ]

    @cached_property
    def ridge(self) -> float | None:
        """How far the log-likelihood falls with B held 10% either side of the refit's; None when not measured or
        when no target is on A or B."""
        on_ab = any(q.split(".")[-1] in ("A", "B") for q in self.named)
        return self.mine.get("profile.B") if on_ab else None

    @cached_property
    def ridge_flat(self) -> bool:
        """Both values of B 10% away from the refit's lie inside its 95% profile-likelihood interval."""
        return self.ridge is not None and self.ridge < PROFILE_95

    @cached_property
    def sources(self) -> list[dict]:
        """Per printed value a target compares with a fit: how far each fit lies from it, and the nearer."""
        out = []
        for t in self.record.targets:
            group, _, key = t.quantity.partition(".")
            if t.relation != "~" or group not in ("fit", "grid") or key not in PARAMS:
                continue
            fit, grid = self.mine.get(f"fit.{key}"), self.mine.get(f"grid.{key}")
            if fit is None or grid is None:
                continue
            d_fit, d_grid = abs(fit - t.paper), abs(grid - t.paper)
            out.append(
                {
                    "label": PARAMS[key],
                    "paper": t.paper,
                    "fit": d_fit,
                    "grid": d_grid,
                    "nearer": "the refit" if d_fit < d_grid else "Hoffmann's method's fit",
                }
            )
        return out

    @cached_property
    def nearest(self) -> dict[str, list[str]]:
        """The printed values by the fit each lies nearest: ``{fit: [labels]}``."""
        out: dict[str, list[str]] = {}
        for row in self.sources:
            out.setdefault(row["nearer"], []).append(row["label"])
        return out

    @cached_property
    def reads_ratio(self) -> bool:
        return any(q.startswith("ratio.") for q in self.named)

    @cached_property
    def required_runs_mc(self) -> float | None:
        return self.mine.get("mc.required_runs") if "required_runs" in self.named else None

    @cached_property
    def margins(self) -> list[dict]:
        """Each threshold a target sets on the runs needed: how far it lies from this run's estimate, in its Monte
        Carlo standard errors, and on which side."""
        mine, se = self.mine.get("required_runs"), self.required_runs_mc
        if mine is None or not se:
            return []
        return [
            {"value": t.value, "se": abs(mine - t.value) / se, "side": "below" if mine > t.value else "above"}
            for t in self.record.targets
            if t.quantity == "required_runs" and t.value is not None
        ]

    @cached_property
    def resampling_gap(self) -> dict | None:
        """Where both arms give the runs needed: how far apart, in Monte Carlo standard errors of this arm's (the
        arms draw different resamples: the notebook after ``np.random.seed(42)``, this run from the claim's seed)."""
        mine, theirs = self._pair("required_runs").values()
        se = self.mine.get("mc.required_runs")
        if mine is None or theirs is None or not se:
            return None
        return {"gap": theirs - mine, "in_se": abs(theirs - mine) / se}
