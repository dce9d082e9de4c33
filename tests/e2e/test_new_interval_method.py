"""A new interval method is one class in one source file (issue 30).

In a scratch copy of the project (its tracked files), ``harness/stats/methods.py`` alone is edited: a normal
interval (the estimate plus or minus z times the standard deviation of the B cluster-bootstrap draws) is
appended as a class and registered in ``METHODS``. Without touching any other file, a claim file may then name
it (as its method and among the methods its study measures), the coverage study measures it and its decision,
the claim's resampling decides with it and words it, and the study's figure gives it its colour.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.core.paths import PROJECT_ROOT

pytestmark = pytest.mark.e2e

NEW_METHOD = '''

@dataclass(frozen=True)
class Normal(_Method):
    """Normal interval: the estimate plus or minus z times the standard deviation of the B resamples."""

    name: str = "normal"
    words: ClassVar[str] = "normal interval of the cluster bootstrap (the estimate plus or minus z sd)"
    colour: ClassVar[str] = "#123456"

    def needs(self, n_clusters: int) -> tuple:
        return (BOOTSTRAP,)

    def interval(self, quantity, estimate, resamples, n_clusters, level) -> Interval:
        from scipy.stats import norm

        v = column(resamples[BOOTSTRAP], quantity)
        v = v[np.isfinite(v)]
        half = float(norm.ppf(0.5 + level / 2) * np.std(v, ddof=1))
        return Interval(estimate - half, estimate + half, level, self.name, int(v.size), 0)

    def describe(self, n_clusters: int) -> dict:
        return {"kind": "normal", "resampling": "the B resamples' standard deviation"}


METHODS[Normal.name] = Normal()
'''

CHECK = r"""
import json, re
from functools import partial
import numpy as np
from harness.core.datalock import load_lock
from harness.core.paths import CLAIMS_DIR
from harness.claimfiles.spec import load_claim
from harness.stats.calibration import coverage_study
from harness.stats.methods import METHODS, decision_interval
from harness.protocols.base import Resampling
from harness.rendering.study_files import _colour

# a claim file may name it
path = next(p for p in sorted(CLAIMS_DIR.glob("*.yaml")) if "calibration:" in p.read_text())
text = path.read_text()
text = re.sub(r"(?m)^(\s*)method: \w+", r"\1method: normal", text)
text = re.sub(r"(?m)^(\s*)methods: \[[^\]]*\]", r"\1methods: [percentile, normal]", text)
new = path.with_name("990_" + path.name.split("_", 1)[1])
new.write_text(text.replace("id: " + path.stem, "id: " + new.stem))
spec = load_claim(new, lock=load_lock())
assert spec.claim.bootstrap.method == "normal", spec.claim.bootstrap.method
assert "normal" in spec.claim.bootstrap.calibration.methods

# the coverage study measures it and its decision
def stat(indices, rng, *, y):
    return {"mean": float(np.mean(y[indices])), "diff": float(np.mean(y[indices]) - 0.5)}

rng = np.random.default_rng(0)
labels = np.repeat(np.arange(30), 2).astype(object)
y = rng.normal(size=30)[labels.astype(int)] + rng.exponential(size=labels.size)
design = Resampling(labels.size, labels, partial(stat, y=y), "toy rows")
out = coverage_study(design, seed=3, n_replicates=12, n_resamples=40, methods=(METHODS["normal"], METHODS["basic"]))
assert set(out["coverage"]["mean"]) == {"normal", "basic"}, out["coverage"]["mean"]
assert 0.0 <= out["coverage"]["mean"]["normal"]["coverage"] <= 1.0
assert out["methods"]["normal"]["kind"] == "normal"
assert _colour("normal") == "#123456"

# the decision reads its one-sided bounds
draws = type("Draws", (), {"names": ("mean",), "values": np.array([[v] for v in rng.normal(1.0, 0.1, 200)]),
                            "column": lambda self, q: self.values[:, 0]})()
iv = decision_interval(METHODS["normal"], "mean", 1.0, {("bootstrap",): draws}, 30, 0.05)
assert iv.method == "normal" and iv.lo < 1.0 < iv.hi
print(json.dumps({"ok": True, "claim": new.name}))
"""


def _copy_project(dest: Path) -> None:
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=PROJECT_ROOT, capture_output=True, check=True).stdout
    for rel in filter(None, listed.decode().split("\0")):
        src = PROJECT_ROOT / rel
        if src.is_file() and not rel.startswith("reports/"):
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            (dest / rel).write_bytes(src.read_bytes())


def test_a_new_interval_method_is_one_class_in_one_file(tmp_path, tables):
    copy = tmp_path / "project"
    _copy_project(copy)
    methods = copy / "harness" / "stats" / "methods.py"
    methods.write_text(methods.read_text(encoding="utf-8") + NEW_METHOD, encoding="utf-8")
    changed = [
        p.relative_to(copy).as_posix()
        for p in copy.rglob("*")
        if p.is_file() and p.read_bytes() != (PROJECT_ROOT / p.relative_to(copy)).read_bytes()
    ]
    assert changed == ["harness/stats/methods.py"]

    env = {**os.environ, "PYTHONPATH": str(copy), "HARNESS_DATA_ROOT": str(tables.root)}
    done = subprocess.run([sys.executable, "-c", CHECK], cwd=copy, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert '"ok": true' in done.stdout
