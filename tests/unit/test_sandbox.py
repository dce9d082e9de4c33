"""The before/after check: what counts as a change, and how it is named."""

from __future__ import annotations

import os

from harness.core import sandbox


def _roots(tmp_path):
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "a.md").write_text("a")
    return [sandbox.WatchRoot("reports", tmp_path / "reports"), sandbox.WatchRoot("", tmp_path / "other")]


def test_new_changed_and_removed_files_are_named_from_their_root(tmp_path):
    roots = _roots(tmp_path)
    before = sandbox.snapshot(roots)
    (tmp_path / "reports" / "a.md").write_text("b")
    (tmp_path / "reports" / "sub").mkdir()
    (tmp_path / "reports" / "sub" / "new.md").write_text("n")
    (tmp_path / "other").mkdir()
    assert sandbox.changed(before, sandbox.snapshot(roots)) == [
        "new .",
        "changed reports/a.md",
        "new reports/sub/new.md",
    ]


def test_a_file_written_and_put_back_with_its_old_mtime_still_shows(tmp_path):
    roots = _roots(tmp_path)
    path = tmp_path / "reports" / "a.md"
    st = path.stat()
    before = sandbox.snapshot(roots)
    path.write_text("a")  # same content
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # same mtime
    assert sandbox.changed(before, sandbox.snapshot(roots)) == ["changed reports/a.md"]


def test_a_file_made_and_removed_again_shows_as_its_folder_changed(tmp_path):
    roots = _roots(tmp_path)
    before = sandbox.snapshot(roots)
    (tmp_path / "reports" / "tmp").write_text("x")
    (tmp_path / "reports" / "tmp").unlink()
    assert sandbox.changed(before, sandbox.snapshot(roots)) == ["changed reports"]


def test_another_hard_link_to_a_watched_file_is_not_a_change(tmp_path):
    """git clones of a local mirror share their pack files: another clone must not void a run."""
    roots = _roots(tmp_path)
    before = sandbox.snapshot(roots)
    os.link(tmp_path / "reports" / "a.md", tmp_path / "elsewhere")
    os.link(tmp_path / "reports" / "a.md", tmp_path / "elsewhere2")
    mid = sandbox.snapshot(roots)
    os.unlink(tmp_path / "elsewhere2")
    assert sandbox.changed(mid, sandbox.snapshot(roots)) == []
    assert sandbox.changed(before, mid) == ["changed reports/a.md"]  # from one name to two: its ctime was trusted


def test_reading_is_not_a_change(tmp_path):
    roots = _roots(tmp_path)
    before = sandbox.snapshot(roots)
    (tmp_path / "reports" / "a.md").read_text()
    assert sandbox.changed(before, sandbox.snapshot(roots)) == []


def test_a_long_list_of_changes_is_cut_short():
    assert sandbox.describe_changes([f"new f{i}" for i in range(10)], limit=3) == "new f0, new f1, new f2 and 7 more"
