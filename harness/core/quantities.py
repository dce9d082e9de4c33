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

and its ``kind``, what a claim file may compare it with and which values it can take:

``value``
    a measured number in the quantity's own units (a score, a loss, a gap, a slope);
``fraction``
    a number in [0, 1] (a coverage, a share of models, a p-value, a power);
``count``
    a number of models, lines or settings.

A relation between two quantities compares two of one kind, and a target on a fraction must be able to fail
on some value in [0, 1] (:mod:`harness.claimfiles.claim_checks`).
"""

from __future__ import annotations

import math
from typing import NamedTuple

__all__ = ["Quantity", "budget_text", "boxed", "power_of_ten", "number_text"]


class Quantity(NamedTuple):
    label: str
    arm: str = "both"
    kind: str = "value"


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def power_of_ten(x: float, digits: int = 2) -> str:
    """A positive number as a reader writes a power of ten: ``10²⁴`` when it is one, ``10^24.5`` when its
    exponent has one or two decimals (a budget between the decades), else ``3.2 × 10²⁴`` (``digits``
    significant digits), never ``3.16e+24``."""
    exponent = math.log10(x)
    k = round(exponent)
    if abs(exponent - k) < 1e-9:
        return f"10{str(k).translate(_SUPERSCRIPT)}"
    for decimals in (1, 2):
        if abs(exponent - round(exponent, decimals)) < 1e-9:
            return f"10^{round(exponent, decimals):.{decimals}f}"
    k = math.floor(exponent)
    mantissa = float(f"{x / 10**k:.{digits}g}")
    if mantissa >= 10:  # 9.99 rounds up to the next decade
        mantissa, k = mantissa / 10, k + 1
    return f"{mantissa:.{digits}g} × 10{str(k).translate(_SUPERSCRIPT)}"


def number_text(x: float, digits: int = 4) -> str:
    """A parameter in its shortest faithful form (``0.001``, ``50``, ``0.98``); one that would need an exponent,
    or lies below 0.001, as a power of ten (``10⁴``, ``10⁻⁴``, ``2.5 × 10⁻⁶``), never ``1e+04``; no ``-0``."""
    text = f"{x:.{digits}g}"
    if "e" not in text and not (0 < abs(x) < 1e-3):
        return "0" if float(text) == 0 else text
    return ("−" if x < 0 else "") + power_of_ten(abs(x), digits)


def budget_text(eval_x: float) -> str:
    """A compute budget given in units of 1e21 FLOPs, in words: ``10²⁴ FLOPs``, ``10^24.5 FLOPs``,
    ``3.2 × 10²⁴ FLOPs`` (:func:`power_of_ten`)."""
    return f"{power_of_ten(eval_x * 1e21)} FLOPs"


def boxed(name: str) -> str:
    """The refit of quantity ``name`` inside the authors' optimiser box (re-implementation only)."""
    return f"boxed.{name}"
