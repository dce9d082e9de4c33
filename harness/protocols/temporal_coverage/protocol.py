"""Protocol ``temporal_coverage``: does a boundary fitted on one period cover the next? (Section 3, Figure 2)

For each rolling pair (fit on ``P_t`` only, evaluate on ``P_{t+1}`` within the
overlap of the two z ranges; :mod:`harness.stats.splits`) the sigmoid
boundary of every task is fitted on the training period, and its coverage of
the validation period is compared with tau.

Values (names built by :mod:`harness.core.quantities`; ``<label>`` a task label,
``t`` = 1, 2, ...):

``signed_coverage.<label>``
    Out-of-period signed coverage error: per split, the share of the overlap
    validation models with ``y <= q(z)`` minus tau, pooled over models; the
    benchmark value is the mean over the splits. Negative = under-coverage.
``in_sample.<label>``
    The same on the training period itself, mean over splits.
``share_above.<label>``, ``binomial_p.<label>``
    Models above the boundary over all splits, divided by all validation
    models; one-sided exact binomial p-value of that count against
    ``exceed_rate``.
``split<t>.<label>``
    The signed coverage error of split t.
``bin_averaged.<name>``
    The paper-figure variant of ``signed_coverage.<label>``, ``split<t>.<label>``,
    the group means and the separation: per split, the mean over the
    *training* period's equal-mass bins of (bin coverage - tau), validation
    models placed in those bins; mean over splits.
``group.drift``, ``group.stable``, ``separation``
    Means of ``signed_coverage`` over the claim's drift tasks and over the
    others; ``separation = stable - drift``.
``n_validation.split<t>``
    Validation models of split t inside the overlap (the fewest over tasks).
``boxed.<name>``
    With ``box_check`` set: every value above except the counts, with the
    sigmoid refitted inside the authors' optimiser box. Not the paper's model;
    it measures how much that box explains a difference between arms.

Control ``relabel_periods`` (``n_relabellings``): the period labels permuted
among the models, everything refitted; values ``separation`` and
``signed_coverage.<label>``, means over the relabellings.
"""

from __future__ import annotations

from dataclasses import replace

from pydantic import Field, model_validator

from ...core.relations import relation_holds, target_holds
from ...core.schema import Count, Label, Number
from ...parallel.fanout import Mapper
from ...stats.temporal_coverage import relabelled_coverage, temporal_coverage
from ..base import Context, Measurement, Protocol, ProtocolParams
from ..leaderboard import DATA_CHOICES, ESTIMATOR_CHOICES, EstimatorParams, LeaderboardParams, leaderboard_columns
from ..periods import (
    PeriodParams,
    box_explanation,
    boxed_options,
    outside_box,
    period_frame,
    period_summary,
    sigmoid_options,
    split_tail_support,
)
from . import CARD
from . import findings as F
from . import quantities as Q

__all__ = ["TemporalParams", "RelabelPeriods", "TemporalCoverage", "BOX_CLOSES"]

#: The box "explains" an arm difference when the boxed refit removes more than this share of it.
BOX_CLOSES = 0.5


class TemporalParams(LeaderboardParams, EstimatorParams, PeriodParams):
    drift_tasks: list[Label] = Field(
        min_length=1, description="task labels the claim says drift; the rest are 'stable'"
    )
    exceed_rate: Number | None = Field(
        None,
        gt=0,
        lt=1,
        description="null rate of the binomial test: 1 - tau, the share a calibrated boundary leaves above it "
        "(left out, it is 1 - tau)",
    )

    @model_validator(mode="after")
    def _drift_among_tasks(self):
        if self.exceed_rate is None:  # it follows from tau (the model is frozen, hence __dict__)
            self.__dict__["exceed_rate"] = 1.0 - self.tau
        if abs(self.exceed_rate - (1.0 - self.tau)) > 1e-9:
            raise ValueError(
                f"exceed_rate {self.exceed_rate:g} does not follow from tau {self.tau:g}: a calibrated "
                f"{self.tau:g}-quantile boundary leaves {1.0 - self.tau:g} of the models above it, so the binomial "
                f"test's null rate is {1.0 - self.tau:g} (write exceed_rate: {1.0 - self.tau:g}, or leave it out)"
            )
        unknown = [t for t in self.drift_tasks if t not in self.tasks]
        if unknown:
            raise ValueError(f"drift_tasks {unknown} are not task labels (known: {list(self.tasks)})")
        if len(set(self.drift_tasks)) == len(self.tasks):
            raise ValueError("every task is in drift_tasks: no stable group is left to compare with")
        return self


