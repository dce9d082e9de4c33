"""Run chosen cells of the authors' notebook afresh (nbclient) and read back the variables asked for
(docs/authors-arm.md). Imports nothing of the harness."""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path


class NotebookError(RuntimeError):
    """A named cell that is not the one expected, or a cell that failed."""


def cell_sha256(source: str) -> str:
    """sha256 of a cell's source as nbformat reads it (one string, UTF-8)."""
    return hashlib.sha256(source.encode("utf-8")).hexdigest()


def _output_cell(expressions: Sequence[str], path: Path) -> str:
    """The last cell: each expression's value (``.tolist()`` of an array or a NumPy number) as JSON in ``path``."""
    return (
        "import json as _harness_json\n"
        f"_harness_expressions, _harness_path = {list(expressions)!r}, {str(path)!r}\n"
        "_harness_values = {_e: eval(_e) for _e in _harness_expressions}\n"
        "with open(_harness_path, 'w', encoding='utf-8') as _harness_fh:\n"
        "    _harness_json.dump({_e: _v.tolist() if hasattr(_v, 'tolist') else _v"
        " for _e, _v in _harness_values.items()}, _harness_fh)\n"
    )


def run_cells(
    checkout: str | Path,
    notebook: str,
    cells: Sequence[tuple[int, str] | str],
    *,
    parameters: str = "",
    outputs: Sequence[str] = (),
    timeout_s: float = 600,
) -> dict:
    """Run ``cells`` (``(index, sha256 of its source)``, in that order) of ``checkout/notebook`` on a new kernel
    after the ``parameters`` source; return ``{expression: value}`` for each of ``outputs``. A cell given as a
    string is the adapter's own source, run where it stands (labelled "the adapter's cell" in errors)."""
    import nbformat
    from jupyter_client.manager import KernelManager
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

    nb = nbformat.read(Path(checkout) / notebook, as_version=4)
    labelled = [("the parameter cell", parameters)] if parameters else []
    for cell in cells:
        if isinstance(cell, str):
            labelled.append(("the adapter's cell", cell))
            continue
        index, expected = cell
        if not (0 <= index < len(nb.cells) and nb.cells[index].cell_type == "code"):
            raise NotebookError(f"{notebook}: cell {index} is not a code cell (the notebook has {len(nb.cells)} cells)")
        found = cell_sha256(nb.cells[index].source)
        if found != expected:
            raise NotebookError(f"{notebook}: cell {index}'s source has sha256 {found}, expected {expected}")
        labelled.append((f"cell {index}", nb.cells[index].source))
    os.environ["MPLBACKEND"] = "Agg"  # the kernel inherits it
    with tempfile.TemporaryDirectory(prefix="notebook-") as tmp:
        answer = Path(tmp) / "outputs.json"
        labelled.append(("the output cell", _output_cell(outputs, answer)))
        fresh = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(src) for _, src in labelled])
        running, started = [], [time.monotonic()]

        def cell_started(cell, cell_index):
            if not running:
                print(f"{notebook}: the kernel started in {time.monotonic() - started[0]:.1f} s", file=sys.stderr)
            running.append(labelled[cell_index][0])
            started.append(time.monotonic())

        def cell_done(cell, cell_index, execute_reply):
            seconds = time.monotonic() - started[-1]
            print(f"{notebook}: {labelled[cell_index][0]} ran in {seconds:.1f} s", file=sys.stderr)

        client = NotebookClient(
            fresh,
            km=KernelManager(kernel_name="python3", ip="127.0.0.1", transport="tcp"),
            timeout=timeout_s,
            allow_errors=False,
            resources={"metadata": {"path": str(checkout)}},  # the kernel's working folder
            on_cell_start=cell_started,
            on_cell_executed=cell_done,
        )
        try:
            client.execute()
        except CellExecutionError as exc:
            raise NotebookError(f"{notebook}: {running[-1]} raised {exc.ename}: {exc.evalue}") from None
        except CellTimeoutError:
            raise NotebookError(f"{notebook}: {running[-1]} did not finish within {timeout_s:g} s") from None
        except DeadKernelError:
            raise NotebookError(f"{notebook}: the kernel died while running {running[-1]}") from None
        return json.loads(answer.read_text(encoding="utf-8"))
