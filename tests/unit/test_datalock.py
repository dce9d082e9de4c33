"""Tables: read once, hashed, and everything handed out made from the bytes that were hashed."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from harness.core.datalock import DataLock, Tables, load_lock
from harness.core.errors import DataError

ROOT = Path(__file__).resolve().parents[2]

GOOD = b'name,"score, raw",n\nx,1.5,3\ny,2.5,4\n'


@pytest.fixture
def tables(tmp_path):
    (tmp_path / "t.csv").write_bytes(GOOD)
    lock = DataLock.model_validate(
        {
            "tables": {
                "t": {"path": "t.csv", "rows": 2, "provenance": "test", "sha256": hashlib.sha256(GOOD).hexdigest()}
            }
        }
    )
    return Tables(lock, tmp_path)


def test_a_table_swapped_after_its_check_is_not_what_frame_parses(tables, tmp_path):
    """Defect 1, the re-implementation's side: frame() read the file by path again after path() had hashed it."""
    tables.describe(["t"])
    (tmp_path / "t.csv").write_bytes(GOOD.replace(b"1.5", b"9.5"))
    assert tables.frame("t")["score, raw"].tolist() == [1.5, 2.5]
    assert tables.data("t") == GOOD


def test_header_gives_the_column_names_from_the_verified_bytes(tables, tmp_path):
    tables.data("t")
    (tmp_path / "t.csv").write_bytes(b"other,columns\n")
    assert tables.header("t") == ["name", "score, raw", "n"]
    assert tables.header("t") == list(tables.frame("t").columns)


def test_an_altered_table_is_refused_before_anything_is_read_from_it(tables, tmp_path):
    (tmp_path / "t.csv").write_bytes(GOOD.replace(b"1.5", b"9.5"))
    with pytest.raises(DataError, match="input table 't' has been altered"):
        tables.header("t")


def test_a_missing_table_is_refused(tables, tmp_path):
    (tmp_path / "t.csv").unlink()
    with pytest.raises(DataError, match="input table 't' is missing"):
        tables.frame("t")


# -- `harness data add` ----------------------------------------------------------------------------------------

LOCK_TEXT = (
    "# the data lock (a comment that must survive)\n"
    "tables:\n  t:\n    path: t.csv\n    sha256: {sha}\n    rows: 2\n    provenance: test\n"
)


@pytest.fixture
def lock_file(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "t.csv").write_bytes(GOOD)
    (tmp_path / "data" / "sub").mkdir()
    (tmp_path / "data" / "sub" / "u.csv").write_bytes(b"a,b\n1,2\n3,4\n5,6\n")
    path = tmp_path / "lock.yaml"
    path.write_text(LOCK_TEXT.format(sha=hashlib.sha256(GOOD).hexdigest()), encoding="utf-8")
    return path


def test_data_add_writes_the_entry_nobody_computes_by_hand(lock_file, tmp_path):
    from harness import cli
    from harness.core.datalock import load_lock

    root = tmp_path / "data"
    argv = ["--lock", str(lock_file), "--data-root", str(root), "data", "add", "u", str(root / "sub" / "u.csv")]
    assert cli.main([*argv, "--provenance", "made  by\n a test"]) == 0
    entry = load_lock(lock_file).tables["u"]
    assert (entry.path, entry.rows, entry.header) == ("sub/u.csv", 3, ["a", "b"])
    assert entry.sha256 == hashlib.sha256(b"a,b\n1,2\n3,4\n5,6\n").hexdigest()
    assert entry.provenance == "made by a test"
    assert lock_file.read_text(encoding="utf-8").startswith("# the data lock (a comment that must survive)\n")
    tables = Tables(load_lock(lock_file), root)
    assert tables.header("u") == ["a", "b"] and len(tables.frame("u")) == 3


