"""Interval methods as objects, and the one-sided decision on an asserted ordering that each of them makes.

One class per method. A method says which cluster resamplings it needs (:meth:`needs`: the bootstrap, a
jackknife of ``g`` groups, subsamples of ``m`` clusters), how many statistic calls those cost, how it reads a
two-sided interval from them, how a report names it and which colour a figure gives it. The claim's bootstrap
(:mod:`harness.resampling.robustness`) and the coverage study (:mod:`harness.stats.calibration`) both take a method from
:data:`METHODS` by the name a claim file uses, so that a new method is one class here (and its test).

The decision (:func:`decision_interval`, :func:`harness.core.decisions.decide`)
--------------------------------------------------------
A claim asserts an ordering, ``left < right`` or ``left > right``; its difference is ``d = left - right``
(``right`` may be a number). The decision at one-sided level ``alpha`` reads the method's *equal-tailed*
two-sided interval at level ``1 - 2 alpha``: its upper end is the method's one-sided ``1 - alpha`` upper
bound ``U`` and its lower end the lower bound ``L`` (every method here is equal-tailed). Then

* **supported**: the bound on the claimed side excludes 0 (``U < 0`` for ``<``, ``L > 0`` for ``>``);
* **contradicted**: the bound on the other side excludes 0 (``L > 0`` for ``<``, ``U < 0`` for ``>``);
* **inconclusive**: neither.

The error rate of "supported" is the chance that it fires when the true difference is exactly 0; the coverage
study measures it on the claim's own design (:func:`harness.stats.calibration.coverage_study`). Strict and
non-strict relations are decided alike (a bound equal to 0 does not exclude it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .intervals import SUBSAMPLE_RULE, Interval, basic, bca, normal, percentile, subsample_size, subsampling

__all__ = [
    "Percentile",
    "Basic",
    "BCa",
    "Subsampling",
    "Normal",
    "METHODS",
    "method_named",
    "resampling_calls",
    "needed",
    "decision_interval",
]

BOOTSTRAP = ("bootstrap",)


def column(resampling, quantity: str) -> np.ndarray:
    """A quantity's values from draws or jackknife values; all ``nan`` when every call failed (no names)."""
    if not resampling.names:
        return np.full(resampling.values.shape[0], np.nan)
    return resampling.column(quantity)


class _Method:
    """What every interval method gives (see the module docstring); subclasses are frozen dataclasses."""

    name: str
    #: How a report names the method, after "each interval is the ...".
    words: ClassVar[str]
    #: Its colour in the coverage figures.
    colour: ClassVar[str]

    def needs(self, n_clusters: int) -> tuple:
        raise NotImplementedError

    def interval(self, quantity: str, estimate: float, resamples: dict, n_clusters: int, level: float) -> Interval:
        raise NotImplementedError

    def describe(self, n_clusters: int) -> dict:
        raise NotImplementedError


@dataclass(frozen=True)
class Percentile(_Method):
    """Percentile interval of ``B`` cluster-bootstrap resamples (:func:`harness.stats.intervals.percentile`)."""

    name: str = "percentile"
    words: ClassVar[str] = "percentile interval of the cluster bootstrap"
    colour: ClassVar[str] = "#1f6fb4"

    def needs(self, n_clusters: int) -> tuple:
        return (BOOTSTRAP,)

    def interval(self, quantity, estimate, resamples, n_clusters, level) -> Interval:
        return percentile(column(resamples[BOOTSTRAP], quantity), level)

    def describe(self, n_clusters: int) -> dict:
        return {"kind": "percentile", "resampling": "B resamples of the G clusters with replacement"}


@dataclass(frozen=True)
class Basic(_Method):
    """Basic (reflected) interval of the same ``B`` resamples (:func:`harness.stats.intervals.basic`)."""

    name: str = "basic"
    words: ClassVar[str] = "basic (reflected) interval of the cluster bootstrap"
    colour: ClassVar[str] = "#7b3294"

    def needs(self, n_clusters: int) -> tuple:
        return (BOOTSTRAP,)

    def interval(self, quantity, estimate, resamples, n_clusters, level) -> Interval:
        return basic(column(resamples[BOOTSTRAP], quantity), estimate, level)

    def describe(self, n_clusters: int) -> dict:
        return {
            "kind": "basic",
            "resampling": "the percentile method's B resamples, reflected about the estimate (2 estimate - quantile)",
        }


@dataclass(frozen=True)
class Normal(_Method):
    """Bias-corrected normal interval from the mean and standard deviation of the same ``B`` resamples
    (:func:`harness.stats.intervals.normal`): the multiverse's noise rule, which reads few resamples."""

    name: str = "normal"
    words: ClassVar[str] = "bias-corrected normal interval from the cluster bootstrap's mean and standard error"
    colour: ClassVar[str] = "#4d9221"

    def needs(self, n_clusters: int) -> tuple:
        return (BOOTSTRAP,)

    def interval(self, quantity, estimate, resamples, n_clusters, level) -> Interval:
        return normal(column(resamples[BOOTSTRAP], quantity), estimate, level)

    def describe(self, n_clusters: int) -> dict:
        return {"kind": "normal", "resampling": "the mean and standard deviation of B resamples of the G clusters"}


