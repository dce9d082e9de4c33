"""Claim 002 (Table 1) end to end on the real table, re-implementation arm."""

import json
from pathlib import Path

import pytest
import yaml

from harness import cli
from harness.build.runner import run_claim
from harness.core.claimslock import file_sha, update
from harness.core.datalock import DataError, Tables, load_lock
from harness.core.record import read_record, record_json
from harness.rendering.render import render_report
from harness.rendering.results import results_for

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
CLAIM = ROOT / "claims" / "002_table1_boundary_1e24.yaml"

# Expected values: paper Table 1 (three decimals) as quoted in the reference report
# ../shared/seeds/002_47a78f8cd250a481.txt; tolerance 0.0005 = half a unit in the last
# printed place (the claim's own tolerance).
TABLE1 = {"IFEval": 0.828, "BBH": 0.700, "MATH Lvl 5": 0.539, "GPQA": 0.424, "MUSR": 0.535, "MMLU-Pro": 0.563}


@pytest.fixture(scope="module")
def result(run_once):
    return run_once("002")


@pytest.fixture(scope="module")
def record(result):
    return result.record


def test_six_values_within_half_a_unit_of_table1(record):
    values = record.arms.reimpl.values
    for label, paper in TABLE1.items():
        assert values[f"boundary.{label}"] == pytest.approx(paper, abs=0.0005), label
    assert record.verdict.verdict == "reproduced"
    assert record.arms.upstream.status == "not run"


def test_targets_carry_the_paper_value_as_written(record):
    texts = {t.title: t.paper_text for t in record.targets}
    assert texts["BBH"] == "0.700" and texts["MATH Lvl 5"] == "0.539"  # not "0.7", not "0.5390"
    assert all(t.requirement.startswith("within 0.0005 of ") for t in record.targets)
    assert all(t.reason for t in record.targets)


def test_row_count_and_median_control(record):
    assert record.data["oll_rows_with_compute"] == 3663  # UPSTREAM.md: 3663 of 4576
    (ctl,) = record.controls
    assert ctl.id == "median_fit" and ctl.reimpl.broke is True and ctl.reimpl.targets_failed is True
    # Seed report: the median fits sit 0.109 to 0.333 below Table 1; require "far": > 0.05 each.
    moved = record.arms.reimpl.controls["median_fit"].values
    assert all(abs(moved[f"boundary.{k}"] - v) > 0.05 for k, v in TABLE1.items())


def test_cold_start_moves_nothing_beyond_tolerance(record):
    assert record.arms.reimpl.values["alt_start.max_shift"] < 0.0005
    assert results_for(record).start["mine_within"] is True


def test_results_state_the_support_of_the_evaluation_point(record):
    s = results_for(record).support
    # 582 of 3663 models sit at or above z = 3 (15.9%): under the 20% that makes a tail "thin".
    assert s["state"] == "upper_tail" and s["n_at_or_above"] == 582 and s["n_models"] == 3663


def test_report_renders_from_the_record_alone_and_is_stable(record):
    md = render_report(record)
    assert md.startswith("# At 10²⁴ FLOPs")
    assert "**Verdict: [reproduced](README.md#verdicts).**" in md
    assert "| benchmark | mine | above mine | mine at κ = 2000 | above it | authors' code | paper |" in md
    assert "| IFEval | 0.8278 |" in md
    assert "## Limitations" in md
    assert render_report(record) == md


def test_two_runs_give_byte_identical_records_and_reports(result, tables):
    again = run_claim(CLAIM, tables, upstream_options=None)
    assert record_json(again.record) == record_json(result.record)
    assert render_report(again.record) == render_report(result.record)


def test_a_wrong_target_is_not_reproduced(tmp_path, tables):
    raw = yaml.safe_load(CLAIM.read_text(encoding="utf-8"))
    raw["targets"][2]["paper"] = round(raw["targets"][2]["paper"] + 0.01, 3)  # MATH 0.539 -> 0.549
    raw["params"]["robustness_cold_start"] = False  # not needed for the verdict; halves the time
    raw["id"] = "moved"
    moved = tmp_path / "moved.yaml"
    moved.write_text(yaml.safe_dump(raw, allow_unicode=True, sort_keys=False), encoding="utf-8")
    rec = run_claim(moved, tables, upstream_options=None).record
    assert rec.verdict.verdict == "not reproduced"
    (reason,) = rec.verdict.reasons
    assert reason.state == "headline_missed" and reason.titles == ["MATH Lvl 5"]


