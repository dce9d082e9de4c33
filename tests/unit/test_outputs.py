"""A claim's outputs under races, damage and interruption (issue #21 items 3-6): reads and writes of one claim
serialised by the project's write lock, the index never losing a row, edited records refused, staging
leftovers removed by the next command.

The records are the committed ones (copied to a scratch folder and locked there), so nothing runs a claim.
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from harness import cli
from harness.build import make
from harness.build.make import checked_record, plan
from harness.core.claimslock import LOCK_NAME, file_sha
from harness.core.errors import HarnessError
from harness.core.fileio import project_lock
from harness.core.record import read_record

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = sorted((ROOT / "reports").glob("*.json"))


class _Said:
    def __init__(self):
        self.lines = []

    def info(self, m):
        self.lines.append(("info", m))

    def note(self, m):
        self.lines.append(("note", m))

    def error(self, m):
        self.lines.append(("error", m))

    def errors(self) -> str:
        return "\n".join(m for k, m in self.lines if k == "error")


def _smallest():
    return min(COMMITTED, key=lambda p: p.stat().st_size)


@pytest.fixture
def out(sealed_reports):
    return sealed_reports


@pytest.fixture(autouse=True)
def _quick_drawing(monkeypatch):
    """Reports drawn as one line and no figures: these tests are about which record is drawn and when (the
    committed records may be older than today's templates)."""
    import harness.rendering.figures
    import harness.rendering.render

    monkeypatch.setattr(
        harness.rendering.render, "render_report", lambda record: f"report of {record.verdict.verdict}\n"
    )
    monkeypatch.setattr(harness.rendering.figures, "draw_figures", lambda record: [])


def _edit_verdict(path: Path, verdict: str) -> None:
    raw = json.loads(path.read_text(encoding="utf-8"))
    raw["verdict"]["verdict"] = verdict
    path.write_text(json.dumps(raw, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


# -- item 5: an edited record is not believed -------------------------------------------------------------------


def test_a_record_named_in_the_lock_reads_back(out):
    for p in out.glob("*.json"):
        assert checked_record(out, p.stem) == read_record(p)


def test_a_hand_edited_record_is_refused_by_read_render_and_list(out, capsys):
    cid = _smallest().stem
    _edit_verdict(out / f"{cid}.json", "not reproduced")
    with pytest.raises(HarnessError, match="was edited after it was written"):
        checked_record(out, cid)
    said = _Said()
    assert make.rerender(cid, out, said) == make.EXIT_ERROR and "was edited" in said.errors()
    assert not (out / f"{cid}.md").exists()  # nothing drawn from it
    assert cli.main(["list", "--out", str(out)]) != 0
    err = capsys.readouterr().err
    assert f"{cid}.json was edited after it was written" in err and "Traceback" not in err


def test_an_unreadable_record_makes_list_fail(out, capsys):
    (out / f"{_smallest().stem}.json").write_text('{"schema_version": 2, "claim": ', encoding="utf-8")
    assert cli.main(["list", "--out", str(out)]) == 2
    assert "not a readable JSON run record" in capsys.readouterr().err


def test_a_record_not_in_the_lock_is_not_rendered(out):
    cid = _smallest().stem
    lock = json.loads((out / LOCK_NAME).read_text(encoding="utf-8"))
    del lock["claims"][cid]
    (out / LOCK_NAME).write_text(json.dumps(lock), encoding="utf-8")
    said = _Said()
    assert make.rerender(cid, out, said) == make.EXIT_ERROR and f"{cid}.json is not in {LOCK_NAME}" in said.errors()


def _args(out: Path, **kw):
    return SimpleNamespace(out=str(out), accept_degraded=False, **kw)


def test_an_edited_record_is_replaced_only_by_a_run_with_the_authors_arm(out):
    cid = _smallest().stem
    _edit_verdict(out / f"{cid}.json", "not reproduced")
    edited = (out / f"{cid}.json").read_bytes()
    said = _Said()
    assert make._finish(_poor(out, cid), _args(out), True, said) == make.EXIT_DEGRADED
    assert (out / f"{cid}.json").read_bytes() == edited and not (out / f"{cid}.md").exists()
    assert "was edited" in said.errors() and "nothing was written" in said.errors()
    assert not (out / ".degraded").exists()
    assert make._finish(_good(out, cid), _args(out), True, _Said()) == make.EXIT_OK
    assert (out / f"{cid}.md").read_text() == "fresh\n" and checked_record(out, cid).claim.id == cid


def _pristine(cid: str):
    return read_record(next(p for p in COMMITTED if p.stem == cid))


def _poor(out: Path, cid: str) -> make.ClaimOutput:
    rec = _pristine(cid)
    upstream = rec.arms.upstream.model_copy(update={"status": "not run", "reason": "switched off"})
    poor = rec.model_copy(update={"arms": rec.arms.model_copy(update={"upstream": upstream})})
    return make.ClaimOutput(Path(f"{cid}.yaml"), poor, md="fresh\n")


def _good(out: Path, cid: str) -> make.ClaimOutput:
    return make.ClaimOutput(Path(f"{cid}.yaml"), _pristine(cid), md="fresh\n")


def test_run_says_an_edited_record_must_run_again(out):
    cid = _smallest().stem
    _edit_verdict(out / f"{cid}.json", "not reproduced")
    args = SimpleNamespace(
        out=str(out), lock=str(ROOT / "data" / "lock.yaml"), data_root=None, pins=None, force=False, no_upstream=True
    )
    try:
        planned, _, failed = plan(args, [ROOT / "claims" / f"{cid}.yaml"], _Said())
    except HarnessError as exc:  # no tables here
        pytest.skip(f"the claim cannot be planned here: {exc}")
    (item,) = planned
    assert "was edited" in item.run[0]  # not believed: it runs as if there were no record


# -- item 4: a failed render keeps the index's row -----------------------------------------------------------------


def test_a_failed_render_leaves_the_index_with_every_row(out):
    said = _Said()
    make.write_index(out, said)
    index = (out / "README.md").read_text(encoding="utf-8")
    cid = _smallest().stem
    assert cid in index
    (out / f"{cid}.json").write_text((out / f"{cid}.json").read_text(encoding="utf-8")[:200], encoding="utf-8")
    assert make.render_claims(out, [ROOT / "claims" / f"{cid}.yaml"], said) == make.EXIT_ERROR
    assert (out / "README.md").read_text(encoding="utf-8") == index
    assert "README.md was left as it was" in said.errors()


def test_an_old_schema_record_leaves_the_index_as_it_was(out):
    said = _Said()
    make.write_index(out, said)
    index = (out / "README.md").read_text(encoding="utf-8")
    cid = _smallest().stem
    raw = json.loads((out / f"{cid}.json").read_text(encoding="utf-8"))
    raw["schema_version"] = 1
    (out / f"{cid}.json").write_text(json.dumps(raw), encoding="utf-8")
    assert make.render_claims(out, [ROOT / "claims" / f"{cid}.yaml"], said) == make.EXIT_ERROR
    assert (out / "README.md").read_text(encoding="utf-8") == index


# -- item 3: render and run serialised -------------------------------------------------------------------------


def test_render_while_a_run_writes_never_puts_the_old_report_back(out, monkeypatch):
    """A render reads the old record, draws slowly; a run finishes meanwhile: the run's report must stay."""
    cid = _smallest().stem
    import harness.rendering.render as render_module

    started, slow = threading.Event(), 1.5
    real_render = render_module.render_report

    def slow_render(record):
        started.set()
        time.sleep(slow)
        return real_render(record)

    monkeypatch.setattr(render_module, "render_report", slow_render)
    said, failures = _Said(), []

    def render():
        try:
            failures.append(make.rerender(cid, out, said))
        except BaseException as exc:  # shown by the assertion below
            failures.append(repr(exc))

    renderer = threading.Thread(target=render)
    renderer.start()
    assert started.wait(30)
    assert make._finish(_good(out, cid), _args(out), True, _Said()) == make.EXIT_OK  # waits for the render
    renderer.join()
    assert failures == [make.EXIT_OK], (failures, said.lines)
    assert (out / f"{cid}.md").read_text(encoding="utf-8") == "fresh\n"


def test_a_poorer_run_planned_before_an_arm_run_cannot_overwrite_it(out):
    """Planned when the record lacked the authors' arm; by the time it finishes, an arm run has written one:
    the poorer run goes beside it (the check is made against the record there now)."""
    cid = _smallest().stem
    assert make._finish(_good(out, cid), _args(out), True, _Said()) == make.EXIT_OK  # the arm run, finishing first
    arm_report = (out / f"{cid}.json").read_bytes()
    assert read_record(out / f"{cid}.json").arms.upstream.status == _pristine(cid).arms.upstream.status
    poorer = _poor(out, cid)
    status = make._finish(poorer, _args(out), True, _Said())
    if _pristine(cid).arms.upstream.status == "ok":
        assert status == make.EXIT_DEGRADED and (out / f"{cid}.json").read_bytes() == arm_report


def test_render_holds_the_write_lock_while_it_reads(out):
    """Another process holding the lock (a run writing) makes render wait, then read what that run wrote."""
    cid = _smallest().stem
    script = (
        "import fcntl,os,sys,time;fd=os.open(sys.argv[1],os.O_RDWR|os.O_CREAT);fcntl.flock(fd,fcntl.LOCK_EX);"
        "print('held',flush=True);time.sleep(1.5)"
    )
    with subprocess.Popen(
        ["python3", "-c", script, str(make_lock_file())], stdout=subprocess.PIPE, text=True
    ) as holder:
        assert holder.stdout.readline().strip() == "held"
        t0 = time.monotonic()
        assert make.rerender(cid, out, _Said()) == make.EXIT_OK
        assert time.monotonic() - t0 >= 1.0


def make_lock_file() -> Path:
    from harness.core.fileio import LOCK_FILE

    LOCK_FILE.parent.mkdir(parents=True, exist_ok=True)
    return LOCK_FILE


def test_a_record_the_templates_cannot_draw_is_one_line_and_keeps_the_index(out, monkeypatch):
    import harness.rendering.render

    def broken(record):
        raise KeyError("all_headline")

    said = _Said()
    make.write_index(out, said)
    index = (out / "README.md").read_text(encoding="utf-8")
    monkeypatch.setattr(harness.rendering.render, "render_report", broken)
    cid = _smallest().stem
    assert make.render_claims(out, [ROOT / "claims" / f"{cid}.yaml"], said) == make.EXIT_ERROR
    assert f"{cid}: the report could not be worded from its record" in said.errors()
    assert (out / "README.md").read_text(encoding="utf-8") == index and not (out / f"{cid}.md").exists()


def test_the_lock_is_reentrant_within_a_thread():
    with project_lock(), project_lock(), project_lock():
        pass


# -- issue 39: no journal of the harness's own writes ----------------------------------------------------------


@pytest.mark.parametrize("where", [".pending", "figures/.pending", "calibration/.pending"])
def test_a_planted_journal_is_never_replayed(out, tmp_path, where):
    """Issue 39: any command replayed a `.pending` journal it found, renaming or deleting files anywhere. There is
    no journal now: nothing reads one."""
    victim, mine = tmp_path / "victim.txt", out / "kept.txt"
    victim.write_text("someone's")
    mine.write_text("a file of the folder, not staged")
    (out / where).mkdir(parents=True)
    plans = [
        {"rename": [[str(victim), str(out / "x")]], "remove": []},
        {"rename": [], "remove": [str(victim)]},
        {"rename": [[str(mine), str(out / "y")]], "remove": []},
        {"rename": [], "remove": [str(out / ".." / victim.name)]},
    ]
    for i, journal in enumerate(plans):
        (out / where / f"planted{i}.json").write_text(json.dumps(journal))
    assert cli.main(["list", "--out", str(out)]) == 0
    assert victim.read_text() == "someone's" and mine.read_text() == "a file of the folder, not staged"


def test_the_staging_names_are_ignored_by_git():
    names = [
        "reports/.harness-staged.000_x.json.k3j2x.tmp",
        "reports/figures/000_x/.harness-staged.a.svg.q.tmp",
    ]
    done = subprocess.run(["git", "check-ignore", *names], cwd=ROOT, capture_output=True, text=True)
    assert done.stdout.split() == names


# -- issue #29 item 1: an edited record is refused by every reader -------------------------------------------------


def _other_claim(cid: str) -> Path:
    return next(ROOT / "claims" / f"{p.stem}.yaml" for p in COMMITTED if p.stem != cid)


def test_an_edited_record_is_refused_by_every_reader(out, capsys):
    """Forged verdict: `list` printed it (exit 0) and rendering another claim wrote it into the index. Now list,
    render (of that claim or another: the index), diff and the poorer-than check of a run all refuse it (its
    bytes are not those the lock names), and nothing shows the forged verdict."""
    cid = _smallest().stem
    forged = "could not run" if _pristine(cid).verdict.verdict != "could not run" else "inconclusive"
    said = _Said()
    assert make.write_index(out, said) == make.EXIT_OK
    index = (out / "README.md").read_text(encoding="utf-8")
    _edit_verdict(out / f"{cid}.json", forged)
    kept = (out / f"{cid}.json").read_bytes()

    with pytest.raises(HarnessError, match="was edited after it was written"):
        checked_record(out, cid)
    assert cli.main(["list", "--out", str(out)]) == 2
    shown, err = capsys.readouterr()
    assert f"{cid}.json was edited after it was written" in err and "Traceback" not in err
    assert cid not in shown  # its row is not printed, forged or not

    assert cli.main(["render", _other_claim(cid).stem, "--out", str(out)]) == 2  # the index cannot be written
    err = capsys.readouterr().err
    assert "README.md was left as it was" in err and f"{cid}.json" in err
    assert (out / "README.md").read_text(encoding="utf-8") == index and forged not in index.split("## ")[0]  # the table

    assert make.rerender(cid, out, said) == make.EXIT_ERROR and "was edited" in said.errors()

    assert cli.main(["diff", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"{cid}.json was edited after it was written" in err and "Traceback" not in err

    # run: it re-runs the claim, and a poorer run does not replace the record (it may have had the authors' arm)
    assert make.current_record(out, cid)[0] is None and "was edited" in make.current_record(out, cid)[1]
    assert make._finish(_poor(out, cid), _args(out), True, _Said()) == make.EXIT_DEGRADED
    assert (out / f"{cid}.json").read_bytes() == kept


def test_a_record_at_a_git_ref_that_its_lock_does_not_name_is_not_compared(monkeypatch):
    from harness.rendering import diff

    text = _smallest().read_bytes()
    lock = {"claims": {"x": {"outs": {"x.json": file_sha(_smallest())}}}}
    shown = {"reports/x.json": text, f"reports/{LOCK_NAME}": json.dumps(lock).encode()}
    monkeypatch.setattr(diff, "_git_show", lambda ref, rel: shown.get(rel))
    old, why = diff._git_record("HEAD", "reports/x.json")
    assert old is not None and why == ""
    raw = json.loads(text)
    raw["verdict"]["verdict"] = "could not run" if raw["verdict"]["verdict"] != "could not run" else "inconclusive"
    shown["reports/x.json"] = json.dumps(raw).encode()
    old, why = diff._git_record("HEAD", "reports/x.json")
    assert old is None and "edited after it was written" in why
    del shown[f"reports/{LOCK_NAME}"]  # an older record, from before the lock: not compared
    old, why = diff._git_record("HEAD", "reports/x.json")
    assert old is None and why == "an older record layout"
