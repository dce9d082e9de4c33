"""What a protocol is, and the registry that names protocols for claim files.

A protocol turns (validated parameters, verified tables, a random generator)
into a :class:`Measurement`: a flat mapping of named numbers that targets and
controls refer to (``values``, named by :mod:`harness.quantities`), plus
JSON-able ``details``. Controls are named perturbations of the same
computation, each with its own parameter schema.

After both arms have run and every target and control has been judged, the
protocol states its **findings** (:meth:`Protocol.findings`): named facts
about the data, each in one of the states the protocol declares in
``FINDINGS``, with the numbers it rests on. The report's template only words
findings; every comparison with a threshold, every count, every "largest" or
"inside" is decided here.

One protocol, one name: the protocol module ``harness/protocols/<name>.py``,
the adapter ``harness/adapters/<name>.py`` that runs the authors' code, the
template ``templates/<name>.md.j2`` and the quantity names in
:mod:`harness.quantities`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ..record import Arm, ControlOutcome, Finding, TargetOutcome, plain
from ..schema import Strict

__all__ = ["Measurement", "Protocol", "ProtocolParams", "Context", "register", "PROTOCOLS", "finding"]


class ProtocolParams(Strict):
    """Base for a protocol's (or a control's) parameter schema: frozen, no unknown keys, finite numbers."""


@dataclass
class Measurement:
    values: dict[str, float]
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Context:
    """Everything a protocol's findings may rest on: the claim, both arms, the judged targets and controls."""

    spec: Any  # harness.spec.ClaimSpec
    params: ProtocolParams
    data: dict[str, Any]
    reimpl: Arm
    upstream: Arm
    targets: list[TargetOutcome]
    controls: list[ControlOutcome]
    tables: Any  # harness.datalock.Tables

    def target(self, quantity: str) -> TargetOutcome | None:
        return next((t for t in self.targets if t.quantity == quantity), None)


def finding(state: str, **facts) -> Finding:
    """A :class:`~harness.record.Finding` whose facts are plain JSON values."""
    return Finding(state=state, facts=plain(facts))


class Protocol:
    """Subclass, set the class attributes, implement :meth:`measure`, :meth:`control` and :meth:`findings`."""

    name: ClassVar[str]
    Params: ClassVar[type[ProtocolParams]]
    controls: ClassVar[dict[str, type[ProtocolParams]]] = {}
    summary: ClassVar[str] = ""
    #: Every finding this protocol can state, with its possible states.
    FINDINGS: ClassVar[dict[str, tuple[str, ...]]] = {}

    @property
    def adapter(self) -> str:
        return f"{self.name}.py"

    @property
    def template(self) -> str:
        return f"{self.name}.md.j2"

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

    def data_summary(self, params: ProtocolParams, tables) -> dict[str, Any]:
        """Row counts and other facts about the inputs that the report's setup shows."""
        return {}

    def findings(self, ctx: Context) -> dict[str, Finding]:
        """The protocol's findings, each named in :attr:`FINDINGS` and in one of its declared states."""
        return {}

    def resampling(self, params: ProtocolParams, tables, reimpl, *, cluster_col: str):
        """The rows, their clusters and the statistic of one resample, for the claim's bootstrap
        (:class:`harness.robustness.Resampling`)."""
        from ..errors import ProtocolError

        raise ProtocolError(f"protocol '{self.name}' has no bootstrap")

    def plots(self, ctx: Context) -> dict[str, Any]:
        """What the report's figures are drawn from (curve grids, histograms), stored in the record so that
        :mod:`harness.figures` needs nothing else."""
        return {}


PROTOCOLS: dict[str, Protocol] = {}


def register(cls: type[Protocol]) -> type[Protocol]:
    if cls.name in PROTOCOLS:
        raise RuntimeError(f"protocol '{cls.name}' registered twice")
    PROTOCOLS[cls.name] = cls()
    return cls
