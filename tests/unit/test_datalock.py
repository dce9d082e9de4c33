"""Tables: read once, hashed, and everything handed out made from the bytes that were hashed."""

from __future__ import annotations

import hashlib

import pytest

from harness.datalock import DataLock, Tables
from harness.errors import DataError

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
    from harness.datalock import load_lock

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
        ("v", "sub", "no such file"),
    ],
)
def test_data_add_refuses_with_the_reason(lock_file, tmp_path, name, rel, message):
    from harness.datalock import add_table

    before = lock_file.read_bytes()
    with pytest.raises(DataError, match=message):
        add_table(name, tmp_path / "data" / rel, "p", root=tmp_path / "data", lock_file=lock_file)
    assert lock_file.read_bytes() == before


def test_a_locked_header_that_no_longer_matches_is_refused(tmp_path):
    data = b"a,c\n1,2\n"
    (tmp_path / "x.csv").write_bytes(data)
    entry = {"path": "x.csv", "rows": 1, "provenance": "p", "sha256": hashlib.sha256(data).hexdigest()}
    tables = Tables(DataLock.model_validate({"tables": {"x": {**entry, "header": ["a", "b"]}}}), tmp_path)
    with pytest.raises(DataError, match="its columns are not the locked header"):
        tables.frame("x")
