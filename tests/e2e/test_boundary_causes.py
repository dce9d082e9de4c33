"""A report on boundaries names one cause for what moves the authors' values, the one it measured (issue 28).

The authors' code warms up through kappa = 10, 25 and then the claimed kappa only where kappa still rises, so at a
claimed kappa of 20 their warm fit is a fit at 25 while their cold start fits 20: their values move with the
start because the two starts fit different settings, not because their optimiser stopped short. The sentence on
the start must say so, as the comparison of the arms does; and where the claim does not refit inside their box,
no sentence may say that the box was looked at.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from harness.build.runner import _run_reimpl, assemble_record
from harness.claimfiles.spec import load_claim
from harness.core.record import Arm
from harness.rendering.render import render_report
from harness.rendering.results import results_for

pytestmark = pytest.mark.e2e

CLAIM = Path(__file__).resolve().parents[2] / "claims" / "002_table1_boundary_1e24.yaml"


def _claim(tmp_path, **params):
    raw = yaml.safe_load(CLAIM.read_text(encoding="utf-8"))
    raw.pop("bootstrap", None)
    raw.pop("multiverse", None)
    raw["id"] = "kappa20"
    raw["params"]["tasks"] = {"MATH Lvl 5": "MATH Lvl 5 Raw", "MMLU-Pro": "MMLU-PRO Raw"}
    raw["params"].update(params)
    raw["targets"] = [t for t in raw["targets"] if t["quantity"] in ("boundary.MATH Lvl 5", "boundary.MMLU-Pro")]
    raw["controls"] = []
    path = tmp_path / "kappa20.yaml"
    path.write_text(yaml.safe_dump(raw, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path


def _authors_like(spec, tables):
    """An authors' arm as their code answers at kappa = 20: the warm fit at 25 (their schedule), the cold at 20."""
    warm = spec.protocol.measure(spec.params.model_copy(update={"kappa": 25.0}), tables, np.random.default_rng(0))
    values = {k: v for k, v in warm.values.items() if k.startswith("boundary.")}
    cold = spec.protocol.measure(spec.params.model_copy(update={"warm_start": False}), tables, np.random.default_rng(1))
    shifts = []
    for k in spec.params.tasks:
        values[f"alt_start.boundary.{k}"] = cold.values[f"boundary.{k}"]
        shifts.append(abs(cold.values[f"boundary.{k}"] - values[f"boundary.{k}"]))
    values["alt_start.max_shift"] = max(shifts)
    values.update({f"coverage.{k}": warm.values[f"coverage.{k}"] for k in spec.params.tasks})
    fits = {k: {**f, "continuation": True} for k, f in warm.details["fits"].items()}
    alt = {k: {**f, "continuation": False} for k, f in cold.details["fits"].items()}
    return Arm(status="ok", values=values, details={"fits": fits, "alt_start_fits": alt}, controls={})


def test_the_start_and_the_comparison_name_one_cause(tmp_path, tables):
    spec = load_claim(_claim(tmp_path, kappa=20.0, box_check=None), tables=tables)
    rec = assemble_record(spec, tables, _run_reimpl(spec, tables, {}), _authors_like(spec, tables))
    r = results_for(rec)
    causes = r.start["causes"]
    assert [g["cause"] for g in causes] == ["setting"] and causes[0]["authors_kappa"] == 25.0
    assert all(e["cause"] == "setting" for e in r.arm_rows)  # the comparison blames the same setting
    md = " ".join(render_report(rec).split())  # the templates wrap prose where they like
    assert "their warm start ends at κ = 25, their cold start fits the claim's κ" in md
    assert "stops short" not in md and "stopped short" not in md
    assert "their optimiser's limits" not in md and "inside their limits" not in md  # no box_check: not measured
