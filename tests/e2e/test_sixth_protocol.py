"""A sixth protocol is a folder, a template and a registry line, and it re-runs nothing else.

In a scratch copy of the project (its tracked files), a minimal protocol is added the way the README's
"Adding a protocol" says; ``validate``, ``run``, ``render`` and the build work through it, and no other
claim's build key (run or render) nor the authors' cache key of any adapter changes.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from harness.paths import PROJECT_ROOT

pytestmark = pytest.mark.e2e

FOLDER = {
    "__init__.py": '''
        """Protocol ``mean_score``: the mean of one score column (a test's protocol)."""

        from ..card import ProtocolCard

        CARD = ProtocolCard(__name__, cost=1)
    ''',
    "quantities.py": '''
        """Quantities of ``mean_score``."""

        from ...quantities import Quantity


        def mean(label: str) -> str:
            return f"mean.{label}"


        def vocabulary(p: dict) -> dict:
            return {mean(p["label"]): Quantity(f"mean {p['label']} score")}


        def control_vocabulary(kind: str, p: dict, c: dict) -> dict:
            return {}
    ''',
    "protocol.py": '''
        """The mean of a score column."""

        import pandas as pd

        from ...schema import Label
        from ..base import Measurement, Protocol, ProtocolParams, finding
        from . import CARD
        from . import quantities as Q


        class MeanParams(ProtocolParams):
            table: Label
            column: Label
            label: Label


        class MeanScore(Protocol):
            card = CARD
            Params = MeanParams
            FINDINGS = {"mean": ("measured",)}

            def columns(self, params):
                return [("table", params.table, {"column": params.column})]

            def measure(self, params, tables, rng):
                y = pd.to_numeric(tables.frame(params.table)[params.column], errors="coerce")
                return Measurement({Q.mean(params.label): float(y.mean())}, {"n": int(y.notna().sum())})

            def findings(self, ctx):
                return {"mean": finding("measured", n=ctx.reimpl.details["n"])}


        PROTOCOL = MeanScore()
    ''',
}
TEMPLATE = """
    {% extends "base.md.j2" %}
    {% block summary %}
    The mean was taken over {{ finding("mean").facts.n }} models.
    {% endblock %}
    {% block setup %}
    One column, one mean.
    {% endblock %}
"""
CLAIM = """
    id: 900_mean_score
    claim: The mean MATH-500 score of the Artificial Analysis export is about 70%.
    locator: a test
    protocol: mean_score
    params: {table: aa_math500, column: math_500_pct, label: MATH-500}
    inputs: [aa_math500]
    seed: 1
    targets:
      - {quantity: mean.MATH-500, paper: 70, tolerance: 30, reason: a test}
"""
KEYS = """
import json
from harness.build import dependencies
from harness.checkout import load_pins
from harness.codegraph import HARNESS
from harness.datalock import load_lock
from harness.spec import load_claim
from harness.upstream import _adapter
from harness.paths import CLAIMS_DIR
lock, pins, out = load_lock(), load_pins(), {}
for path in sorted(CLAIMS_DIR.glob("*.yaml")):
    spec = load_claim(path, lock=lock)
    adapter = _adapter(spec.protocol, HARNESS)
    out[spec.id] = {"build": dependencies(spec, lock, pins), "adapter": adapter.code if adapter else None}
print(json.dumps(out))
"""


def _copy_project(dest: Path) -> None:
    files = (
        subprocess.run(["git", "ls-files", "-z"], cwd=PROJECT_ROOT, capture_output=True, check=True)
        .stdout.decode()
        .split("\0")
    )
    for rel in filter(None, files):
        src = PROJECT_ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)


def _harness(copy: Path, data_root: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(copy), "HARNESS_DATA_ROOT": str(data_root)}
    return subprocess.run([sys.executable, *args], cwd=copy, env=env, capture_output=True, text=True, timeout=600)


def test_a_sixth_protocol_is_a_folder_a_template_and_a_registry_line(tmp_path, tables):
    copy = tmp_path / "project"
    _copy_project(copy)
    before = json.loads(_harness(copy, tables.root, "-c", KEYS).stdout)

    folder = copy / "harness" / "protocols" / "mean_score"
    folder.mkdir()
    for name, text in FOLDER.items():
        (folder / name).write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    (copy / "templates" / "mean_score.md.j2").write_text(textwrap.dedent(TEMPLATE).lstrip(), encoding="utf-8")
    registry = copy / "harness" / "registry.py"
    text = registry.read_text(encoding="utf-8")
    assert '    "shift_test",\n)' in text
    registry.write_text(text.replace('    "shift_test",\n)', '    "shift_test",\n    "mean_score",\n)'), "utf-8")
    (copy / "claims" / "900_mean_score.yaml").write_text(textwrap.dedent(CLAIM).lstrip(), encoding="utf-8")

    after = json.loads(_harness(copy, tables.root, "-c", KEYS).stdout)
    assert {k: v for k, v in after.items() if k != "900_mean_score"} == before  # nothing else re-runs

    done = _harness(copy, tables.root, "-m", "harness", "validate", "--data")
    assert done.returncode == 0, done.stderr
    assert "ok  900_mean_score.yaml  (mean_score, 1 targets, 0 controls)" in done.stdout
    done = _harness(copy, tables.root, "-m", "harness", "run", "-j", "1", "900")
    assert done.returncode == 0, done.stderr
    assert "900_mean_score: reproduced" in done.stdout
    report = (copy / "reports" / "900_mean_score.md").read_text(encoding="utf-8")
    assert "The mean was taken over 200 models." in report and "**Verdict: reproduced.**" in report
    done = _harness(copy, tables.root, "-m", "harness", "render", "900")
    assert done.returncode == 0, done.stderr
    assert (copy / "reports" / "900_mean_score.md").read_text(encoding="utf-8") == report
    done = _harness(copy, tables.root, "-m", "harness", "run", "-j", "1", "900")
    assert done.returncode == 0 and "900_mean_score: up to date" in done.stderr, done.stderr
