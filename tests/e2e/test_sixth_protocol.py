"""A sixth protocol, added as docs/adding-a-protocol.md says, works and re-runs nothing else.

In a scratch copy of the project (its tracked files), the page is followed literally: every block that names a
file is written there (or appended), and the registry line it asks for is added. ``validate``, ``run``,
``render`` and the build work through the new protocol, no other claim's build key (run or render) nor the
authors' cache key of any adapter changes, and the registry's contract tests and the claim-set tests pass in the
copy.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.core.paths import PROJECT_ROOT

pytestmark = pytest.mark.e2e

DOC = PROJECT_ROOT / "docs" / "adding-a-protocol.md"
#: A fenced block of the page, with the file it is written to (``file=``) or appended to (``append=``).
BLOCK = re.compile(r"^```\w+ (file|append)=(\S+)\n(.*?)^```$", re.M | re.S)
#: The registry line the page asks for, by the protocol's name.
NEW_PROTOCOL = "mean_score"


def _blocks() -> list[tuple[str, str, str]]:
    """``(how, path, text)`` of every block of docs/adding-a-protocol.md that names a file."""
    found = BLOCK.findall(DOC.read_text(encoding="utf-8"))
    assert found, f"{DOC}: no block names its file"
    return found


KEYS = """
import json
from harness.build.make import record_deps
from harness.authors.checkout import load_pins
from harness.core.paths import HARNESS
from harness.core.datalock import load_lock
from harness.claimfiles.spec import load_claim
from harness.authors.upstream import _adapter
from harness.core.paths import CLAIMS_DIR
lock, pins, out = load_lock(), load_pins(), {}
for path in sorted(CLAIMS_DIR.glob("*.yaml")):
    spec = load_claim(path, lock=lock)
    adapter = _adapter(spec.protocol, HARNESS)
    c = spec.claim
    deps = record_deps(spec.path, spec.protocol.name, c.inputs, c.upstream, lock, pins, c.paper)
    out[spec.id] = {"record": deps, "adapter": adapter.code if adapter else None}
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


@pytest.mark.slow  # runs the contract and claim-set tests again in a scratch copy
def test_a_sixth_protocol_is_a_folder_a_template_and_a_registry_line(tmp_path, tables):
    copy = tmp_path / "project"
    _copy_project(copy)
    before = json.loads(_harness(copy, tables.root, "-c", KEYS).stdout)

    for how, rel, text in _blocks():
        target = copy / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if how == "file":
            target.write_text(text, encoding="utf-8")
        else:
            target.write_text(target.read_text(encoding="utf-8") + "\n" + text, encoding="utf-8")
    registry = copy / "harness" / "claimfiles" / "registry.py"
    text = registry.read_text(encoding="utf-8")
    assert text.count("\n)\n") >= 1 and "PROTOCOLS: dict[str, ProtocolCard] = _cards(" in text
    head, tail = text.split("PROTOCOLS: dict[str, ProtocolCard] = _cards(", 1)
    tail = tail.replace("\n)\n", f'\n    "{NEW_PROTOCOL}",\n)\n', 1)  # the page's line, after the registry's last
    registry.write_text(head + "PROTOCOLS: dict[str, ProtocolCard] = _cards(" + tail, "utf-8")

    after = json.loads(_harness(copy, tables.root, "-c", KEYS).stdout)
    assert {k: v for k, v in after.items() if k != "900_mean_score"} == before  # nothing else re-runs (its template
    # re-renders every report: templates/** is one dependency of each)

    done = _harness(copy, tables.root, "-m", "harness", "validate", "--data")
    assert done.returncode == 0, done.stderr
    assert "ok  900_mean_score.yaml  (mean_score, 1 targets, 0 controls)" in done.stdout
    done = _harness(copy, tables.root, "-m", "harness", "run", "-j", "1", "900")
    assert done.returncode == 0, done.stderr
    assert "900_mean_score: reproduced" in done.stdout
    report = (copy / "reports" / "900_mean_score.md").read_text(encoding="utf-8")
    assert "One column, one mean, over 200 models." in report
    assert "**Verdict: [reproduced](README.md#verdicts).**" in report
    done = _harness(copy, tables.root, "-m", "harness", "render", "900")
    assert done.returncode == 0, done.stderr
    assert (copy / "reports" / "900_mean_score.md").read_text(encoding="utf-8") == report
    done = _harness(copy, tables.root, "-m", "harness", "run", "-j", "1", "900")
    assert done.returncode == 0 and "900_mean_score: up to date" in done.stderr, done.stderr
    contract = _harness(
        copy,
        tables.root,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "tests/unit/test_protocol_contract.py",
        "tests/e2e/test_corpus.py::test_the_corpus_spans_every_protocol",
        "tests/unit/test_claim_set.py",
        "tests/unit/test_layers.py",
    )
    assert contract.returncode == 0, contract.stdout[-3000:]
    assert (
        f"test_protocol_contract[{NEW_PROTOCOL}-"
        in _harness(
            copy, tables.root, "-m", "pytest", "--collect-only", "-q", "tests/unit/test_protocol_contract.py"
        ).stdout
    )
