"""Output that cannot be written (issue #29 item 6): a read-only reports folder, a full disk.

``render --out`` on a read-only folder, ``run --no-upstream --out`` on one and a full tmpfs gave tracebacks
from ``write_index`` / ``mkstemp`` and exit 1. Each must be a one-line error naming the path, exit 2, and
leave every file as it was. The real conditions are made with bubblewrap (a read-only bind, a tmpfs of a
few kilobytes: root ignores file modes, so ``chmod`` cannot make them); the same failures are also injected
into this process, which needs nothing of the machine.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness import cli

ROOT = Path(__file__).resolve().parents[2]


def _smallest_claim(reports: Path) -> str:
    return min(reports.glob("*.json"), key=lambda p: p.stat().st_size).stem


def _contents(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _one_line_error(err: str) -> list[str]:
    lines = [line for line in err.splitlines() if line.startswith("error: ")]
    assert lines and "Traceback" not in err, err
    return lines


def _bwrap() -> str:
    from harness.authors.sandbox import bwrap_path, unavailable

    why = unavailable()
    if why:
        pytest.skip(f"no working bubblewrap here to make a read-only folder or a full disk: {why}")
    return bwrap_path()


def _harness_in(bind: list[str], args: list[str]) -> subprocess.CompletedProcess:
    """``python -m harness ARGS`` with the whole filesystem as it is, but ``bind`` (bubblewrap's options)."""
    cmd = [_bwrap(), "--dev-bind", "/", "/", *bind, "--", sys.executable, "-m", "harness", *args]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("command", ["render", "run"])
def test_a_read_only_reports_folder_is_one_line_and_exit_2(sealed_reports, command):
    out = sealed_reports
    cid = _smallest_claim(out)
    before = _contents(out)
    args = [command, cid, "--out", str(out)] + (
        ["--no-upstream", "--accept-degraded", "--force", "--executor", "serial"] if command == "run" else []
    )
    done = _harness_in(["--ro-bind", str(out), str(out)], args)
    assert done.returncode == 2, done.stderr
    lines = _one_line_error(done.stderr)
    assert any(str(out) in line and "Read-only file system" in line for line in lines), lines
    assert _contents(out) == before  # atomicity: nothing half written, nothing replaced


def test_a_full_disk_is_one_line_and_exit_2(sealed_reports, tmp_path):
    """A tmpfs just large enough for the records, then filled to its last byte."""
    cid = _smallest_claim(sealed_reports)
    record = sealed_reports / f"{cid}.json"
    full = tmp_path / "full"
    full.mkdir()
    script = (
        f"cp {record} {sealed_reports}/claims.lock {full}/ && "
        f"(dd if=/dev/zero of={full}/filler bs=4096 2>/dev/null; true) && "
        f'{sys.executable} -m harness render {cid} --out {full}; echo "status $?" >&2; '
        f"sha256sum {full}/{cid}.json >&2; ls -a {full} >&2"
    )
    size = str(record.stat().st_size + (sealed_reports / "claims.lock").stat().st_size + (64 << 10))
    cmd = [_bwrap(), "--dev-bind", "/", "/", "--size", size, "--tmpfs", str(full), "--", "sh", "-c", script]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert "status 2" in done.stderr, done.stderr
    lines = _one_line_error(done.stderr)
    assert any(f"{full}/" in line and "No space left on device" in line for line in lines), lines
    import hashlib

    assert hashlib.sha256(record.read_bytes()).hexdigest() in done.stderr  # the record there is whole
    listed = done.stderr.split(f"{cid}.json\n", 1)[-1]
    assert ".tmp" not in listed and f"{cid}.md" not in listed  # nothing staged left, no report half made


@pytest.mark.parametrize("fault", [errno.EROFS, errno.ENOSPC])
def test_an_injected_write_failure_is_one_line_and_exit_2(sealed_reports, monkeypatch, capsys, fault):
    """The same without bubblewrap: every file write fails as a read-only folder or a full disk fails it."""
    import harness.core.fileio

    out = sealed_reports
    cid = _smallest_claim(out)
    before = _contents(out)
    real_fsync = os.fsync

    def failing(fd):
        raise OSError(fault, os.strerror(fault))

    monkeypatch.setattr(harness.core.fileio.os, "fsync", failing)
    assert cli.main(["render", cid, "--out", str(out)]) == 2
    lines = _one_line_error(capsys.readouterr().err)
    assert any(str(out) in line and os.strerror(fault) in line for line in lines), lines
    monkeypatch.setattr(harness.core.fileio.os, "fsync", real_fsync)
    assert _contents(out) == before
    assert json.loads((out / f"{cid}.json").read_text())["claim"]["id"] == cid


def test_a_data_lock_that_cannot_be_written_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys):
    """`data add` with the lock on a read-only folder (injected): the folder named, exit 2, the lock unchanged."""
    import harness.core.fileio

    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "u.csv").write_bytes(b"a,b\n1,2\n")
    lock = tmp_path / "lock.yaml"
    text = 'tables:\n  t:\n    path: u.csv\n    sha256: "' + "0" * 64 + '"\n    rows: 1\n    provenance: p\n'
    lock.write_text(text, encoding="utf-8")

    def read_only(*args, **kwargs):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(tmp_path / ".lock.yaml.x1y2.tmp"))

    monkeypatch.setattr(harness.core.fileio.tempfile, "mkstemp", read_only)
    argv = ["--lock", str(lock), "--data-root", str(tmp_path / "data"), "data", "add", "v"]
    assert cli.main([*argv, str(tmp_path / "data" / "u.csv"), "--provenance", "p"]) == 2
    (line,) = _one_line_error(capsys.readouterr().err)
    assert line.startswith(f"error: {tmp_path}: Read-only file system") and lock.read_text() == text
