"""Reading a claim file's YAML, hardened: what :func:`harness.claimfiles.spec.load_claim` validates comes from here.

The file is read as YAML 1.2 (core schema) with a loader of its own: only a
regular file of at most :data:`MAX_CLAIM_BYTES` is read (a FIFO or a device is
refused unread); ``true``/``false`` are the only booleans, ``1:30``, ``0132``,
``0.8_28`` and ``yes`` are text, not numbers or booleans; a date must be quoted
(``"2025-02-06"``: unquoted, YAML 1.1 readers take it for a date, so the file
would mean two things); anchors, aliases and merge keys (``&a``, ``*a``,
``<<:``), explicit tags (``!!binary``, ``!!set``), nesting deeper than
:data:`MAX_DEPTH`, more than :data:`MAX_NODES` values and integers of more than
:data:`MAX_INT_DIGITS` digits are refused; so are bytes that are not UTF-8,
duplicate keys, keys that are not text, non-finite numbers, control
characters, bidirectional overrides and lone surrogates anywhere. The literal
text of every scalar is kept by its path (``0.700`` keeps its three decimals).
"""

from __future__ import annotations

import hashlib
import math
import re
from pathlib import Path
from typing import Any

import yaml

from ..core.datalock import FileRefused, read_regular_file
from ..core.errors import SpecError
from ..core.schema import forbidden_char, loc_text, shorten

__all__ = [
    "read_claim_yaml",
    "read_claim_bytes",
    "spec_sha256",
    "is_yaml11_date",
    "MAX_CLAIM_BYTES",
    "MAX_DEPTH",
    "MAX_NODES",
    "MAX_INT_DIGITS",
]

#: A claim file is a few KB; a larger one is refused before it is parsed.
MAX_CLAIM_BYTES = 1 << 20
#: The deepest nesting of lists and mappings a claim file may use (the claims use 5 levels).
MAX_DEPTH = 16
#: The most values (scalars, lists and mappings) a claim file may hold (the claims hold a few hundred).
MAX_NODES = 10_000
#: The longest integer a claim file may write, in digits (a 64-bit seed has 20).
MAX_INT_DIGITS = 20


def spec_sha256(path: str | Path) -> str:
    """The sha256 of a claim file, read as :func:`harness.claimfiles.spec.load_claim` reads it (a regular
    file of at most 1 MiB)."""
    return hashlib.sha256(read_claim_bytes(Path(path))).hexdigest()


_STR, _INT, _FLOAT = "tag:yaml.org,2002:str", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float"


class _Refused(yaml.YAMLError):
    """A YAML construct a claim file may not use, at a place in the file."""

    def __init__(self, where: str, mark, problem: str):
        self.where, self.mark, self.problem = where, mark, problem
        super().__init__(problem)

    def line(self) -> str:
        at = f" (line {self.mark.line + 1}, column {self.mark.column + 1})" if self.mark is not None else ""
        return f"{self.where}: {self.problem}{at}"


class _ClaimLoader(yaml.SafeLoader):
    """YAML 1.2 core schema, and nothing of YAML 1.1's extras, for one claim file.

    Plain scalars resolve to null (``null``, ``~``, empty), booleans (``true``/``false`` only), decimal
    integers without a leading zero, and decimal floats (with ``.inf``/``.nan``, refused later); everything
    else is text: ``yes``, ``1:30``, ``0132``, ``0x1F``, ``0.8_28`` (an unquoted date such as ``2025-02-06`` is
    refused by :func:`_walk`: YAML 1.1 readers take it for a date). Anchors, aliases,
    explicit tags and merge keys are refused, as are nesting deeper than :data:`MAX_DEPTH` and more than
    :data:`MAX_NODES` values, so that no file can make the reader recurse, loop or blow up.
    """

    yaml_implicit_resolvers: dict = {}

    def __init__(self, stream):
        super().__init__(stream)
        self._path: list = []
        self._nodes = 0

    def compose_node(self, parent, index):
        if isinstance(index, yaml.ScalarNode):
            part = index.value
        elif isinstance(parent, yaml.MappingNode):  # a key, or the value of a key that is not text
            part = "(a key)"
        else:
            part = index
        path = (*self._path, part) if parent is not None else ()
        where = loc_text(path)
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent):
            raise _Refused(where, event.start_mark, f"an alias (*{event.anchor}) is not accepted; write the value out")
        if event.anchor is not None:
            raise _Refused(where, event.start_mark, f"an anchor (&{event.anchor}) is not accepted; write the value out")
        tag = getattr(event, "tag", None)
        if tag not in (None, "!"):
            shown = tag.replace("tag:yaml.org,2002:", "!!")
            raise _Refused(where, event.start_mark, f"an explicit tag ({shown}) is not accepted; write a plain value")
        self._nodes += 1
        if self._nodes > MAX_NODES:
            raise _Refused(where, event.start_mark, f"the file holds more than {MAX_NODES} values")
        if len(path) > MAX_DEPTH:
            raise _Refused(where, event.start_mark, f"nested more than {MAX_DEPTH} levels deep")
        self._path = list(path)
        try:
            return super().compose_node(parent, index)
        finally:
            self._path = list(path[:-1])

    def construct_yaml_int(self, node):
        return int(node.value)

    def construct_yaml_float(self, node):
        value = node.value.lower()
        if value.endswith(".inf"):
            return -math.inf if value.startswith("-") else math.inf
        return math.nan if value == ".nan" else float(value)