@pytest.mark.parametrize(
    "name, rel, message",
    [
        ("t", "t.csv", "a table named 't' is already locked"),
        ("U-1", "sub/u.csv", "a table's name is lower-case letters"),
        ("v", "../lock.yaml", "not under the input root"),
        ("v", "missing.csv", "no such file"),
        ("v", "sub", "not a regular file"),
    ],
)
def test_data_add_refuses_with_the_reason(lock_file, tmp_path, name, rel, message):
    from harness.core.datalock import add_table

    before = lock_file.read_bytes()
    with pytest.raises(DataError, match=message):
        add_table(name, tmp_path / "data" / rel, "p", root=tmp_path / "data", lock_file=lock_file)
    assert lock_file.read_bytes() == before


@pytest.mark.parametrize(
    "header, message", [("a,a", "names 'a' more than once"), ("a\x07,b", "holds a control character")]
)
def test_data_add_refuses_a_header_naming_a_column_twice_or_with_a_control_character(
    lock_file, tmp_path, header, message
):
    """Issue 39: both were locked (pandas reads `a,a` as columns a and a.1)."""
    from harness.core.datalock import add_table

    (tmp_path / "data" / "h.csv").write_text(f"{header}\n1,2\n")
    before = lock_file.read_bytes()
    with pytest.raises(DataError, match=message):
        add_table("h", tmp_path / "data" / "h.csv", "p", root=tmp_path / "data", lock_file=lock_file)
    assert lock_file.read_bytes() == before


def test_two_data_adds_at_once_both_land(lock_file, tmp_path):
    """Issue 39: of two `data add` run at once, one table was lost (both read the lock, each wrote its own)."""
    names = [f"t{i}" for i in range(6)]
    for n in names:
        (tmp_path / "data" / f"{n}.csv").write_text("a,b\n1,2\n")
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "harness",
                "--lock",
                str(lock_file),
                "--data-root",
                str(tmp_path / "data"),
                "data",
                "add",
                "--provenance",
                "p",
                n,
                str(tmp_path / "data" / f"{n}.csv"),
            ],
            cwd=ROOT,
        )
        for n in names
    ]
    assert [p.wait(120) for p in procs] == [0] * len(names)
    assert set(names) <= set(load_lock(lock_file).tables)


def test_a_locked_header_that_no_longer_matches_is_refused(tmp_path):
    data = b"a,c\n1,2\n"
    (tmp_path / "x.csv").write_bytes(data)
    entry = {"path": "x.csv", "rows": 1, "provenance": "p", "sha256": hashlib.sha256(data).hexdigest()}
    tables = Tables(DataLock.model_validate({"tables": {"x": {**entry, "header": ["a", "b"]}}}), tmp_path)
    with pytest.raises(DataError, match="its columns are not the locked header"):
        tables.frame("x")


# -- hardening item 13: a table that cannot be read is a DataError, never a traceback or a hang -------------


def _deadline(seconds: float):
    import contextlib
    import signal

    @contextlib.contextmanager
    def guard():
        def expire(*_):
            raise TimeoutError(f"still running after {seconds} s")

        previous = signal.signal(signal.SIGALRM, expire)
        signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)

    return guard()


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a chmod 000 file; the monkeypatched test covers root")
def test_an_unreadable_table_is_a_data_error_chmod(tables, tmp_path):
    (tmp_path / "t.csv").chmod(0)
    with pytest.raises(DataError, match=r"t.csv: input table 't' cannot be read: permission denied"):
        tables.frame("t")


