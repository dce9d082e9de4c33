"""Probes of the faults issue 39 lists, run through the command line against any commit of the project.

Usage: ``python -m benchmarks.probes REF [NAME ...]`` (``REF`` a git ref, or ``.`` for this working tree).
Each probe makes a scratch copy of the project at ``REF`` (``vendor/`` copied from this checkout, an empty
``.cache/``), breaks one input on purpose, runs ``python -m harness`` there with this interpreter and a time
limit, and says whether the harness held: it finished in time, without a traceback, and did what the issue
asks. Printed: one line per probe (held / FAILED and why) and the count. A probe is the same command line for
every ref, so two refs are compared probe by probe.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("HARNESS_DATA_ROOT", ROOT.parent / "shared" / "data"))
LIMIT_S = 120
PROBES = {}


def probe(fn):
    PROBES[fn.__name__] = fn
    return fn


class Project:
    """A scratch copy of the project at a ref."""

    def __init__(self, ref: str, tmp: Path):
        self.dir = tmp / "project"
        self.dir.mkdir()
        if ref == ".":  # this working tree, edits included
            listed = subprocess.run(
                ["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True, check=True
            ).stdout.decode()
            for rel in filter(None, listed.split("\0")):
                if (ROOT / rel).is_file():
                    (self.dir / rel).parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(ROOT / rel, self.dir / rel)
        else:
            files = subprocess.run(["git", "archive", ref], cwd=ROOT, capture_output=True, check=True).stdout
            subprocess.run(["tar", "-x"], input=files, cwd=self.dir, check=True)
        shutil.copytree(ROOT / "vendor", self.dir / "vendor", symlinks=True)
        self.tmp = tmp

    def run(self, *args, timeout=LIMIT_S, env=None, stdin=None):
        """``python -m harness ARGS`` here: (exit status or 'hung', stdout+stderr as text, bounded)."""
        log = self.tmp / f"log{time.monotonic_ns()}"
        with open(log, "wb") as out:
            p = subprocess.Popen(
                [sys.executable, "-m", "harness", *map(str, args)],
                cwd=self.dir,
                stdout=out,
                stderr=out,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                env={**os.environ, "HARNESS_DATA_ROOT": str(DATA), "PYTHONPATH": str(self.dir), **(env or {})},
            )
            try:
                code = p.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
                code = f"hung ({timeout} s)"
        with open(log, "rb") as f:
            text = f.read(1 << 20).decode(errors="replace")
        return code, text

    def claim(self, name="probe", **changes) -> Path:
        """A cheap shift-test claim (claim 000 at few permutations), outside claims/, with ``changes``."""
        spec = yaml.safe_load((self.dir / "claims" / "000_aime2025_shift_test.yaml").read_text())
        for key in ("multiverse", "resampling", "paper"):
            spec.pop(key, None)
        spec["params"].pop("power", None)
        spec["params"].update(n_perm=200, n_perm_precise=200, eps_grid=[1.0e-6])
        spec["controls"] = spec["controls"][:1]
        spec["id"] = name
        spec["targets"] = [t for t in spec["targets"] if "paper" not in t]
        for path, value in changes.items():
            node, *keys = path.split(".")
            where = spec
            for k in [node, *keys][:-1]:
                where = where[int(k)] if isinstance(where, list) else where[k]
            last = [node, *keys][-1]
            where[int(last) if isinstance(where, list) else last] = value
        folder = self.tmp / "elsewhere"
        folder.mkdir(exist_ok=True)
        path = folder / f"{name}.yaml"
        path.write_text(yaml.safe_dump(spec, allow_unicode=True, sort_keys=False))
        return path


def clean(code, text, ok_codes=(1, 2)):
    """Finished in time, with one of ``ok_codes``, and no traceback."""
    if str(code).startswith("hung"):
        return False, f"still running after the probe's time limit ({code})"
    if "Traceback" in text:
        return False, "a traceback: " + text[text.index("Traceback") :][:160].replace("\n", " | ")
    if code not in ok_codes:
        return False, f"exit {code}: {text[-160:]!r}"
    return True, f"exit {code}"


def refused(p: Project, *args):
    return clean(*p.run(*args))


# --- claim files the user names -------------------------------------------------------------------------------
def _claim_replaced(p, make):
    """Claim 000's file replaced by ``make(path)``; status and a run of it finish, refusing it in one line."""
    path = next((p.dir / "claims").glob("000_*.yaml"))
    path.unlink()
    make(path)
    for cmd in (("status",), ("run", "--no-upstream", "-j", "1", "--out", p.tmp / "out", "000")):
        held, why = clean(*p.run(*cmd, timeout=60))
        if not held:
            return held, f"{cmd[0]}: {why}"
    return True, "status and run refuse it"


