"""``make claims`` as a build: up to date, parallel = serial, never worse than what is there, and no report the
lock believes that is not whole, whatever interrupts the run."""

import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness import cli
from harness.build.runner import assemble_record
from harness.claimfiles.spec import load_claim
from harness.core.record import Arm, ArmControl, read_record
from harness.rendering.render import render_report

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
FAST = ["000", "002"]  # the two quickest claims


def _files(folder: Path, *, reports_only: bool = False) -> dict[str, bytes]:
    """Every file under ``folder`` (with ``reports_only``: the reports and figures, not the index or
    the lock)."""
    out = {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}
    if reports_only:
        out = {k: v for k, v in out.items() if k not in ("README.md", "claims.lock")}
    return out


@pytest.fixture(scope="module")
def fast_reports(tmp_path_factory):
    """One serial run of the two quickest claims, shared by the tests here (each works on a copy)."""
    out = tmp_path_factory.mktemp("fast") / "reports"
    assert cli.main(["run", "-j", "1", "--no-upstream", "--out", str(out), *FAST]) == 0
    return out


def _copy(reports: Path, tmp_path: Path) -> Path:
    out = tmp_path / "reports"
    shutil.copytree(reports, out)
    return out


def test_up_to_date_then_exactly_the_changed_claim_reruns(tmp_path, capsys, fast_reports):
    out = _copy(fast_reports, tmp_path)
    first = _files(out)
    assert cli.main(["run", "-j", "1", "--no-upstream", "--out", str(out), *FAST]) == 0
    err = capsys.readouterr().err
    assert "000_aime2025_shift_test: up to date" in err and "002_table1_boundary_1e24: up to date" in err
    assert _files(out) == first  # nothing rewritten
    # a copy of claim 000 whose file differs by one byte (a comment): only it reruns, and says why
    src = next((ROOT / "claims").glob("000*.yaml"))
    copy_dir = tmp_path / "claims"
    copy_dir.mkdir()
    copy = copy_dir / src.name
    copy.write_text(src.read_text(encoding="utf-8"), encoding="utf-8")
    assert cli.main(["run", "-j", "1", "--no-upstream", "--out", str(out), str(copy), "002"]) == 0
    err = capsys.readouterr().err
    assert "000_aime2025_shift_test: up to date" in err  # same bytes, same claim
    copy.write_text(src.read_text(encoding="utf-8") + "# one more byte\n", encoding="utf-8")
    assert cli.main(["run", "-j", "1", "--no-upstream", "--out", str(out), str(copy), "002"]) == 0
    err = capsys.readouterr().err
    assert "000_aime2025_shift_test: re-run: claim file changed" in err
    assert "002_table1_boundary_1e24: up to date" in err


@pytest.mark.slow  # a second whole build, for determinism
def test_parallel_equals_serial_byte_for_byte(tmp_path, fast_reports):
    serial, parallel = fast_reports, tmp_path / "parallel"
    assert cli.main(["run", "-j", "2", "--no-upstream", "--out", str(parallel), *FAST]) == 0
    a, b = _files(serial), _files(parallel)
    assert a.keys() == b.keys() and a == b


def test_records_hold_no_absolute_path_and_no_timing(fast_reports):
    text = (fast_reports / "000_aime2025_shift_test.json").read_text(encoding="utf-8")
    assert str(ROOT) not in text and "/tmp/" not in text and "seconds" not in text and "cached" not in text


def _report_with_authors_arm(tables, out: Path, run_once):
    """A committed-looking report of claim 000 that has the authors' arm (simulated from the other arm)."""
    spec = load_claim(next((ROOT / "claims").glob("000*.yaml")))
    mine = run_once("000").record.arms.reimpl
    theirs = Arm(
        status="ok",
        values={k: v for k, v in mine.values.items() if spec.vocabulary[k].arm == "both"},
        controls={c: ArmControl(values=m.values) for c, m in mine.controls.items()},
    )
    rec = assemble_record(spec, tables, mine, theirs, upstream_source={"url": "u", "commit": "0" * 40})
    from harness.core.record import record_json

    out.mkdir(parents=True, exist_ok=True)
    (out / f"{rec.claim.id}.json").write_text(record_json(rec), encoding="utf-8")
    (out / f"{rec.claim.id}.md").write_text(render_report(rec), encoding="utf-8")
    return rec


