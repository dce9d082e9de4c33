"""``python -m harness diff``: what changed between a record and an earlier one.

Each test takes a committed run record, changes it the way another run could have, and checks that
the change is named (and that an unchanged record is called unchanged).
"""

import subprocess
import sys
from pathlib import Path

import pytest

from harness.core.claimslock import file_sha, update
from harness.core.record import read_record
from harness.rendering.diff import _comparable, diff_records
from harness.rendering.diff import compare as _compare_counted

REPORTS = Path(__file__).resolve().parents[2] / "reports"


def compare(old, rec, **kw):  # (the lines only; the count of moves inside their bands is tested below)
    return _compare_counted(old, rec, **kw)[0]


def _record(prefix: str):
    paths = sorted(REPORTS.glob(f"{prefix}*.json"))
    if not paths:
        pytest.skip(f"no committed record {prefix}* in {REPORTS}")
    return read_record(paths[0])


def test_an_unchanged_record_is_unchanged():
    rec = _record("002")
    assert compare(_comparable(rec), rec) == []


def test_a_changed_verdict_is_named():
    rec = _record("002")
    old = _comparable(rec.model_copy(update={"verdict": rec.verdict.model_copy(update={"verdict": "not reproduced"})}))
    assert compare(old, rec) == [f"verdict not reproduced -> {rec.verdict.verdict}"]


def test_a_target_moved_by_more_than_the_fraction_is_named_and_a_small_move_is_not():
    rec = _record("002")
    t = next(t for t in rec.targets if t.tolerance)
    key = f"{t.quantity}|{t.relation}"
    for step, named in ((0.5 * t.tolerance, True), (0.01 * t.tolerance, False)):
        old = _comparable(rec)
        old["targets"][key] = {**old["targets"][key], "reimpl": t.reimpl.value + step}
        lines = compare(old, rec, fraction=0.1)
        assert any(line.startswith(f"{t.title} (reimpl)") for line in lines) is named, (step, lines)


def test_a_target_without_tolerance_moves_only_beyond_its_relative_threshold():
    rec = _record("000")
    t = next(t for t in rec.targets if not t.tolerance and t.reimpl.value)
    key = f"{t.quantity}|{t.relation}"
    old = _comparable(rec)
    old["targets"][key] = {**old["targets"][key], "reimpl": t.reimpl.value * (1 + 1e-7)}
    assert compare(old, rec) == []
    old["targets"][key] = {**old["targets"][key], "reimpl": t.reimpl.value * 1.01}
    assert [line for line in compare(old, rec) if line.startswith(t.title)]


def test_a_control_that_stopped_breaking_and_an_outcome_that_flipped_are_named():
    rec = _record("002")
    old = _comparable(rec)
    c = rec.controls[0]
    old["controls"][c.id] = not c.reimpl.broke
    t = rec.targets[0]
    key = f"{t.quantity}|{t.relation}"
    old["targets"][key] = {**old["targets"][key], "outcome": "fails"}
    lines = compare(old, rec)
    assert f"control {c.id}: broke {not c.reimpl.broke} -> {c.reimpl.broke}" in lines
    assert f"{t.title}: fails -> {t.outcome}" in lines


def test_targets_added_and_removed_are_named():
    rec = _record("002")
    old = _comparable(rec)
    t = rec.targets[0]
    gone = old["targets"].pop(f"{t.quantity}|{t.relation}")
    old["targets"]["boundary.Nothing|~"] = {**gone, "title": "a target since dropped"}
    lines = compare(old, rec)
    assert f"target added: {t.title}" in lines and "target removed: a target since dropped" in lines


def test_a_move_inside_its_band_is_counted_not_listed_and_one_beyond_it_prints_at_report_precision():
    rec = _record("002")
    t = next(t for t in rec.targets if t.tolerance and t.reimpl.value)
    key = f"{t.quantity}|{t.relation}"
    old = _comparable(rec)
    old["targets"][key] = {**old["targets"][key], "reimpl": t.reimpl.value + 0.01 * t.tolerance}
    lines, inside = _compare_counted(old, rec)
    assert lines == [] and inside == 1
    exact, _ = _compare_counted(old, rec, exact=True)
    assert exact == [
        f"{t.title} (reimpl, within its band): {t.reimpl.value + 0.01 * t.tolerance!r} -> {t.reimpl.value!r}"
    ]
    old["targets"][key] = {**old["targets"][key], "reimpl": t.reimpl.value + 5 * t.tolerance}
    (line,), inside = _compare_counted(old, rec)
    shown = line.split(": ", 1)[1]
    a, b = shown.split(" -> ")
    assert inside == 0 and len(a) < 12 and len(b) < 12 and float(a) != float(b), line  # not 17-digit floats


