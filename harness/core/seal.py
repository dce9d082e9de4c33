"""Seals: the sha256 of a committed file's own content, stored in it and checked whenever it is read.

Run records (``reports/<id>.json``, in their ``build.content``) and coverage studies
(``reports/calibration/<id>.json``, in their ``seal``) carry one. A seal is a digest that anyone can
recompute, not a signature: it catches an edit made without recomputing it (a hand edit, a merge that
took lines from two versions, a tool that rewrote numbers), so such a file is refused instead of
believed; it does not stop a forger who recomputes it (git history and review are there for that).

The digest is taken of the JSON value (keys sorted, Python's default separators, UTF-8), so it does
not depend on the file's indentation or key order, only on what a reader gets.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

__all__ = ["digest", "state", "why_not", "SEAL_KEY", "sealed_text", "seal_problem"]

#: The top-level key that holds the seal of a sealed JSON file other than a run record (a coverage study).
SEAL_KEY = "seal"


def digest(value: Any) -> str:
    """sha256 of ``value``'s canonical JSON text (sorted keys, default separators, UTF-8; NaN refused). Records
    sealed since #21 carry this digest: changing the text it is taken of would break every seal there is."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def state(stored: Any, body: Any) -> str:
    """ "sealed" (``stored`` is the digest of ``body``), "unsealed" (no digest stored) or "edited"."""
    if stored is None:
        return "unsealed"
    return "sealed" if isinstance(stored, str) and stored == digest(body) else "edited"


def why_not(found: str, what: str) -> str | None:
    """Why a file in ``found`` state (:func:`state`) cannot be believed, in words, or None when it can."""
    if found == "sealed":
        return None
    if found == "unsealed":
        return f"the {what} carries no seal (the digest of its content): written before seals, or edited"
    return f"the {what} was edited after it was written (its content does not match the seal stored in it)"


def sealed_text(value: dict) -> str:
    """``value`` with its seal under :data:`SEAL_KEY`, as JSON text (insertion order, one-space indent, final
    newline); ``value`` itself must not hold the key."""
    if SEAL_KEY in value:
        raise ValueError(f"a value to seal may not hold the key {SEAL_KEY!r}")
    return json.dumps({**value, SEAL_KEY: digest(value)}, indent=1, ensure_ascii=False, allow_nan=False) + "\n"


def seal_problem(raw: Any, what: str) -> tuple[str, str | None]:
    """``(state, why not)`` of a parsed file sealed by :func:`sealed_text`."""
    if not isinstance(raw, dict):
        return "edited", f"the {what} is not a JSON object"
    body = {k: v for k, v in raw.items() if k != SEAL_KEY}
    found = state(raw.get(SEAL_KEY), body)
    return found, why_not(found, what)