def test_offline_a_poorer_report_is_not_written_over_the_committed_one(tmp_path, tables, run_once, capsys):
    out = tmp_path / "reports"
    _report_with_authors_arm(tables, out, run_once)
    before = _files(out, reports_only=True)
    pins = tmp_path / "upstream.yaml"  # the pin's repository cannot be reached: no such host or path
    pins.write_text(
        "prescriptive-scaling:\n  url: file:///nonexistent/prescriptive-scaling\n"
        "  commit: 5bdca776562c9b9cf716ec0179e284e93e622ce4\n  paths: [skill_frontier/]\n",
        encoding="utf-8",
    )
    status = cli.main(
        [
            "run",
            "-j",
            "1",
            "--force",
            "--out",
            str(out),
            "--pins",
            str(pins),
            "--vendor",
            str(tmp_path / "vendor"),
            "000",
        ]
    )
    err = capsys.readouterr().err
    assert status == 3
    assert _files(out, reports_only=True) == before and "nothing was written" in err
    # the cause, as git gives it, not "run make vendor"
    assert "could not clone" in err and "does not appear to be a git repository" in err
    assert "--accept-degraded" in err
    # the explicit flag accepts the poorer report
    status = cli.main(
        [
            "run",
            "-j",
            "1",
            "--force",
            "--accept-degraded",
            "--out",
            str(out),
            "--pins",
            str(pins),
            "--vendor",
            str(tmp_path / "vendor"),
            "000",
        ]
    )
    assert status == 0 and read_record(out / "000_aime2025_shift_test.json").arms.upstream.status == "could not run"


def test_no_upstream_into_a_report_that_has_it_is_refused_too(tmp_path, tables, run_once):
    out = tmp_path / "reports"
    _report_with_authors_arm(tables, out, run_once)
    before = _files(out, reports_only=True)
    assert cli.main(["run", "-j", "1", "--force", "--no-upstream", "--out", str(out), "000"]) == 3
    assert _files(out, reports_only=True) == before and not (out / ".degraded").exists()


def _believed_but_different(out: Path) -> list[str]:
    """Make the reports in ``out`` differ from what a run writes (another verdict), their lock entries naming the
    new bytes (believed, as a good old report is); their ids."""
    from harness.core.claimslock import entry, update
    from harness.core.record import record_json

    ids = []
    for path in sorted(out.glob("*.json")):
        rec = read_record(path)
        other = "inconclusive" if rec.verdict.verdict != "inconclusive" else "could not run"
        rec = rec.model_copy(update={"verdict": rec.verdict.model_copy(update={"verdict": other})})
        files = {path.name: record_json(rec).encode(), f"{path.stem}.md": render_report(rec).encode()}
        for name, data in files.items():
            (out / name).write_bytes(data)
        found = entry(out, "claims", path.stem)
        update(
            out, "claims", path.stem, {**found, "outs": {n: hashlib.sha256(d).hexdigest() for n, d in files.items()}}
        )
        ids.append(path.stem)
    return ids


def _believed_pairs_are_whole(out: Path, ids: list[str]) -> list[str]:
    """Assert that every report the lock believes (its record's and its Markdown's sha256 the lock's) is the
    rendering of its record with its figures; the ids of those it does not believe."""
    from harness.core.claimslock import edited, entry

    stale = []
    for cid in ids:
        found = entry(out, "claims", cid)
        if edited(out, found, f"{cid}.json") or edited(out, found, f"{cid}.md"):
            stale.append(cid)
            continue
        rec = read_record(out / f"{cid}.json")
        assert (out / f"{cid}.md").read_text(encoding="utf-8") == render_report(rec), cid  # a pair, from one run
        for f in rec.figures:
            assert (out / f.path).is_file()
    return stale