@dataclass(frozen=True)
class BCa(_Method):
    """BCa interval (:func:`harness.stats.intervals.bca`): the bootstrap draws plus a cluster jackknife.

    ``n_groups=None`` (or ``>= G``): delete-one cluster jackknife (``G``
    refits); otherwise a delete-a-group jackknife with that many groups,
    grouped from the replicate's seed (see :func:`harness.stats.intervals.jackknife_groups`).
    """

    n_groups: int | None = None
    name: str = "bca"
    words: ClassVar[str] = "BCa interval of the cluster bootstrap (acceleration from a 20-group cluster jackknife)"
    colour: ClassVar[str] = "#e07b00"

    def groups(self, n_clusters: int) -> int:
        return n_clusters if self.n_groups is None or self.n_groups >= n_clusters else int(self.n_groups)

    def needs(self, n_clusters: int) -> tuple:
        return (BOOTSTRAP, ("jackknife", self.groups(n_clusters)))

    def interval(self, quantity, estimate, resamples, n_clusters, level) -> Interval:
        jack = resamples[("jackknife", self.groups(n_clusters))]
        return bca(column(resamples[BOOTSTRAP], quantity), estimate, column(jack, quantity), level)

    def describe(self, n_clusters: int) -> dict:
        g = self.groups(n_clusters)
        jk = (
            "delete-one cluster jackknife"
            if g == n_clusters
            else f"delete-a-group jackknife: {g} groups of {n_clusters // g}-{-(-n_clusters // g)} clusters, "
            "grouped by a random permutation from the replicate's seed"
        )
        return {"kind": "bca", "resampling": "the percentile method's B resamples", "jackknife": jk, "n_groups": g}


@dataclass(frozen=True)
class Subsampling(_Method):
    """m-out-of-n cluster subsampling without replacement (:func:`harness.stats.intervals.subsampling`)."""

    exponent: float = 2.0 / 3.0
    rate: float = 0.5
    fpc: bool = True
    name: str = "subsampling"
    words: ClassVar[str] = "m-out-of-n cluster subsampling interval (m = ceil(G^(2/3)) clusters without replacement)"
    colour: ClassVar[str] = "#41ab5d"

    def m(self, n_clusters: int) -> int:
        return subsample_size(n_clusters, self.exponent)

    def needs(self, n_clusters: int) -> tuple:
        return (("subsample", self.m(n_clusters)),)

    def interval(self, quantity, estimate, resamples, n_clusters, level) -> Interval:
        m = self.m(n_clusters)
        draws = column(resamples[("subsample", m)], quantity)
        return subsampling(draws, estimate, m=m, n_clusters=n_clusters, level=level, rate=self.rate, fpc=self.fpc)

    def describe(self, n_clusters: int) -> dict:
        m = self.m(n_clusters)
        rule = SUBSAMPLE_RULE if self.exponent == 2.0 / 3.0 else f"m = ceil(G**{self.exponent:g}), without replacement"
        scale = (m / n_clusters) ** self.rate / (math.sqrt(1.0 - m / n_clusters) if self.fpc else 1.0)
        return {
            "kind": "subsampling",
            "resampling": f"B subsamples of m = {m} of the G = {n_clusters} clusters without replacement",
            "m": m,
            "m_rule": rule,
            "rate": f"G**{self.rate:g} (root-G)" if self.rate == 0.5 else f"G**{self.rate:g}",
            "fpc": self.fpc,
            "scale": scale,
            "scale_formula": "sqrt(m / (G - m))" if self.fpc else f"(m / G)**{self.rate:g}",
        }


#: The methods a claim file may name, by that name (BCa with its 20-group jackknife).
METHODS: dict[str, _Method] = {m.name: m for m in (Percentile(), Basic(), BCa(n_groups=20), Subsampling(), Normal())}


def method_named(name: str) -> _Method:
    try:
        return METHODS[name]
    except KeyError:
        raise ValueError(f"unknown interval method {name!r}; known: {', '.join(METHODS)}") from None


def needed(methods, n_clusters: int) -> list:
    """The resamplings ``methods`` need, each once, in the order first asked for (shared between methods)."""
    keys = []
    for m in methods:
        for k in m.needs(n_clusters):
            if k not in keys:
                keys.append(k)
    return keys


def resampling_calls(keys, n_resamples: int) -> int:
    """Statistic calls the resamplings ``keys`` cost: ``B`` for the bootstrap and for subsamples, ``g`` for a
    jackknife of ``g`` groups."""
    return sum(int(k[1]) if k[0] == "jackknife" else int(n_resamples) for k in keys)


def decision_interval(method, quantity: str, estimate: float, resamples: dict, n_clusters: int, alpha: float):
    """The method's equal-tailed interval at level ``1 - 2 alpha``: its ends are the one-sided ``1 - alpha``
    bounds ``(L, U)`` the decision reads."""
    if not 0.0 < alpha < 0.5:
        raise ValueError(f"the one-sided level must be in (0, 0.5), got {alpha}")
    return method.interval(quantity, estimate, resamples, n_clusters, 1.0 - 2.0 * alpha)