def _altered_root(tmp_path, tables) -> Path:
    rel = tables.lock.tables["oll"].path
    dst = tmp_path / "data" / rel
    dst.parent.mkdir(parents=True)
    data = bytearray(tables.data("oll"))
    data[-3] = ord("9") if data[-3] != ord("9") else ord("8")  # one byte of one score
    dst.write_bytes(bytes(data))
    return tmp_path / "data"


def test_an_altered_table_is_refused_with_both_hashes(tmp_path, tables):
    root = _altered_root(tmp_path, tables)
    bad = Tables(load_lock(), root)
    with pytest.raises(DataError) as info:
        run_claim(CLAIM, bad, upstream_options=None)
    msg = str(info.value)
    assert "open_llm_leaderboard_with_tokens.csv" in msg and "altered" in msg
    assert tables.lock.tables["oll"].sha256 in msg  # expected hash named, and the found one differs


def test_a_missing_table_is_refused(tmp_path):
    with pytest.raises(DataError, match="is missing"):
        Tables(load_lock(), tmp_path).data("oll")


def test_a_failed_run_leaves_the_good_report_in_place(tmp_path, tables, record, capsys):
    out = tmp_path / "reports"
    out.mkdir()
    good = render_report(record)
    (out / "002_table1_boundary_1e24.md").write_text(good, encoding="utf-8")
    root = _altered_root(tmp_path, tables)
    status = cli.main(["--data-root", str(root), "run", "-j", "1", "--no-upstream", "--out", str(out), str(CLAIM)])
    assert status == 2
    assert "altered" in capsys.readouterr().err
    assert (out / "002_table1_boundary_1e24.md").read_text(encoding="utf-8") == good
    assert not (out / "002_table1_boundary_1e24.json").exists()


def test_cli_exit_status_for_a_bad_claim(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("id: bad\n", encoding="utf-8")
    assert cli.main(["validate", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "bad.yaml" in err and "claim: required key is missing" in err


def test_could_not_run_does_not_replace_a_good_report(tmp_path, record, monkeypatch, capsys):
    from harness.claimfiles.registry import PROTOCOLS
    from harness.core.errors import ProtocolError

    out = tmp_path / "reports"
    out.mkdir()
    good_md, good_json = render_report(record), record_json(record)
    (out / "002_table1_boundary_1e24.md").write_text(good_md, encoding="utf-8")
    (out / "002_table1_boundary_1e24.json").write_text(good_json, encoding="utf-8")
    update(
        out, "claims", record.claim.id, {"outs": {f"{record.claim.id}.json": file_sha(out / f"{record.claim.id}.json")}}
    )

    def broken(*args, **kwargs):
        raise ProtocolError("the optimiser returned no finite objective")

    monkeypatch.setattr(PROTOCOLS["boundary_at_budget"].protocol, "measure", broken)
    status = cli.main(
        ["run", "-j", "1", "--force", "--no-upstream", "--accept-degraded", "--out", str(out), str(CLAIM)]
    )
    assert status == 2
    assert "could not run" in capsys.readouterr().err
    assert (out / "002_table1_boundary_1e24.md").read_text(encoding="utf-8") == good_md
    assert (out / "002_table1_boundary_1e24.json").read_text(encoding="utf-8") == good_json


def test_rendering_the_written_record_gives_the_same_report(tmp_path, record):
    path = tmp_path / "r.json"
    path.write_text(record_json(record), encoding="utf-8")
    again = read_record(path)
    assert again == record
    assert record_json(again) == record_json(record)
    assert render_report(again) == render_report(record)
    assert json.loads(path.read_text(encoding="utf-8"))["schema_version"] == 2
