"""The registered protocols: one line each, naming a folder under ``harness/protocols/``.

A claim file names a protocol; this is where that name is looked up. Adding a
protocol is its folder (see :mod:`harness.protocols.card`), its template and
one line here. Importing this module imports every protocol's card and
nothing heavier. No build key hashes this file: a new line re-runs no claim.
"""

from __future__ import annotations

import importlib

from ..protocols.card import ProtocolCard

__all__ = ["PROTOCOLS", "card"]


def _cards(*names: str) -> dict[str, ProtocolCard]:
    out = {}
    for name in names:
        c = importlib.import_module(f"harness.protocols.{name}").CARD
        if c.name != name:
            raise RuntimeError(f"harness/protocols/{name}/__init__.py: its CARD names protocol {c.name!r}")
        out[name] = c
    return out


PROTOCOLS: dict[str, ProtocolCard] = _cards(
    "boundary_at_budget",
    "temporal_coverage",
    "estimator_comparison",
    "hyperparameters",
    "shift_test",
    "parametric_loss",
)


def card(name: str) -> ProtocolCard:
    """The card of a registered protocol (``KeyError`` for an unknown name: callers check first)."""
    return PROTOCOLS[name]