def _made_again(out: Path, stale: list[str], fast_reports: Path, capsys) -> None:
    """``status`` names each report the lock does not believe; the next ``run`` makes it again without error: a
    record the lock does not believe is made again, byte for byte what a clean run makes, a report beside a
    believed record is worded again from it. (--accept-degraded: a record written just before the kill is not
    believed, so it is taken to have had the authors' arm, which this offline run has not.)"""
    from harness.core.claimslock import edited, entry

    rerun = [cid for cid in stale if edited(out, entry(out, "claims", cid), f"{cid}.json")]
    capsys.readouterr()
    assert cli.main(["status", "--no-upstream", "--no-studies", "--out", str(out), *FAST]) == (1 if stale else 0)
    err = capsys.readouterr().err
    assert all(f"{cid}: would re-run" in err or f"{cid}: would re-render" in err for cid in stale), err
    assert cli.main(["run", "-j", "1", "--no-upstream", "--accept-degraded", "--out", str(out), *FAST]) == 0
    assert not _believed_pairs_are_whole(out, [p.stem for p in fast_reports.glob("*.json")])
    clean, now = _files(fast_reports, reports_only=True), _files(out, reports_only=True)
    for cid in rerun:
        assert {k: v for k, v in now.items() if cid in k} == {k: v for k, v in clean.items() if cid in k}, cid


@pytest.mark.parametrize("delay", [0.5, 2.0, 4.0, 6.5])
def test_an_interrupted_run_leaves_no_report_the_lock_believes_that_is_not_whole(tmp_path, delay, fast_reports, capsys):
    """Killed (SIGKILL) at some moment of a run over two claims (issue 39: no journal, the lock entry written
    last): every report the lock believes is a whole pair from one run; every other is stale to ``status`` and
    made again by the next ``run``."""
    out = _copy(fast_reports, tmp_path)
    ids = _believed_but_different(out)
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness", "run", "-j", "1", "--force", "--no-upstream", "--out", str(out), *FAST],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    time.sleep(delay)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    stale = _believed_pairs_are_whole(out, ids)
    _made_again(out, stale, fast_reports, capsys)


@pytest.mark.parametrize("stop_at", ["figure", "json", "lock"])
def test_a_run_stopped_between_two_of_its_writes_leaves_a_stale_report_made_again(
    tmp_path, fast_reports, capsys, monkeypatch, stop_at
):
    """The same, deterministically: the run stops (as if killed) before its first figure, between its Markdown
    and its record, or between its record and the lock entry. The lock never believes the mixed outputs."""
    import harness.core.fileio as fileio

    cid = "002_table1_boundary_1e24"
    out = _copy(fast_reports, tmp_path)
    ids = _believed_but_different(out)
    real = fileio.atomic_write_bytes
    first = {"figure": lambda p: p.suffix == ".svg" and cid in str(p), "json": lambda p: p == out / f"{cid}.json"}
    first["lock"] = lambda p: p == out / "claims.lock"  # one claim runs: every write of the lock is its own

    def stopping(path, data, **kw):
        if first[stop_at](Path(path)):
            raise KeyboardInterrupt("killed")
        return real(path, data, **kw)

    monkeypatch.setattr(fileio, "atomic_write_bytes", stopping)
    assert cli.main(["run", "-j", "1", "--force", "--no-upstream", "--out", str(out), "002"]) != 0
    monkeypatch.setattr(fileio, "atomic_write_bytes", real)
    stale = _believed_pairs_are_whole(out, ids)
    assert stale == ([] if stop_at == "figure" else [cid])
    _made_again(out, stale, fast_reports, capsys)


# -- issue 30: what a build would do and why; issue 31: a warm build imports what it needs only -------------------


