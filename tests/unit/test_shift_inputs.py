"""The shift test reads its two score columns as percentages: a column of fractions, or a cutoff that leaves
one release group empty, is a DataError naming the column (or the cutoff), never a traceback."""

from pathlib import Path

import numpy as np
import pytest

from harness import cli
from harness.claimfiles.spec import load_claim
from harness.core.errors import DataError

CLAIM = Path(__file__).resolve().parents[2] / "claims" / "000_aime2025_shift_test.yaml"


def _claim(tmp_path, old: str, new: str) -> Path:
    text = CLAIM.read_text(encoding="utf-8")
    assert old in text
    p = tmp_path / CLAIM.name
    text = text.replace(old, new)
    if "multiverse:" in text:  # the multiverse names the claim's own values; these tests change them
        head, rest = text.split("\nmultiverse:", 1)
        tail = rest.split("\n", 1)[1] if "\n" in rest else ""
        lines = tail.splitlines(keepends=True)
        while lines and (lines[0].startswith((" ", "#")) or not lines[0].strip()):
            lines.pop(0)
        text = head + "\n" + "".join(lines)
    p.write_text(text, encoding="utf-8")
    return p


def test_a_column_of_fractions_is_a_data_error_naming_it(tmp_path, tables):
    spec = load_claim(_claim(tmp_path, "x_col: math_500_pct", "x_col: math_500"), tables=tables)
    with pytest.raises(DataError) as info:
        spec.protocol.measure(spec.params, tables, np.random.default_rng(0))
    message = str(info.value)
    assert "column 'math_500' (claim params.x_col) must hold percentages from 0 to 100" in message
    assert "its values run from 0.14 to 0.994 (fractions? name the column of percentages)" in message


def test_the_run_says_so_in_one_line_with_the_claim_file(tmp_path, tables, capsys):
    bad = _claim(tmp_path, "y_col: aime_2025_pct", "y_col: aime_2025")
    assert cli.main(["run", "-j", "1", "--no-upstream", "--out", str(tmp_path / "out"), str(bad)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    (line,) = [x for x in err.splitlines() if "aime_2025" in x]
    assert line.startswith(f"error: {bad}: ") and "(claim params.y_col) must hold percentages" in line


def test_a_cutoff_after_every_release_is_a_data_error(tmp_path, tables):
    spec = load_claim(_claim(tmp_path, 'cutoff: "2025-02-06"', 'cutoff: "2099-01-01"'), tables=tables)
    with pytest.raises(DataError, match=r"the cutoff 2099-01-01 \(claim params.cutoff\) must split the 115 models"):
        spec.protocol.measure(spec.params, tables, np.random.default_rng(0))
