"""The one way this project writes a file: atomically, world-readable.

A reader sees the old content or the new, never a part: the bytes go to a
temporary file in the same folder, are flushed to disk, and are renamed over
the target. ``tempfile.mkstemp`` creates files with mode 0600; committed
reports and shared caches must be readable by others, so the mode is set
explicitly (0644 by default) before the rename.

Between processes (two runs of one checkout), :func:`project_lock` holds the
project's lock file exclusively while a process writes; a wait for it says
what it waits for.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
import threading
from contextlib import contextmanager
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


class _Hold:
    """This process's hold on the project: the lock file (exclusive between processes, while anything here
    needs it) and the in-process write mutex."""

    def __init__(self):
        self.cv = threading.Condition()
        self.users = 0  # sections of this process that need the lock file
        self.fd: int | None = None
        self.taking = False  # a thread is waiting for the lock file
        self.mutex = threading.RLock()  # no two writes of this process at once

    def enter(self, *, blocking: bool = True) -> bool:
        """One more user of the lock file; take it when this is the first (False: not free, ``blocking`` off)."""
        from .cores import flock_waiting, hold_fd, release_fd

        with self.cv:
            while self.taking:
                if not blocking:
                    return False
                self.cv.wait()
            if self.fd is not None:
                self.users += 1
                return True
            self.taking = True
        fd = None
        try:
            LOCK_FILE.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)
            hold_fd(fd)
            if blocking:
                flock_waiting(fd, fcntl.LOCK_EX, "another run's hold on this checkout's files", LOCK_FILE)
            else:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            release_fd(fd)
            with self.cv:
                self.taking = False
                self.cv.notify_all()
            return False
        except BaseException:
            if fd is not None:
                release_fd(fd)
            with self.cv:
                self.taking = False
                self.cv.notify_all()
            raise
        with self.cv:
            self.fd, self.taking, self.users = fd, False, 1
            self.cv.notify_all()
        return True

    def leave(self) -> None:
        from .cores import release_fd

        with self.cv:
            self.users -= 1
            if self.users == 0 and self.fd is not None:
                release_fd(self.fd)  # releases the lock
                self.fd = None


_HOLD = _Hold()


@contextmanager
def project_lock():
    """Hold the project for writes: no other process writes meanwhile, nor another thread of this one.
    Re-entrant."""
    _HOLD.enter()
    try:
        with _HOLD.mutex:
            yield
    finally:
        _HOLD.leave()


@contextmanager
def _writing(path: Path):
    """Around one write through this module: the project held when ``path`` is in it; in every case, no other
    write of this process at once."""
    if _in_project(path):
        with project_lock():
            yield
    else:
        with _HOLD.mutex:
            yield


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
    with _writing(path):
        return _write(path, data, mode)


def _write(path: Path, data: bytes, mode: int) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = _stage(path)
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


#: The names of the files this module stages beside their targets: ``.harness-staged.<name>.<random>.tmp``
#: (another program's ``.*.tmp`` is never this module's to remove).
STAGED = ".harness-staged."


def _stage(target: Path) -> tuple[int, str]:
    return tempfile.mkstemp(dir=target.parent, prefix=f"{STAGED}{target.name[:80]}.", suffix=".tmp")


def _ours(folder: Path, path: str, staged: bool) -> bool:
    """Whether a journal may name ``path``: inside ``folder`` (no link on the way), and, for a file to rename
    from, one this module staged."""
    p = Path(path)
    return (
        p.is_absolute()
        and ".." not in p.parts
        and p.is_relative_to(folder)
        and not any(q.is_symlink() for q in [p, *p.parents] if q.is_relative_to(folder) and q != folder)
        and (not staged or (p.name.startswith(STAGED) and p.name.endswith(".tmp")))
    )


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

    folder = Path(folder).absolute()
    with _writing(folder):
        recover(folder)
        staged = []
        try:
            for rel, data in files.items():
                target = folder / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                fd, tmp = _stage(target)
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


def _replay(pending: Path) -> None:
    import json

    plan = json.loads(pending.read_text(encoding="utf-8"))
    folder = pending.parent.parent.absolute()  # <folder>/.pending/<name>.json names files of <folder> only
    if not all(_ours(folder, t, True) and _ours(folder, g, False) for t, g in plan["rename"]) or not all(
        _ours(folder, g, False) for g in plan["remove"]
    ):
        raise ValueError(f"{pending}: names a file outside {folder} or one this harness did not stage")
    for tmp, target in plan["rename"]:
        if Path(tmp).exists():
            os.replace(tmp, target)
    for target in plan["remove"]:
        Path(target).unlink(missing_ok=True)
    pending.unlink()
    _remove_if_empty(pending.parent)


def _remove_if_empty(folder: Path) -> bool:
    """Remove the journal's folder once it holds nothing (a run leaves no empty ``.pending/`` behind);
    return whether it was removed."""
    try:
        folder.rmdir()
    except OSError:  # not empty (another group of writes is being journalled), or already gone
        return False
    return True


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
        for pending in sorted(folder.rglob(f"{JOURNAL}/*.json")):  # the folder's, and its .degraded/'s
            try:
                _replay(pending)
                done.append(pending.stem)
            except (OSError, ValueError, KeyError, TypeError):
                # unreadable, or naming what is not ours: its renames never started, or it was never ours
                pending.unlink(missing_ok=True)
                _remove_if_empty(pending.parent)
        for tmp in folder.rglob(f"{STAGED}*.tmp"):
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
    """The project, for writes, if no other run holds it now; yields whether it was."""
    if not _HOLD.enter(blocking=False):
        yield False
        return
    try:
        with _HOLD.mutex:
            yield True
    finally:
        _HOLD.leave()
