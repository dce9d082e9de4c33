"""What a protocol is, and the registry that names protocols for claim files.

A protocol turns (parameters, locked tables, a seed) into a
:class:`Measurement`: a flat mapping of named numbers that targets and
controls refer to (``values``), plus JSON-able ``details`` that the report
template shows. Controls are named perturbations of the same computation,
each with its own small parameter schema.

The authors' arm of a protocol is an *adapter*: a script in
``harness/adapters/`` that runs in a subprocess from the pinned checkout,
reads a JSON request and writes a JSON answer of the same shape (see
:mod:`harness.upstream`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from pydantic import BaseModel, ConfigDict

__all__ = ["Measurement", "Protocol", "ProtocolParams", "register", "PROTOCOLS"]


class ProtocolParams(BaseModel):
    """Base for a protocol's (or a control's) parameter schema: frozen, no unknown keys."""

    model_config = ConfigDict(extra="forbid", frozen=True)


@dataclass
class Measurement:
    values: dict[str, float]
    details: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"values": dict(self.values), "details": self.details}


class Protocol:
    """Subclass, set the class attributes, implement :meth:`measure` and :meth:`control`."""

    name: ClassVar[str]
    Params: ClassVar[type[ProtocolParams]]
    controls: ClassVar[dict[str, type[ProtocolParams]]] = {}
    requires_inputs: ClassVar[tuple[str, ...]] = ()
    template: ClassVar[str]
    adapter: ClassVar[str | None] = None
    summary: ClassVar[str] = ""
    #: When true, ``measure`` also receives ``checkout`` (the verified pinned
    #: checkout's path, or None) and ``checkout_error`` (why there is none).
    needs_checkout: ClassVar[bool] = False

    def measure(self, params: ProtocolParams, tables, rng: np.random.Generator) -> Measurement:
        raise NotImplementedError

    def control(self, kind: str, cparams: ProtocolParams, params: ProtocolParams, tables,
                rng: np.random.Generator, baseline: Measurement) -> Measurement:
        raise NotImplementedError

    def data_summary(self, params: ProtocolParams, tables) -> dict[str, Any]:
        """Row counts and other facts about the inputs that the report's setup shows."""
        return {}

    def explain(self, params: ProtocolParams, tables, reimpl: Measurement, upstream: Measurement) -> dict[str, Any]:
        """Measured facts that say why the two arms differ (optional)."""
        return {}


PROTOCOLS: dict[str, Protocol] = {}


def register(cls: type[Protocol]) -> type[Protocol]:
    if cls.name in PROTOCOLS:
        raise RuntimeError(f"protocol '{cls.name}' registered twice")
    PROTOCOLS[cls.name] = cls()
    return cls
