"""The build's lock file, ``claims.lock`` beside the reports, as DVC's ``dvc.lock``: for each claim and coverage
study, its dependencies as declared here (nothing inferred from imports; docs/build.md has the table) by hash,
and the sha256 of its outputs. Paths are relative, keys sorted, no time and no host.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from .datalock import MAX_FILE_BYTES, FileRefused, read_regular_file
from .fileio import atomic_write_text
from .paths import PROJECT_ROOT, paper_file

LOCK_NAME = "claims.lock"
#: What every record and every coverage study is computed with: the foundation, the math, the protocols' shared core.
SHARED_CODE = ("harness/__init__.py", "harness/core/**", "harness/stats/**", "harness/protocols/*.py")
#: The code every claim's record comes from: the shared code, reading the claim file, judging, resampling and the
#: run itself. The registry (a new protocol re-runs no other claim) and the writer of docs/claim-fields.md are in
#: none.
RECORD_CODE = (
    *SHARED_CODE,
    "harness/claimfiles/**",
    "harness/verdicts/**",
    "harness/resampling/**",
    "harness/build/runner.py",
    "harness/rendering/figures.py",
)
#: The authors' arm: the checkout, the confinement, the adapters and their launcher.
AUTHORS_CODE = ("harness/authors/**",)
#: A protocol folder's files that measure or draw (figures are drawn when the claim runs; the rest of the
#: folder words the report).
STUDIED = ("__init__.py", "protocol.py", "quantities.py")  # what a coverage study measures with
MEASURING = (*STUDIED, "adapter.py", "figures.py")
#: What a report is drawn with, besides its folder's :data:`REPORTING` files.
RENDER_CODE = ("templates/**", "harness/rendering/**")
REPORTING = ("results.py",)
#: What a coverage study measures with, besides its protocol's :data:`STUDIED` files.
STUDY_CODE = (*SHARED_CODE, "harness/resampling/calibration.py")
#: What an adapter's run may load of the harness (relative to the package), besides its folder's
#: ``__init__.py``, ``quantities.py`` and ``adapter.py``: the key of its cached answers
#: (:mod:`harness.authors.upstream`), which refuses an answer whose run loaded anything else.
ADAPTER_CODE = (
    "__init__.py",
    "authors/__init__.py",
    "authors/audit.py",
    "authors/adapters/**",
    "core/__init__.py",
    "core/quantities.py",
    "protocols/__init__.py",
    "protocols/card.py",
    "stats/__init__.py",
    "stats/losscheck.py",
)
#: Files under a declared folder that no stage depends on.
NEVER = frozenset({"harness/claimfiles/registry.py", "harness/claimfiles/claim_fields_doc.py"})


def file_sha(path: Path) -> str | None:
    """The sha256 of a regular file, or None (missing, or not a regular file of at most
    :data:`~harness.core.datalock.MAX_FILE_BYTES`: then whoever reads it next says why)."""
    try:
        return hashlib.sha256(read_regular_file(path, limit=MAX_FILE_BYTES)).hexdigest()
    except (FileNotFoundError, FileRefused):
        return None


def files_of(pattern: str, root: Path = PROJECT_ROOT) -> list[Path]:
    """The files a declared pattern names under ``root``: one file, ``folder/*.py`` or ``folder/**`` (every
    file below it but compiled Python), sorted."""
    found = root.glob(pattern + "/*" if pattern.endswith("/**") else pattern)
    return sorted(
        f for f in found if f.is_file() and "__pycache__" not in f.parts and f.relative_to(root).as_posix() not in NEVER
    )


def digest(files, root: Path = PROJECT_ROOT) -> dict[str, str]:
    """``{path relative to root: sha256}`` of ``files``, sorted by path."""
    return {f.relative_to(root).as_posix(): file_sha(f) for f in sorted(files)}


def code_hashes(patterns) -> dict[str, str | None]:
    """Each declared pattern's hash (over its files' paths and bytes), or None when it names no file; sorted."""
    rows = {pattern: digest(files_of(pattern)) for pattern in sorted(patterns)}
    return {
        p: hashlib.sha256(json.dumps(r, sort_keys=True).encode()).hexdigest() if r else None for p, r in rows.items()
    }


def _folder(protocol: str, names) -> tuple[str, ...]:
    return tuple(f"harness/protocols/{protocol}/{n}" for n in names)


def claim_deps(
    claim_file: Path, protocol: str, inputs, upstream: str | None, lock, pins, packages: dict, study: Path, paper=None
) -> dict:
    """What a claim's record is made from, by hash: ``lock`` the data lock, ``pins`` the upstream pins,
    ``study`` its coverage study's JSON file, ``paper`` the name of its paper's file (its identity is in the
    record)."""
    pin = pins[upstream].model_dump(mode="json") if upstream and pins and upstream in pins else None
    code = RECORD_CODE + _folder(protocol, MEASURING) + (AUTHORS_CODE if upstream else ())
    return {
        "claim": file_sha(claim_file),
        "paper": file_sha(paper_file(claim_file, paper)) if paper else None,
        "data": {name: lock.tables[name].sha256 for name in sorted(inputs) if name in lock.tables},
        "code": code_hashes(code),
        "packages": packages,
        "upstream": {upstream: pin} if upstream else None,
        "study": file_sha(study),
    }


def render_deps(protocol: str) -> dict:
    """What a claim's report is drawn with, by hash."""
    return code_hashes(RENDER_CODE + _folder(protocol, REPORTING))


def study_deps(protocol: str, design: dict, inputs, lock, packages: dict) -> dict:
    """What a coverage study is made from, by hash: ``design`` its parameters and bootstrap block; ``packages`` the
    versions it is computed, worded and drawn with, as a record's."""
    return {
        "design": hashlib.sha256(json.dumps(design, sort_keys=True).encode()).hexdigest(),
        "data": {name: lock.tables[name].sha256 for name in sorted(inputs) if name in lock.tables},
        "code": code_hashes(STUDY_CODE + _folder(protocol, STUDIED)),
        "packages": packages,
    }


def read_lock(reports: Path) -> dict:
    """The lock of the reports folder ``reports`` (empty when it has none or it cannot be read, as a bounded
    regular file: then every claim and study is stale, and says so)."""
    try:
        data = json.loads(read_regular_file(Path(reports) / LOCK_NAME, limit=MAX_FILE_BYTES))
    except (OSError, FileRefused, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def entry(reports: Path, kind: str, cid: str) -> dict | None:
    """The lock's entry of the claim (``kind`` "claims") or study ("studies") ``cid``, or None."""
    found = read_lock(reports).get(kind, {})
    found = found.get(cid) if isinstance(found, dict) else None
    return found if isinstance(found, dict) else None


def update(reports: Path, kind: str, cid: str, value: dict) -> None:
    """Set one entry of the lock (the caller holds the project's write lock)."""
    data = read_lock(reports)
    data.setdefault(kind, {})[cid] = value
    atomic_write_text(Path(reports) / LOCK_NAME, json.dumps(data, indent=1, sort_keys=True) + "\n")


def edited(reports: Path, found: dict | None, name: str) -> str | None:
    """Why the output ``name`` (relative to ``reports``) of the lock entry ``found`` cannot be believed, or None:
    not in the lock, or its bytes are not those the lock names."""
    want = (found or {}).get("outs", {}).get(name)
    if want is None:
        return f"{name} is not in {LOCK_NAME}"
    if file_sha(Path(reports) / name) != want:
        return f"{name} was edited after it was written (its sha256 is not the one in {LOCK_NAME})"
    return None


def changed(old: dict, new: dict) -> list[str]:
    old, new = old or {}, new or {}
    return sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))


def listed(names: list[str], limit: int = 4) -> str:
    return ", ".join(names[:limit]) + (f" and {len(names) - limit} more" if len(names) > limit else "")


def stale_reasons(stored: dict | None, now: dict) -> list[str]:
    """Why the dependencies ``now`` are not those ``stored`` in the lock, in words (empty: up to date)."""
    if not stored:
        return [f"not in {LOCK_NAME}"]
    words = {"claim": "claim file changed", "paper": "its paper's file changed", "design": "its design changed"}
    out = [said for key, said in words.items() if stored.get(key) != now.get(key)]
    if data := changed(stored.get("data"), now.get("data")):
        out.append(f"data changed: {listed(data)}")
    if code := changed(stored.get("code"), now.get("code")):
        out.append(f"harness code changed: {listed(code)}")
    if stored.get("upstream") != now.get("upstream"):
        out.append("upstream pin changed")
    if stored.get("study") != now.get("study"):
        out.append("its coverage study changed")
    old, new = stored.get("packages") or {}, now.get("packages") or {}
    if pk := [f"{k} {old.get(k)} -> {new.get(k)}" for k in changed(old, new)]:
        out.append(f"package versions changed: {listed(pk)}")
    return out
