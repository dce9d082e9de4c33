"""A claim can stand on any table that carries compute: a column of FLOPs (the authors' Epoch AI frontiers).

The Epoch AI points tables hold one row per model, its training compute in FLOPs and its score; beside each,
the authors committed the tau = 0.98 sigmoid boundary their script fitted on it (``..._curve``, a grid of
compute and ``y_hat``), made with their Epoch script's own defaults (``--lambda_b 1e-4``). Both are read
through the data lock.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import yaml

from harness.claimfiles.spec import load_claim
from harness.core.errors import SpecError
from harness.rendering.results import results_for
from harness.stats.sigmoid import sigmoid_boundary

#: The Epoch tasks whose committed curve the authors' code gives back on the committed points, and how close:
#: the points are written to 6 significant digits (their script's ``f"{y:.6g}"``), so a refit on them moves
#: the curve by ~1e-4 at most. (On MATH level 5 and FrontierMath-Private it does not: their committed curve
#: is not what their code at the pin fits on the committed points -- 0.32 and 6e-3 away; not tested here.)
REPRODUCIBLE = {"epoch_gpqa_diamond": 5e-4, "epoch_otis_aime": 5e-4, "epoch_frontiermath_public": 5e-4}


def _claim_file(tmp_path, table: str, **params) -> object:
    doc = {
        "id": "epoch_claim",
        "claim": "An Epoch AI frontier at 10^25 FLOPs.",
        "locator": "a test",
        "protocol": "boundary_at_budget",
        "params": {
            "table": table,
            "compute": {"column": "training_compute_flop", "unit": "FLOPs"},
            "tasks": {"task": "score"},
            "tau": 0.98,
            "kappa": 50.0,
            "lam": 1e-4,  # their Epoch script's default --lambda_b
            "eval_x": 1e4,  # 10^25 FLOPs in units of 1e21
            "robustness_cold_start": False,
            **params,
        },
        "inputs": [table],
        "upstream": "prescriptive-scaling",
        "seed": 1,
        "targets": [{"quantity": "boundary.task", "paper": 0.5, "tolerance": 0.4, "reason": "a stand-in"}],
    }
    path = tmp_path / "epoch_claim.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def _curve(tables, table: str):
    c = tables.frame(f"{table}_curve")
    return np.log10(c["training_compute_flop"].to_numpy(float) / 1e21), c["y_hat"].to_numpy(float)


def test_the_compute_axis_is_one_column_or_the_proxy(tmp_path, tables):
    path = _claim_file(tmp_path, "epoch_gpqa_diamond", tokens_col="T")
    with pytest.raises(SpecError, match="replaces the proxy multiplier x tokens x params: drop tokens_col"):
        load_claim(path, tables=tables)
    path = _claim_file(tmp_path, "epoch_gpqa_diamond", compute={"column": "training_compute_flop"})
    with pytest.raises(SpecError, match=r"params\.compute\.unit"):
        load_claim(path, tables=tables)
    path = _claim_file(tmp_path, "epoch_gpqa_diamond", compute={"column": "compute_flop", "unit": "FLOPs"})
    with pytest.raises(SpecError, match="params.compute.column: column 'compute_flop' is not in table"):
        load_claim(path, tables=tables)


def test_flops_become_the_harness_unit(tmp_path, tables):
    """z = log10(FLOPs / 1e21): the points table's own log10_compute column, less 21."""
    from harness.protocols.leaderboard import leaderboard_frame

    spec = load_claim(_claim_file(tmp_path, "epoch_gpqa_diamond"), tables=tables)
    frame = leaderboard_frame(tables, spec.params)
    assert len(frame) == tables.entry("epoch_gpqa_diamond").rows
    np.testing.assert_allclose(frame["z"], frame["log10_compute"] - 21.0, atol=1e-9)


@pytest.mark.upstream
@pytest.mark.parametrize("table", sorted(REPRODUCIBLE))
def test_the_authors_code_gives_back_their_committed_curve(tmp_path, tables, checkout_pin, table):
    from harness.authors.upstream import UpstreamOptions, run_upstream_arm

    spec = load_claim(_claim_file(tmp_path, table), tables=tables)
    res = run_upstream_arm(spec, spec.protocol, spec.params, tables, options=UpstreamOptions(cache_dir=tmp_path))
    assert res.status == "ok", res.reason
    z, y_hat = _curve(tables, table)
    q = res.details["fits"]["task"]["params"]
    assert np.max(np.abs(sigmoid_boundary(z, q["y0"], q["L"], q["a"], q["beta"]) - y_hat)) < REPRODUCIBLE[table]


@pytest.mark.parametrize("table", sorted(REPRODUCIBLE))
def test_the_re_implementation_in_their_box_is_their_curve(tmp_path, tables, table):
    """Without a box the re-implementation may go where their box does not let them (a midpoint below the
    data, for GPQA diamond); refitted inside it, it lands on their committed curve."""
    spec = load_claim(_claim_file(tmp_path, table, box_check=[0.05, 50.0]), tables=tables)
    m = spec.protocol.measure(spec.params, tables, np.random.default_rng(0))
    z, y_hat = _curve(tables, table)
    q = m.details["boxed_fits"]["task"]["params"]
    assert np.max(np.abs(sigmoid_boundary(z, q["y0"], q["L"], q["a"], q["beta"]) - y_hat)) < 2e-3
    assert math.isfinite(m.values["boundary.task"])


