"""What ``boundary_at_budget``'s report states: each benchmark's boundary at the budget, both arms, the paper."""

from __future__ import annotations

import math
from functools import cached_property

from ...core.relations import target_holds, within_tolerance
from ...rendering.results import Results as BaseResults
from ...rendering.results import span
from . import quantities as Q

#: The evaluation point rests on a thin upper tail when fewer than this share of the models lie at or above it.
THIN_TAIL_SHARE = 0.2
#: Without a tolerance to judge the other start against: half a unit of the fourth decimal the tables print.
PRINTED = 0.5e-4


class Results(BaseResults):
    @cached_property
    def z_eval(self) -> float:
        return math.log10(self.params["eval_x"])

    @cached_property
    def paper(self) -> dict:
        return {t.quantity: t for t in self.record.targets if t.relation == "~" and t.quantity.startswith("boundary.")}

    @cached_property
    def tau_control(self) -> dict | None:
        c = next((c for c in self.record.controls if c.control == "tau_override" and c.reimpl.ran), None)
        return {"id": c.id, "tau": c.params["tau"]} if c else None

    @cached_property
    def rows(self) -> list[dict]:
        """One row per benchmark: both arms' boundaries, the paper's, each arm's difference from it, the control's."""
        ctl = self.control_values(self.tau_control["id"]) if self.tau_control else {}
        out = []
        for label in self.params["tasks"]:
            name, t = Q.boundary(label), self.paper.get(Q.boundary(label))
            mine, theirs, cv = self.mine.get(name), self.theirs.get(name), ctl.get(name)
            cov, sharp_cov = self.mine.get(Q.coverage(label)), self.mine.get(Q.sharp(Q.coverage(label)))
            out.append(
                {
                    "label": label,
                    "mine": mine,
                    "above": None if cov is None else 1.0 - cov,
                    "sharp": self.mine.get(Q.sharp(name)),
                    "sharp_above": None if sharp_cov is None else 1.0 - sharp_cov,
                    "theirs": theirs,
                    "paper_text": t.paper_text if t else None,
                    "mine_minus_paper": t.reimpl.delta if t else None,
                    "theirs_minus_paper": t.upstream.delta if t else None,
                    "control": cv,
                    "control_minus_paper": (cv - t.paper) if (t and cv is not None) else None,
                }
            )
        return out

    @cached_property
    def smoothing(self) -> dict:
        """What the smoothing does to the quantile: the share of models above each fitted boundary against the
        ``1 - tau`` a τ-quantile leaves, at the claim's κ and at ``kappa_check`` (``sharp``: ``None`` without it),
        each as its range over the benchmarks."""
        return {
            "nominal": 1.0 - self.params["tau"],
            "above": span(r["above"] for r in self.rows),
            "sharp_kappa": self.params.get("kappa_check"),
            "sharp_above": span(r["sharp_above"] for r in self.rows),
        }

    @cached_property
    def support(self) -> dict:
        """Where the evaluation point sits in the data and how many models stand behind the boundary there."""
        n, n_above = self.data["oll_rows_with_compute"], self.mine_details["n_at_or_above_eval"]
        z_min, z_max, edge = self.data["z_min"], self.data["z_max"], 1.0 / (1.0 - self.params["tau"])
        thin = n_above / n < THIN_TAIL_SHARE
        if self.z_eval > z_max:
            state = "beyond"
        elif self.z_eval < z_min:
            state = "below"
        elif n_above < edge:
            state = "edge" if thin else "small_table"
        else:
            state = "upper_tail" if thin else "inside"
        return {
            "state": state,
            "z_min": z_min,
            "z_max": z_max,
            "n_at_or_above": n_above,
            "n_models": n,
            "share": n_above / n,
            "edge_models": math.ceil(edge - 1e-9),
        }

    @cached_property
    def start(self) -> dict | None:
        """How far the other start moves each arm's boundaries, against the smallest tolerance (or
        :data:`PRINTED` without one), and, where the authors' move beyond it, the measured cause per group of
        benchmarks. ``None`` where the claim asks for no other start."""
        if not self.params.get("robustness_cold_start"):
            return None
        tols = [(t.tolerance, t.tolerance_text) for t in self.paper.values()]
        tol, tol_text = min(tols, key=lambda x: x[0], default=(PRINTED, None))
        mine, theirs = self.mine[Q.ALT_START_MAX_SHIFT], self.theirs.get(Q.ALT_START_MAX_SHIFT)
        causes: dict[tuple, dict] = {}
        for row in self.evidence.get("their_starts", []):
            a, b = self.theirs.get(Q.boundary(row["label"])), self.theirs.get(Q.alt_start_boundary(row["label"]))
            if a is None or b is None or within_tolerance(a - b, tol):
                continue
            g = causes.setdefault((row["cause"], row["authors_kappa"], row["short"]), {**row, "labels": []})
            g["labels"].append(row["label"])
        return {
            "alternative": "cold" if self.params["warm_start"] else "warm",
            "mine": mine,
            "theirs": theirs,
            "tolerance": tol,
            "tolerance_text": tol_text,
            "mine_within": within_tolerance(mine, tol),
            "causes": [{k: g[k] for k in ("cause", "labels", "authors_kappa", "short")} for g in causes.values()],
        }

    @cached_property
    def arm_rows(self) -> list[dict]:
        """Per benchmark both arms measure: how far apart their boundaries and their optima's objectives lie."""
        out = []
        for e in self.evidence.get("arms", []):
            name = Q.boundary(e["label"])
            if name not in self.mine or name not in self.theirs:  # the authors' arm did not run
                continue
            mine, theirs = self.mine[name], self.theirs[name]
            boxed_obj = e["objective_reimpl_boxed"]
            out.append(
                {
                    "label": e["label"],
                    "cause": e["cause"],
                    "boundary_gap": theirs - mine,
                    "objective_gap": e["objective_upstream"] - e["objective_reimpl"],
                    "boxed_objective_gap": None if boxed_obj is None else e["objective_upstream"] - boxed_obj,
                    "mine_boxed": self.mine.get(Q.boxed(name)),
                    "mine_at_their_setting": e["reimpl_at_authors_setting"],
                    "their_kappa": e["authors_kappa"],
                    "their_limits": e["bounds_active"],
                }
            )
        return out

    @cached_property
    def arm_causes(self) -> list[dict]:
        return [r for r in self.arm_rows if r["cause"] != "same_optimum"]

    @cached_property
    def own_setting(self) -> dict | None:
        """The setting the authors' code path reads where it differs from the claim's, and, for every published
        value both arms miss, both arms refitted there: ``state`` ``no_common_miss`` (none is missed by both),
        ``closes`` (each comes back within its tolerance in some arm) or ``does_not_close``. ``None`` where
        their arm did not report it or it is the claim's."""
        own = self.their_details.get("own_setting") if self.authors_ran else None
        if not own:
            return None
        changed = [
            {"name": k, "own": own[k], "claim": self.params[k], "where": own["where"][k]}
            for k in ("tau", "kappa", "lam")
            if not math.isclose(float(own[k]), float(self.params[k]), rel_tol=1e-12)
        ]
        if not changed:
            return None
        rows = []
        for label, r in self.evidence.get("own_setting", {}).items():
            t = self.paper[Q.boundary(label)]
            theirs = own["boundaries"][label]
            refitted = [v for v in (theirs, r["reimpl"], r["boxed"]) if v is not None]
            rows.append(
                {
                    "label": label,
                    "paper_text": t.paper_text,
                    "mine": t.reimpl.value,
                    "theirs": t.upstream.value,
                    "mine_at_own": r["reimpl"],
                    "mine_boxed_at_own": r["boxed"],
                    "theirs_at_own": theirs,
                    "closed": any(target_holds("~", v, paper=t.paper, tolerance=t.tolerance) for v in refitted),
                }
            )
        state = "no_common_miss" if not rows else "closes" if all(r["closed"] for r in rows) else "does_not_close"
        return {"state": state, "changed": changed, "rows": rows}