class RelabelPeriods(ProtocolParams):
    n_relabellings: Count = Field(
        5,
        ge=1,
        le=1000,
        description="random permutations of the period labels among the models, each refitted; values are means "
        "over them",
    )


def _fit_kwargs(params: TemporalParams) -> dict:
    return {
        "drift_tasks": params.drift_tasks,
        "periods": params.periods,
        "tau": params.tau,
        "kappa": params.kappa,
        "lam": params.lam,
        "n_bins": params.n_bins,
        "min_bin_size": params.min_bin_size,
        "exceed_rate": params.exceed_rate,
        "map_fn": Mapper("fits of the splits"),
    }


def _coverage_values(res: dict, labels: list[str], *, counts: bool = True) -> dict[str, float]:
    """The flat value names of the module docstring from one :func:`temporal_coverage` result."""
    v = {}
    for label in labels:
        t = res["tasks"][label]
        v[Q.signed_coverage(label)] = t["signed_coverage"]
        v[Q.in_sample(label)] = t["in_sample"]
        v[Q.share_above(label)] = t["share_above"]
        v[Q.binomial_p(label)] = t["binomial_p"]
        v[Q.bin_averaged(Q.signed_coverage(label))] = t["bin_averaged_train_bins"]
    for row in res["splits"]:
        v[Q.split(row["t"], row["task"])] = row["signed_coverage"]
        v[Q.bin_averaged(Q.split(row["t"], row["task"]))] = row["bin_averaged_train_bins"]
    g, gb = res["groups"]["signed_coverage"], res["groups"]["bin_averaged_train_bins"]
    v.update(
        {
            "group.drift": g["drift"],
            "group.stable": g["stable"],
            "separation": g["separation"],
            Q.bin_averaged("group.drift"): gb["drift"],
            Q.bin_averaged("group.stable"): gb["stable"],
            Q.bin_averaged("separation"): gb["separation"],
        }
    )
    if counts:
        for t in sorted({row["t"] for row in res["splits"]}):
            v[Q.n_validation(t)] = min(row["n_val"] for row in res["splits"] if row["t"] == t)
    return v


def _coverage_on(indices, rng, *, frame, tasks, labels, inits, kwargs, binned=True) -> tuple[dict, dict]:
    """The whole analysis on the rows ``indices``, each fit started from ``inits``: its values (without the
    bin-averaged ones unless ``binned``), and its fits' parameters (``inits`` in kind)."""
    df = frame.iloc[indices].reset_index(drop=True)
    res = temporal_coverage(
        df, tasks, rng=rng, sigmoid_options={"n_random": 0}, n_relabellings=0, inits=inits, binned=binned, **kwargs
    )
    values = {k: v for k, v in _coverage_values(res, labels, counts=False).items() if v is not None}
    return values, {(f["task"], f["t"]): f["params"] for f in res["fitted"]}


def bin_averaged_counterpart(name: str) -> str | None:
    """The bin-averaged counterpart of a signed-coverage quantity (None when there is none)."""
    if name.startswith(("signed_coverage.", "split", "group.")) or name == "separation":
        return Q.bin_averaged(name)
    return None


def _by_task(negatives: list[dict], order: list[str]) -> list[dict]:
    """``[{"label", "splits": [t, ...], "one": bool}]``: the splits on which each task is below zero."""
    out = []
    for label in order:
        splits = [n["t"] for n in negatives if n["label"] == label]
        if splits:
            out.append({"label": label, "splits": splits, "one": len(splits) == 1})
    return out


def _sign_word(x: float) -> str:
    return "under" if x < 0 else ("over" if x > 0 else "exact")