def _committed_curve_at(tables, table: str, z_eval: float) -> float:
    """The authors' committed tau = 0.98 curve read off at ``z_eval`` (linear in z between its grid points)."""
    z, y_hat = _curve(tables, table)
    return float(np.interp(z_eval, z, y_hat))


def _epoch_claim_at_paper_lambda(tmp_path, tables, table: str = "epoch_gpqa_diamond", **params):
    """A claim that the authors' committed Epoch frontier reads what it does at 10^25 FLOPs, fitted at the paper's
    lambda = 1e-3 (Section 2.1) rather than at their Epoch script's default 1e-4."""
    paper = round(_committed_curve_at(tables, table, 4.0), 4)
    path = _claim_file(tmp_path, table, lam=1e-3, box_check=[0.05, 50.0], **params)
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    doc["targets"] = [
        {"quantity": "boundary.task", "paper": paper, "tolerance": 0.001, "reason": "the committed curve, read off"}
    ]
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return load_claim(path, tables=tables), paper


def test_a_small_table_is_not_called_the_edge_of_its_data(tmp_path, tables):
    """65 models, 23 of them at or above z = 4 (10^25 FLOPs): fewer than the 50 a 0.98-quantile needs for one to
    lie above it, but a third of the table, so the point is inside the data, not at its edge (issue 28)."""
    from harness.build.runner import _run_reimpl, assemble_record
    from harness.core.record import Arm
    from harness.rendering.render import render_report

    spec, _ = _epoch_claim_at_paper_lambda(tmp_path, tables)
    mine = _run_reimpl(spec, tables, {})
    rec = assemble_record(spec, tables, mine, Arm(status="not run", reason="switched off"))
    s = results_for(rec).support
    assert s["state"] == "small_table" and s["n_at_or_above"] == 23 and s["n_models"] == 65
    md = " ".join(render_report(rec).split())
    assert "upper edge" not in md and "23 of 65 models lie at or above z = 4.00, fewer than the 50" in md


@pytest.mark.upstream
def test_both_arms_miss_at_the_papers_lambda_and_the_authors_own_setting_closes_it(tmp_path, tables, checkout_pin):
    """At the paper's lambda = 1e-3 both arms miss the authors' committed GPQA diamond frontier by 0.02-0.03; their
    Epoch script fits at its own default, lambda = 1e-4 (read from their code, line 486 at the pin), where their
    code lands within 1e-4 of the committed value and the re-implementation inside their box within 1e-4 too: the
    report names that setting as the cause."""
    from harness.authors.upstream import UpstreamOptions, run_upstream_arm
    from harness.build.runner import _run_reimpl, assemble_record
    from harness.core.record import Arm
    from harness.rendering.render import render_report

    spec, paper = _epoch_claim_at_paper_lambda(tmp_path, tables)
    res = run_upstream_arm(spec, spec.protocol, spec.params, tables, options=UpstreamOptions(cache_dir=tmp_path))
    assert res.status == "ok", res.reason
    own = res.details["own_setting"]
    assert own["lam"] == 1e-4 and own["where"]["lam"].endswith("fit_benchmarks_runs_sigmoid_frontiers.py:486")
    theirs = Arm(status="ok", values=res.values, details=res.details, controls={})
    rec = assemble_record(spec, tables, _run_reimpl(spec, tables, {}), theirs)
    assert rec.verdict.verdict == "not reproduced"
    f = results_for(rec).own_setting
    assert f["state"] == "closes" and [c["name"] for c in f["changed"]] == ["lam"]
    (row,) = f["rows"]
    assert abs(row["theirs"] - paper) > 0.01 and abs(row["mine"] - paper) > 0.01  # both miss at 1e-3
    assert abs(row["theirs_at_own"] - paper) < 1e-4 and abs(row["mine_boxed_at_own"] - paper) < 1e-4  # both back
    lead = " ".join(render_report(rec).split("\n## ")[0].split())
    assert "at the claim's λ = 0.001" in lead and "authors' own λ = 10⁻⁴" in lead


def test_the_own_setting_is_not_blamed_where_no_value_is_missed(tmp_path, tables):
    """A value that both arms meet needs no cause: the authors' own setting is only stated as differing."""
    from harness.build.runner import _run_reimpl, assemble_record
    from harness.core.record import Arm

    spec = load_claim(_claim_file(tmp_path, "epoch_gpqa_diamond"), tables=tables)  # lam = 1e-4, any value
    mine = _run_reimpl(spec, tables, {})
    own = {"tau": 0.98, "kappa": 50.0, "lam": 1e-3, "where": {"lam": "x.py:1"}, "path": "epoch_script"}
    theirs = Arm(status="ok", values=dict(mine.values), details={"own_setting": own}, controls={})
    rec = assemble_record(spec, tables, mine, theirs)
    assert results_for(rec).own_setting["state"] == "no_common_miss"
    same = Arm(status="ok", values=dict(mine.values), details={"own_setting": {**own, "lam": 1e-4}}, controls={})
    assert results_for(assemble_record(spec, tables, mine, same)).own_setting is None  # the claim's own setting
