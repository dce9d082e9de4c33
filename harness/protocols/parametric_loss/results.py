"""The facts the report of ``parametric_loss`` states, each derived once from the record.

Standard library and the rendering base only.
"""

from __future__ import annotations

from functools import cached_property

from ...rendering.results import Results as BaseResults
from .quantities import PARAMS

__all__ = ["Results", "RIDGE_LOGLIK"]

#: Two fits whose log-likelihoods differ by less than this are "at equal likelihood" (a χ² with 1 degree of
#: freedom at 0.1 has p = 0.75: no test tells them apart).
RIDGE_LOGLIK = 0.05


class Results(BaseResults):
    """``parametric_loss``: the estimates beside Hoffmann et al.'s, the likelihoods, what follows from them."""

    def _pair(self, name: str) -> dict:
        return {"mine": self.mine.get(name), "theirs": self.theirs.get(name)}

    @cached_property
    def estimates(self) -> list[dict]:
        """One row per parameter: the refit (both arms), Hoffmann's method where it ran, the bootstrap s.e."""
        return [
            {"label": w, **self._pair(f"fit.{k}"), "grid": self.mine.get(f"grid.{k}"), "se": self.mine.get(f"se.{k}")}
            for k, w in PARAMS.items()
        ]

    @cached_property
    def has_grid(self) -> bool:
        return "grid.E" in self.mine

    @cached_property
    def likelihoods(self) -> list[dict]:
        """The refit and Hoffmann's two sets of values under one likelihood, each tested against the refit."""
        rows = [{"label": "refit", "loglik": self._pair("fit.loglik"), "lr": None, "p": None}]
        for which, words in (("tex", "Hoffmann et al., TeX source"), ("printed", "Hoffmann et al., printed")):
            rows.append(
                {
                    "label": words,
                    "loglik": self._pair(f"loglik.{which}"),
                    "lr": self._pair(f"lr.{which}"),
                    "p": self._pair(f"p.{which}"),
                }
            )
        return rows

    @cached_property
    def derived(self) -> list[dict]:
        """The measured quantities that follow from the fits, in vocabulary order (both arms)."""
        skip = ("fit.", "grid.", "se.", "loglik.", "lr.", "p.", "alt.")
        return [
            {"label": self.record.quantities.get(k, k), **self._pair(k)}
            for k in self.record.quantities
            if not k.startswith(skip) and k in self.mine
        ]

    @cached_property
    def ridge(self) -> dict | None:
        """A and B on a ridge: a second optimiser lands elsewhere on B at (almost) the same likelihood."""
        gap, b_alt, b = self.mine.get("alt.loglik_gap"), self.mine.get("alt.B"), self.mine.get("fit.B")
        if gap is None or b_alt is None or b is None:
            return None
        return {"b": b, "b_alt": b_alt, "gap": gap, "equal": abs(gap) < RIDGE_LOGLIK}

    @cached_property
    def sources(self) -> list[dict]:
        """For each printed value a target compares with the refit or Hoffmann's method: how far each fit lies
        from it, and the nearer (where both ran)."""
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
                    "nearer": "refit" if d_fit < d_grid else "Hoffmann's method",
                }
            )
        return out
