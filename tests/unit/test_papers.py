"""Papers as files (issue 40): every claim names a paper of ``claims/papers/``, whose pins its ``upstream`` must be
among; a broken paper file or claim is refused naming the file and field; the index lists claims by paper."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from claimset import PATHS

from harness.authors.checkout import load_pins
from harness.claimfiles.papers import load_papers
from harness.claimfiles.spec import load_claim
from harness.core.datalock import load_lock
from harness.core.errors import SpecError

ROOT = Path(__file__).resolve().parents[2]
PAPERS = load_papers(ROOT / "claims")


def _folder(tmp_path: Path, claim: Path) -> Path:
    """A claims folder holding one claim and the project's paper files."""
    shutil.copytree(ROOT / "claims" / "papers", tmp_path / "papers")
    shutil.copy(claim, tmp_path / claim.name)
    return tmp_path / claim.name


def _edit(path: Path, **changes) -> None:
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    for key, value in changes.items():
        if value is None:
            raw.pop(key, None)
        else:
            raw[key] = value
    path.write_text(yaml.safe_dump(raw, sort_keys=False, allow_unicode=True), encoding="utf-8")


def _problems(path: Path) -> list[str]:
    with pytest.raises(SpecError) as info:
        load_claim(path, lock=load_lock(), pins=load_pins())
    return info.value.problems


def test_every_claim_names_a_known_paper_whose_pins_hold_its_upstream():
    for path in PATHS:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
        assert raw["paper"] in PAPERS, path
        assert raw.get("upstream") is None or raw["upstream"] in PAPERS[raw["paper"]].pins, path
    assert {p for paper in PAPERS.values() for p in paper.pins} <= set(load_pins())


@pytest.mark.parametrize(
    "changes, expected",
    [
        ({"paper": None}, "paper: missing; expected one of"),
        ({"paper": "chinchila-replication"}, "did you mean"),
    ],
    ids=["missing", "misspelt"],
)
def test_a_claim_without_its_paper_is_refused(tmp_path, changes, expected):
    path = _folder(tmp_path, PATHS[0])
    _edit(path, **changes)
    assert any(p.startswith("paper:") and expected in p for p in _problems(path))


def test_a_claim_whose_upstream_is_another_papers_pin_is_refused(tmp_path):
    path = _folder(tmp_path, PATHS[0])
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    other = next(p for p in PAPERS.values() if p.id != raw["paper"] and p.pins)
    _edit(path, upstream=other.pins[0])
    assert any(p.startswith("upstream:") and f"not a pin of paper {raw['paper']!r}" in p for p in _problems(path))


def test_a_claim_outside_a_folder_of_papers_needs_none(tmp_path):
    path = tmp_path / PATHS[0].name
    shutil.copy(PATHS[0], path)
    _edit(path, paper=None)
    assert load_claim(path, lock=load_lock(), pins=load_pins()).claim.paper is None


def test_a_broken_paper_file_is_refused_naming_it(tmp_path):
    path = _folder(tmp_path, PATHS[0])
    paper = tmp_path / "papers" / f"{yaml.safe_load(path.read_text(encoding='utf-8'))['paper']}.yaml"
    raw = yaml.safe_load(paper.read_text(encoding="utf-8"))
    raw["arxiv"] = "arXiv:1234"
    paper.write_text(yaml.safe_dump(raw, sort_keys=False, allow_unicode=True), encoding="utf-8")
    with pytest.raises(SpecError) as info:
        load_claim(path, lock=load_lock(), pins=load_pins())
    assert info.value.path == str(paper) and any(p.startswith("arxiv:") for p in info.value.problems)


def test_the_index_lists_each_paper_with_its_claims_and_setup():
    text = (ROOT / "reports" / "README.md").read_text(encoding="utf-8")
    for paper in PAPERS.values():
        assert f'<a id="{paper.id}"></a>' in text and f'<a id="{paper.id}-setup"></a>' in text
    for path in PATHS:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
        section = text.split(f'<a id="{raw["paper"]}"></a>', 1)[1].split("\n## ", 1)[0]
        assert f"]({path.stem}.md)" in section, path.stem
