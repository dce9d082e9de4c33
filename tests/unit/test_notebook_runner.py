"""The notebook runner's refusals, before any kernel starts (its runs are tested through the authors' arm, confined:
tests/unit/test_upstream.py)."""

from __future__ import annotations

import pytest

from harness.authors.adapters.notebook import NotebookError, cell_sha256, run_cells

nbformat = pytest.importorskip("nbformat", reason="the notebook runner needs nbformat (pip install -e '.[test]')")


@pytest.fixture
def toy(tmp_path):
    cells = [nbformat.v4.new_markdown_cell("# toy"), nbformat.v4.new_code_cell("x = 1")]
    nbformat.write(nbformat.v4.new_notebook(cells=cells), tmp_path / "toy.ipynb")
    return tmp_path


def test_a_changed_cell_is_refused_naming_the_cell_and_both_hashes(toy):
    expected = cell_sha256("x = 2")  # what the adapter was written against; the notebook now says x = 1
    with pytest.raises(NotebookError) as info:
        run_cells(toy, "toy.ipynb", [(1, expected)])
    assert str(info.value) == f"toy.ipynb: cell 1's source has sha256 {cell_sha256('x = 1')}, expected {expected}"


@pytest.mark.parametrize("index", [0, 2, -1])
def test_a_cell_that_is_not_code_is_refused(toy, index):
    with pytest.raises(NotebookError, match=f"toy.ipynb: cell {index} is not a code cell"):
        run_cells(toy, "toy.ipynb", [(index, cell_sha256("# toy"))])
