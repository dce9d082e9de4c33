"""The vocabulary of quantities shared by every protocol (standard library only).

Each protocol's ``quantities.py`` builds its names (``boundary.MATH Lvl 5``, ``gap.pinball_ood``) with
functions called by the protocol, its adapter and the claim-file checks, so a name is spelled in one place.
Every quantity has a reader-facing ``label``, the ``arm`` that measures it (``both``, ``reimpl`` only, or
``upstream`` only: a check of the authors' code, judged on their value) and a ``kind``: ``value`` (in its own
units), ``fraction`` (in [0, 1]) or ``count``. A relation compares two quantities of one kind. A value that cannot
leave a range (a boundary of scores in [0, 1]) declares it as ``bounds``; a fraction's are [0, 1].
"""

from __future__ import annotations

import math
from typing import NamedTuple


class Quantity(NamedTuple):
    label: str
    arm: str = "both"
    kind: str = "value"
    bounds: tuple[float, float] | None = None

    @property
    def limits(self) -> tuple[float, float] | None:
        return self.bounds or ((0.0, 1.0) if self.kind == "fraction" else None)


#: The range of a score (a fraction of items right), and so of a boundary of scores.
SCORE = (0.0, 1.0)

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
    """A compute budget given in units of 1e21 FLOPs, in words (:func:`power_of_ten`): ``10²⁴ FLOPs``."""
    return f"{power_of_ten(eval_x * 1e21)} FLOPs"


def boxed(name: str) -> str:
    """The refit of quantity ``name`` inside the authors' optimiser box (re-implementation only)."""
    return f"boxed.{name}"
