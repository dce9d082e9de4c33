"""The one way this project writes a file: atomically, world-readable, never while the authors' code runs.

A reader sees the old content or the new, never a part: the bytes go to a
temporary file in the same folder, are flushed to disk, and are renamed over
the target. ``tempfile.mkstemp`` creates files with mode 0600; committed
reports and shared caches must be readable by others, so the mode is set
explicitly (0644 by default) before the rename.

While an adapter runs the authors' code, the folders it could write to are
compared before and after (:mod:`harness.sandbox`); a change means it wrote
outside its folder. With claims running in parallel the harness itself
writes reports and caches meanwhile, so every write into the project takes an
exclusive lock (:func:`project_lock`) that each adapter run holds shared: the
harness never writes into the project while an adapter runs.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
import threading
from contextlib import contextmanager, suppress
from pathlib import Path

from .paths import PROJECT_ROOT

__all__ = [
    "atomic_write_bytes",
    "atomic_write_text",
    "write_together",
    "recover",
    "recovered_line",
    "failed_path",
    "project_lock",
    "FILE_MODE",
    "LOCK_FILE",
    "JOURNAL",
]

FILE_MODE = 0o644
LOCK_FILE = PROJECT_ROOT / ".cache" / "writes.lock"


_held = threading.local()  # the mode this thread holds the lock in ("shared"/"exclusive"), and how deep


@contextmanager
def project_lock(*, shared: bool):
    """Hold the project's write lock: ``shared`` while an adapter runs, exclusive for a write.

    Re-entrant within a thread: code holding the lock exclusively (a ``render`` that reads a record and
    writes its report under one lock, so no run can write in between) may call code that takes it again.
    Asking for it exclusively while holding it shared is a programming error (it would wait for itself).
    """
    mode = "shared" if shared else "exclusive"
    held = getattr(_held, "mode", None)
    if held == "exclusive" or (held == "shared" and shared):
        _held.depth += 1
        try:
            yield
        finally:
            _held.depth -= 1
        return
    if held == "shared":
        raise RuntimeError("the project's write lock is held shared by this thread; it cannot be made exclusive")
    LOCK_FILE.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(LOCK_FILE, os.O_RDWR | os.O_CREAT, FILE_MODE)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
        _held.mode, _held.depth = mode, 0
        yield
    finally:
        _held.mode = None
        os.close(fd)  # releases the lock


def _in_project(path: Path) -> bool:
    try:
        return path.resolve().is_relative_to(PROJECT_ROOT)
    except OSError:
        return False


def atomic_write_bytes(path: str | Path, data: bytes, *, mode: int = FILE_MODE) -> Path:
    """Write ``data`` to ``path`` atomically and return ``path``.

    The parent folder is created if needed. On any failure the temporary file
    is removed and the previous content of ``path`` is left untouched.
    """
    path = Path(path)
    if _in_project(path):
        with project_lock(shared=False):
            return _write(path, data, mode)
    return _write(path, data, mode)


def _write(path: Path, data: bytes, mode: int) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name[:80]}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def failed_path(exc: OSError) -> Path | None:
    """The file or folder an :class:`OSError` names, as a user knows it: a file staged beside its target by this
    module (``.<name>.<random>.tmp``) is named by its folder."""
    named = Path(exc.filename) if exc.filename else None
    if named is not None and named.name.startswith(".") and named.name.endswith(".tmp"):
        return named.parent
    return named


def atomic_write_text(path: str | Path, text: str, *, mode: int = FILE_MODE) -> Path:
    """:func:`atomic_write_bytes` of ``text`` encoded as UTF-8."""
    return atomic_write_bytes(path, text.encode("utf-8"), mode=mode)


#: Where :func:`write_together` keeps the journal of a group of files being replaced (inside the folder).
JOURNAL = ".pending"


def _journal_path(folder: Path, name: str) -> Path:
    return folder / JOURNAL / f"{name}.json"


def write_together(folder: str | Path, name: str, files: dict[str, bytes], *, remove: tuple[str, ...] = ()) -> None:
    """Replace ``files`` (paths relative to ``folder``) and delete ``remove``, all or none.

    Every new file is first written in full beside its target (fsynced);
    then a journal naming the renames is written atomically; then the
    renames and removals are made and the journal is deleted. A run killed
    before the journal exists leaves the old files; one killed after it is
    completed by :func:`recover`, which every command runs first. So a reader
    finds either every old file or every new one.
    """
    import json

    folder = Path(folder)
    with project_lock(shared=False) if _in_project(folder) else _nothing():
        recover(folder)
        staged = []
        try:
            for rel, data in files.items():
                target = folder / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name[:80]}.", suffix=".tmp")
                staged.append((tmp, str(target)))
                with os.fdopen(fd, "wb") as fh:
                    fh.write(data)
                    fh.flush()
                    os.fsync(fh.fileno())
                os.chmod(tmp, FILE_MODE)
            plan = {"rename": staged, "remove": [str(folder / r) for r in remove]}
            _write(_journal_path(folder, name), json.dumps(plan).encode(), FILE_MODE)
        except BaseException:
            for tmp, _ in staged:
                Path(tmp).unlink(missing_ok=True)
            raise
        _replay(_journal_path(folder, name))


@contextmanager
def _nothing():
    yield


def _replay(journal: Path) -> None:
    import json

    plan = json.loads(journal.read_text(encoding="utf-8"))
    for tmp, target in plan["rename"]:
        if Path(tmp).exists():
            os.replace(tmp, target)
    for target in plan["remove"]:
        Path(target).unlink(missing_ok=True)
    journal.unlink()
    _remove_if_empty(journal.parent)


def _remove_if_empty(folder: Path) -> None:
    """Remove the journal's folder once it holds nothing (a run leaves no empty ``.pending/`` behind)."""
    with suppress(OSError):  # not empty (another group of writes is being journalled), or already gone
        folder.rmdir()