class TemporalCoverage(Protocol):
    card = CARD
    Params = TemporalParams
    controls = {"relabel_periods": RelabelPeriods}
    CHOICES = {
        **ESTIMATOR_CHOICES,
        # the exceedance rate a stationary boundary leaves follows from τ (1 - τ)
        "tau": replace(ESTIMATOR_CHOICES["tau"], follows=("exceed_rate",)),
        **DATA_CHOICES,
    }
    FINDINGS = F.FINDINGS

    def columns(self, params: TemporalParams):
        return leaderboard_columns(params, date_col=params.date_col)

    def data_summary(self, params: TemporalParams, tables):
        return period_summary(tables, params)

    def multiverse_params(self, params: TemporalParams) -> dict:
        return {"box_check": None}

    def measure(self, params: TemporalParams, tables, rng):
        df = period_frame(tables, params)
        labels = list(params.tasks)
        res = temporal_coverage(
            df, params.tasks, rng=rng, sigmoid_options=sigmoid_options(params), n_relabellings=0, **_fit_kwargs(params)
        )
        values = _coverage_values(res, labels)
        details = {"splits": res["splits"], "tasks": res["tasks"], "groups": res["groups"], "fitted": res["fitted"]}
        if params.box_check is not None:
            boxed = temporal_coverage(
                df,
                params.tasks,
                rng=rng,
                sigmoid_options=boxed_options(params),
                n_relabellings=0,
                **_fit_kwargs(params),
            )
            values.update({Q.boxed(k): x for k, x in _coverage_values(boxed, labels, counts=False).items()})
            outside = outside_box(df, params, res["fitted"])
            split_of = {(r["task"], r["t"]): r for r in res["splits"]}
            boxed_split_of = {(r["task"], r["t"]): r for r in boxed["splits"]}
            for o in outside:
                o["signed_coverage"] = split_of[(o["task"], o["t"])]["signed_coverage"]
                o["boxed_signed_coverage"] = boxed_split_of[(o["task"], o["t"])]["signed_coverage"]
            details["boxed"] = {
                "box": list(params.box_check),
                "fitted": boxed["fitted"],
                "n_keep": boxed_options(params)["n_keep"],
                "free_fits_outside": outside,
            }
        return Measurement(values, details)

    def control(self, kind, cparams: RelabelPeriods, params: TemporalParams, tables, rng, baseline):
        df = period_frame(tables, params)
        res = relabelled_coverage(
            df,
            params.tasks,
            rng=rng,
            n_relabellings=cparams.n_relabellings,
            sigmoid_options=sigmoid_options(params),
            **_fit_kwargs(params),
        )
        values = {"separation": res["separation_mean"]}
        values.update({Q.signed_coverage(k): x for k, x in res["signed_coverage_mean"].items()})
        return Measurement(
            values,
            {
                "separation_each": res["separation"],
                "groups_each": res["groups"],
                "signed_coverage_each": res["signed_coverage"],
            },
        )

    def tail_support(self, params: TemporalParams, tables, reimpl) -> dict:
        """What carries each split's boundary: the training models above it, and the later models above it."""
        fits = {(f["task"], f["t"]): f["params"] for f in reimpl.details["fitted"]}
        return split_tail_support(tables, params, fits)

    def resampling(self, params: TemporalParams, tables, reimpl, *, cluster_col: str, quantities=None):
        from ..base import Resampling

        df = period_frame(tables, params)
        keep = ["z", "period", *params.tasks.values()]
        inits = {(f["task"], f["t"]): f["params"] for f in reimpl.details["fitted"]}
        design = dict(
            frame=df[keep],
            tasks=params.tasks,
            labels=list(params.tasks),
            inits=inits,
            kwargs={**_fit_kwargs(params), "map_fn": None},
            # the bin-averaged variants are computed on a resample only where one of them is read
            binned=quantities is None or any(q.startswith(Q.bin_averaged("")) for q in quantities),
        )
        return Resampling.of_fits(
            len(df),
            df[cluster_col].to_numpy(dtype=object),
            "the dated leaderboard rows (every period resampled together)",
            _coverage_on,
            design,
        )

    # -- findings ---------------------------------------------------------------------------------------

    def findings(self, ctx: Context) -> dict:
        p, v = ctx.params, ctx.reimpl.values
        uv = ctx.upstream.values if ctx.upstream.ok else {}
        labels, ts = list(p.tasks), [s["t"] for s in ctx.data["splits"]]
        drift = list(p.drift_tasks)
        stable = [x for x in labels if x not in drift]
        out = {}
        out["groups"] = F.Groups.of(
            "measured",
            drift=drift,
            stable=stable,
            drift_mean=v["group.drift"],
            stable_mean=v["group.stable"],
            separation=v["separation"],
            drift_reading=_sign_word(v["group.drift"]),
            stable_reading=_sign_word(v["group.stable"]),
            exceed_rate=p.exceed_rate,
            n_splits=len(ts),
            upstream_drift=uv.get("group.drift"),
            upstream_stable=uv.get("group.stable"),
            drift_tasks=[
                {
                    "label": x,
                    "signed": v[Q.signed_coverage(x)],
                    "share_above": v[Q.share_above(x)],
                    "binomial_p": v[Q.binomial_p(x)],
                }
                for x in drift
            ],
        )
        out["coverage_table"] = F.CoverageTable.of(
            "measured",
            rows=[
                {
                    "label": x,
                    "group": "drift" if x in drift else "stable",
                    "signed": v[Q.signed_coverage(x)],
                    "signed_upstream": uv.get(Q.signed_coverage(x)),
                    "share_above": v[Q.share_above(x)],
                    "binomial_p": v[Q.binomial_p(x)],
                    "in_sample": v[Q.in_sample(x)],
                }
                for x in labels
            ],
            drift_mean=v["group.drift"],
            stable_mean=v["group.stable"],
            separation=v["separation"],
            upstream_drift=uv.get("group.drift"),
            upstream_stable=uv.get("group.stable"),
            upstream_separation=uv.get("separation"),
        )
        ins = {x: v[Q.in_sample(x)] for x in labels}
        under = [{"label": x, "value": ins[x]} for x in labels if ins[x] < 0]
        out["in_sample"] = F.InSample.of(
            "some_under" if under else "all_covered", smallest=min(ins.values()), under=under
        )
        out["split_table"] = F.SplitTable.of(
            "measured",
            splits=[{"t": t, "n": int(round(v[Q.n_validation(t)]))} for t in ts],
            rows=[
                {
                    "label": x,
                    "by_split": [v[Q.split(t, x)] for t in ts],
                    "n_negative": sum(v[Q.split(t, x)] < 0 for t in ts),
                }
                for x in labels
            ],
        )
        out["drift_splits"] = F.DriftSplits.of(
            "measured", rows=[self._split_pattern(x, [v[Q.split(t, x)] for t in ts], ts) for x in drift]
        )
        neg = [{"label": x, "t": t} for x in stable for t in ts if v[Q.split(t, x)] < 0]
        out["stable_splits"] = F.StableSplits.of(
            "some_negative" if neg else "none_negative", negatives=neg, by_task=_by_task(neg, stable)
        )
        if uv:
            gaps = [abs(v[Q.split(t, x)] - uv[Q.split(t, x)]) for x in labels for t in ts if Q.split(t, x) in uv]
            out["arm_split_gap"] = F.ArmSplitGap.of("measured", largest=max(gaps) if gaps else None, n=len(gaps))
        out["bin_averaged"] = self._bin_averaged(ctx, labels, ts)
        neg_b = [{"label": x, "t": t} for x in stable for t in ts if v[Q.bin_averaged(Q.split(t, x))] < 0]
        out["stable_bins"] = F.StableBins.of(
            "some_negative" if neg_b else "none_negative", negatives=neg_b, by_task=_by_task(neg_b, stable)
        )
        if p.box_check is not None:
            out["box"] = self._box(ctx, labels)
            if uv:
                out["box_arms"] = self._box_arms(ctx, v, uv)
        for c in ctx.controls:
            if c.control == "relabel_periods" and c.reimpl.ran:
                out["relabelled"] = self._relabelled(ctx, c, labels, drift)
        return out

    @staticmethod
    def _split_pattern(label: str, vals: list[float], ts: list[int]) -> dict:
        """Whether a task is below zero on every split, or whether its negative mean rests on one split."""
        n_neg = sum(x < 0 for x in vals)
        carriers = []
        if sum(vals) < 0 and len(vals) > 1:
            for t, x in zip(ts, vals):
                rest = (sum(vals) - x) / (len(vals) - 1)
                if rest >= 0:
                    carriers.append({"t": t, "value": x, "rest_mean": rest})
        if n_neg == len(vals):
            pattern = "every_split"
        elif carriers:
            pattern = "carried"
        elif n_neg:
            pattern = "mixed"
        else:
            pattern = "none_negative"
        return {
            "label": label,
            "pattern": pattern,
            "n_negative": n_neg,
            "n_splits": len(vals),
            "n_others": len(vals) - 1,
            "one_other": len(vals) == 2,
            "best": max(vals),
            "carriers": carriers,
            "one_carrier": len(carriers) == 1,
        }

    def _bin_averaged(self, ctx: Context, labels, ts):
        """Every target judged again on the bin-averaged values, and the verdict that reading would give."""
        v, uv = ctx.reimpl.values, (ctx.upstream.values if ctx.upstream.ok else {})
        rows, changed, n_mapped = [], [], 0
        for t in ctx.targets:
            name = bin_averaged_counterpart(t.quantity)
            n_mapped += name is not None
            bval = v.get(name) if name else t.reimpl.value
            other = v.get(bin_averaged_counterpart(t.other) or t.other) if t.other else None
            rhs = other if t.other else t.value
            if bval is None or (t.relation != "~" and rhs is None):
                holds = None
            else:
                holds = target_holds(t.relation, bval, paper=t.paper, tolerance=t.tolerance, rhs=rhs)
            if holds is not None and holds != t.reimpl.holds:
                changed.append(t.title)
            rows.append(
                {
                    "title": t.title,
                    "role": t.role,
                    "pooled": t.reimpl.value,
                    "bin_averaged": bval,
                    "mapped": name is not None,
                    "holds_pooled": t.reimpl.holds,
                    "holds_bin_averaged": holds,
                }
            )
        alt_targets = [
            t.model_copy(
                update={
                    "outcome": "unmeasured"
                    if r["holds_bin_averaged"] is None
                    else ("holds" if r["holds_bin_averaged"] else "fails")
                }
            )
            for t, r in zip(ctx.targets, rows)
        ]
        # the controls and the comparison of the arms as they are; only the targets' outcomes change
        alt, actual = ctx.verdict_if(alt_targets), ctx.verdict
        table = [
            {
                "label": x,
                "pooled": v[Q.signed_coverage(x)],
                "bin_averaged": v[Q.bin_averaged(Q.signed_coverage(x))],
                "bin_averaged_upstream": uv.get(Q.bin_averaged(Q.signed_coverage(x))),
                "splits": [v[Q.bin_averaged(Q.split(t, x))] for t in ts],
            }
            for x in labels
        ]
        return F.BinAveraged.of(
            "outcomes_change" if changed else "same_outcomes",
            rows=rows,
            changed=changed,
            n_mapped=n_mapped,
            n_targets=len(rows),
            verdict=alt.verdict,
            same_verdict=alt.verdict == actual.verdict,
            table=table,
            separation=v["separation"],
            separation_bin_averaged=v[Q.bin_averaged("separation")],
            separation_bin_averaged_upstream=uv.get(Q.bin_averaged("separation")),
        )

    def _box(self, ctx: Context, labels):
        v, uv = ctx.reimpl.values, (ctx.upstream.values if ctx.upstream.ok else {})
        boxed = ctx.reimpl.details["boxed"]
        rows = [
            {
                "label": x,
                "free": v[Q.signed_coverage(x)],
                "boxed": v[Q.boxed(Q.signed_coverage(x))],
                "upstream": uv.get(Q.signed_coverage(x)),
            }
            for x in labels
        ]
        moved = [r for r in rows if r["free"] != r["boxed"]]
        flips = []
        for t in ctx.targets:
            bv = v.get(Q.boxed(t.quantity))
            judged = bv is not None and t.relation != "~" and t.other is None and t.reimpl.holds is not None
            if judged and relation_holds(t.relation, bv, t.value) != t.reimpl.holds:
                flips.append(t.title)
        return F.Box.of(
            "measured",
            box=boxed["box"],
            n_keep=boxed["n_keep"],
            n_fits=len(ctx.reimpl.details["fitted"]),
            outside=boxed["free_fits_outside"],
            rows=rows,
            separation={"free": v["separation"], "boxed": v[Q.boxed("separation")], "upstream": uv.get("separation")},
            moved=[r["label"] for r in moved],
            largest_move=max((abs(r["free"] - r["boxed"]) for r in moved), default=None),
            flips=flips,
        )

    def _box_arms(self, ctx: Context, v, uv):
        names = [n for n in v if not n.startswith(("boxed.", "n_validation."))]
        expl = box_explanation(v, uv, names)
        differ = [n for n, e in expl.items() if abs(e["gap"]) > 1e-12]
        closes = [n for n in differ if expl[n]["closed"] is not None and expl[n]["closed"] > BOX_CLOSES]
        rest = [abs(expl[n]["gap"]) for n in differ if n not in closes]
        return F.BoxArms.of(
            "differ" if differ else "no_difference",
            n_compared=len(expl),
            n_differ=len(differ),
            closes=[{"name": n, "label": ctx.spec.label_of(n)} for n in closes],
            threshold=BOX_CLOSES,
            n_rest=len(rest),
            largest_rest=max(rest, default=None),
        )

    def _relabelled(self, ctx: Context, c, labels, drift):
        v = ctx.reimpl.values
        cv, cd = ctx.reimpl.controls[c.id].values, ctx.reimpl.controls[c.id].details
        means = {x: cv[Q.signed_coverage(x)] for x in labels}
        under = [{"label": x, "value": means[x]} for x in labels if means[x] < 0]
        return F.Relabelled.of(
            "some_under" if under else "none_under",
            id=c.id,
            n=len(cd["separation_each"]),
            separation=cv["separation"],
            separation_min=min(cd["separation_each"]),
            separation_max=max(cd["separation_each"]),
            separation_real=v["separation"],
            drift=[{"label": x, "shuffled": means[x], "real": v[Q.signed_coverage(x)]} for x in drift],
            smallest=min(means.values()),
            largest=max(means.values()),
            under=under,
        )

    # -- figures ----------------------------------------------------------------------------------------

    def plots(self, ctx: Context) -> dict:
        """Signed coverage error per benchmark and split for both arms (pooled and bin-averaged), the groups,
        and the relabel_periods control's per-relabelling values."""
        p, v = ctx.params, ctx.reimpl.values
        uv = ctx.upstream.values if ctx.upstream.ok else {}
        ts = [s["t"] for s in ctx.data["splits"]]
        drift = list(p.drift_tasks)
        tasks = {}
        for x in p.tasks:
            tasks[x] = {
                "group": "drift" if x in drift else "stable",
                "reimpl": [v[Q.split(t, x)] for t in ts],
                "mean": v[Q.signed_coverage(x)],
                "upstream": [uv.get(Q.split(t, x)) for t in ts] if uv else None,
                "mean_upstream": uv.get(Q.signed_coverage(x)),
                "bin_averaged": [v[Q.bin_averaged(Q.split(t, x))] for t in ts],
                "bin_averaged_upstream": (
                    [uv.get(Q.bin_averaged(Q.split(t, x))) for t in ts]
                    if any(Q.bin_averaged(Q.split(t, x)) in uv for t in ts)
                    else None
                ),
                "bin_averaged_mean": v[Q.bin_averaged(Q.signed_coverage(x))],
                "bin_averaged_mean_upstream": uv.get(Q.bin_averaged(Q.signed_coverage(x))),
            }
        control = None
        for c in ctx.controls:
            if c.control != "relabel_periods" or not c.reimpl.ran:
                continue
            cv, cd = ctx.reimpl.controls[c.id].values, ctx.reimpl.controls[c.id].details
            cu = ctx.upstream.controls[c.id] if (ctx.upstream.ok and c.id in ctx.upstream.controls) else None
            control = {
                "id": c.id,
                "n": len(cd["separation_each"]),
                "separation": cv["separation"],
                "separation_each": cd["separation_each"],
                "signed": {x: cv[Q.signed_coverage(x)] for x in p.tasks},
                "signed_each": {x: [e[x] for e in cd["signed_coverage_each"]] for x in p.tasks},
                "upstream_separation": cu.values.get("separation") if cu else None,
                "upstream_signed": {x: cu.values.get(Q.signed_coverage(x)) for x in p.tasks} if cu else None,
                "conditions": [
                    {
                        "measure": cond.measure,
                        "reference": cond.reference,
                        "op": cond.op,
                        "threshold": cond.threshold,
                        "quantity": row.quantity,
                    }
                    for cond in c.reimpl.conditions
                    for row in cond.rows
                ],
            }
            break
        return {
            "tau": p.tau,
            "drift": drift,
            "stable": [x for x in p.tasks if x not in drift],
            "splits": [
                {"t": s["t"], "train": s["train"], "val": s["val"], "n": v.get(Q.n_validation(s["t"]))}
                for s in ctx.data["splits"]
            ],
            "tasks": tasks,
            "groups": {
                "drift": v["group.drift"],
                "stable": v["group.stable"],
                "separation": v["separation"],
                "upstream_separation": uv.get("separation"),
            },
            "control": control,
        }


PROTOCOL = TemporalCoverage()
