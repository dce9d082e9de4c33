"""``docs/claim-fields.md``: every field of a claim file, generated from the schema.

The page is the reference beside the guide ``docs/claim-files.md``: for each part of a claim file (the
pydantic models of :mod:`harness.claimfiles.spec` and :mod:`harness.claimfiles.multiverse_spec`), and for
each registered protocol's ``params`` and its controls' ``params``, a table of the fields with their type,
whether they are required or their default, their constraints and their description. A field whose schema carries no
description is listed as *undescribed*: this module words nothing the schema does not say.

Usage::

    python -m harness.claimfiles.claim_fields_doc > docs/claim-fields.md
    python -m harness.claimfiles.claim_fields_doc --check      # exit 1 when docs/claim-fields.md is not its output

No module of the harness imports this one, and no claim depends on it (:data:`harness.core.claimslock.NEVER`).
"""

from __future__ import annotations

import argparse
import inspect
import re
import sys
import types
import typing
from pathlib import Path

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from ..core.paths import PROJECT_ROOT, shown
from ..core.schema import Count, IsoDate, Label, Number, RelativePath, Text
from .registry import PROTOCOLS
from .spec import Claim

__all__ = ["page", "main", "DOC"]

DOC = PROJECT_ROOT / "docs" / "claim-fields.md"

#: The typed building blocks of :mod:`harness.core.schema`, by the name the page gives them.
ALIASES = (
    (Label, "label"),
    (Text, "text"),
    (Number, "number"),
    (Count, "integer"),
    (IsoDate, "date"),
    (RelativePath, "relative path"),
)
PLAIN = {str: "string", int: "integer", float: "float", bool: "boolean", typing.Any: "any"}

HEAD = """\
# Claim file fields (generated)

Generated from the schema by `python -m harness.claimfiles.claim_fields_doc`; do not edit (a test compares this
page with the generator's output). The guide is [claim-files.md](claim-files.md). A field whose schema
carries no description is marked *undescribed*; the guide, or the text above a table, may say more.

The types, from `harness/core/schema.py`: a **label** is one line of text without control characters; a
**text** is prose (folded to one paragraph); a **number** is a finite number, never a boolean or a quoted
number; an **integer** is a whole number, never a boolean; a **date** is a quoted `YYYY-MM-DD`; a
**relative path** is a path that stays inside its folder. No key outside these tables is accepted.
"""
PROTOCOLS_HEAD = (
    "`params:`, and each control's `params:`, take the fields of the protocol the claim names, in the order"
    " of `harness/claimfiles/registry.py`. Fields a protocol shares with others (the leaderboard's table, compute axis"
    " and estimator settings) are listed under each protocol that takes them."
)


def _role(m: re.Match) -> str:
    tilde, name = m.groups()
    return f"`{name.split('.')[-1] if tilde else name}`"


def _rst(text: str) -> str:
    """Markdown from the reStructuredText of a docstring: ``x`` and :role:`~a.b` as code spans."""
    return re.sub(r":[a-z]+:`(~?)([^`]+)`", _role, text).replace("``", "`")


def _doc(model: type[BaseModel]) -> str:
    doc = model.__dict__.get("__doc__")
    return _rst(inspect.cleandoc(doc)) if doc else ""


def _alias(tp) -> str | None:
    return next((name for alias, name in ALIASES if tp == alias), None)


def type_text(tp, links: dict) -> str:
    """The field's type in words: ``list of label``, ``one of `<`, `<=```, a link to a nested part."""
    if (name := _alias(tp)) is not None:
        return name
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is typing.Annotated:
        return type_text(args[0], links)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(type_text(a, links) for a in args if a is not type(None))
    if origin is typing.Literal:
        return "one of " + ", ".join(f"`{a}`" for a in args)
    if origin is list:
        return f"list of {type_text(args[0], links)}"
    if origin is tuple:  # a claim file writes a list
        return (
            f"list of {type_text(args[0], links)}"
            if args[-1] is Ellipsis
            else f"list [{', '.join(type_text(a, links) for a in args)}]"
        )
    if origin is dict:
        return f"mapping of {type_text(args[0], links)} to {type_text(args[1], links)}"
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return f"[{tp.__name__}](#{links[tp]})" if tp in links else tp.__name__
    return PLAIN.get(tp, getattr(tp, "__name__", str(tp)))


def _default(f: FieldInfo) -> str:
    if f.is_required():
        return "required"
    value = f.default_factory() if f.default_factory is not None else f.default
    if value is None or value is PydanticUndefined:
        return "optional"
    return f"`{str(value).lower() if isinstance(value, bool) else value}`"


_BOUNDS = {"ge": ">=", "gt": ">", "le": "<=", "lt": "<"}