def recover(folder: str | Path) -> list[str]:
    """Complete every group of writes in ``folder`` that a killed run left half done; return their names.

    Then remove the staged files no journal names (``.<name>.<random>.tmp``, left by a run killed while it
    staged, before its journal existed: the old files are still in place). Done under the exclusive write
    lock, so no other command is staging meanwhile. Every command runs this first.
    """
    folder = Path(folder)
    if not folder.is_dir():
        return []
    done = []
    with _exclusive_if_free() as free:
        if not free:  # another command holds the lock: it, or the next command, completes these
            return []
        for journal in sorted(folder.rglob(f"{JOURNAL}/*.json")):  # the folder's, and its .degraded/'s
            try:
                _replay(journal)
            except (OSError, ValueError, KeyError):
                journal.unlink(missing_ok=True)  # an unreadable journal: its renames never started
                _remove_if_empty(journal.parent)
            done.append(journal.stem)
        for tmp in folder.rglob(".*.tmp"):
            if tmp.is_file() and not tmp.is_symlink():
                tmp.unlink(missing_ok=True)
                done.append(tmp.relative_to(folder).as_posix())
    return done


def recovered_line(name: str) -> str:
    """What :func:`recover` did about ``name`` (one of the names it returned), in a line for the user."""
    if name.endswith(".tmp"):
        return f"{name}: removed (staged by an interrupted run that never wrote it)"
    return f"{name}: completed the writes an interrupted run had begun"


@contextmanager
def _exclusive_if_free():
    """The write lock, exclusively, if it can be had now (or this thread holds it so): yields whether it was."""
    if getattr(_held, "mode", None) == "exclusive":
        yield True
        return
    if getattr(_held, "mode", None) == "shared":
        yield False
        return
    LOCK_FILE.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(LOCK_FILE, os.O_RDWR | os.O_CREAT, FILE_MODE)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        _held.mode, _held.depth = "exclusive", 0
        try:
            yield True
        finally:
            _held.mode = None
    finally:
        os.close(fd)