@probe
def claim_path_is_a_fifo(p):
    return _claim_replaced(p, os.mkfifo)


@probe
def claim_path_links_to_dev_zero(p):
    return _claim_replaced(p, lambda path: path.symlink_to("/dev/zero"))


@probe
def the_reports_lock_is_a_fifo(p):
    """reports/claims.lock replaced by a FIFO: status finishes (every claim stale) instead of blocking on it."""
    lock = p.dir / "reports" / "claims.lock"
    lock.unlink()
    os.mkfifo(lock)
    code, text = p.run("status", timeout=60)
    if str(code).startswith("hung") or "Traceback" in text:
        return False, f"{code}: {text[-160:]!r}"
    return True, f"exit {code}; status finished"


@probe
def a_claim_outside_claims_with_a_committed_id_leaves_that_report(p):
    path = p.claim("000_aime2025_shift_test", **{"targets.0.value": -1.0})
    before = (p.dir / "reports" / "000_aime2025_shift_test.md").read_bytes()
    code, text = p.run("run", "--force", "-j", "1", path, timeout=600)
    after = (p.dir / "reports" / "000_aime2025_shift_test.md").read_bytes()
    if str(code).startswith("hung"):
        return False, "hung"
    return (before == after), ("report unchanged" if before == after else "the committed report was replaced")


@probe
def swapped_records_are_not_rendered_under_each_others_names(p):
    rep = p.dir / "reports"
    a, b = rep / "000_aime2025_shift_test.json", rep / "002_table1_boundary_1e24.json"
    da, db = a.read_bytes(), b.read_bytes()
    a.write_bytes(db)
    b.write_bytes(da)
    md = rep / "000_aime2025_shift_test.md"
    before = md.read_bytes()
    code, text = p.run("render", "000")
    wrote_other = md.read_bytes() != before and b"Table 1" in md.read_bytes()[:400]
    if str(code).startswith("hung") or "Traceback" in text:
        return False, "hung or traceback"
    return (not wrote_other and code != 0), f"exit {code}; " + (
        "002's report written as 000's" if wrote_other else "refused"
    )


@probe
def a_planted_journal_is_not_replayed(p):
    victim = p.tmp / "victim.txt"
    victim.write_text("someone's file")
    for folder in ("reports/figures/.pending", "reports/calibration/.pending", "reports/.pending"):
        (p.dir / folder).mkdir(parents=True, exist_ok=True)
        (p.dir / folder / "planted.json").write_text(
            '{{"rename": [["{}", "{}"]], "remove": ["{}"]}}'.format(victim, p.tmp / "moved.txt", victim)
        )
    p.run("status")
    p.run("list")
    return victim.exists(), "untouched" if victim.exists() else "a command deleted or moved a file outside the project"


@probe
def other_programs_tmp_files_under_out_survive(p):
    out = p.tmp / "out"
    out.mkdir()
    theirs = out / ".someone-else.tmp"
    theirs.write_text("not the harness's")
    p.run("run", "--no-upstream", "-j", "1", "--out", out, p.claim())
    return theirs.exists(), ("kept" if theirs.exists() else "deleted")


# --- the data lock -----------------------------------------------------------------------------------------------
def _table(p, name, header):
    path = p.tmp / name
    path.write_text(header + "\n" + "\n".join(f"{i},{i / 10}" for i in range(5)) + "\n")
    return path


