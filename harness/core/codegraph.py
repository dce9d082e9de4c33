"""Which of the harness's files a piece of code runs through: its import closure, read from the source.

The build keys (:mod:`harness.build.keys`) and the authors' cache key
(:mod:`harness.authors.upstream`) hash what a claim's run and its adapter load. Both
come from here: the files inside ``harness/`` that a file imports, relative
(``from ..stats import sigmoid``) or absolute (``import harness.authors.audit``),
anywhere in it (imports inside functions too), and the ``__init__.py`` of
every package on the way (Python runs them). Imports by string
(``importlib.import_module``) are not followed: the registry of protocols is
the one place that does so, and no key hashes it; an adapter's run reports
what it loaded, and :mod:`harness.authors.upstream` checks that against its closure.

Parsing every file is most of what a warm build costs, so what a file's source
names (its import statements, before they are resolved to files) is cached
under ``.cache/codegraph.json`` by the sha256 of the file's bytes: an entry is
used only for a file whose bytes hash to its key, and resolving the names to
files (which exist now) is done every time.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import json
import threading
from collections.abc import Iterable
from pathlib import Path

from .paths import PROJECT_ROOT

__all__ = [
    "HARNESS",
    "LAUNCHER",
    "RUN_ROOTS",
    "imports_of",
    "closure",
    "adapter_closure",
    "adapter_files",
    "run_files",
    "digest",
    "relative",
]

HARNESS = PROJECT_ROOT / "harness"
#: The adapters' launcher, relative to the package: run as a script, so no import names it.
LAUNCHER = "authors/adapters/_launch.py"
#: Lists every protocol; no key hashes it, so a new line re-runs nothing.
REGISTRY = "claimfiles/registry.py"
#: The modules every claim's run goes through, besides its protocol's own folder (relative to the package;
#: named here as files, not imported, so that this module stays below every layer it names).
RUN_ROOTS = (
    "build/runner.py",
    "authors/upstream.py",
    "verdicts/verdict.py",
    "claimfiles/spec.py",
    "core/record.py",
    "core/quantities.py",
    "core/datalock.py",
)
#: What each source names, by the sha256 of its bytes (see the module's docstring).
CACHE_FILE = PROJECT_ROOT / ".cache" / "codegraph.json"
CACHE_VERSION = 1
CACHE_LIMIT = 4096  # entries kept (the oldest go first)


def relative(path: Path, root: Path = PROJECT_ROOT) -> str:
    return path.resolve().relative_to(root.resolve()).as_posix()


def _module_file(package: Path, parts: list[str]) -> Path | None:
    base = package.joinpath(*parts)
    for cand in (base.with_suffix(".py"), base / "__init__.py"):
        if cand.is_file():
            return cand
    return None


def _packages(package: Path, parts: list[str]) -> list[Path]:
    """The ``__init__.py`` of ``harness`` and of every package on the way to module ``parts``."""
    out = []
    for i in range(len(parts)):
        init = package.joinpath(*parts[:i], "__init__.py")
        if init.is_file():
            out.append(init)
    return out


def _named(source: bytes) -> list[list]:
    """The imports a source names, unresolved: ``[level, module or None, [names]]`` for ``from ... import``,
    ``[0, "harness.x", None]`` for ``import harness.x`` (anywhere in the file, inside functions too)."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            if node.level or (node.module and node.module.split(".")[0] == "harness"):
                out.append([node.level, node.module, [a.name for a in node.names]])
        elif isinstance(node, ast.Import):
            out += [[0, a.name, None] for a in node.names if a.name.split(".")[0] == "harness"]
    return out


