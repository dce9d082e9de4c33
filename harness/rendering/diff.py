"""``harness diff``: what changed in the records since a git ref (verdicts, targets, controls)."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

from ..core.claimslock import LOCK_NAME, edited, entry
from ..core.errors import HarnessError
from ..core.paths import PROJECT_ROOT
from ..core.record import Record, read_record
from .render import agree, count_of, fmt_pct


def _comparable(rec: Record) -> dict:
    """What ``diff`` compares: the verdict, each target's values per arm and outcome, each control's result, the
    resampling's state and each ordering's state and measured error with its MC standard error."""
    return {
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
        "robustness": None
        if rec.robustness is None
        else {
            "state": rec.robustness.state,
            "orderings": {
                c["label"]: (c["state"], c["error"], c["error_mc_se"])
                for c in rec.robustness.facts.get("comparisons") or []
            },
        },
    }


def _git_show(ref: str, rel: str) -> bytes | None:
    res = subprocess.run(["git", "show", f"{ref}:{rel}"], cwd=PROJECT_ROOT, capture_output=True)
    return res.stdout if res.returncode == 0 else None


def _git_record(ref: str, rel: str) -> tuple[dict | None, str]:
    """The record at ``ref`` in the form :func:`diff_records` compares, or ``None`` and why not: one whose bytes
    are not those the lock at ``ref`` names is not compared, nor one from before the lock."""
    raw = _git_show(ref, rel)
    if raw is None:
        return None, f"no record at {ref}"
    try:
        lock = json.loads(_git_show(ref, (Path(rel).parent / LOCK_NAME).as_posix()) or b"{}")
        want = lock["claims"][Path(rel).stem]["outs"][Path(rel).name]
        rec = Record.model_validate_json(raw)
    except (ValueError, KeyError, TypeError):
        return None, "an older record layout"
    if hashlib.sha256(raw).hexdigest() != want:
        return None, f"the record at {ref} was edited after it was written (its sha256 is not the one in {LOCK_NAME})"
    return _comparable(rec), ""


#: A target without a tolerance (a relation such as ``p > 0.05``) has moved when its value changes by more
#: than this share of its size: below it, the change is the optimiser's rounding, not a new result.
RELATIVE_MOVE = 1e-4


def _moved(a: float, b: float, tolerance: float | None, fraction: float) -> float:
    """How far a target's value may move before ``diff`` reports it."""
    return tolerance * fraction if tolerance else max(RELATIVE_MOVE * max(abs(a), abs(b)), 1e-12)


def _apart(a, b, exact: bool, fmt=lambda x, d: f"{x:.{d}g}", digits=range(3, 18)) -> str:
    """``a -> b`` printed by ``fmt(x, d)`` at the fewest ``digits`` that tell them apart (significant digits,
    at least 3, by default); full precision if ``exact`` or when no number of digits does."""
    if not exact and a is not None and b is not None:
        for d in digits:
            sa, sb = fmt(a, d), fmt(b, d)
            if sa != sb:
                return f"{sa} -> {sb}"
    return f"{a!r} -> {b!r}"


def compare(old: dict, rec: Record, *, fraction: float = 0.1, exact: bool = False) -> tuple[list[str], int]:
    """What changed from ``old`` (the :func:`_comparable` view of an earlier record) to ``rec``: one line each,
    and how many values moved within their band (not listed; with ``exact`` every difference is listed)."""
    now = _comparable(rec)
    tolerance = {f"{t.quantity}|{t.relation}": t.tolerance for t in rec.targets}
    items, inside = [], 0
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
                items.append(f"{t['title']} ({arm}): {_apart(a, b, exact)}")
            elif a is not None and a != b:
                if exact:
                    items.append(f"{t['title']} ({arm}, within its band): {_apart(a, b, exact)}")
                else:
                    inside += 1
        if o["outcome"] != t["outcome"]:
            items.append(f"{t['title']}: {o['outcome']} -> {t['outcome']}")
    items += [f"target removed: {o['title']}" for key, o in old["targets"].items() if key not in now["targets"]]
    for cid, broke in now["controls"].items():
        if cid in old["controls"] and old["controls"][cid] != broke:
            items.append(f"control {cid}: broke {old['controls'][cid]} -> {broke}")
    ro, rn = old["robustness"], now["robustness"]
    if ro and rn:
        if ro["state"] != rn["state"]:
            items.append(f"resampling: {ro['state']} -> {rn['state']}")
        for label, (state, error, se) in rn["orderings"].items():
            prev = ro["orderings"].get(label)
            if prev is None:
                continue
            if prev[0] != state:
                items.append(f"resampling of {label}: {prev[0]} -> {state}")
            if prev[1] is None or error is None or prev[1] == error:
                continue
            moves = _apart(prev[1], error, exact, fmt=fmt_pct, digits=range(1, 16))  # as the report prints a share
            band = 2.0 * ((prev[2] or 0.0) ** 2 + (se or 0.0) ** 2) ** 0.5  # twice the MC s.e. of the difference
            if abs(error - prev[1]) > band:
                items.append(f"measured error of the decision on {label}: {moves}")
            elif exact:
                items.append(f"measured error of the decision on {label} (within twice its MC error): {moves}")
            else:
                inside += 1
    return items, inside


def diff_records(out: Path, ref: str, *, fraction: float = 0.1, exact: bool = False) -> tuple[list[str], bool]:
    """Verdicts that changed, targets that moved by more than ``fraction`` of their tolerance, controls
    that changed outcome: the current records against those at git ``ref``."""
    lines, changed = [], False
    for f in sorted(Path(out).glob("*.json")):
        rec = read_record(f)
        why = edited(out, entry(out, "claims", f.stem), f.name)
        if why is not None:  # exit 2
            raise HarnessError(f"{f}: {why}; run the claim again")
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
        items, inside = compare(old, rec, fraction=fraction, exact=exact)
        band = (
            f" ({count_of(inside, 'value')} moved within {agree(inside, 'its', 'their')} band, not shown: "
            "--exact shows them)"
            if inside
            else ""
        )
        if items:
            changed = True
            lines.append(f"{cid}:{band}")
            lines += [f"  {i}" for i in items]
        else:
            lines.append(f"{cid}: unchanged{band}")
    return lines, changed