@probe
def two_data_adds_at_once_keep_both_tables(p):
    lock = p.dir / "data" / "lock.yaml"
    procs = []
    for n in ("alpha", "beta"):
        t = _table(p, f"{n}.csv", "a,b")
        procs.append(
            subprocess.Popen(
                [sys.executable, "-m", "harness", "--data-root", p.tmp, "data", "add", "--provenance", "a probe", n, t],
                cwd=p.dir,
                env={**os.environ, "PYTHONPATH": str(p.dir)},
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
    for q in procs:
        q.wait(LIMIT_S)
    text = lock.read_text()
    have = [n for n in ("alpha", "beta") if re.search(rf"^\s*{n}:", text, re.M)]
    return len(have) == 2, f"lock holds {have}"


@probe
def data_add_refuses_duplicate_headers(p):
    _table(p, "dup.csv", "a,a")
    code, text = p.run("--data-root", p.tmp, "data", "add", "--provenance", "a probe", "dup", p.tmp / "dup.csv")
    return clean(code, text)


@probe
def data_add_refuses_control_characters_in_headers(p):
    _table(p, "ctl.csv", "a\x07,b")
    code, text = p.run("--data-root", p.tmp, "data", "add", "--provenance", "a probe", "ctl", p.tmp / "ctl.csv")
    return clean(code, text)


# --- claim fields: refused in one line, by validate as by run ------------------------------------------------------
def _validate(p, **changes):
    """Refused, where the unbroken claim is accepted (so the refusal is the change's)."""
    code, text = p.run("validate", "--data", p.claim("unbroken"))
    if code != 0:
        raise RuntimeError(f"the unbroken probe claim does not validate: {text[-300:]!r}")
    return clean(*p.run("validate", "--data", p.claim(**changes)))


@probe
def tasks_written_as_a_list_on_a_shift_test(p):
    return _validate(p, **{"params.x_col": ["math_500_pct"]})


@probe
def eval_x_1e300(p):
    path = p.dir / "claims" / "002_table1_boundary_1e24.yaml"
    spec = yaml.safe_load(path.read_text())
    spec["params"]["eval_x"] = 1e300
    path.write_text(yaml.safe_dump(spec, allow_unicode=True, sort_keys=False))
    return clean(*p.run("validate", "--data", path))


@probe
def tasks_written_as_a_list_on_a_boundary_claim(p):
    path = p.dir / "claims" / "002_table1_boundary_1e24.yaml"
    spec = yaml.safe_load(path.read_text())
    spec["params"]["tasks"] = list(spec["params"]["tasks"].values())
    path.write_text(yaml.safe_dump(spec, allow_unicode=True, sort_keys=False))
    return clean(*p.run("validate", "--data", path))


@probe
def a_numeric_column_as_date_col(p):
    return _validate(p, **{"params.date_col": "math_500_pct"})


@probe
def a_score_column_as_date_col_is_refused_by_validate(p):
    return _validate(p, **{"params.date_col": "aime_2025_pct"})


@probe
def a_comparison_of_a_quantity_with_itself(p):
    return _validate(
        p,
        **{
            "targets.0": {
                "quantity": "gamma",
                "label": "γ above γ",
                "relation": ">",
                "than": "gamma",
                "reason": "nothing",
            }
        },
    )


@probe
def an_empty_label(p):
    return _validate(p, **{"targets.0.label": ""})


@probe
def a_10000_character_label(p):
    return _validate(p, **{"targets.0.label": "x" * 10_000})


@probe
def an_empty_limitation(p):
    return _validate(p, limitations=[""])


@probe
def a_table_listed_twice_in_inputs(p):
    return _validate(p, inputs=["aa_math500", "aa_aime2025", "aa_math500"])


# --- interrupts -------------------------------------------------------------------------------------------------
@probe
def ctrl_c_to_the_process_group_prints_no_worker_tracebacks(p):
    log = p.tmp / "int.log"
    with open(log, "wb") as out:
        q = subprocess.Popen(
            [sys.executable, "-m", "harness", "calibrate", "-j", "2", "--out", p.tmp / "o"],
            cwd=p.dir,
            stdout=out,
            stderr=out,
            env={**os.environ, "HARNESS_DATA_ROOT": str(DATA), "PYTHONPATH": str(p.dir)},
            start_new_session=True,
        )
        time.sleep(20)
        os.killpg(q.pid, signal.SIGINT)
        try:
            q.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(q.pid, signal.SIGKILL)
            return False, "still running 60 s after Ctrl-C"
    text = log.read_text(errors="replace")
    n = text.count("Traceback")
    return n == 0, f"{n} tracebacks, exit {q.returncode}"


# --- the authors' arm: cache and checkout --------------------------------------------------------------------------
def _authors_run(p, *extra, claim="000"):
    return p.run("run", "--force", "-j", "1", "--out", p.tmp / "out", *extra, claim, timeout=600)


def _upstream_values(p, claim="000"):
    import json

    rec = json.loads(next((p.tmp / "out").glob(f"{claim}_*.json")).read_text())
    up = rec.get("upstream") or rec.get("arms", {}).get("upstream") or {}
    return up


def _cache_files(p):
    return [f for f in (p.dir / ".cache").rglob("*") if f.is_file() and f.suffix == ".json" and "runs" not in f.parts]


@probe
def an_edited_cached_answer_is_not_believed(p):
    code, text = _authors_run(p)
    if code != 0:
        return False, f"the first run failed: {text[-200:]!r}"
    good = _upstream_values(p)
    files = _cache_files(p)
    if not files:
        return False, "no cached answer found"
    for f in files:
        f.write_text(re.sub(r"(\d)\.(\d)", r"\g<1>7.\2", f.read_text()))
    code, text = _authors_run(p)
    if str(code).startswith("hung") or "Traceback" in text:
        return False, "hung or traceback"
    return _upstream_values(p) == good, "values as computed" if _upstream_values(
        p
    ) == good else "the edited values went into the record"


@probe
def a_fifo_in_the_cache_does_not_hang(p):
    code, text = _authors_run(p)
    files = _cache_files(p)
    if code != 0 or not files:
        return False, "the first run failed"
    for f in files:
        f.unlink()
        os.mkfifo(f)
    return clean(*_authors_run(p), ok_codes=(0,))


@probe
def an_unwritable_cache_still_writes_the_record(p):
    cache = p.dir / ".cache"
    cache.mkdir(exist_ok=True)
    cache.chmod(0o500)
    try:
        code, text = _authors_run(p)
    finally:
        cache.chmod(0o700)
    held, why = clean(code, text, ok_codes=(0,))
    return held and any((p.tmp / "out").glob("000_*.json")), why


@probe
def an_answer_cached_unconfined_is_not_served_to_a_confined_run(p):
    code, text = _authors_run(p, "--sandbox", "none")
    if code != 0:
        return False, f"the unconfined run failed: {text[-200:]!r}"
    code, text = _authors_run(p)
    rec = "".join(f.read_text() for f in (p.tmp / "out").glob("000_*.json"))
    confined = "(bubblewrap)" in rec
    return (
        code == 0 and confined,
        "the record is the confined run's" if confined else "the unconfined answer was reused",
    )


@probe
def the_authors_arm_runs_under_ulimit_v_of_4_gib(p):
    import resource

    old = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, old[1]))  # inherited by the command, not by this process's past
    try:
        code, text = _authors_run(p)
    finally:
        resource.setrlimit(resource.RLIMIT_AS, old)
    ran = _upstream_values(p).get("status") == "ok" if list((p.tmp / "out").glob("000_*.json")) else False
    held, why = clean(code, text, ok_codes=(0,))
    return held and ran, why + ("; the authors' arm ran" if ran else "; the authors' arm did not run")


