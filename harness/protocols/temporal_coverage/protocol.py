"""Protocol ``temporal_coverage``: does a boundary fitted on one period cover the next? (Section 3, Figure 2)"""

from __future__ import annotations

from dataclasses import replace

import pandas as pd
from pydantic import Field, model_validator

from ...core.schema import Count, Label, Number
from ...stats.temporal_coverage import relabelled_coverage, temporal_coverage
from ..base import Measurement, ProtocolParams
from ..leaderboard import DATA_CHOICES, ESTIMATOR_CHOICES, EstimatorParams, LeaderboardParams
from ..periods import (
    PeriodParams,
    PeriodProtocol,
    boxed_options,
    outside_box,
    period_frame,
    period_kwargs,
    period_resampling,
    sigmoid_options,
)
from . import CARD
from . import quantities as Q


class TemporalParams(LeaderboardParams, EstimatorParams, PeriodParams):
    drift_tasks: list[Label] = Field(
        min_length=1, description="task labels the claim says drift; the rest are 'stable'"
    )
    exceed_rate: Number | None = Field(
        None,
        gt=0,
        lt=1,
        description="null rate of the exceedance tests: 1 - tau, the share a calibrated boundary leaves above it "
        "(left out, it is 1 - tau)",
    )

    @model_validator(mode="after")
    def _drift_among_tasks(self):
        if self.exceed_rate is None:  # it follows from tau (the model is frozen, hence __dict__)
            self.__dict__["exceed_rate"] = 1.0 - self.tau
        if abs(self.exceed_rate - (1.0 - self.tau)) > 1e-9:
            raise ValueError(
                f"exceed_rate {self.exceed_rate:g} does not follow from tau {self.tau:g}: a calibrated "
                f"{self.tau:g}-quantile boundary leaves {1.0 - self.tau:g} of the models above it, so the exceedance "
                f"tests' null rate is {1.0 - self.tau:g} (write exceed_rate: {1.0 - self.tau:g}, or leave it out)"
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
    extra = {"drift_tasks": params.drift_tasks, "lam": params.lam, "exceed_rate": params.exceed_rate}
    return {**period_kwargs(params), **extra}


def _coverage_values(res: dict, labels: list[str], *, counts: bool = True) -> dict[str, float]:
    """The flat value names (:mod:`.quantities`) from one :func:`temporal_coverage` result."""
    v = {}
    for label in labels:
        t = res["tasks"][label]
        v.update({name(label): t[key] for key, name in Q.PER_TASK.items()})
        v[Q.bin_averaged(Q.signed_coverage(label))] = t["bin_averaged_train_bins"]
    for row in res["splits"]:
        v[Q.split(row["t"], row["task"])] = row["signed_coverage"]
        v[Q.bin_averaged(Q.split(row["t"], row["task"]))] = row["bin_averaged_train_bins"]
    g, gb = res["groups"]["signed_coverage"], res["groups"]["bin_averaged_train_bins"]
    v.update({Q.group(x): g[x] for x in Q.GROUPS})
    v[Q.SEPARATION] = g["separation"]
    v[Q.DROP_SEPARATION] = g["separation"] - res["groups"]["in_sample"]["separation"]
    v.update({Q.bin_averaged(Q.group(x)): gb[x] for x in Q.GROUPS})
    v[Q.bin_averaged(Q.SEPARATION)] = gb["separation"]
    if counts:
        for t in sorted({row["t"] for row in res["splits"]}):
            v[Q.n_validation(t)] = min(row["n_val"] for row in res["splits"] if row["t"] == t)
    return v


def _coverage_on(indices, rng, *, frame, tasks, labels, inits, kwargs, binned=True, tested=True) -> tuple[dict, dict]:
    """The whole analysis on the rows ``indices``, each fit started from ``inits``: its values (without the
    bin-averaged ones unless ``binned``, the binomial tests' unless ``tested``), and its fits' parameters
    (``inits`` in kind)."""
    df = frame.iloc[indices].reset_index(drop=True)
    res = temporal_coverage(
        df,
        tasks,
        rng=rng,
        sigmoid_options={"n_random": 0},
        n_relabellings=0,
        inits=inits,
        binned=binned,
        tested=tested,
        **kwargs,
    )
    values = {k: v for k, v in _coverage_values(res, labels, counts=False).items() if v is not None}
    return values, {(f["task"], f["t"]): f["params"] for f in res["fitted"]}


class TemporalCoverage(PeriodProtocol):
    card = CARD
    Params = TemporalParams
    controls = {"relabel_periods": RelabelPeriods}
    COLUMN_PARAMS = ("date_col", "base_model_col")
    CHOICES = {
        **ESTIMATOR_CHOICES,
        # the exceedance rate a stationary boundary leaves follows from τ (1 - τ)
        "tau": replace(ESTIMATOR_CHOICES["tau"], follows=("exceed_rate",)),
        **DATA_CHOICES,
    }

    def data_summary(self, params: TemporalParams, tables):
        """The periods and splits, and how many base models the later models (pooled over the splits, as the
        exceedance tests pool them) name (left out where the table has no base-model column)."""
        out = super().data_summary(params, tables)
        df = period_frame(tables, params)
        later = [
            df.loc[(df["period"] == s["val"]) & df["z"].between(*s["overlap"]), params.base_model_col]
            for s in out["splits"]
            if params.base_model_col in df.columns
        ]
        if later:
            pooled = pd.concat(later)
            out["later_models"] = int(pooled.size)
            out["later_with_base_model"] = int(pooled.notna().sum())
            out["later_base_models"] = int(pooled.nunique())  # distinct among those that name one
        return out

    def multiverse_params(self, params: TemporalParams) -> dict:
        return {"box_check": None}

    def measure(self, params: TemporalParams, tables, rng):
        df = period_frame(tables, params)
        labels = list(params.tasks)
        # the settings of both fits (the claim's and the boxed one); the base models are the tests' clusters
        kwargs = {**_fit_kwargs(params), "cluster_col": params.base_model_col, "rng": rng, "n_relabellings": 0}
        res = temporal_coverage(df, params.tasks, sigmoid_options=sigmoid_options(params), **kwargs)
        values = _coverage_values(res, labels)
        details = {
            "fitted": res["fitted"],  # the fits' parameters: the tail table and the resamples' starts
            "n_clusters": {x: res["tasks"][x]["n_clusters"] for x in labels},  # of the cluster-robust test
        }
        if params.box_check is not None:
            boxed = temporal_coverage(df, params.tasks, sigmoid_options=boxed_options(params), **kwargs)
            values.update({Q.boxed(k): x for k, x in _coverage_values(boxed, labels, counts=False).items()})
            outside = outside_box(df, params, res["fitted"])
            boxed_split_of = {(r["task"], r["t"]): r["signed_coverage"] for r in boxed["splits"]}
            for o in outside:
                o["boxed_signed_coverage"] = boxed_split_of[(o["task"], o["t"])]
            details["outside_box"] = outside
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
        values = {Q.SEPARATION: res["separation_mean"]}
        values.update({Q.signed_coverage(k): x for k, x in res["signed_coverage_mean"].items()})
        return Measurement(values, {"separation_each": res["separation"]})  # the range the report gives

    def resampling(self, params: TemporalParams, tables, reimpl, *, cluster_col: str, quantities=None):
        return period_resampling(
            params,
            tables,
            cluster_col,
            _coverage_on,
            labels=list(params.tasks),
            inits={(f["task"], f["t"]): f["params"] for f in reimpl.details["fitted"]},
            kwargs={**_fit_kwargs(params), "map_fn": None},
            # the bin-averaged variants are computed on a resample only where one of them is read
            binned=quantities is None or any(q.startswith(Q.bin_averaged("")) for q in quantities),
            tested=quantities is None or any(q.startswith(Q.binomial_p("")) for q in quantities),
        )


PROTOCOL = TemporalCoverage()