class _Cache:
    """The cache of :func:`_named` by the sha256 of a source's bytes: read once, written when it grew."""

    def __init__(self, path: Path):
        self.path, self.lock = path, threading.Lock()
        self.rows: dict[str, list] | None = None
        self.new = 0

    def _load(self) -> dict[str, list]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            rows = data["rows"] if data.get("version") == CACHE_VERSION else {}
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            rows = {}
        return rows if isinstance(rows, dict) else {}

    def named(self, source: bytes) -> list[list]:
        key = hashlib.sha256(source).hexdigest()
        with self.lock:
            if self.rows is None:
                self.rows = self._load()
            row = self.rows.get(key)
        if not isinstance(row, list):
            row = _named(source)
            with self.lock:
                self.rows[key] = row
                self.new += 1
        return row

    def save(self) -> None:
        """Write the cache if it grew (its loss is no error: the next build parses again)."""
        from .fileio import atomic_write_text

        with self.lock:
            if not self.new or self.rows is None:
                return
            rows = dict(list(self.rows.items())[-CACHE_LIMIT:])
            self.new = 0
        with contextlib.suppress(OSError):
            atomic_write_text(self.path, json.dumps({"version": CACHE_VERSION, "rows": rows}, separators=(",", ":")))


_CACHE = _Cache(CACHE_FILE)


def imports_of(path: Path, package: Path = HARNESS) -> tuple[Path, ...]:
    """The files inside the package folder ``package`` (the harness) that importing ``path`` loads directly
    (itself excluded)."""
    pkg = list(path.resolve().relative_to(package.resolve()).parent.parts)
    out = set(_packages(package, pkg + ["x"]))
    for level, module, names in _CACHE.named(path.read_bytes()):
        targets = []
        if level:
            base = pkg[: len(pkg) - (level - 1)] if level > 1 else pkg
            mod = base + (module.split(".") if module else [])
            targets = [mod] + [mod + [n] for n in names]
        elif names is not None:  # from harness.x import y
            mod = module.split(".")[1:]
            targets = [mod] + [mod + [n] for n in names]
        else:  # import harness.x
            targets = [module.split(".")[1:]]
        for t in targets:
            f = _module_file(package, t) if t else package / "__init__.py"
            if f is not None:
                out.add(f)
                out.update(_packages(package, t))
    out.discard(path)
    return tuple(sorted(out))


def closure(roots: Iterable[Path], *, package: Path = HARNESS) -> set[Path]:
    """Every file of the package that ``roots`` load, themselves included; the registry is neither listed nor
    followed."""
    skip = {package / REGISTRY}
    seen: set[Path] = set()
    todo = [r for r in roots if r not in skip]
    while todo:
        f = todo.pop()
        if f in seen:
            continue
        seen.add(f)
        todo += [g for g in imports_of(f, package) if g not in seen and g not in skip]
    _CACHE.save()
    return seen


def adapter_closure(module: str, package: Path = HARNESS) -> set[Path]:
    """What running the adapter ``module`` (``harness.protocols.<name>.adapter``) loads of the package whose
    folder is ``package``: its closure and the launcher."""
    file = package.joinpath(*module.split(".")[1:]).with_suffix(".py")
    if not file.is_file():
        return {file, package / LAUNCHER}
    return closure([file], package=package) | {package / LAUNCHER}


def digest(files: Iterable[Path], root: Path = PROJECT_ROOT) -> dict[str, str]:
    """``{path relative to root: sha256}`` of ``files``, sorted by path."""
    rows = {relative(f, root): hashlib.sha256(f.read_bytes()).hexdigest() for f in files}
    return dict(sorted(rows.items()))


def adapter_files(card) -> list[Path]:
    """What the authors' arm of the protocol whose card is ``card`` loads of the harness: its adapter's closure
    and the launcher (empty when the protocol has no adapter)."""
    module = card.adapter_module
    return sorted(adapter_closure(module)) if module else []


def run_files(card) -> list[Path]:
    """The harness files a claim of the protocol whose card is ``card`` runs through: the run's roots
    (:data:`RUN_ROOTS`), its folder's card, measurement and vocabulary, and its adapter's closure (never
    another protocol's folder, nor its figures)."""
    own = [card.folder / "__init__.py", *(card.module_file(m) for m in ("protocol", "quantities"))]
    roots = [HARNESS / r for r in RUN_ROOTS] + [f for f in own if f is not None]
    return sorted(closure(roots) | set(adapter_files(card)))
