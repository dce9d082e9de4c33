"""The harness's own writes while an authors' arm runs, so that the arm's before/after check blames only them.

While the authors' code runs, the folders a run reads or writes are compared
before and after (:mod:`harness.core.sandbox`); what changed meanwhile was written
by their code, or by something else. Claims of one build run in one process,
and while one claim's authors' arm runs the others go on writing their
reports, the authors' cache and the run logs: those writes need not wait, as
long as the check can tell them apart exactly.

So every write of this process through :mod:`harness.core.fileio` is recorded in
each open *window* (one per authors' arm that is running): for each entry it
touched, the state it left it in (a file's ``lstat`` and the sha256 of the
bytes written; a staged or removed file as absent), and the state it left the
folder holding it in. When the arm ends, :func:`undo_own` sets an entry back
to its state before the run only when its state after is exactly the recorded
one; a folder only when its kind, mode and inode did not change either (what
our writes change in a folder is its size and times). Anything else shows: a
file another process wrote, one of ours changed again afterwards, a mode or an
owner changed, an entry we never touched.

The snapshot after is taken while no write of this process is half done
(:func:`harness.core.fileio.snapshot_after`). Writes of another process are not
recorded here: runs of one checkout exclude each other's writes while an arm
runs (:func:`harness.core.fileio.project_lock`).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Window", "open_window", "close_window", "open_windows", "record", "undo_own"]

_ABSENT = ("absent",)


@dataclass(eq=False)
class Window:
    """What this process wrote while one authors' arm ran: absolute path -> the state it left it in."""

    files: dict[str, tuple] = field(default_factory=dict)  # ("absent",) or ("file", state, sha256 or None)
    folders: dict[str, tuple] = field(default_factory=dict)  # ("folder", state)


_LOCK = threading.Lock()
_OPEN: list[Window] = []


def open_window() -> Window:
    w = Window()
    with _LOCK:
        _OPEN.append(w)
    return w


def close_window(w: Window) -> None:
    with _LOCK:
        _OPEN.remove(w)


def open_windows() -> int:
    with _LOCK:
        return len(_OPEN)


def _state(path: str) -> tuple | None:
    """The entry's state as the check records it (without a file's sha256), or None when it is absent."""
    from .sandbox import _state as entry_state

    try:
        st = os.lstat(path)
    except OSError:
        return None
    return entry_state(path, st, False)


def record(files: Iterable[Path | str], digests: Mapping[str, str] | None = None) -> None:
    """Record, in every open window, the state this process's write left ``files`` in (and their folders).

    ``digests`` gives the sha256 of the bytes written to a file (by its absolute path): the check then also
    asks that the file hold exactly them. Call it while holding the write lock, right after the write.
    """
    with _LOCK:
        windows = list(_OPEN)
    if not windows:
        return
    digests = digests or {}
    rows: dict[str, tuple] = {}
    folders: dict[str, tuple] = {}
    for f in files:
        path = os.path.abspath(f)
        st = _state(path)
        rows[path] = _ABSENT if st is None else ("file", st, digests.get(path))
        parent = os.path.dirname(path)
        if parent not in folders:
            folders[parent] = _state(parent)
    with _LOCK:  # a window is read (undo_own) while other threads write
        for w in windows:
            w.files.update(rows)
            w.folders.update({p: ("folder", s) for p, s in folders.items() if s is not None})


def _shown(path: str, roots) -> str | None:
    """The name a snapshot of ``roots`` gives ``path`` (None when no root covers it)."""
    p = Path(path)
    for root in roots:
        base = Path(root.path)
        try:
            rel = p.relative_to(base)
        except ValueError:
            try:
                rel = p.resolve().relative_to(base.resolve())
            except (ValueError, OSError):
                continue
        return root.show("" if rel == Path(".") else rel.as_posix())
    return None


def _ours_file(row: tuple, after: tuple | None) -> bool:
    if row == _ABSENT:
        return after is None
    _, state, sha = row
    if after is None or after[: len(state)] != state:
        return False
    rest = after[len(state) :]
    return not rest or sha is None or rest == (sha,)


def _ours_folder(row: tuple, before: tuple | None, after: tuple | None) -> bool:
    state = row[1]
    if after is None or after[: len(state)] != state:
        return False
    # kind, mode and inode are what our writes never change in a folder (only its size and times)
    return before is None or (before[0], before[2], before[3]) == (after[0], after[2], after[3])


def undo_own(w: Window, before: Mapping[str, tuple], after: Mapping[str, tuple], roots) -> dict[str, tuple]:
    """``after`` with every entry this process left exactly as it finds it set back to its state ``before``
    (removed when it was not there before), so that comparing it with ``before`` shows only the rest."""
    out = dict(after)
    with _LOCK:
        tables = ((dict(w.files), None), (dict(w.folders), "folder"))
    for table, ours in tables:
        for path, row in table.items():
            name = _shown(path, roots)
            if name is None:
                continue
            was, now = before.get(name), after.get(name)
            ok = _ours_folder(row, was, now) if ours else _ours_file(row, now)
            if not ok:
                continue
            if was is None:
                out.pop(name, None)
            else:
                out[name] = was
    return out
