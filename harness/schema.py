"""Typed building blocks shared by every schema of user input (claim files, protocol parameters, pins).

* :class:`Strict`: frozen pydantic base, unknown keys forbidden, NaN and
  infinity refused.
* ``Number`` and ``Count``: a float and an int that refuse booleans (pydantic
  would otherwise read ``true`` as 1); ``Label``: a one-line string without
  control characters.
* :func:`format_validation_error`: one line per problem, ``path: what was
  expected, got what``, with long values shortened.
* :func:`did_you_mean`.
"""

from __future__ import annotations

import difflib
import re
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, ValidationError

__all__ = [
    "Strict",
    "Number",
    "Count",
    "Label",
    "Text",
    "format_validation_error",
    "did_you_mean",
    "shorten",
    "CONTROL_CHARS",
]

CONTROL_CHARS = re.compile(r"[\x00-\x1f\x7f]")
SHOWN_CHARS = 80


class Strict(BaseModel):
    """Base of every user-facing schema: frozen, no unknown keys, finite numbers only."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


def _no_bool(v: Any) -> Any:
    if isinstance(v, bool):
        raise ValueError("must be a number, not a boolean (true/false)")
    return v


def _one_line(v: str) -> str:
    if CONTROL_CHARS.search(v):
        raise ValueError("must be one line of text without control characters (newline, tab, ...)")
    return v


Number = Annotated[float, BeforeValidator(_no_bool)]
Count = Annotated[int, BeforeValidator(_no_bool)]
#: A name or label shown in reports: one line, no control characters.
Label = Annotated[str, AfterValidator(_one_line)]
#: Prose (a claim, a reason, a limitation): whitespace runs, newlines included, become one space,
#: so that no text of a claim file can start a Markdown block of its own in a report.
Text = Annotated[str, AfterValidator(lambda v: " ".join(v.split()))]


def shorten(value: Any, limit: int = SHOWN_CHARS) -> str:
    """``repr(value)``, cut to ``limit`` characters with the number of characters left out."""
    text = repr(value)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit} more characters)"


def _loc(loc: tuple) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif str(part).startswith(("function-after", "function-before", "function-wrap")):
            continue
        else:
            out += ("." if out else "") + str(part)
    return out or "(top level)"


def format_validation_error(err: ValidationError, prefix: str = "") -> list[str]:
    """One line per problem: ``path: what was expected, got what``."""
    lines = []
    for e in err.errors():
        where = _loc(tuple(e["loc"]))
        if prefix:
            where = prefix + ("" if where == "(top level)" else ("" if where.startswith("[") else ".") + where)
        msg = e["msg"].removeprefix("Value error, ")
        if e["type"] == "extra_forbidden":
            msg = "unknown key"
        elif e["type"] == "missing":
            msg = "required key is missing"
        got = e.get("input")
        shown = (
            ""
            if e["type"] in ("missing", "extra_forbidden") or isinstance(got, (dict, list))
            else f", got {shorten(got)}"
        )
        lines.append(f"{where}: {msg}{shown}")
    return lines


def did_you_mean(name: str, choices) -> str:
    """`` (did you mean 'x'?)`` for the closest choice, or an empty string."""
    close = difflib.get_close_matches(str(name), [str(c) for c in choices], n=1, cutoff=0.5)
    return f" (did you mean '{close[0]}'?)" if close else ""
