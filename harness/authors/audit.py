"""Source-line audit: do the cited lines of a checkout say what the claim says (a substring, or ``match: regex``)?
A file missing or unreadable, or a line past its end, is a failed entry with a reason, never an exception.
The entries are validated with the claim (``line`` >= 1, ``match`` one of the two: ``AuditEntry``)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any


def audit_entry(root: str | Path, entry: Mapping[str, Any]) -> dict:
    """Check one entry (``file`` relative to ``root``, ``line`` >= 1, ``expect``, optional ``constant`` and
    ``match``): its fields with the ``text`` of the line, ``found``, and ``reason`` (why not, else ``None``)."""
    file, line = str(entry["file"]), entry["line"]
    expect, kind = str(entry["expect"]), str(entry.get("match", "substring"))
    out = {"file": file, "line": line, "constant": entry.get("constant"), "expected": expect, "match": kind}
    out.update(text=None, found=False, reason=None)
    root = Path(root)
    path = root / file
    try:
        if not path.resolve().is_relative_to(root.resolve()):
            return out | {"reason": f"{file} is outside the checkout root"}
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return out | {"reason": f"{file} does not exist under {root}"}
    except (OSError, UnicodeDecodeError) as exc:
        return out | {"reason": f"{file} could not be read: {exc}"}
    if line > len(lines):
        return out | {"reason": f"{file} has {len(lines)} lines, line {line} is past the end"}
    out["text"] = text = lines[line - 1]
    try:
        out["found"] = re.search(expect, text) is not None if kind == "regex" else expect in text
    except re.error as exc:
        return out | {"reason": f"invalid regex {expect!r}: {exc}"}
    return out | {"reason": None if out["found"] else f"{file}:{line} does not contain {expect!r} ({kind})"}


def audit_source_lines(root: str | Path, entries: Iterable[Mapping[str, Any]]) -> dict:
    """Every entry's :func:`audit_entry`, in order, with ``n``, ``n_found`` and ``all_found``."""
    results = [audit_entry(root, e) for e in entries]
    n_found = sum(r["found"] for r in results)
    return {"entries": results, "n": len(results), "n_found": n_found, "all_found": n_found == len(results)}
