"""The vocabulary of quantities: what every protocol's names are made of.

A claim's targets and controls name quantities (``boundary.MATH Lvl 5``,
``gap.pinball_ood``, ``sweep.lam=0.001.max_dev``). Each protocol declares,
in its folder's ``quantities.py``, which names it measures for a claim's
parameters (``vocabulary(params)``, ``control_vocabulary(kind, params,
control_params)``, with ``params`` plain dicts, a validated model's
``model_dump()``), and builds every name with a function there: the protocol,
its adapter (inside the authors' environment) and the validation of claim
files all call those, so a name is spelled in one place. This module holds
what the protocols share. It, and every ``quantities.py``, uses the standard
library only.

Every quantity has a reader-facing ``label`` (what a report prints instead
of the internal name) and the ``arm`` that measures it:

``both``
    both the re-implementation and the authors' code report it;
``reimpl``
    only the re-implementation (a refit inside the authors' box, a larger
    permutation count, a power analysis);
``upstream``
    only the authors' arm: a check *of* the authors' code (their loss
    function, their source lines). A target on such a quantity is judged on
    the authors' value.
"""

from __future__ import annotations

import math
from typing import NamedTuple

__all__ = ["Quantity", "budget_text", "boxed"]


class Quantity(NamedTuple):
    label: str
    arm: str = "both"


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def budget_text(eval_x: float) -> str:
    """A compute budget given in units of 1e21 FLOPs, in words: ``10²⁴ FLOPs`` or ``3e+23 FLOPs``."""
    exponent = math.log10(eval_x) + 21
    if abs(exponent - round(exponent)) < 1e-9:
        return f"10{str(int(round(exponent))).translate(_SUPERSCRIPT)} FLOPs"
    return f"{eval_x * 1e21:.3g} FLOPs"


def boxed(name: str) -> str:
    """The refit of quantity ``name`` inside the authors' optimiser box (re-implementation only)."""
    return f"boxed.{name}"
