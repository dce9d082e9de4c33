"""The code a record or a coverage study is keyed by is declared, not inferred from imports
(:mod:`harness.core.claimslock`). These tests check the declaration against the imports: every harness module
that declared code imports (at the top or inside a function) is itself declared, so that no edit to an
undeclared module can change a record or a study while the lock calls it current."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from harness.core.claimslock import MEASURING, NEVER, RECORD_CODE, STUDIED, STUDY_CODE, files_of
from harness.core.paths import PROJECT_ROOT

#: Imported by record code but keyed apart: the fan-out does not change a value (results come back in item
#: order), and the authors' arm has its own key (``AUTHORS_CODE``, with the claim's upstream).
KEYED_APART = ("harness/parallel/", "harness/authors/")
FOLDERS = sorted(p.name for p in (PROJECT_ROOT / "harness/protocols").iterdir() if (p / "protocol.py").exists())


def _module_file(name: str) -> Path | None:
    p = PROJECT_ROOT.joinpath(*name.split("."))
    for f in (p / "__init__.py", p.with_suffix(".py")):
        if f.is_file():
            return f
    return None


def _imported(f: Path) -> set[Path]:
    """The harness modules ``f`` imports, as files (``from x import a, b`` counts each of ``x.a``, ``x.b`` that is a
    module, and ``x`` when none is)."""
    return _imports_of(f.read_text(), f.relative_to(PROJECT_ROOT).with_suffix("").parts[:-1])


def _imports_of(source: str, package: tuple[str, ...]) -> set[Path]:
    out = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            base = list(package[: len(package) - node.level + 1]) if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            names = [a.name for a in node.names]
        elif isinstance(node, ast.Import):
            module, names = "", [a.name for a in node.names]
        else:
            continue
        found = {g for n in names if (g := _harness_module(f"{module}.{n}".strip(".")))}
        out |= found or {g for g in [_harness_module(module)] if g}
    return out


def _harness_module(name: str) -> Path | None:
    return _module_file(name) if name.split(".")[0] == "harness" else None


def _undeclared(declared: set[Path]) -> list[str]:
    out = []
    for f in sorted(declared):
        for g in sorted(_imported(f)):
            rel = g.relative_to(PROJECT_ROOT).as_posix()
            if g not in declared and rel not in NEVER and not rel.startswith(KEYED_APART):
                out.append(f"{f.relative_to(PROJECT_ROOT).as_posix()} imports {rel}")
    return out


def _declared(patterns, folder: str, own) -> set[Path]:
    return {f for p in patterns for f in files_of(p)} | {
        f for n in own if (f := PROJECT_ROOT / "harness/protocols" / folder / n).is_file()
    }


@pytest.mark.parametrize("folder", FOLDERS)
def test_a_records_code_imports_only_declared_code(folder):
    assert _undeclared(_declared(RECORD_CODE, folder, MEASURING)) == []


@pytest.mark.parametrize("folder", FOLDERS)
def test_a_studys_code_imports_only_declared_code(folder):
    assert _undeclared(_declared(STUDY_CODE, folder, STUDIED)) == []


def test_the_check_sees_an_import_inside_a_function():
    # build/make.py (not record code) imports the render-only rendering/render.py inside its functions: the kind
    # of import that once slipped through (a protocol's figures formatting a number with render.py)
    found = _undeclared({PROJECT_ROOT / "harness/build/make.py"})
    assert "harness/build/make.py imports harness/rendering/render.py" in found


def test_every_module_of_one_import_is_followed():
    found = _imports_of("from ..rendering import render, figures\nfrom ..core import DASH", ("harness", "build"))
    assert found == {PROJECT_ROOT / f for f in ("harness/rendering/render.py", "harness/rendering/figures.py")} | {
        PROJECT_ROOT / "harness/core/__init__.py"
    }
