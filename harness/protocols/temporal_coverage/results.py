"""What ``temporal_coverage``'s report states: the signed coverage errors of earlier boundaries on later models."""

from __future__ import annotations

from functools import cached_property

from ...core.quantities import boxed
from ...core.relations import relation_holds, target_holds
from ...rendering.results import Results as BaseResults
from ...rendering.results import span
from . import quantities as Q

#: The arms differ on a value when they are more than this share of it apart. Below it lies the rounding of the
#: authors' per-bin coverage, which their script writes with 6 significant digits (a relative error up to 5e-6).
ARM_GAP = 1e-4


def differ(mine: float, theirs: float) -> bool:
    """Whether two values of one quantity are more than :data:`ARM_GAP` of the larger apart."""
    return abs(mine - theirs) > ARM_GAP * max(abs(mine), abs(theirs))


class Results(BaseResults):
    arm_gap = ARM_GAP

    @cached_property
    def rows(self) -> list[dict]:
        """One row per benchmark: its signed coverage errors and its share above with the clustered test's."""
        v, u, ts = self.mine, self.theirs, [s["t"] for s in self.data["splits"]]
        clusters = self.mine_details.get("n_clusters", {})
        return [
            {
                "label": x,
                "group": "drift" if x in self.params["drift_tasks"] else "stable",
                "by_split": [v[Q.split(t, x)] for t in ts],
                "mine": v[Q.signed_coverage(x)],
                "theirs": u.get(Q.signed_coverage(x)),
                "share_above": v[Q.share_above(x)],
                "cluster_p": v.get(Q.cluster_p(x)),
                "design_effect": v.get(Q.design_effect(x)),
                "clusters": clusters.get(x),
                "in_sample": v[Q.in_sample(x)],
                "bins": v[Q.bin_averaged(Q.signed_coverage(x))],
                "bins_theirs": u.get(Q.bin_averaged(Q.signed_coverage(x))),
                "bins_by_split": [v[Q.bin_averaged(Q.split(t, x))] for t in ts],
            }
            for x in self.params["tasks"]
        ]

    @cached_property
    def groups(self) -> dict[str, dict]:
        """The groups' mean signed coverage errors and their ``separation`` (stable minus drift), in both arms."""
        names = {"drift": Q.group("drift"), "stable": Q.group("stable"), "separation": Q.SEPARATION}
        return {k: {"mine": self.mine[n], "theirs": self.theirs.get(n)} for k, n in names.items()}

    @cached_property
    def carried(self) -> list[dict]:
        """The drift benchmarks whose negative mean rests on one split: without split ``t`` (``value``) the mean of
        the others (``rest``) is not below zero. One row per such (benchmark, split)."""
        out = []
        for r in self.rows:
            xs = r["by_split"]
            if r["group"] != "drift" or len(xs) < 2 or sum(xs) >= 0:
                continue
            for s, x in zip(self.data["splits"], xs):
                rest = (sum(xs) - x) / (len(xs) - 1)
                if rest >= 0:
                    out.append({"label": r["label"], "t": s["t"], "value": x, "rest": rest})
        return out

    @cached_property
    def bin_targets(self) -> list[dict]:
        """Every target judged again on its bin-averaged counterpart (``averaged`` False: it has none, e.g. a
        p-value, and reads the same), with whether it holds either way."""
        v, out = self.mine, []
        for t in self.record.targets:
            name = Q.bin_averaged_counterpart(t.quantity)
            value = v.get(name) if name else t.reimpl.value
            rhs = v.get(Q.bin_averaged_counterpart(t.other) or t.other) if t.other else t.value
            judged = value is not None and (t.relation == "~" or rhs is not None)
            holds = target_holds(t.relation, value, paper=t.paper, tolerance=t.tolerance, rhs=rhs) if judged else None
            out.append(
                {
                    "title": t.title,
                    "pooled": t.reimpl.value,
                    "bins": value,
                    "averaged": name is not None,
                    "holds": t.reimpl.holds,
                    "holds_bins": holds,
                }
            )
        return out

    @cached_property
    def bin_changed(self) -> list[str]:
        return [r["title"] for r in self.bin_targets if r["holds_bins"] is not None and r["holds_bins"] != r["holds"]]

    @cached_property
    def outside_box(self) -> list[dict]:
        """The free fits the authors' optimiser box would not allow, with their split's signed coverage error free
        and refitted inside the box (empty when the claim does not ask for the box)."""
        return [
            {**o, "free": self.mine[Q.split(o["t"], o["task"])], "boxed": o["boxed_signed_coverage"]}
            for o in self.mine_details.get("outside_box", [])
        ]

    @cached_property
    def box_flips(self) -> list[str]:
        """The targets whose outcome differs when judged on the refit inside the box."""
        out = []
        for t in self.record.targets:
            b = self.mine.get(boxed(t.quantity))
            if b is None or t.relation == "~" or t.other is not None or t.reimpl.holds is None:
                continue
            if relation_holds(t.relation, b, t.value) != t.reimpl.holds:
                out.append(t.title)
        return out

    @cached_property
    def arm_gaps(self) -> list[dict]:
        """The values on which the arms :func:`differ`, in the record's order: mine, mine refitted inside the
        authors' box (``None`` without the box), theirs."""
        v, u = self.mine, self.theirs
        return [
            {"label": self.record.quantities.get(n, n), "mine": v[n], "boxed": v.get(boxed(n)), "theirs": u[n]}
            for n in u
            if n in v and v[n] is not None and u[n] is not None and differ(v[n], u[n])
        ]

    @cached_property
    def box_unexplained(self) -> list[str] | None:
        """The values of :attr:`arm_gaps` on which the refit inside the authors' box still :func:`differ` from the
        authors' (``None``: no boxed refit of every one of them)."""
        if any(r["boxed"] is None for r in self.arm_gaps):
            return None
        return [r["label"] for r in self.arm_gaps if differ(r["boxed"], r["theirs"])]

    @cached_property
    def relabelled(self) -> list[dict]:
        """Per ``relabel_periods`` control that ran: the relabellings, the separation's span, the benchmarks' means'
        span and those below zero."""
        out = []
        for c in self.record.controls:
            arm = self.record.arms.reimpl.controls.get(c.id)
            if c.control != "relabel_periods" or arm is None:
                continue
            each = arm.details["separation_each"]
            means = {x: arm.values[Q.signed_coverage(x)] for x in self.params["tasks"]}
            out.append(
                {
                    "id": c.id,
                    "n": len(each),
                    "separation": span(each),
                    "means": span(means.values()),
                    "below_zero": [x for x, m in means.items() if m < 0],
                }
            )
        return out
