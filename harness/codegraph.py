"""Which of the harness's files a piece of code runs through: its import closure, read from the source.

The build keys (:mod:`harness.build`) and the authors' cache key
(:mod:`harness.upstream`) hash what a claim's run and its adapter load. Both
come from here: the files inside ``harness/`` that a file imports, relative
(``from ..stats import sigmoid``) or absolute (``import harness.audit``),
anywhere in it (imports inside functions too), and the ``__init__.py`` of
every package on the way (Python runs them). Imports by string
(``importlib.import_module``) are not followed: the registry of protocols is
the one place that does so, and no key hashes it; an adapter's run reports
what it loaded, and :mod:`harness.upstream` checks that against its closure.
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Iterable
from functools import cache
from pathlib import Path

from .paths import PROJECT_ROOT

__all__ = ["HARNESS", "LAUNCHER", "imports_of", "closure", "adapter_closure", "digest", "relative"]

HARNESS = PROJECT_ROOT / "harness"
#: The adapters' launcher, relative to the package: run as a script, so no import names it.
LAUNCHER = "adapters/_launch.py"
#: Lists every protocol; no key hashes it, so a new line re-runs nothing.
REGISTRY = "registry.py"


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


@cache
def imports_of(path: Path, package: Path = HARNESS) -> tuple[Path, ...]:
    """The files inside the package folder ``package`` (the harness) that importing ``path`` loads directly
    (itself excluded)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    pkg = list(path.resolve().relative_to(package.resolve()).parent.parts)
    out = set(_packages(package, pkg + ["x"]))
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