def test_the_fewest_digits_that_tell_two_values_apart():
    from harness.rendering.diff import _apart

    assert _apart(7.955353506755147e-05, 7.951784973180605e-05, False) == "7.96e-05 -> 7.95e-05"
    assert _apart(0.123456, 0.123457, False) == "0.123456 -> 0.123457"
    assert _apart(1.0, 2.0, True) == "1.0 -> 2.0"


def _with_error(rec, error, se, state="supported"):
    r = rec.robustness.model_dump(mode="json")
    r["facts"]["comparisons"] = [{"label": "a before b", "state": state, "error": error, "error_mc_se": se}]
    return rec.model_copy(update={"robustness": type(rec.robustness).model_validate(r)})


def test_a_decision_error_moves_only_beyond_twice_its_mc_error():
    rec = _record("003")
    if rec.robustness is None:
        pytest.skip("record 003 holds no resampling")
    se = lambda p: (p * (1 - p) / 100) ** 0.5  # R = 100 data sets
    now = _with_error(rec, 0.06, se(0.06))
    lines, inside = _compare_counted(_comparable(_with_error(rec, 0.05, se(0.05))), now)
    assert lines == [] and inside == 1  # one data set more: inside its MC error
    lines, _ = _compare_counted(_comparable(_with_error(rec, 0.20, se(0.20))), now)
    assert lines == ["measured error of the decision on a before b: 20.0% -> 6.0%"]  # as the report prints it
    lines, _ = _compare_counted(_comparable(_with_error(rec, 0.06, se(0.06), "inconclusive")), now)
    assert lines == ["resampling of a before b: inconclusive -> supported"]  # a label has no band
    state = _comparable(now)
    state["robustness"] = {**state["robustness"], "state": "contradicted"}
    assert f"resampling: contradicted -> {rec.robustness.state}" in _compare_counted(state, now)[0]


def test_an_error_inside_its_band_is_listed_raw_with_exact_and_shares_print_as_the_report_does():
    rec = _record("003")
    if rec.robustness is None:
        pytest.skip("record 003 holds no resampling")
    now = _with_error(rec, 0.05, 0.0218)
    old = _comparable(now)
    old["robustness"]["orderings"]["a before b"] = ("supported", 0.06, 0.0237)
    assert _compare_counted(old, now) == ([], 1)
    lines, inside = _compare_counted(old, now, exact=True)
    assert inside == 0
    assert lines == ["measured error of the decision on a before b (within twice its MC error): 0.06 -> 0.05"]
    for a, b, said in ((0.76, 0.75, "76.0% -> 75.0%"), (0.7601, 0.7604, "76.01% -> 76.04%")):  # more decimals
        lines, _ = _compare_counted(_comparable(_with_error(rec, a, 0.0)), _with_error(rec, b, 0.0))  # only if needed
        assert lines == [f"measured error of the decision on a before b: {said}"]


def test_diff_help_states_the_bands():
    out = subprocess.run(
        [sys.executable, "-m", "harness", "diff", "--help"], cwd=REPORTS.parent, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    text = " ".join(out.stdout.split())
    assert "reproducibility band" in text and "sqrt(p (1 - p) / R)" in text and "--exact" in text, text


EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # git's empty tree: a ref that holds no record


def test_diff_against_a_ref_without_the_records_says_so():
    if subprocess.run(["git", "rev-parse", "--git-dir"], cwd=REPORTS.parent, capture_output=True).returncode:
        pytest.skip("not a git checkout")
    lines, changed = diff_records(REPORTS, EMPTY_TREE)
    assert changed and lines and all("not compared (no record at" in line for line in lines), lines


def test_diff_of_records_outside_the_repository_says_so(tmp_path):
    src = sorted(REPORTS.glob("002*.json"))
    if not src:
        pytest.skip("no committed record 002*")
    (tmp_path / src[0].name).write_bytes(src[0].read_bytes())
    update(
        tmp_path, "claims", src[0].stem, {"outs": {src[0].name: file_sha(tmp_path / src[0].name)}}
    )  # as a run locks it
    lines, changed = diff_records(tmp_path, "HEAD")
    assert changed and lines == [f"{src[0].stem}: not compared (the record is outside the repository)"]


def test_diff_cli_exit_status_and_output():
    """On a checkout whose reports match HEAD, ``diff`` says every claim is unchanged and exits 0."""
    root = REPORTS.parent
    dirty = subprocess.run(["git", "status", "--porcelain", "reports"], cwd=root, capture_output=True, text=True)
    if dirty.returncode != 0:
        pytest.skip("not a git checkout")
    if dirty.stdout.strip():
        pytest.skip("reports/ differs from HEAD in this checkout")
    out = subprocess.run([sys.executable, "-m", "harness", "diff"], cwd=root, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert all(line.endswith(": unchanged") for line in out.stdout.splitlines()), out.stdout