@probe
def an_fsmonitor_planted_in_the_checkout_is_never_run(p):
    marker = p.tmp / "fsmonitor-ran"
    hook = p.tmp / "hook.sh"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    hook.chmod(0o755)
    checkout = p.dir / "vendor" / "prescriptive-scaling"
    subprocess.run(["git", "config", "core.fsmonitor", str(hook)], cwd=checkout, check=True)
    _authors_run(p)
    return not marker.exists(), "never ran" if not marker.exists() else "the planted hook ran"


AUTHORS_FILE = "scripts/artificial_analysis/plot_math500_vs_aime2025.py"
GIT_ID = {"GIT_AUTHOR_NAME": "p", "GIT_AUTHOR_EMAIL": "p@p", "GIT_COMMITTER_NAME": "p", "GIT_COMMITTER_EMAIL": "p@p"}


def _git(checkout, *args, **env):
    return subprocess.run(
        ["git", *args], cwd=checkout, capture_output=True, text=True, check=True, env={**os.environ, **GIT_ID, **env}
    ).stdout.strip()


def _commit_with(p, code: str) -> tuple[Path, str, str]:
    """A commit on top of the pin whose authors' module ends with ``code``; (checkout, pin, new commit)."""
    checkout = p.dir / "vendor" / "prescriptive-scaling"
    pin = _git(checkout, "rev-parse", "HEAD")
    text = (checkout / AUTHORS_FILE).read_text() + "\n" + code + "\n"
    blob = subprocess.run(
        ["git", "hash-object", "-w", "--stdin"], cwd=checkout, input=text, capture_output=True, text=True, check=True
    ).stdout.strip()
    index = str(p.tmp / "index")
    _git(checkout, "read-tree", "HEAD", GIT_INDEX_FILE=index)
    _git(checkout, "update-index", "--cacheinfo", f"100644,{blob},{AUTHORS_FILE}", GIT_INDEX_FILE=index)
    tree = _git(checkout, "write-tree", GIT_INDEX_FILE=index)
    new = _git(checkout, "commit-tree", tree, "-p", pin, "-m", "hostile")
    return checkout, pin, new


GAMMA_123 = """
import functools as _ft
_orig_test = _contamination_test_logit_to_logit
@_ft.wraps(_orig_test)
def _contamination_test_logit_to_logit(**kw):
    r = _orig_test(**kw)
    r["coef_group_shift_gamma"] = 123.0
    return r
"""


