"""The tree is the architecture: each package of ``harness/`` is a layer (``harness.LAYERS``), and a layer imports
only itself and the layers below it. Read from every import statement of every file (inside functions too), as
:func:`imports_of` reads them."""

from __future__ import annotations

import ast
from pathlib import Path

import harness
from harness.core.paths import HARNESS

ORDER = [name for name, _ in harness.LAYERS]


def _module_files(package: Path, parts: list[str]) -> list[Path]:
    """The file of module ``parts`` of the package folder ``package`` and the ``__init__.py`` of every package on
    the way (Python runs them)."""
    out = [package.joinpath(*parts[:i], "__init__.py") for i in range(len(parts))]
    base = package.joinpath(*parts)
    out += [c for c in (base.with_suffix(".py"), base / "__init__.py") if parts][:1]
    return [f for f in out if f.is_file()]


def imports_of(path: Path, package: Path = HARNESS) -> set[Path]:
    """The files of the package folder ``package`` that importing ``path`` loads directly: every import statement
    of the file, inside functions too, relative (``from ..stats import x``) or absolute (``import harness.x``)."""
    here = list(path.relative_to(package).parent.parts)
    out = set(_module_files(package, here))
    for node in ast.walk(ast.parse(path.read_bytes())):
        if isinstance(node, ast.ImportFrom) and node.level:
            mod = here[: len(here) - node.level + 1] + (node.module.split(".") if node.module else [])
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "harness":
            mod = node.module.split(".")[1:]
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "harness":
                    out.update(_module_files(package, a.name.split(".")[1:]))
            continue
        else:
            continue
        out.update(_module_files(package, mod))
        for a in node.names:
            if (package.joinpath(*mod, a.name).with_suffix(".py")).is_file() or (
                package.joinpath(*mod, a.name) / "__init__.py"
            ).is_file():
                out.update(_module_files(package, mod + [a.name]))
    out.discard(path)
    return out


TOP = len(ORDER)  # the command line, above every layer


def _rank(path: Path, root: Path = HARNESS) -> int:
    parts = path.relative_to(root).parts
    if len(parts) == 1:
        return -1 if parts[0] == "__init__.py" else TOP  # the package's own __init__ is read by every file
    if parts[0] == "protocols" and len(parts) == 3 and parts[2] in harness.PROTOCOL_FILES:
        return ORDER.index(harness.PROTOCOL_FILES[parts[2]])
    return ORDER.index(parts[0])


def _name(rank: int) -> str:
    return ORDER[rank] if 0 <= rank < TOP else "top"


def _upward(root: Path = HARNESS) -> list[str]:
    """Every import of a file under ``root`` whose target sits in a higher layer than the file itself."""
    return [
        f"{f.relative_to(root)} ({_name(_rank(f, root))}) imports {g.relative_to(root)} ({_name(_rank(g, root))})"
        for f in sorted(root.rglob("*.py"))
        for g in sorted(imports_of(f, root))
        if _rank(g, root) > _rank(f, root)
    ]


def test_every_package_is_a_layer():
    packages = {p.name for p in HARNESS.iterdir() if (p / "__init__.py").is_file()}
    assert packages == set(ORDER), f"packages that are not layers: {sorted(packages - set(ORDER))}"
    loose = sorted(p.name for p in HARNESS.glob("*.py") if p.name not in ("__init__.py", "__main__.py", "cli.py"))
    assert not loose, f"modules outside every layer (put each in the package of its layer): {loose}"


def test_a_layer_imports_only_the_layers_below_it():
    upward = _upward()
    assert not upward, "imports that run upward:\n" + "\n".join(upward)


def test_the_check_sees_an_upward_import(tmp_path):
    # the same reading on a small tree: a protocol's figures may import rendering, its measurement may not;
    # the math importing the build is refused; the build importing the math is fine
    copy = tmp_path / "harness"
    for sub in ("", "stats", "rendering", "build", "protocols", "protocols/p"):
        (copy / sub).mkdir(exist_ok=True)
        (copy / sub / "__init__.py").write_text("")
    (copy / "build" / "runner.py").write_text("from ..stats.sigmoid import Y\n")
    (copy / "rendering" / "figures.py").write_text("Z = 3\n")
    (copy / "stats" / "sigmoid.py").write_text("def f():\n    from ..build.runner import X\nY = 2\n")
    (copy / "protocols" / "p" / "figures.py").write_text("from ...rendering.figures import Z\n")
    (copy / "protocols" / "p" / "protocol.py").write_text("from harness.rendering import figures\n")
    assert _upward(copy) == [
        "protocols/p/protocol.py (protocols) imports rendering/__init__.py (rendering)",
        "protocols/p/protocol.py (protocols) imports rendering/figures.py (rendering)",
        "stats/sigmoid.py (stats) imports build/__init__.py (build)",
        "stats/sigmoid.py (stats) imports build/runner.py (build)",
    ]
