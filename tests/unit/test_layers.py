"""The tree is the architecture: each package of ``harness/`` is a layer (``harness.LAYERS``), and a layer imports
only itself and the layers below it. Read from every import statement of every file (inside functions too), as
the build keys read them (:func:`harness.core.codegraph.imports_of`)."""

from __future__ import annotations

from pathlib import Path

import harness
from harness.core.codegraph import HARNESS, imports_of

ORDER = [name for name, _ in harness.LAYERS]
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
        for g in imports_of(f, root)
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