@probe
def a_replace_ref_does_not_change_what_runs(p):
    checkout, pin, fake = _commit_with(p, GAMMA_123)
    _git(checkout, "replace", "-f", pin, fake)
    _git(checkout, "checkout", "-f", fake, "--", AUTHORS_FILE)
    code, text = _authors_run(p)
    if str(code).startswith("hung") or "Traceback" in text:
        return False, "hung or traceback"
    out = "".join(f.read_text() for f in (p.tmp / "out").glob("000_*.json")) if (p.tmp / "out").exists() else ""
    ran = "123.0" in out
    return not ran, "the other code did not run as the pin" if not ran else "the other code ran as the pinned commit"


def _hostile(p, code):
    """Pin a commit whose authors' module ends with ``code``; run claim 000 with both arms."""
    checkout, pin, new = _commit_with(p, code)
    _git(checkout, "checkout", "-f", new)
    pins = p.dir / "data" / "upstream.yaml"
    pins.write_text(pins.read_text().replace(pin, new))
    t = time.monotonic()
    code, text = _authors_run(p)
    return code, text, time.monotonic() - t


@probe
def positive_control_a_pinned_commits_code_runs(p):
    """Not a fault: that the hostile probes below reach the authors' code at all (their commit is pinned)."""
    code, text, s = _hostile(p, GAMMA_123)
    out = "".join(f.read_text() for f in (p.tmp / "out").glob("000_*.json")) if (p.tmp / "out").exists() else ""
    return "123.0" in out, f"exit {code}; " + (
        "the pinned code's answer is in the record" if "123.0" in out else "not run: " + text[-200:]
    )


@probe
def a_stdout_flood_is_stopped(p):
    code, text, s = _hostile(p, "import sys\nfor _ in range(3 * 1024):\n    sys.stdout.write('x' * (1 << 20))")
    held, why = clean(code, text, ok_codes=(0, 1))
    big = [f for f in (p.tmp / "out").rglob("*") if f.is_file() and f.stat().st_size > 1 << 20]
    return held and not big and s < 300, f"{why}; {s:.0f} s; files over 1 MiB: {len(big)}"


@probe
def a_daemon_of_the_authors_code_does_not_survive(p):
    marker = f"probe-daemon-{os.getpid()}-{time.monotonic_ns()}"
    code, text, s = _hostile(
        p,
        "import os, subprocess\nif os.fork() == 0:\n    os.setsid()\n"
        f"    subprocess.Popen(['sleep', '600', '{marker}'][:2] + [], start_new_session=True)\n"
        f"    os.execvp('sh', ['sh', '-c', 'exec -a {marker} sleep 600'])",
    )
    time.sleep(2)
    alive = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True).stdout.split()
    for pid in alive:
        os.kill(int(pid), signal.SIGKILL)
    return not alive, f"exit {code}; {len(alive)} process(es) left running"


@probe
def writes_to_existing_dev_shm_files_are_refused(p):
    shm = Path(tempfile.mkstemp(dir="/dev/shm", prefix="probe-")[1])
    shm.chmod(0o666)
    try:
        code, text, s = _hostile(p, f"try:\n    open('{shm}', 'w').write('written')\nexcept OSError:\n    pass")
        written = shm.read_text() == "written"
    finally:
        shm.unlink()
    return not written, f"exit {code}; " + ("the file was written" if written else "the file is untouched")


@probe
def a_huge_answer_is_refused(p):
    code, text, s = _hostile(p, GAMMA_123.replace("123.0", "'x' * (64 << 20)"))
    big = [f for f in (p.tmp / "out").rglob("*") if f.is_file() and f.stat().st_size > 1 << 20]
    held, why = clean(code, text, ok_codes=(0, 1))
    return held and not big, f"{why}; files over 1 MiB: {len(big)}"


def main(argv):
    ref, *names = argv
    rows = []
    for name, fn in PROBES.items():
        if names and name not in names:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            p = Project(ref, Path(tmp))
            t = time.monotonic()
            try:
                held, why = fn(p)
            except Exception as e:  # a probe that cannot be set up on this ref is reported, not counted as held
                held, why = False, f"probe error: {type(e).__name__}: {e}"
            rows.append((name, held, why))
            print(
                f"{'held  ' if held else 'FAILED'} {name:65s} {why[:150]}  ({time.monotonic() - t:.0f} s)", flush=True
            )
    print(f"{ref}: {len(rows)} probes, {sum(h for _, h, _ in rows)} held")


if __name__ == "__main__":
    main(sys.argv[1:])
