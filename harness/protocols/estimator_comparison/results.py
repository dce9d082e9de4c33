"""What ``estimator_comparison``'s report states: Table 2, the orderings the claim asserts, the authors' box."""

from __future__ import annotations

from functools import cached_property

from ...core.relations import relation_holds, target_holds
from ...rendering.results import Results as BaseResults
from . import quantities as Q


class Results(BaseResults):
    @cached_property
    def _cells(self) -> dict:
        """The claim's value targets (``~``) by quantity: the cells of Table 2 it pins."""
        return {t.quantity: t for t in self.record.targets if t.relation == "~"}

    @cached_property
    def n_pairs(self) -> int:
        return len(self.mine_details["pair_gaps"])

    @cached_property
    def table(self) -> list[dict]:
        """Table 2, one row per estimator: per metric, both arms' value and the claim file's printed cell, if any."""

        def cell(name: str) -> dict:
            t = self._cells.get(name)
            return {"mine": self.mine.get(name), "theirs": self.theirs.get(name), "paper": t.paper_text if t else None}

        return [
            {"estimator": Q.ESTIMATOR_NAMES[e].capitalize(), **{m: cell(Q.metric(m, e)) for m in Q.METRICS}}
            for e in Q.ESTIMATORS
        ]

    @cached_property
    def knots(self) -> list[dict]:
        """The I-spline at each knot count of ``knot_grid``: ``n_intervals``, ``claimed`` (the claim's own count),
        its four metrics, and every difference of :data:`Q.GAPS` with the other estimators as measured."""
        claimed = self.params["ispline_intervals"]
        return [
            {
                **row,
                "claimed": row["n_intervals"] == claimed,
                **Q.gap_values({**self.mine, **{Q.metric(m, "ispline"): row[m] for m in Q.METRICS}}),
            }
            for row in self.mine_details["knot_rows"]
        ]

    @cached_property
    def orderings(self) -> list[dict]:
        """The orderings the claim's relation targets on a difference of :data:`Q.GAPS` assert, and no other, each
        by one rule: the target's relation on the difference of Table 2's means (``holds``), on each task-period
        pair alone (``pairs``) and at each knot count of the I-spline (``knots``); ``paper`` the difference of the
        paper's printed cells, where the claim file pins both."""
        pair_gaps, knots = self.mine_details["pair_gaps"], self.knots
        rows = []
        for t in self.record.targets:
            if t.relation == "~" or t.quantity not in Q.GAPS or t.other is not None:
                continue
            m, a, b = Q.GAPS[t.quantity]
            pa, pb = self._cells.get(Q.metric(m, a)), self._cells.get(Q.metric(m, b))
            rows.append(
                {
                    "title": t.title,
                    "requirement": t.requirement,
                    "mine": t.reimpl.value,
                    "theirs": t.upstream.value,
                    "paper": pa.paper - pb.paper if pa and pb else None,
                    "holds": t.reimpl.holds,
                    "pairs": sum(relation_holds(t.relation, p[t.quantity], t.value) for p in pair_gaps),
                    "knots": sum(relation_holds(t.relation, k[t.quantity], t.value) for k in knots),
                }
            )
        return rows

    @cached_property
    def box(self) -> dict | None:
        """The sigmoid refitted inside the authors' optimiser box (``box_check``); ``None`` without it."""
        boxed = self.mine_details.get("boxed")
        if boxed is None:
            return None
        rows = []
        for m in Q.METRICS:
            name = Q.metric(m, "sigmoid")
            t, theirs = self._cells.get(name), self.theirs.get(name)
            mine, inside = self.mine[name], self.mine[Q.boxed(name)]
            gap = None if theirs is None else mine - theirs
            rows.append(
                {
                    "title": t.title if t else self.record.quantities.get(name, name),
                    "mine": mine,
                    "boxed": inside,
                    "theirs": theirs,
                    "paper": t.paper_text if t else None,
                    "within": target_holds("~", inside, paper=t.paper, tolerance=t.tolerance) if t else None,
                    "free_within": t.reimpl.holds if t else None,
                    "removed": 1.0 - abs(inside - theirs) / abs(gap) if gap else None,
                }
            )
        return {
            "bounds": boxed["box"],
            "outside": boxed["free_fits_outside"],
            "rows": rows,
            "rescued": [r["title"] for r in rows if r["free_within"] is False and r["within"]],
        }