_ClaimLoader.add_constructor(_INT, _ClaimLoader.construct_yaml_int)
_ClaimLoader.add_constructor(_FLOAT, _ClaimLoader.construct_yaml_float)
for _tag, _pattern, _first in (
    ("tag:yaml.org,2002:null", r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""]),
    ("tag:yaml.org,2002:bool", r"^(?:true|True|TRUE|false|False|FALSE)$", list("tTfF")),
    (_INT, r"^[-+]?(?:0|[1-9][0-9]*)$", list("-+0123456789")),
    (
        _FLOAT,
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*|[0-9]+(?:\.[0-9]*)?[eE][-+]?[0-9]+|\.[0-9]+[eE][-+]?[0-9]+)"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
        list("-+.0123456789"),
    ),
):
    _ClaimLoader.add_implicit_resolver(_tag, re.compile(_pattern), _first)


def _walk(node, path: tuple, texts: dict, problems: list[str]) -> None:
    """Record every scalar's literal text by path; find duplicate keys, keys that are not text, merge keys
    and integers too long to read."""
    if isinstance(node, yaml.MappingNode):
        seen: dict[str, int] = {}
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else str(key_node)
            line = key_node.start_mark.line + 1
            where = loc_text(path + (key,))
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag != _STR:
                problems.append(
                    f"{loc_text(path)}: a key must be text, got {shorten(key)} on line {line} (put it in quotes)"
                )
                continue
            if key == "<<" and key_node.style is None:
                problems.append(f"{where}: a merge key ('<<', line {line}) is not accepted; write the keys out")
                continue
            if key in seen:
                problems.append(f"{where}: duplicate key (lines {seen[key]} and {line}); a key may appear once")
            seen[key] = line
            _walk(value_node, path + (key,), texts, problems)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _walk(item, path + (i,), texts, problems)
    elif isinstance(node, yaml.ScalarNode):
        texts[path] = node.value
        if node.tag == _STR and node.style is None and is_yaml11_date(node.value):
            problems.append(
                f'{loc_text(path)}: the date {node.value} must be written in quotes ("{node.value}", line '
                f"{node.start_mark.line + 1}): without them a YAML 1.1 reader takes it for a date, while this one "
                "reads every plain value but numbers, booleans and null as text"
            )
        digits = len(node.value.lstrip("+-"))
        if node.tag == _INT and digits > MAX_INT_DIGITS:
            problems.append(
                f"{loc_text(path)}: must be an integer of at most {MAX_INT_DIGITS} digits, got one of {digits} digits"
            )


_YAML11 = yaml.resolver.Resolver()  # PyYAML's own YAML 1.1 resolver: what most readers make of a plain value


def is_yaml11_date(value: str) -> bool:
    """Whether a YAML 1.1 reader would read the plain value ``value`` as a date or time (``2025-02-06``)."""
    return _YAML11.resolve(yaml.ScalarNode, value, (True, False)) == "tag:yaml.org,2002:timestamp"


def _check_values(obj, path: tuple, problems: list[str]) -> None:
    """Every number finite; no text (key or value) with a control character, bidi override or lone surrogate."""
    if isinstance(obj, float) and not math.isfinite(obj):
        problems.append(f"{loc_text(path)}: must be a finite number, got {obj!r}")
    elif isinstance(obj, str):
        bad = forbidden_char(obj)
        if bad:
            problems.append(
                f"{loc_text(path)}: must be text without control characters (escape, bell, NUL, ...), "
                f"bidirectional overrides or lone surrogates; found {bad} in {shorten(obj)}"
            )
    elif isinstance(obj, dict):
        for k, v in obj.items():
            if isinstance(k, str) and forbidden_char(k):
                problems.append(
                    f"{loc_text(path)}: the key {shorten(k)} holds {forbidden_char(k)}, a forbidden character"
                )
            _check_values(v, path + (k,), problems)
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            _check_values(v, path + (i,), problems)