def _constraints(f: FieldInfo) -> str:
    out = []
    for m in f.metadata:
        for attr, sign in _BOUNDS.items():
            if getattr(m, attr, None) is not None:
                out.append(f"{sign} {getattr(m, attr)}")
        if getattr(m, "min_length", None) is not None:
            out.append(f"length >= {m.min_length}")
        if getattr(m, "max_length", None) is not None:
            out.append(f"length <= {m.max_length}")
        if getattr(m, "pattern", None) is not None:
            out.append(f"matches `{m.pattern}`")
    return ", ".join(out)


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def table(model: type[BaseModel], links: dict) -> list[str]:
    """The rows of one part: ``| field | type | default | constraints | description |``."""
    hints = typing.get_type_hints(model, include_extras=True)
    rows = ["| field | type | required or default | constraints | description |", "| --- | --- | --- | --- | --- |"]
    for name, f in model.model_fields.items():
        described = _cell(f.description) if f.description else "*undescribed*"
        cells = (f"`{name}`", type_text(hints.get(name, f.annotation), links), _default(f), _constraints(f), described)
        rows.append("| " + " | ".join(_cell(c) if i < 4 else c for i, c in enumerate(cells)) + " |")
    return rows


def _parts(root: type[BaseModel], where: str) -> list[tuple[type[BaseModel], list[str]]]:
    """Every model reachable from ``root`` through its fields, in field order, each with where it sits in
    the file (``targets[]``, ``bootstrap.comparisons[]``; a model used in two places lists both)."""
    found: dict[type[BaseModel], list[str]] = {root: [where]}
    queue = [(root, where)]
    while queue:
        model, at = queue.pop(0)
        hints = typing.get_type_hints(model)
        for name in model.model_fields:
            for sub, suffix in _nested(hints[name]):
                path = f"{at}.{name}{suffix}" if at else f"{name}{suffix}"
                if sub not in found:
                    found[sub] = []
                    queue.append((sub, path))
                found[sub].append(path)
    return list(found.items())


def _nested(tp, suffix: str = "") -> list[tuple[type[BaseModel], str]]:
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return [(tp, suffix)]
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (list, tuple):
        return _nested(args[0], suffix + "[]")
    if origin is dict:
        return _nested(args[1], suffix + ".<name>")
    return [hit for a in args for hit in _nested(a, suffix)]


def _anchor(title: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")


def _section(title: str, model: type[BaseModel], where: str, links: dict, level: str = "##") -> list[str]:
    out = [f"{level} {title}", "", f"Where: {where} (`{model.__module__}.{model.__name__}`).", ""]
    if doc := _doc(model):
        out += [doc, ""]
    return out + (table(model, links) if model.model_fields else ["No fields."]) + [""]


def _code(paths) -> str:
    return ", ".join(f"`{p}`" for p in paths)


def _protocol_parts(protocols) -> dict[type[BaseModel], tuple[list[str], list[str]]]:
    """The models nested in the protocols' parameters: each with where it sits and the protocols that use it."""
    nested: dict[type[BaseModel], tuple[list[str], list[str]]] = {}
    for name, protocol in protocols:
        roots = [(protocol.Params, "params")] + [(m, "controls[].params") for m in protocol.controls.values()]
        for root, where in roots:
            for model, paths in _parts(root, where)[1:]:
                at, users = nested.setdefault(model, ([], []))
                at += [p for p in paths if p not in at]
                users += [name] if name not in users else []
    return nested


def page() -> str:
    """The whole of ``docs/claim-fields.md``."""
    parts = [("Claim (the file)" if m is Claim else m.__name__, m, paths) for m, paths in _parts(Claim, "")]
    protocols = [(name, card.protocol) for name, card in PROTOCOLS.items()]
    nested = _protocol_parts(protocols)
    links = {m: _anchor(title) for title, m, _ in parts} | {m: _anchor(m.__name__) for m in nested}
    lines = [HEAD]
    for title, model, paths in parts:
        lines += _section(title, model, "the top level of the file" if model is Claim else _code(paths), links)
    lines += ["# Each protocol's parameters", "", PROTOCOLS_HEAD, ""]
    for name, protocol in protocols:
        lines += _protocol(name, protocol, links)
    if nested:
        lines += ["## Parts of the protocols' parameters", ""]
        for model, (paths, users) in nested.items():
            where = f"{_code(paths)} of {_code(users)}"
            lines += _section(model.__name__, model, where, links, level="###")
    return "\n".join(lines).rstrip("\n") + "\n"


def _protocol(name: str, protocol, links: dict) -> list[str]:
    out = _section(f"Protocol `{name}`", protocol.Params, "`params`", links)
    for kind, model in protocol.controls.items():
        where = f"`controls[].params` of a control with `control: {kind}`"
        out += _section(f"Control `{kind}` of `{name}`", model, where, links, level="###")
    return out


def main(argv: list[str] | None = None, doc: Path = DOC) -> int:
    """Print the page, or with ``--check`` exit 1 (saying so on standard error) when ``doc`` is not the page."""
    parser = argparse.ArgumentParser(
        prog="python -m harness.claimfiles.claim_fields_doc", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--check", action="store_true", help=f"exit 1 when {shown(doc)} is not this output")
    args = parser.parse_args(argv)
    text = page()
    if not args.check:
        sys.stdout.write(text)
        return 0
    if doc.is_file() and doc.read_text(encoding="utf-8") == text:
        return 0
    where = shown(doc)
    print(
        f"{where}: not the output of the schema's generator; "
        f"run: python -m harness.claimfiles.claim_fields_doc > {where}",
        file=sys.stderr,
    )
    return 1


if __name__ == "__main__":
    sys.exit(main())
