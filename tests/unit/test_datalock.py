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
