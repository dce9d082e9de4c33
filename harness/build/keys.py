"""``make claims`` as a build: what each report depends on, and why a claim must run again.

In the manner of DVC's lock file and Snakemake's rerun triggers, every record
stores the hashes of what produced it (``Record.build``), in two parts:

``run``
    the claim file, the input tables (their locked sha256), the harness code
    the claim runs through (:mod:`harness.core.codegraph`: the shared core, the
    ``__init__``, ``protocol.py`` and ``quantities.py`` of its protocol's
    folder and what they import, the adapter's closure and the launcher), the
    upstream pin and the package versions. A change here re-runs the claim.
    Another protocol's folder, and the registry that lists the folders, are
    in no claim's key: adding or editing a protocol re-runs only its claims.
``render``
    the templates the report is drawn with, the rendering code and the
    folder's ``figures.py``. A change here only re-renders the report from
    its record.

:func:`stale_reasons` compares a record's stored hashes with today's and says,
in words, what changed. Nothing here runs a claim.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from ..core.codegraph import HARNESS, closure, digest, run_files
from ..core.paths import PROJECT_ROOT
from ..core.provenance import package_versions

__all__ = [
    "dependencies",
    "claim_dependencies",
    "study_sha",
    "render_dependencies",
    "stale_reasons",
    "code_files",
    "render_files",
    "template_files",
    "RENDER_CODE",
]

TEMPLATES = PROJECT_ROOT / "templates"
#: The code that turns a record into a report and its figures (besides the protocol's own ``figures.py``).
RENDER_CODE = ("rendering/render.py", "rendering/figures.py")


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _card(protocol: str):
    from ..claimfiles.registry import PROTOCOLS

    return PROTOCOLS[protocol]


def code_files(protocol: str) -> list[Path]:
    """:func:`harness.core.codegraph.run_files` of the protocol named ``protocol``."""
    return run_files(_card(protocol))


def render_files(protocol: str) -> list[Path]:
    """The code a report of ``protocol`` is drawn with: the rendering core and the folder's ``figures.py``."""
    roots = [HARNESS / f for f in RENDER_CODE]
    figures = _card(protocol).module_file("figures")
    return sorted(closure(roots + ([figures] if figures else [])))


def template_files(protocol: str) -> list[Path]:
    """The protocol's template and every template it extends, includes or imports."""
    out, todo = set(), [TEMPLATES / _card(protocol).template]
    while todo:
        t = todo.pop()
        if t in out or not t.is_file():
            continue
        out.add(t)
        todo += [
            TEMPLATES / n
            for n in re.findall(r'{%-?\s*(?:extends|include|import|from)\s+"([^"]+)"', t.read_text(encoding="utf-8"))
        ]
    return sorted(out)


def dependencies(spec, lock, pins: dict | None) -> dict:
    """What a claim's record and report depend on, by hash: ``{"run": {...}, "render": {...}}``."""
    c = spec.claim
    return claim_dependencies(spec.path, spec.id, spec.protocol.name, c.inputs, c.upstream, lock, pins)


def claim_dependencies(path: Path, claim_id: str, protocol: str, inputs, upstream, lock, pins: dict | None):
    """:func:`dependencies` from what a claim names (its file, id, protocol, input tables and pin): the same
    hashes, without reading the claim file (a record holds the rest). None when the protocol is not
    registered."""
    from ..claimfiles.registry import PROTOCOLS

    if protocol not in PROTOCOLS:
        return None
    pin = None
    if upstream is not None and pins is not None and upstream in pins:
        pin = pins[upstream].model_dump(mode="json")
    run = {
        "claim": _sha(path),
        "data": {name: lock.tables[name].sha256 for name in inputs if name in lock.tables},
        "code": digest(code_files(protocol)),
        "upstream_pin": pin,
        "packages": package_versions(),
        "calibration": study_sha(claim_id),
    }
    return {"run": run, "render": render_dependencies(protocol)}


def study_sha(claim_id: str) -> str | None:
    """The claim's coverage study (its measured coverage goes into the record), by hash, or None."""
    path = PROJECT_ROOT / "reports" / "calibration" / f"{claim_id}.json"
    return _sha(path) if path.is_file() else None


def render_dependencies(protocol: str) -> dict:
    """The templates and drawing code a report of ``protocol`` is rendered with, by hash."""
    return {**digest(template_files(protocol)), **digest(render_files(protocol))}


def _changed(old: dict, new: dict) -> list[str]:
    return sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))


def _listed(names: list[str], limit: int = 4) -> str:
    return ", ".join(names[:limit]) + (f" and {len(names) - limit} more" if len(names) > limit else "")


def stale_reasons(stored: dict | None, now: dict) -> tuple[list[str], list[str]]:
    """``(run reasons, render reasons)``: why the claim must run again, and why it must be re-rendered.

    Both empty: the report is up to date.
    """
    if not stored or "run" not in stored:
        return ["no record of what produced the report"], []
    old, new = stored["run"], now["run"]
    run = []
    if old.get("claim") != new["claim"]:
        run.append("claim file changed")
    data = _changed(old.get("data", {}), new["data"])
    if data:
        run.append(f"data changed: {_listed(data)}")
    code = _changed(old.get("code", {}), new["code"])
    if code:
        run.append(f"harness code changed: {_listed(code)}")
    if old.get("upstream_pin") != new["upstream_pin"]:
        run.append("upstream pin changed")
    if old.get("calibration") != new.get("calibration"):
        run.append("its coverage study changed")
    pk_old, pk_new = old.get("packages", {}), new["packages"]
    pk = [f"{k} {pk_old.get(k)} -> {pk_new.get(k)}" for k in _changed(pk_old, pk_new)]
    if pk:
        run.append(f"package versions changed: {_listed(pk)}")
    render = _changed(stored.get("render", {}), now["render"])
    return run, ([f"template or rendering code changed: {_listed(render)}"] if render else [])
