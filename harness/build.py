"""``make claims`` as a build: what each report depends on, and why a claim must run again.

In the manner of DVC's lock file and Snakemake's rerun triggers, every record
stores the hashes of what produced it (``Record.build``), in two parts:

``run``
    the claim file, the input tables (their locked sha256), the harness code
    the claim's protocol uses (the protocol module and everything it imports
    inside ``harness/``, the runner's own modules, the authors' adapter with
    its launcher and the modules it loads), the upstream pin and the package
    versions. A change here re-runs the claim.
``render``
    the templates the report is drawn with and the rendering code. A change
    here only re-renders the report from its record.

:func:`stale_reasons` compares a record's stored hashes with today's and says,
in words, what changed. Nothing here runs a claim.
"""

from __future__ import annotations

import ast
import hashlib
import re
from functools import cache
from pathlib import Path

from .paths import PROJECT_ROOT
from .provenance import package_versions

__all__ = ["dependencies", "render_dependencies", "stale_reasons", "code_files", "template_files", "RENDER_CODE"]

HARNESS = PROJECT_ROOT / "harness"
TEMPLATES = PROJECT_ROOT / "templates"
ADAPTERS = HARNESS / "adapters"
#: The modules every run goes through (besides the protocol's own).
RUN_ROOTS = ("runner.py", "upstream.py", "verdict.py", "spec.py", "record.py", "quantities.py", "datalock.py")
#: The code that turns a record into a report and its figures.
RENDER_CODE = ("render.py", "figures.py")
#: Modules of the harness the adapters load by path (see ``adapters/_launch.py``).
ADAPTER_SHARED = ("quantities.py", "audit.py", "stats/losscheck.py")


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _rel(path: Path) -> str:
    return path.resolve().relative_to(PROJECT_ROOT).as_posix()


def _module_file(parts: list[str]) -> Path | None:
    base = HARNESS.joinpath(*parts)
    for cand in (base.with_suffix(".py"), base / "__init__.py"):
        if cand.is_file():
            return cand
    return None


@cache
def _imports(path: Path) -> tuple[Path, ...]:
    """The files inside ``harness/`` that ``path`` imports (relative or ``harness.``-absolute)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    pkg = list(path.resolve().relative_to(HARNESS).parent.parts)
    out = []
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg[: len(pkg) - (node.level - 1)] if node.level > 1 else pkg
                mod = base + (node.module.split(".") if node.module else [])
            elif node.module and node.module.split(".")[0] == "harness":
                mod = node.module.split(".")[1:]
            else:
                continue
            targets.append(mod)
            targets += [mod + [alias.name] for alias in node.names]
        elif isinstance(node, ast.Import):
            targets += [a.name.split(".")[1:] for a in node.names if a.name.split(".")[0] == "harness"]
        for t in targets:
            f = _module_file(t) if t else None
            if f is not None and f != path:
                out.append(f)
    return tuple(sorted(set(out)))


def _closure(roots: list[Path], *, stop: set[Path]) -> set[Path]:
    seen: set[Path] = set()
    todo = list(roots)
    while todo:
        f = todo.pop()
        if f in seen:
            continue
        seen.add(f)
        if f in stop:
            continue
        todo += [g for g in _imports(f) if g not in seen]
    return seen


def code_files(protocol: str) -> list[Path]:
    """The harness files a claim of ``protocol`` runs through, adapters included."""
    registry = HARNESS / "protocols" / "__init__.py"  # names every protocol; not followed
    roots = [HARNESS / r for r in RUN_ROOTS] + [HARNESS / "protocols" / f"{protocol}.py"]
    files = _closure(roots, stop={registry})
    adapter = ADAPTERS / f"{protocol}.py"
    if adapter.is_file():
        text = adapter.read_text(encoding="utf-8")
        files |= {adapter, ADAPTERS / "_launch.py"}
        files |= {p for p in ADAPTERS.glob("*.py") if re.search(rf"\b{re.escape(p.stem)}\b", text)}
        files |= {HARNESS / rel for rel in ADAPTER_SHARED}
    return sorted(files)


def template_files(protocol: str) -> list[Path]:
    """The protocol's template and every template it extends, includes or imports."""
    out, todo = set(), [TEMPLATES / f"{protocol}.md.j2"]
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
    proto = spec.protocol.name
    pin = None
    if spec.claim.upstream is not None and pins is not None and spec.claim.upstream in pins:
        pin = pins[spec.claim.upstream].model_dump(mode="json")
    run = {
        "claim": _sha(spec.path),
        "data": {name: lock.tables[name].sha256 for name in spec.claim.inputs if name in lock.tables},
        "code": {_rel(f): _sha(f) for f in code_files(proto)},
        "upstream_pin": pin,
        "packages": package_versions(),
    }
    return {"run": run, "render": render_dependencies(proto)}


def render_dependencies(protocol: str) -> dict:
    """The templates and drawing code a report of ``protocol`` is rendered with, by hash."""
    render = {_rel(f): _sha(f) for f in template_files(protocol)}
    render.update({_rel(HARNESS / f): _sha(HARNESS / f) for f in RENDER_CODE if (HARNESS / f).is_file()})
    return render


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
    pk_old, pk_new = old.get("packages", {}), new["packages"]
    pk = [f"{k} {pk_old.get(k)} -> {pk_new.get(k)}" for k in _changed(pk_old, pk_new)]
    if pk:
        run.append(f"package versions changed: {_listed(pk)}")
    render = _changed(stored.get("render", {}), now["render"])
    return run, ([f"template or rendering code changed: {_listed(render)}"] if render else [])
