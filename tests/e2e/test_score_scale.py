"""Scores in percent (issue 28): a leaderboard claim on percent columns says so (``scale: percent``), and both
arms then fit the same fractions.

The Open LLM Leaderboard's IFEval and MATH Lvl 5 columns without " Raw" hold the raw accuracies times 100 (to
within 1.1e-15, checked below), so a claim on them with ``scale: percent`` must give the raw claim's boundaries,
in the re-implementation and in the authors' code alike. Before, the re-implementation fitted 0-100 scores with
a sigmoid bounded by 1 (every boundary 1.0000) while the authors' loader guessed the scale and divided.
"""

from __future__ import annotations

import numpy as np
import pytest
import yaml

from harness.claimfiles.spec import load_claim

pytestmark = pytest.mark.e2e

#: Columns whose percent twin is the raw column times 100, and the largest difference allowed between them.
TWINS = {"IFEval": "IFEval Raw", "MATH Lvl 5": "MATH Lvl 5 Raw"}
SAME = 1e-12


def _claim(tmp_path, percent: bool, twins=tuple(TWINS)):
    doc = {
        "id": "percent" if percent else "fraction",
        "claim": "Two boundaries at 10^24 FLOPs.",
        "locator": "a test",
        "protocol": "boundary_at_budget",
        "params": {
            "tasks": {label: label if percent else TWINS[label] for label in twins},
            "tau": 0.98,
            "kappa": 50.0,
            "lam": 1e-3,
            "eval_x": 1000.0,
            "robustness_cold_start": False,
            **({"scale": "percent"} if percent else {}),
        },
        "inputs": ["oll"],
        "upstream": "prescriptive-scaling",
        "seed": 1,
        "targets": [{"quantity": "boundary.IFEval", "paper": 0.828, "tolerance": 0.0005, "reason": "Table 1"}],
    }
    path = tmp_path / f"{doc['id']}.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def test_the_percent_columns_are_the_raw_ones_times_100(tables):
    frame = tables.frame("oll")
    for percent, raw in TWINS.items():
        assert np.nanmax(np.abs(frame[percent] / 100 - frame[raw])) < 1e-14


def test_the_re_implementation_fits_percent_scores_as_fractions(tmp_path, tables):
    out = {}
    for percent in (False, True):
        spec = load_claim(_claim(tmp_path, percent), tables=tables)
        out[percent] = spec.protocol.measure(spec.params, tables, np.random.default_rng(0)).values
    for label in TWINS:
        assert abs(out[True][f"boundary.{label}"] - out[False][f"boundary.{label}"]) < SAME
    assert abs(out[True]["boundary.IFEval"] - 0.828) < 0.0005  # Table 1's value, as claim 002 reproduces it


def _their_loader(checkout, path, columns: list[str]) -> np.ndarray:
    """``Y`` as their loader reads it (``_load_xy_from_csv``, which guesses each column's scale with
    ``maybe_scale_task_values``), in a process of its own."""
    import json
    import os
    import subprocess
    import sys

    code = (
        "import json, sys; from skill_frontier.core.sigmoid import _load_xy_from_csv as load; "
        "x, Y, kept = load(sys.argv[1], json.loads(sys.argv[2]), compute_product_cols=('T', 'B')); "
        "print(json.dumps(Y.tolist()))"
    )
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    done = subprocess.run(
        [sys.executable, "-c", code, str(path), json.dumps(columns)], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return np.array(json.loads(done.stdout.splitlines()[-1]), float)


@pytest.mark.upstream
def test_their_loader_reads_the_copy_as_the_fractions_the_re_implementation_fits(tmp_path, checkout_pin, monkeypatch):
    """Their loader guesses a column is in percent when its 95th percentile lies in (1, 100]: a hard benchmark
    scored under 1% but for a few models is left 100 times too large. On the copy the adapter gives it, every
    column is the fraction the re-implementation fits, whatever the guess would have made of it."""
    from harness.authors.adapters.authors_sigmoid import claim_table

    rng = np.random.default_rng(0)
    easy = np.round(rng.uniform(10, 90, 200), 4)
    hard = np.round(np.concatenate([rng.uniform(0, 0.9, 195), rng.uniform(1.1, 1.5, 5)]), 4)  # 95th pct < 1
    table = tmp_path / "t.csv"
    lines = ["T,B,easy,hard"] + [f"1,7,{e},{h}" for e, h in zip(easy, hard)]
    table.write_text("\n".join(lines) + "\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    request = {
        "params": {"table": "t", "tasks": {"e": "easy", "h": "hard"}, "scale": "percent"},
        "tables": {"t": str(table)},
    }
    fractions = np.column_stack([easy, hard]) / 100.0
    assert np.max(np.abs(_their_loader(checkout_pin, claim_table(request), ["easy", "hard"]) - fractions)) < SAME
    guessed = _their_loader(checkout_pin, table, ["easy", "hard"])
    assert np.max(np.abs(guessed[:, 0] - fractions[:, 0])) < SAME  # their guess is right for the easy one
    assert np.allclose(guessed[:, 1], hard)  # and leaves the hard one in percent: the copy is needed


@pytest.mark.upstream
@pytest.mark.slow
def test_the_authors_code_receives_the_same_fractions(tmp_path, tables, checkout_pin):
    from harness.authors.upstream import UpstreamOptions, run_upstream_arm

    out = {}
    for percent in (False, True):  # one task: each run is a cold fit of the authors' (tens of seconds)
        spec = load_claim(_claim(tmp_path, percent, twins=("IFEval",)), tables=tables)
        res = run_upstream_arm(spec, spec.protocol, spec.params, tables, options=UpstreamOptions(cache_dir=tmp_path))
        assert res.status == "ok", res.reason
        out[percent] = res
    assert abs(out[True].values["boundary.IFEval"] - out[False].values["boundary.IFEval"]) < SAME
    assert out[True].details["fits"]["IFEval"]["n"] == out[False].details["fits"]["IFEval"]["n"]
