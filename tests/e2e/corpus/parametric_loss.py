"""The corpus variants of ``parametric_loss`` (claims 101 and 104 edited): another δ, a target
that asks the opposite of the claim, Hoffmann et al.'s values as the truth."""

from __future__ import annotations

from . import Variant, chain, set_params, verdict_is


def _no_multiverse(raw):
    raw.pop("multiverse", None)


def _reversed(raw):
    """Every target the other way round: the claim file asks that Hoffmann et al.'s values are *not* rejected."""
    for t in raw["targets"]:
        t["relation"] = {"<": ">=", ">": "<="}[t["relation"]]


VARIANTS = [
    Variant("c101_delta", "101", chain(set_params(delta=0.01), _no_multiverse), verdict_is("reproduced")),
    Variant("c101_reversed", "101", chain(_no_multiverse, _reversed), verdict_is("not reproduced")),
    Variant("c104_delta", "104", set_params(delta=1e-4), verdict_is("reproduced")),
    Variant("c104_reversed", "104", _reversed, verdict_is("not reproduced")),
]
