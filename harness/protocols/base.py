"""What a protocol's implementation is: the interface its folder's ``protocol.py`` fills in."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, ClassVar

import numpy as np

from ..core.record import Arm, TargetOutcome
from ..core.schema import Strict
from .card import ProtocolCard


class ProtocolParams(Strict):
    """Base for a protocol's (or a control's) parameter schema: frozen, no unknown keys, finite numbers."""


@dataclass
class Measurement:
    values: dict[str, float]
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Context:
    """Everything a protocol's evidence and figures may rest on: the claim, both arms, the judged targets, the
    tables."""

    spec: Any  # harness.claimfiles.spec.ClaimSpec
    params: ProtocolParams
    data: dict[str, Any]
    reimpl: Arm
    upstream: Arm
    targets: list[TargetOutcome]
    tables: Any  # harness.core.datalock.Tables


#: What a choice of a claim's multiverse is (:attr:`Choice.role`).
CHOICE_ROLES = ("estimand", "analysis")


@dataclass(frozen=True)
class Choice:
    """A choice a claim's ``multiverse:`` may vary: the parameter of the same name, replaced.

    ``role`` says whether the claim names it (``"estimand"``: the quantile, the benchmark columns and their scale,
    the budget, the cutoff that defines a release; another value asks another question, so a multiverse may
    only show it apart, under ``estimands:``) or leaves it to the analyst (``"analysis"``: a setting of the
    estimator or the test, the rows that enter; a multiverse counts it, under ``choices:``). ``why`` is the
    one-line reason for the role, shown beside it in the docs and the report. ``kind`` says what it acts on:
    ``"analysis"`` (a setting of the estimator or the test) or ``"data"`` (which rows or scores enter; the
    authors' code does not make it). ``follows`` names parameters that follow from this one and are left to
    their defaults when it is replaced (``exceed_rate`` follows from ``tau``).
    """

    words: str
    role: str
    why: str
    kind: str = "analysis"
    follows: tuple[str, ...] = ()

    def __post_init__(self):
        if self.role not in CHOICE_ROLES:
            raise ValueError(f"a choice's role is one of {CHOICE_ROLES}, got {self.role!r}")
        if self.kind not in ("analysis", "data"):
            raise ValueError(f"a choice's kind is 'analysis' or 'data', got {self.kind!r}")


class Resampling:
    """What a protocol gives the bootstrap: the rows, their clusters, and the statistic of a resample.

    ``statistic(indices, rng) -> {quantity: value}``, picklable (worker processes run it); ``rows`` says in words
    which rows are resampled. ``rebase(indices, rng) -> (values, statistic)``, optional and picklable: the values on
    the rows ``indices`` and a statistic whose fits start from theirs, so that the coverage study starts each
    simulated data set's resamples from its own estimate, as the claim's bootstrap starts from the full sample's.
    """

    def __init__(self, n_rows: int, cluster_labels, statistic, rows: str, rebase=None):
        self.n_rows = int(n_rows)
        self.cluster_labels = cluster_labels
        self.statistic = statistic
        self.rows = rows
        self.rebase = rebase

    @classmethod
    def of_fits(cls, n_rows: int, cluster_labels, rows: str, fits, design: dict, start: str = "inits"):
        """The resampling of a statistic whose fits start from ``design[start]``: ``fits(indices, rng, **design)
        -> (values, fitted)``, with ``fitted`` of the kind of ``design[start]`` (picklable: module level). Its
        statistic is the values; its ``rebase`` the values and the statistic started from ``fitted``."""
        return cls(
            n_rows,
            cluster_labels,
            partial(_fitted_values, fits=fits, design=design),
            rows,
            rebase=partial(_refitted_from, fits=fits, design=design, start=start),
        )


def _fitted_values(indices, rng, *, fits, design):
    return fits(indices, rng, **design)[0]


def _refitted_from(indices, rng, *, fits, design, start):
    values, fitted = fits(indices, rng, **design)
    return values, partial(_fitted_values, fits=fits, design={**design, start: fitted})


class Protocol:
    """Subclass, set the class attributes, implement :meth:`measure` and :meth:`control`.

    ``card`` is the folder's :class:`~harness.protocols.card.ProtocolCard`; the
    module ends with ``PROTOCOL = <the subclass>()``.
    """

    card: ClassVar[ProtocolCard]
    Params: ClassVar[type[ProtocolParams]]
    controls: ClassVar[dict[str, type[ProtocolParams]]] = {}
    #: The choices a claim's multiverse may vary, by parameter name (:class:`Choice`), each an estimand or an
    #: analysis choice.
    CHOICES: ClassVar[dict[str, Choice]] = {}
    #: Quantities the measurement gives an interval for, by name: ``{quantity: (lower end, upper end)}``, each end
    #: a quantity of its own (the specification curve draws them).
    INTERVALS: ClassVar[dict[str, tuple[str, str]]] = {}

    @property
    def name(self) -> str:
        return self.card.name

    def columns(self, params: ProtocolParams) -> list[tuple[str, str, dict[str, str]]]:
        """``(table parameter, table name, {column parameter: column})`` for every table the parameters name."""
        return []

    def measure(self, params: ProtocolParams, tables, rng: np.random.Generator) -> Measurement:
        raise NotImplementedError

    def control(
        self,
        kind: str,
        cparams: ProtocolParams,
        params: ProtocolParams,
        tables,
        rng: np.random.Generator,
        baseline: Measurement,
    ) -> Measurement:
        raise NotImplementedError

    def data_problems(self, params: ProtocolParams, tables) -> list[str]:
        """What of the input tables the parameters cannot be measured on, each ``params.<field>: ...`` with what
        was expected and what was found: the refusals :meth:`measure` would raise, said by ``validate --data``
        before a run (the tables verified; a column the parameters name is in its table)."""
        return []

    def data_summary(self, params: ProtocolParams, tables) -> dict[str, Any]:
        """Row counts and other facts about the inputs that the report's setup shows."""
        return {}

    def evidence(self, ctx: Context, rng: np.random.Generator) -> dict[str, Any]:
        """What the report rests on beyond the measured quantities (a refit of the authors' fits on a shared
        objective, a count in the tables), measured once when the claim runs, from its own stream ``rng``;
        plain JSON, stored as the record's ``evidence`` and read by the folder's ``results.py``."""
        return {}

    def resampling(
        self, params: ProtocolParams, tables, reimpl, *, cluster_col: str, quantities: Sequence[str] | None = None
    ) -> Resampling:
        """The rows, their clusters and the statistic of one resample, for the claim's bootstrap."""
        from ..core.errors import ProtocolError

        raise ProtocolError(f"protocol '{self.name}' has no bootstrap")

    def multiverse_params(self, params: ProtocolParams) -> dict[str, Any]:
        """Parameters every specification of a multiverse replaces, given the specification's own: the
        diagnostics its headline targets do not rest on (a power study, the authors' box), left out to keep
        each specification cheap. They must not change what a specification is judged on, nor its precision
        (:meth:`decision_margin` is read at the claim's parameters)."""
        return {}

    def decision_margin(self, params: ProtocolParams, quantity: str, threshold: float) -> float | None:
        """How far from ``threshold`` the measured ``quantity`` must lie for its side of it to be settled beyond
        the measurement's own Monte Carlo error (a permutation p-value read against the level); ``None`` when
        the protocol computes ``quantity`` without Monte Carlo error, so that its side is read as it is."""
        return None

    def joint_null(self, params: ProtocolParams, specifications: list, tables, rng: np.random.Generator, n: int):
        """The specification curve under the null (Simonsohn, Simmons & Nelson 2020): ``n`` data sets drawn under
        the protocol's own null from the claim's (``params``), each put through every specification's test
        (``specifications``, validated parameters). Returns ``{"effect": (n, S), "significant": (n, S)}`` arrays,
        or raises :class:`NotImplementedError` when the protocol has no test (:attr:`JOINT_NULL` is ``None``)."""
        raise NotImplementedError

    #: What :meth:`joint_null` tests: ``{"effect": quantity, "p_value": quantity}`` (each specification's effect
    #: and the p-value read against ``params.alpha``), or ``None`` when the protocol has no test.
    JOINT_NULL: ClassVar[dict[str, str] | None] = None
    #: What each analysis specification reports besides what it is judged on, where it measures it: quantity ->
    #: how it is measured there, in words.
    MULTIVERSE_REPORTS: ClassVar[dict[str, str]] = {}

    def plots(self, ctx: Context) -> dict[str, Any]:
        """What the report's figures are drawn from (curve grids, histograms): drawn when the claim runs
        (:mod:`harness.rendering.figures`), never stored in the record."""
        return {}
