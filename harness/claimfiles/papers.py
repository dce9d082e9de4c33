"""Papers: each audited paper is one file ``claims/papers/<id>.yaml``, and every claim file beside that folder
names its paper (``paper: <id>``).

A paper file holds the paper's identity (title, authors, arXiv id and version), the pins of its authors' code,
and its setup: the Markdown the index prints once for all of that paper's claims, so that no shared template
speaks of any paper in particular::

    id: capability-boundaries
    title: "…"
    authors: [A. Author, B. Author]
    arxiv: "2501.00000"
    version: 2
    pins: [prescriptive-scaling]
    setup: |
      **The capability boundary.** …

A claims folder without ``papers/`` holds claims of no declared paper (a scratch folder, a test's copy); there
``paper`` may be left out.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, ValidationError

from ..core.errors import SpecError
from ..core.paths import paper_file
from ..core.schema import Count, Label, Strict, format_validation_error, validate_plain
from .claim_yaml import read_claim_yaml

__all__ = ["Paper", "PAPERS", "load_papers", "papers_beside", "load_paper"]

#: The folder of paper files, inside a claims folder, where :func:`harness.core.paths.paper_file` looks too.
PAPERS = "papers"


class Paper(Strict):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]{0,63}$", description="the file's name without `.yaml`")
    title: Label = Field(min_length=1)
    authors: list[Label] = Field(min_length=1)
    arxiv: Label = Field(pattern=r"^\d{4}\.\d{4,5}$", description="the arXiv identifier, without version")
    version: Count = Field(ge=1, description="the arXiv version the claims are read from")
    pins: list[Label] = Field(default_factory=list, description="the pins of `data/upstream.yaml` its code runs at")
    setup: str = Field(min_length=1, description="Markdown: the setup every claim of the paper shares")


def _load(path: Path) -> Paper:
    raw, _ = read_claim_yaml(path)
    try:
        paper = validate_plain(Paper, raw)
    except ValidationError as err:
        raise SpecError(path, format_validation_error(err, model=Paper)) from None
    if paper.id != path.stem:
        raise SpecError(path, [f"id: {paper.id!r} must be the file's name without '.yaml' ({path.stem!r})"])
    return paper


def load_papers(folder: Path) -> dict[str, Paper]:
    """The papers of ``folder/papers/*.yaml`` by id (empty when there is no such folder)."""
    return {p.id: p for p in map(_load, sorted((Path(folder) / PAPERS).glob("*.yaml")))}


def papers_beside(claim_path: Path) -> dict[str, Paper] | None:
    """The papers of the claims folder a claim file is in; None when that folder declares none."""
    folder = Path(claim_path).parent
    return load_papers(folder) if (folder / PAPERS).is_dir() else None


def load_paper(claim_path: Path, name: str) -> Paper | None:
    """The paper ``name`` of a claim (:func:`paper_file`), or None when there is no such file."""
    path = paper_file(claim_path, name)
    return _load(path) if path.is_file() else None
