"""The README and docs/ stay true (issue 30): the README is short and opens with the two commands, its claim file
is a real one abridged and validates, every relative link resolves, the generated field reference is the
generator's output, and every function docs/architecture.md names exists."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest
import yaml

import harness
from harness.claimfiles import claim_fields_doc

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
#: The README's limit, in words as ``wc -w`` counts them (runs of bytes between ASCII whitespace).
README_WORDS = 1000
FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.M | re.S)
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _fenced_blocks(text: str) -> list[tuple[str, str]]:
    """``(info string, body)`` of every fenced code block, in order."""
    return re.findall(r"^```([^\n]*)\n(.*?)^```[ \t]*$", text, re.M | re.S)


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, code marks and punctuation other than ``-`` and ``_`` dropped,
    each space a hyphen."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    """Every anchor of a Markdown file's headings, with GitHub's ``-1``, ``-2`` for repeated ones."""
    seen: dict[str, int] = {}
    out = set()
    for heading in re.findall(r"^#{1,6} +(.+?) *#*$", FENCE.sub("", path.read_text(encoding="utf-8")), re.M):
        slug = _slug(heading)
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def test_the_readme_is_at_most_a_thousand_words():
    words = len(README.read_bytes().split())
    assert words <= README_WORDS, f"README.md has {words} words (wc -w), more than {README_WORDS}: move a part to docs/"


def test_the_readme_opens_with_the_two_commands():
    info, body = _fenced_blocks(README.read_text(encoding="utf-8"))[0]
    commands = [line.split("#")[0].strip() for line in body.splitlines()]
    assert "make claims" in commands and "make test" in commands, body


@pytest.mark.parametrize("page", [README, *DOCS], ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_resolves(page):
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    broken = []
    for target in LINK.findall(text):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto: ...: not a file of this project
            continue
        file, _, anchor = target.partition("#")
        where = (page.parent / file).resolve() if file else page
        if not where.exists():
            broken.append(f"{target}: no file {where.relative_to(ROOT) if ROOT in where.parents else where}")
        elif anchor and where.suffix == ".md" and anchor not in _anchors(where):
            broken.append(f"{target}: no heading with anchor #{anchor} in {where.relative_to(ROOT)}")
    assert not broken, f"{page.relative_to(ROOT)}: " + "; ".join(broken)


#: A path of this project written in code marks (``harness/stats/ispline.py``): placeholders (``<id>``) and globs
#: are not paths.
PROJECT_PATH = re.compile(r"`((?:harness|templates|tests|claims|data|benchmarks|reports|docs)/[\w./-]*)`")


@pytest.mark.parametrize("page", [README, *DOCS], ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_file_a_page_names_exists(page):
    missing = [m for m in PROJECT_PATH.findall(page.read_text(encoding="utf-8")) if not (ROOT / m).exists()]
    assert not missing, f"{page.relative_to(ROOT)} names files that do not exist: {', '.join(missing)}"


def test_the_path_check_can_fail():
    assert PROJECT_PATH.findall("see `harness/verdicts/invariants.py` and `reports/<id>.json`") == [
        "harness/verdicts/invariants.py"
    ]


def test_the_links_are_checked_against_github_anchors(tmp_path):
    # the anchor rule on a repeated heading and one with code and punctuation, as GitHub renders them
    page = tmp_path / "p.md"
    page.write_text("# The build\n\n## Protocol `shift_test`\n\n## The build\n\n```sh\n# not a heading\n```\n")
    assert _anchors(page) == {"the-build", "protocol-shift_test", "the-build-1"}


def test_the_field_reference_is_the_generators_output():
    committed = (ROOT / "docs" / "claim-fields.md").read_text(encoding="utf-8")
    assert committed == claim_fields_doc.page(), (
        "run: python -m harness.claimfiles.claim_fields_doc > docs/claim-fields.md"
    )
    assert claim_fields_doc.main(["--check"]) == 0


def test_the_check_fails_on_a_stale_reference(tmp_path, capsys):
    stale = tmp_path / "claim-fields.md"
    stale.write_text(claim_fields_doc.page().replace("| `seed` |", "| `sed` |", 1), encoding="utf-8")
    assert claim_fields_doc.main(["--check"], doc=stale) == 1
    err = capsys.readouterr().err
    assert (
        str(stale) in err and "python -m harness.claimfiles.claim_fields_doc >" in err and "\n" not in err.rstrip("\n")
    )


def test_the_field_reference_lists_every_field_of_a_claim_file():
    from harness.claimfiles.spec import Bootstrap, Claim, Control, Target

    page = claim_fields_doc.page()
    for model in (Claim, Target, Control, Bootstrap):
        for name in model.model_fields:
            assert f"| `{name}` |" in page, f"{model.__name__}.{name}"


def test_the_readmes_claim_file_is_a_real_one_abridged_and_valid(tmp_path):
    from harness.authors.checkout import load_pins
    from harness.claimfiles.spec import load_claim
    from harness.core.datalock import load_lock

    body = next(body for info, body in _fenced_blocks(README.read_text(encoding="utf-8")) if info.strip() == "yaml")
    shown = yaml.safe_load(body)
    real_path = ROOT / "claims" / f"{shown['id']}.yaml"
    assert real_path.is_file(), f"the README shows claim {shown['id']}, which claims/ does not hold"
    real = yaml.safe_load(real_path.read_text(encoding="utf-8"))
    for key in ("id", "title", "locator", "protocol", "inputs", "upstream", "seed"):
        assert shown[key] == real[key], key
    assert all(real["params"][k] == v for k, v in shown["params"].items() if k != "tasks")
    assert shown["params"]["tasks"].items() <= real["params"]["tasks"].items()
    assert all(t in real["targets"] for t in shown["targets"])
    assert [c["id"] for c in shown["controls"]] == [c["id"] for c in real["controls"]][: len(shown["controls"])]
    copy = tmp_path / real_path.name
    copy.write_text(body, encoding="utf-8")
    load_claim(copy, lock=load_lock(), pins=load_pins())  # raises, listing every problem, if it does not validate


def _module_parts(parts: list[str]) -> int:
    """How many of ``parts`` name a module or package of the harness, from the package down (0: none)."""
    for i in range(len(parts), 0, -1):
        base = ROOT.joinpath("harness", *parts[:i])
        if base.with_suffix(".py").is_file() or (base / "__init__.py").is_file():
            return i
    return 0


def test_every_function_the_architecture_names_exists():
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    short = {p.stem for p in (ROOT / "harness").rglob("*.py")}
    missing, unqualified = [], []
    for ref in sorted(set(re.findall(r"`([a-z_]+(?:\.[A-Za-z_]+)+)`", text))):
        parts = ref.split(".")
        if parts[-1] in ("py", "md", "yaml"):
            continue
        n = _module_parts(parts)
        if n == 0:
            if parts[0] in short:  # a module named without its package: the reader cannot find it
                unqualified.append(ref)
            continue
        obj = importlib.import_module("harness." + ".".join(parts[:n]))
        for part in parts[n:]:
            obj = getattr(obj, part, None)
        if obj is None:
            missing.append(ref)
    files = re.findall(r"`((?:harness/)?[a-z_]+/[\w/]+\.py)`", text)
    missing += [
        f
        for f in files
        if f.split("/")[0] in ("harness", "stats", "protocols", *(n for n, _ in harness.LAYERS))
        and not (ROOT / (f if f.startswith("harness/") else f"harness/{f}")).is_file()
    ]
    assert not unqualified, f"docs/architecture.md names modules without their package: {unqualified}"
    assert not missing, f"docs/architecture.md names what the code does not hold: {missing}"
