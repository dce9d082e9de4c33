"""The typed building blocks of every schema of user input (claim files, protocol parameters, pins), and its
errors in words: one line per problem, ``path: what was expected, got what``, an unknown key with "did you mean".
"""

from __future__ import annotations

import datetime
import difflib
import functools
import json
import re
import types
import typing
from pathlib import PurePosixPath
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, ValidationError, create_model

#: Characters no text of a claim file may hold: C0 controls but tab, newline and carriage return; DEL
#: and the C1 controls; the bidirectional marks, embeddings, overrides and isolates (which reorder what
#: a reader sees); lone surrogates (which cannot be written as UTF-8).
FORBIDDEN_CHARS = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
#: What a one-line name or label may not hold: the above, and tab, newline, carriage return and the
#: Unicode line and paragraph separators.
CONTROL_CHARS = re.compile(FORBIDDEN_CHARS.pattern[:-1] + "\t\n\r\u2028\u2029]")


def forbidden_char(text: str, pattern: re.Pattern = FORBIDDEN_CHARS) -> str | None:
    """``"U+202E at character 3"`` for the first character of ``text`` that ``pattern`` refuses, else None."""
    m = pattern.search(text)
    return None if m is None else f"U+{ord(m.group()):04X} at character {m.start() + 1}"


