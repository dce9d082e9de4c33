"""The shift test reads its two score columns as percentages: a column of fractions, or a cutoff that leaves
one release group empty, is refused naming the field, by ``validate --data`` and by ``run`` (which load the claim
with its tables) and by the measurement itself, in the same words; never a traceback."""

from pathlib import Path

import numpy as np
import pytest

from harness import cli
from harness.claimfiles.spec import load_claim
from harness.core.errors import DataError, SpecError

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


def _refused_alike(path, tables, words: str) -> str:
    """``validate --data`` (the claim loaded with its tables) refuses the claim with ``words``, and so does the
    measurement of the claim loaded without them, in the same words."""
    with pytest.raises(SpecError) as info:
        load_claim(path, tables=tables)
    (line,) = info.value.problems
    assert line.startswith(words), line
    spec = load_claim(path)
    with pytest.raises(DataError) as info:
        spec.protocol.measure(spec.params, tables, np.random.default_rng(0))
    assert line in str(info.value)
    return line


def test_a_column_of_fractions_is_refused_naming_it(tmp_path, tables):
    path = _claim(tmp_path, "x_col: math_500_pct", "x_col: math_500")
    line = _refused_alike(path, tables, "params.x_col: column 'math_500' must hold percentages from 0 to 100")
    assert "its values run from 0.14 to 0.994 (fractions? name the column of percentages)" in line


def test_the_run_says_so_with_the_claim_file(tmp_path, tables, capsys):
    bad = _claim(tmp_path, "y_col: aime_2025_pct", "y_col: aime_2025")
    assert cli.main(["run", "-j", "1", "--no-upstream", "--out", str(tmp_path / "out"), str(bad)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    (line,) = [x for x in err.splitlines() if "aime_2025" in x]
    assert line.strip().startswith(f"{bad}: params.y_col: column 'aime_2025' must hold percentages"), line


def test_a_cutoff_after_every_release_is_refused_by_validate_and_run_alike(tmp_path, tables, capsys):
    # issue 38: run refused it, validate --data did not
    path = _claim(tmp_path, 'cutoff: "2025-02-06"', 'cutoff: "2099-01-01"')
    words = "params.cutoff: 2099-01-01 must split the 115 models found in both tables into two release groups"
    _refused_alike(path, tables, words)
    assert cli.main(["validate", "--data", str(path)]) == 2
    (line,) = [x for x in capsys.readouterr().err.splitlines() if "params.cutoff" in x]
    assert f"{words}, some dated before it and some on or after it, but 0 are on or after it" in line
    assert "(their dates run from 2024-02-26 to 2025-08-07)" in line


def test_a_cap_below_the_permutations_is_refused_naming_both(tmp_path):
    path = _claim(tmp_path, "n_perm_max: 200000", "n_perm_max: 1000")
    with pytest.raises(SpecError) as info:
        load_claim(path)
    assert "n_perm_max must be at least n_perm (2000), got 1000" in str(info.value)


def test_the_multiverse_reads_a_p_value_at_alpha_at_the_cap_it_was_refined_to():
    """A p-value decided at alpha was refined until settled or at the cap: its margin is the cap's, so a refined
    decision is read as made; at another level it was not refined, and its margin is the asked count's."""
    spec = load_claim(CLAIM)
    p = spec.params
    assert spec.protocol.decision_margin(p, "p_value", p.alpha) == pytest.approx(4 * (0.05 * 0.95 / 200_000) ** 0.5)
    assert spec.protocol.decision_margin(p, "p_value", 0.1) == pytest.approx(4 * (0.1 * 0.9 / 2000) ** 0.5)
    assert spec.protocol.decision_margin(p, "gamma", 0.0) is None