def test_an_unreadable_table_is_a_data_error(tables, tmp_path, monkeypatch):
    """As root, chmod 000 does not stop a read: the refusal the OS would give is simulated at open."""
    real_open = os.open

    def refuse(path, *args, **kwargs):
        if str(path).endswith("t.csv"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", refuse)
    with pytest.raises(DataError) as info:
        tables.frame("t")
    assert str(info.value) == (
        f"{tmp_path / 't.csv'}: input table 't' cannot be read: permission denied; expected a readable regular "
        f"file with sha256 {hashlib.sha256(GOOD).hexdigest()} (see data/lock.yaml for its provenance)"
    )


@pytest.mark.parametrize("kind", ["fifo", "folder", "/dev/zero"])
def test_a_table_that_is_not_a_regular_file_is_refused_unread(tables, tmp_path, kind):
    table = tmp_path / "t.csv"
    table.unlink()
    if kind == "fifo":
        os.mkfifo(table)
    elif kind == "folder":
        table.mkdir()
    else:
        table.symlink_to(kind)
    what = {"fifo": "a FIFO (named pipe)", "folder": "a folder"}.get(kind, "a character device")
    with _deadline(5), pytest.raises(DataError, match=rf"input table 't' is {re.escape(what)}, not a regular file"):
        tables.header("t")


def test_the_cli_says_so_without_a_traceback(tmp_path, capsys, monkeypatch):
    """``validate --data`` on a data root whose table is a FIFO: one line per table, exit 2."""
    from harness import cli
    from harness.core.datalock import load_lock

    root = tmp_path / "data"
    for entry in load_lock().tables.values():
        (root / entry.path).parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(root / entry.path)
    with _deadline(20):
        status = cli.main(["--data-root", str(root), "validate", "--data", "002"])
    err = capsys.readouterr().err
    assert status == 2 and "Traceback" not in err
    assert "is a FIFO (named pipe), not a regular file" in err
    with _deadline(20):
        status = cli.main(["--data-root", str(root), "run", "--no-upstream", "--out", str(tmp_path / "out"), "002"])
    err = capsys.readouterr().err
    assert status == 2 and "Traceback" not in err and "is a FIFO (named pipe), not a regular file" in err


# -- issue #29 item 7: `data add` has a size limit, and says it ------------------------------------------------


def test_data_add_refuses_a_file_over_the_limit_at_once_naming_its_size_and_the_limit(lock_file, tmp_path, capsys):
    """A 3 GB file hung `data add` until it was killed. It is refused from its size alone (a sparse file here:
    nothing of it could be read in the time allowed), with the file, its size and the limit, exit 2."""
    from harness import cli
    from harness.core.datalock import MAX_TABLE_BYTES

    root = tmp_path / "data"
    big = root / "big.csv"
    with open(big, "wb") as fh:
        fh.write(b"a,b\n")
        fh.truncate(3 * 10**9)
    before = lock_file.read_bytes()
    argv = ["--lock", str(lock_file), "--data-root", str(root), "data", "add", "big", str(big), "--provenance", "p"]
    with _deadline(5.0):
        assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"{big}: is 3000000000 bytes (2.79 GiB), more than the {MAX_TABLE_BYTES} bytes (256 MiB)" in err
    assert lock_file.read_bytes() == before


def test_a_locked_table_swapped_for_a_huge_file_is_refused_unread(tables, tmp_path):
    with open(tmp_path / "t.csv", "r+b") as fh:
        fh.truncate(3 * 10**9)
    with _deadline(5.0), pytest.raises(DataError, match=r"input table 't' is 3000000000 bytes \(2.79 GiB\), more than"):
        tables.data("t")


def test_data_add_to_a_lock_in_flow_layout_is_one_line_not_a_traceback(tmp_path, capsys):
    from harness import cli

    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "u.csv").write_bytes(b"a,b\n1,2\n")
    lock = tmp_path / "lock.yaml"
    lock.write_text("tables: {}\n", encoding="utf-8")
    argv = ["--lock", str(lock), "--data-root", str(tmp_path / "data"), "data", "add", "u"]
    assert cli.main([*argv, str(tmp_path / "data" / "u.csv"), "--provenance", "p"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot be appended to this lock's text" in err and "Traceback" not in err
    assert lock.read_text() == "tables: {}\n"


def test_data_add_with_an_empty_provenance_is_one_line_not_a_traceback(lock_file, tmp_path, capsys):
    from harness import cli

    before = lock_file.read_text(encoding="utf-8")
    root = tmp_path / "data"
    argv = ["--lock", str(lock_file), "--data-root", str(root), "data", "add", "u", str(root / "sub" / "u.csv")]
    assert cli.main([*argv, "--provenance", " \n "]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--provenance is empty" in err and "Traceback" not in err
    assert lock_file.read_text(encoding="utf-8") == before
