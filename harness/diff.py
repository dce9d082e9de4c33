"""``harness diff``: what changed in the records since a git ref (verdicts, targets, controls).

Records of the first layout (schema 1) are compared on their values; a
target's move counts when it exceeds a fraction of its tolerance (one
without a tolerance: :data:`RELATIVE_MOVE` of its size).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from .paths import PROJECT_ROOT
from .record import Record, read_record

__all__ = ["compare", "diff_records"]


def _comparable(rec: Record) -> dict:
    """What ``diff`` compares: the verdict, each target's values per arm and outcome, each control's result."""
    return {
        "schema": rec.schema_version,
        "verdict": rec.verdict.verdict,
        "targets": {
            f"{t.quantity}|{t.relation}": {
                "title": t.title,
                "reimpl": t.reimpl.value,
                "upstream": t.upstream.value,
                "outcome": t.outcome,
            }
            for t in rec.targets
        },
        "controls": {c.id: c.reimpl.broke for c in rec.controls},
    }


def _comparable_v1(d: dict) -> dict:
    """The same view of a record in the first layout (``"schema": 1``), so that a diff across the redesign
    shows whether any number moved. Its targets carry no outcome: only values are compared."""
    return {
        "schema": d.get("schema"),
        "verdict": d.get("verdict"),
        "targets": {
            f"{t['name']}|{t['relation']}": {
                "title": t.get("label") or t["name"],
                "reimpl": t.get("reimpl"),
                "upstream": t.get("upstream"),
                "outcome": None,
            }
            for t in d.get("targets", [])
            if isinstance(t, dict) and "name" in t and "relation" in t
        },
        "controls": {c["id"]: c.get("broke") for c in d.get("controls", []) if isinstance(c, dict) and "id" in c},
    }


def _git_record(ref: str, rel: str) -> tuple[dict | None, str]:
    """The record at ``ref`` in the form :func:`diff_records` compares, or ``None`` and why not."""
    res = subprocess.run(["git", "show", f"{ref}:{rel}"], cwd=PROJECT_ROOT, capture_output=True, text=True)
    if res.returncode != 0:
        return None, f"no record at {ref}"
    try:
        data = json.loads(res.stdout)
    except ValueError as exc:
        return None, f"the record at {ref} is not JSON ({exc})"
    try:
        return _comparable(Record.model_validate(data)), ""
    except (ValueError, TypeError):
        pass
    if isinstance(data, dict) and data.get("schema") == 1:
        return _comparable_v1(data), ""
    return None, f"the record at {ref} is in a layout this harness does not read"


#: A target without a tolerance (a relation such as ``p > 0.05``) has moved when its value changes by more
#: than this share of its size: below it, the change is the optimiser's rounding, not a new result.
RELATIVE_MOVE = 1e-4


def _moved(a: float, b: float, tolerance: float | None, fraction: float) -> float:
    """How far a target's value may move before ``diff`` reports it."""
    if tolerance:
        return tolerance * fraction
    return max(RELATIVE_MOVE * max(abs(a), abs(b)), 1e-12)


def compare(old: dict, rec: Record, *, fraction: float = 0.1) -> list[str]:
    """What changed from ``old`` (the :func:`_comparable` view of an earlier record) to ``rec``: one line each."""
    now = _comparable(rec)
    tolerance = {f"{t.quantity}|{t.relation}": t.tolerance for t in rec.targets}
    items = []
    if old["schema"] != now["schema"]:
        items.append(f"record layout {old['schema']} -> {now['schema']} (outcomes of targets not compared)")
    if old["verdict"] != now["verdict"]:
        items.append(f"verdict {old['verdict']} -> {now['verdict']}")
    for key, t in now["targets"].items():
        o = old["targets"].get(key)
        if o is None:
            items.append(f"target added: {t['title']}")
            continue
        for arm in ("reimpl", "upstream"):
            a, b = o[arm], t[arm]
            if (a is None) != (b is None) or (a is not None and abs(a - b) > _moved(a, b, tolerance[key], fraction)):
                items.append(f"{t['title']} ({arm}): {a} -> {b}")
        if o["outcome"] is not None and o["outcome"] != t["outcome"]:
            items.append(f"{t['title']}: {o['outcome']} -> {t['outcome']}")
    items += [f"target removed: {o['title']}" for key, o in old["targets"].items() if key not in now["targets"]]
    for cid, broke in now["controls"].items():
        if cid in old["controls"] and old["controls"][cid] != broke:
            items.append(f"control {cid}: broke {old['controls'][cid]} -> {broke}")
    return items


def diff_records(out: Path, ref: str, *, fraction: float = 0.1) -> tuple[list[str], bool]:
    """Verdicts that changed, targets that moved by more than ``fraction`` of their tolerance, controls
    that changed outcome: the current records against those at git ``ref``."""
    lines, changed = [], False
    for f in sorted(Path(out).glob("*.json")):
        rec = read_record(f)
        cid = rec.claim.id
        try:
            rel = f.resolve().relative_to(PROJECT_ROOT).as_posix()
        except ValueError:
            old, why = None, "the record is outside the repository"
        else:
            old, why = _git_record(ref, rel)
        if old is None:
            lines.append(f"{cid}: not compared ({why})")
            changed = True
            continue
        items = compare(old, rec, fraction=fraction)
        if items:
            changed = True
            lines.append(f"{cid}:")
            lines += [f"  {i}" for i in items]
        else:
            lines.append(f"{cid}: unchanged")
    return lines, changed