def _one_line(text: str, limit: int = 400) -> str:
    """A message of the YAML reader on one line, its forbidden characters shown as escapes, cut to ``limit``."""
    text = " ".join(text.split())
    text = "".join(c if not forbidden_char(c) else f"\\u{ord(c):04x}" for c in text)
    return text if len(text) <= limit else text[:limit] + "…"


def read_claim_bytes(path: Path) -> bytes:
    """The bytes of a claim file: a regular file of at most :data:`MAX_CLAIM_BYTES`, or a :class:`SpecError`."""
    try:
        return read_regular_file(path, limit=MAX_CLAIM_BYTES)
    except FileNotFoundError:
        raise SpecError(path, ["the file does not exist"]) from None
    except FileRefused as exc:
        raise SpecError(path, [f"the claim file {exc.reason}; a claim file is a YAML text file of a few KB"]) from None


#: Characters the YAML reader refuses outright (NUL, the other C0 controls but tab and line breaks, DEL, C1).
_UNREADABLE = re.compile("[^\t\n\r\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_MARK = "\ue000"  # stands in for such a character while the key that holds it is looked for


def _key_holding(text: str) -> str | None:
    """The path of the first value or key holding :data:`_MARK` once ``text`` is read, if it can be read."""
    loader = _ClaimLoader(text)
    try:
        node = loader.get_single_node()
        found: list = []
        problems: list[str] = []
        _walk(node, (), {}, problems)
        if node is None or problems:  # nothing to look in, or an integer too long to construct
            return None
        stack = [((), loader.construct_document(node))]
        while stack and not found:
            where, obj = stack.pop()
            if isinstance(obj, dict):
                found += [where for k in obj if isinstance(k, str) and _MARK in k]  # a key: where it is
                stack += [(where + (k,), v) for k, v in reversed(list(obj.items()))]
            elif isinstance(obj, list):
                stack += [(where + (i,), v) for i, v in reversed(list(enumerate(obj)))]
            elif isinstance(obj, str) and _MARK in obj:
                found.append(where)
        return loc_text(found[0]) if found else None
    except yaml.YAMLError:
        return None
    finally:
        loader.dispose()


def _unreadable_char(text: str) -> str | None:
    """The problem of the first character no claim file may hold raw (a NUL, an escape, ...), with its key."""
    m = _UNREADABLE.search(text)
    if m is None:
        return None
    line = text.count("\n", 0, m.start()) + 1
    column = m.start() - (text.rfind("\n", 0, m.start()) + 1) + 1
    where = _key_holding(_UNREADABLE.sub(_MARK, text)) if _MARK not in text else None
    return (
        f"{where or '(top level)'}: holds the control character U+{ord(m.group()):04X} (line {line}, column "
        f"{column}); a claim file is plain text without control characters but tab and line breaks"
    )


def read_claim_yaml(path: Path) -> tuple[Any, dict]:
    """The mapping a claim file holds, and the literal text of every scalar by its path in the file; a
    :class:`~harness.core.errors.SpecError` naming every problem of the reading itself."""
    data = read_claim_bytes(path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SpecError(path, [f"not UTF-8 text (byte {data[exc.start]:#04x} at offset {exc.start})"]) from None
    bad = _unreadable_char(text)
    if bad:
        raise SpecError(path, [bad])
    texts: dict = {}
    problems: list[str] = []
    loader = None
    try:
        loader = _ClaimLoader(text)
        node = loader.get_single_node()
        if node is not None:
            _walk(node, (), texts, problems)
        if problems:
            raise SpecError(path, problems)
        raw = loader.construct_document(node) if node is not None else None
    except _Refused as exc:
        raise SpecError(path, [exc.line()]) from None
    except yaml.YAMLError as exc:
        raise SpecError(path, [f"not valid YAML: {_one_line(str(exc))}"]) from None
    finally:
        if loader is not None:
            loader.dispose()
    if not isinstance(raw, dict):
        raise SpecError(path, [f"(top level): expected a mapping of keys, got {type(raw).__name__}"])
    _check_values(raw, (), problems)
    if problems:
        raise SpecError(path, problems)
    return raw, texts