class Strict(BaseModel):
    """Base of every user-facing schema: frozen, no unknown keys, finite numbers only, no conversions (validate
    plain data with :func:`validate_plain`)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False, strict=True)


def validate_plain(model: type[BaseModel], data: Any):
    """``model`` validated from plain data, in JSON mode: a list stands for a tuple, an integer for a float,
    nothing else is converted."""
    return model.model_validate_json(json.dumps(data, allow_nan=True))


@functools.cache
def _one_field(model: type[BaseModel], name: str) -> type[BaseModel]:
    """A schema of the one field ``name`` of ``model``, with its type and limits (not the model's validators)."""
    f = model.model_fields[name]
    return create_model(f"{model.__name__}_{name}", __base__=Strict, **{name: (f.annotation, f)})


def _empty(tp):
    """What stands in for a required field that did not validate: an empty list or mapping, or None."""
    origin = typing.get_origin(_unwrap(tp)[0])
    return [] if origin is list else {} if origin is dict else None


def _lenient_item(model: type[BaseModel], data: Any, where: str, bad: set[str]):
    try:
        return validate_plain(model, data)
    except ValidationError:
        bad.add(where)
        return validate_lenient(model, data, f"{where}.")[0]


def validate_lenient(model: type[BaseModel], data: Any, where: str = "") -> tuple[BaseModel, set[str]]:
    """``model`` built, unvalidated, from the fields of ``data`` that validate one by one, and the paths of those
    that do not (each its default, or an empty stand-in): what the checks of the rest of a file run on, so that
    one typo hides nothing else. Never a validated value."""
    bad: set[str] = set()
    data = data if isinstance(data, dict) else {}
    values = {}
    for name, f in model.model_fields.items():
        given = {name: data[name]} if name in data else {}  # absent: its default, or refused if required
        try:
            values[name] = getattr(validate_plain(_one_field(model, name), given), name)
        except ValidationError:
            bad.add(f"{where}{name}")
            values[name] = f.get_default(call_default_factory=True) if not f.is_required() else _empty(f.annotation)
            item = typing.get_args(f.annotation)[0] if typing.get_origin(f.annotation) is list else None
            if isinstance(item, type) and issubclass(item, BaseModel) and isinstance(given.get(name), list):  # list[M]
                values[name] = [_lenient_item(item, x, f"{where}{name}[{i}]", bad) for i, x in enumerate(given[name])]
    return model.model_construct(**values), bad


def _no_bool(v: Any) -> Any:
    if isinstance(v, bool):
        raise ValueError("must be a number, not a boolean (true/false)")
    return v


LABEL_CHARS = 200


def _one_line(v: str) -> str:
    if bad := forbidden_char(v, CONTROL_CHARS):
        raise ValueError(
            "must be one line of text without control characters (newline, tab, escape, ...) or "
            f"bidirectional overrides; found {bad}"
        )
    return v


def _prose(v: str) -> str:
    if bad := forbidden_char(v):
        raise ValueError(
            f"must be text without control characters (escape, bell, ...) or bidirectional overrides; found {bad}"
        )
    if not v.strip():
        raise ValueError("must not be empty")
    return " ".join(v.split())


def _label(v: str) -> str:
    if not v.strip():
        raise ValueError("must not be empty")
    if len(v) > LABEL_CHARS:
        raise ValueError(f"must be at most {LABEL_CHARS} characters long, not {len(v)}")
    return v


def _iso_date(v: str) -> str:
    try:
        datetime.date.fromisoformat(v)
    except ValueError:
        raise ValueError("must be a calendar date written YYYY-MM-DD (month 01-12, a day the month has)") from None
    return v


def _relative_path(v: str) -> str:
    p = PurePosixPath(v)
    if p.is_absolute() or "\\" in v or re.match(r"^[A-Za-z]:", v):
        raise ValueError("must be a path relative to the checkout's root (no leading '/', no drive, no backslash)")
    if any(part == ".." for part in p.parts):
        raise ValueError("must be a path inside the checkout: '..' is not allowed")
    return v


Number = Annotated[float, BeforeValidator(_no_bool)]
Count = Annotated[int, BeforeValidator(_no_bool)]
#: A name or label shown in reports: one line of at most :data:`LABEL_CHARS` characters, no control characters.
Label = Annotated[str, AfterValidator(_one_line), AfterValidator(_label)]
#: Prose (a claim, a reason, a limitation): no control characters; whitespace runs, newlines included,
#: become one space, so that no text of a claim file can start a Markdown block of its own in a report.
Text = Annotated[str, AfterValidator(_prose)]
#: A date ``YYYY-MM-DD`` that exists (kept as the text the file writes).
IsoDate = Annotated[str, AfterValidator(_one_line), AfterValidator(_iso_date)]
#: A relative path that cannot leave the folder it is read from (no absolute path, no ``..``).
RelativePath = Annotated[str, AfterValidator(_one_line), AfterValidator(_relative_path)]


def shorten(value: Any, limit: int = 80) -> str:
    """``repr(value)``, cut to ``limit`` characters with the number of characters left out."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text) - limit} more characters)"


def loc_text(loc: tuple) -> str:
    """A path of keys and indices as a problem names it (``targets[2].tolerance``); an odd key shortened."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif not str(part).startswith("function-"):  # a validator's step, not a key
            odd = isinstance(part, str) and (CONTROL_CHARS.search(part) or len(part) > 60)
            out += ("." if out else "") + (shorten(part, 60) if odd else str(part))
    return out or "(top level)"


_QUOTED = "write it unquoted, in decimals (0.828, 1.0e-3): quoted, or as 1:30, 0132 or 0.8_28, it is text"
#: Strict mode's refusals, in words: (pydantic error type, type of the value found) -> what was expected.
_STRICT_WORDS = {
    ("float_type", "str"): f"must be a number, not text; {_QUOTED}",
    ("int_type", "str"): f"must be a whole number, not text; {_QUOTED}",
    ("int_type", "float"): "must be a whole number",
    ("bool_type", "str"): "must be true or false (unquoted), not text",
    **{("bool_type", t): "must be true or false, not a number" for t in ("int", "float")},
    **{("string_type", t): "must be text; put the number in quotes if it is a name" for t in ("int", "float")},
    ("string_type", "bool"): "must be text; put true/false in quotes if it is a name",
}


def _length_words(e: dict) -> str:
    """A length limit in words: characters of a text, entries of a list or mapping (pydantic says "items")."""
    ctx, got = e.get("ctx") or {}, e.get("input")
    most = e["type"].endswith("too_long")
    bound = ctx.get("max_length" if most else "min_length")
    if not most and bound == 1:
        return "must not be empty" if isinstance(got, str) else "must have at least one entry"
    limit = f"{'at most' if most else 'at least'} {bound}"
    if isinstance(got, str):
        return f"must be {limit} characters long, not {len(got)}"
    return f"must have {limit} entries" + (f", not {len(got)}" if hasattr(got, "__len__") else "")


def _unwrap(tp) -> list:
    """The types a field's annotation may hold, with ``Annotated`` and unions taken apart."""
    origin = typing.get_origin(tp)
    if origin is Annotated:
        return _unwrap(typing.get_args(tp)[0])
    if origin in (typing.Union, types.UnionType):
        return [t for a in typing.get_args(tp) for t in _unwrap(a)]
    return [tp]


def fields_at(model: type[BaseModel], loc: tuple) -> list[str] | None:
    """The keys the model nested in ``model`` at ``loc`` (a path of keys and indices) takes, or None."""
    here = _unwrap(model)
    for part in loc:
        nxt = []
        for tp in here:
            if isinstance(tp, type) and issubclass(tp, BaseModel):
                f = tp.model_fields.get(part) if isinstance(part, str) else None
                nxt += _unwrap(f.annotation) if f is not None else []
            elif typing.get_origin(tp) in (list, tuple) and isinstance(part, int):
                nxt += [t for a in typing.get_args(tp) if a is not Ellipsis for t in _unwrap(a)]
            elif typing.get_origin(tp) is dict and isinstance(part, str):
                nxt += _unwrap(typing.get_args(tp)[1])
        here = nxt
    names = [n for tp in here if isinstance(tp, type) and issubclass(tp, BaseModel) for n in tp.model_fields]
    return names or None


def format_validation_error(err: ValidationError, prefix: str = "", model: type[BaseModel] | None = None) -> list[str]:
    """One line per problem, ``path: what was expected, got what``; an unknown key gets a suggestion among the
    keys its place takes, a missing one the unknown key that looks like its typo."""
    errors = err.errors()
    unknown = {tuple(e["loc"]) for e in errors if e["type"] == "extra_forbidden"}
    lines = []
    for e in errors:
        loc = tuple(e["loc"])
        where = loc_text((prefix, *loc))  # an empty prefix adds nothing
        msg = e["msg"].removeprefix("Value error, ")
        known = fields_at(model, loc[:-1]) if model is not None and loc else None
        if e["type"] == "extra_forbidden":
            msg = "unknown key" + (did_you_mean(loc[-1], known) if known else "")
        elif e["type"] == "missing":
            typo = [u[-1] for u in unknown if u[:-1] == loc[:-1] and did_you_mean(u[-1], [loc[-1]])]
            msg = "required key is missing" + (f" (is {typo[0]!r} a misspelling of it?)" if typo else "")
        elif e["type"].endswith(("too_long", "too_short")):  # of a list or mapping, or a text
            msg = _length_words(e)
        got = e.get("input")
        msg = _STRICT_WORDS.get((e["type"], type(got).__name__), msg)
        hidden = e["type"] in ("missing", "extra_forbidden") or isinstance(got, (dict, list))
        lines.append(f"{where}: {msg}" + ("" if hidden else f", got {shorten(got)}"))
    return lines


def did_you_mean(name: str, choices) -> str:
    """`` (did you mean 'x'?)`` for the closest choice, or an empty string."""
    close = difflib.get_close_matches(str(name), [str(c) for c in choices], n=1, cutoff=0.5)
    return f" (did you mean '{close[0]}'?)" if close else ""


def unknown_name(where: str, name: str, known, what: str) -> str:
    """The problem of a name that is not one of ``known`` (``what`` says what it should be), with "did you mean"."""
    return f"{where}: {shorten(name)} is not {what}{did_you_mean(name, known)}; known: " + (
        ", ".join(sorted(known)[:12]) + (" …" if len(known) > 12 else "")
    )