def test_status_says_what_run_would_do_and_why_and_runs_nothing(tmp_path, capsys, fast_reports):
    out = _copy(fast_reports, tmp_path)
    first = _files(out)
    assert cli.main(["status", "--no-upstream", "--no-studies", "--out", str(out), *FAST]) == 0
    err = capsys.readouterr().err
    assert "000_aime2025_shift_test: up to date" in err and "002_table1_boundary_1e24: up to date" in err
    src = next((ROOT / "claims").glob("000*.yaml"))
    copy = tmp_path / "claims" / src.name
    copy.parent.mkdir()
    copy.write_text(src.read_text(encoding="utf-8") + "# one more byte\n", encoding="utf-8")
    assert cli.main(["status", "--no-upstream", "--no-studies", "--out", str(out), str(copy), "002"]) == 1
    err = capsys.readouterr().err
    assert "000_aime2025_shift_test: would re-run: claim file changed" in err
    assert "002_table1_boundary_1e24: up to date" in err
    assert _files(out) == first  # nothing was run, nothing written


def test_a_warm_run_decides_from_the_records_without_importing_a_protocol(fast_reports):
    """Up to date from the lock and the records alone: no claim file parsed, no protocol, numpy, scipy or pandas
    imported."""
    code = (
        "import sys; from harness import cli; "
        f"status = cli.main(['run', '--no-upstream', '--out', {str(fast_reports)!r}, *{FAST!r}]); "
        "heavy = ('numpy', 'scipy', 'pandas', 'matplotlib', 'harness.claimfiles.spec', 'harness.protocols.base'); "
        "print(status, sorted(m for m in sys.modules if m.split('.')[0] in heavy or m in heavy "
        "or (m.startswith('harness.protocols.') and m.endswith('.protocol'))))"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.stdout.split(maxsplit=1) == ["0", "[]\n"], done.stdout + done.stderr
    assert "000_aime2025_shift_test: up to date" in done.stderr


def test_a_warm_run_still_verifies_the_tables_against_the_lock(tmp_path, tables, capsys, fast_reports):
    out = _copy(fast_reports, tmp_path)
    root = tmp_path / "data"
    shutil.copytree(tables.root, root)
    table = root / tables.lock.tables["oll"].path
    data = bytearray(table.read_bytes())
    data[-3] = ord("9") if data[-3] != ord("9") else ord("8")  # one byte of one score
    table.write_bytes(bytes(data))
    assert cli.main(["--data-root", str(root), "run", "--no-upstream", "--out", str(out), *FAST]) == 2
    err = capsys.readouterr().err
    assert "000_aime2025_shift_test: up to date" in err and "has been altered" in err


# -- issue 39: a claim path the up-to-date shortcut meets first; a claim from elsewhere with a committed id ---------


@pytest.mark.parametrize("kind", ["fifo", "dev_zero"])
def test_status_over_a_claim_path_that_is_no_regular_file_says_so_and_ends(tmp_path, capsys, fast_reports, kind):
    """The shortcut hashed the file before the hardened reader saw it: a FIFO hung `status`, /dev/zero ate
    memory."""
    out = _copy(fast_reports, tmp_path)
    path = tmp_path / next((ROOT / "claims").glob("000*.yaml")).name
    os.mkfifo(path) if kind == "fifo" else path.symlink_to("/dev/zero")

    def expire(*_):
        raise TimeoutError("status still running after 30 s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(30)
    try:
        code = cli.main(["status", "--no-upstream", "--no-studies", "--out", str(out), str(path)])
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert code != 0 and "not a regular file" in capsys.readouterr().err


def test_a_claim_from_elsewhere_with_a_committed_id_does_not_replace_that_report(tmp_path, capsys, monkeypatch):
    from harness.build import make

    monkeypatch.setattr(make, "REPORTS_DIR", tmp_path / "reports")
    src = next((ROOT / "claims").glob("000*.yaml"))
    copy = tmp_path / src.name
    copy.write_bytes(src.read_bytes())
    said = []
    kept, refused = make._not_over_a_committed_claim([copy, src], tmp_path / "reports", _Console(said))
    assert kept == [src] and refused == 1
    assert "has this id and its report is in reports/" in said[0]
    assert make._not_over_a_committed_claim([copy], tmp_path / "elsewhere", _Console(said)) == ([copy], 0)


class _Console:
    def __init__(self, said):
        self.said = said

    def error(self, text):
        self.said.append(text)
