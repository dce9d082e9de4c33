"""The one way this project writes a file: atomically, world-readable, and known to the authors' arm's check.

A reader sees the old content or the new, never a part: the bytes go to a
temporary file in the same folder, are flushed to disk, and are renamed over
the target. ``tempfile.mkstemp`` creates files with mode 0600; committed
reports and shared caches must be readable by others, so the mode is set
explicitly (0644 by default) before the rename.

While an adapter runs the authors' code, the folders it could write to are
compared before and after (:mod:`harness.core.sandbox`); a change means it wrote
outside its folder. The harness goes on writing meanwhile (the claims of a
build run in one process, and one claim's report or cache entry does not wait
for another claim's authors' code): every write made here is recorded in the
windows of the arms that are running (:mod:`harness.core.journal`), and the check
sets exactly those back before it compares (:func:`snapshot_after`).

Between processes (two runs of one checkout), :func:`project_lock` keeps the
old rule: a process holds the project's lock file exclusively while it runs
an authors' arm or writes, so no other run writes while an arm of this one
runs; a wait for it says what it waits for.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import tempfile
import threading
from contextlib import contextmanager
from pathlib import Path

from . import journal
from .paths import PROJECT_ROOT

__all__ = [
    "atomic_write_bytes",
    "atomic_write_text",
    "write_together",
    "recover",
    "recovered_line",
    "failed_path",
    "project_lock",
    "snapshot_after",
    "FILE_MODE",
    "LOCK_FILE",
    "JOURNAL",
]

FILE_MODE = 0o644
LOCK_FILE = PROJECT_ROOT / ".cache" / "writes.lock"


class _Hold:
    """This process's hold on the project: the lock file (exclusive between processes, while anything here
    needs it), the in-process write mutex, the arms' windows, and an "alone" section waiting for them to end."""

    def __init__(self):
        self.cv = threading.Condition()
        self.users = 0  # sections (arms and writes) of this process that need the lock file
        self.fd: int | None = None
        self.taking = False  # a thread is waiting for the lock file
        self.mutex = threading.RLock()  # no two writes of this process at once; none while the check looks
        self.alone: int | None = None  # the thread holding an "alone" section (no arm may start meanwhile)
        self.alone_depth = 0
        self.windows = 0  # arms running in this process

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
_held = threading.local()  # the windows of the arms this thread runs


def _windows_here() -> list:
    if not hasattr(_held, "windows"):
        _held.windows = []
    return _held.windows


@contextmanager
def project_lock(*, shared: bool, journaled: bool = False):
    """Hold the project for an authors' arm (``shared``) or for writes (``shared=False``).

    ``shared``: the authors' code runs; the writes this process makes meanwhile are recorded in the arm's
    window (yielded), and no other process writes. ``shared=False`` with ``journaled``: writes through this
    module only (recorded; they need not wait for this process's arms). ``shared=False`` alone: writes by
    any means (a git checkout), so it waits until no arm of this process runs, and none starts meanwhile.
    Re-entrant within a thread; asking for an "alone" section while this thread runs an arm is a programming
    error (it would wait for itself).
    """
    if shared:
        with _arm_window() as window:
            yield window
        return
    if not journaled and _windows_here():
        raise RuntimeError("this thread runs an authors' arm; the project cannot be held alone meanwhile")
    _HOLD.enter()
    try:
        with _alone() if not journaled else _nothing(), _HOLD.mutex:
            yield None
    finally:
        _HOLD.leave()


@contextmanager
def _writing(path: Path):
    """Around one write through this module: the project held for journaled writes when ``path`` is in it; in
    every case, no other write of this process at once (the arms' check sees none half done)."""
    if _in_project(path):
        with project_lock(shared=False, journaled=True):
            yield
    else:
        with _HOLD.mutex:
            yield


def _new_folders(folder: Path) -> list[Path]:
    """``folder`` and its ancestors that do not exist yet (what ``mkdir(parents=True)`` will make)."""
    out = []
    while not folder.exists() and folder.parent != folder:
        out.append(folder)
        folder = folder.parent
    return out


@contextmanager
def _arm_window():
    h = _HOLD
    h.enter()
    try:
        with h.cv:
            while h.alone is not None and h.alone != threading.get_ident():
                h.cv.wait()
            h.windows += 1
        window = journal.open_window()
        _windows_here().append(window)
        try:
            yield window
        finally:
            _windows_here().remove(window)
            journal.close_window(window)
            with h.cv:
                h.windows -= 1
                h.cv.notify_all()
    finally:
        h.leave()


@contextmanager
def _alone():
    """No arm of this process runs while the block does (it waits for those running; none starts)."""
    h, me = _HOLD, threading.get_ident()
    with h.cv:
        while h.alone not in (None, me):
            h.cv.wait()
        h.alone, h.alone_depth = me, h.alone_depth + 1
        try:
            while h.windows:
                h.cv.wait()
        except BaseException:
            h.alone_depth -= 1
            h.alone = None if h.alone_depth == 0 else me
            h.cv.notify_all()
            raise
    try:
        yield
    finally:
        with h.cv:
            h.alone_depth -= 1
            if h.alone_depth == 0:
                h.alone = None
            h.cv.notify_all()


def snapshot_after(before: dict, roots, snapshot) -> dict:
    """``snapshot(roots)`` taken after an authors' arm ran (while no write of this process is half done), with
    the entries this process wrote meanwhile, left exactly as written, set back to their state ``before``."""
    with _HOLD.mutex:
        after = snapshot(roots)
    here = _windows_here()
    return journal.undo_own(here[-1], before, after, roots) if here else after


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
    made = _new_folders(path.parent)
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
        journal.record([*made, tmp, path])
        raise
    journal.record([*made, tmp, path], {os.path.abspath(path): hashlib.sha256(data).hexdigest()})
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
    with _writing(folder):
        recover(folder)
        staged, made = [], _new_folders(folder / JOURNAL)
        digests = {os.path.abspath(folder / rel): hashlib.sha256(data).hexdigest() for rel, data in files.items()}
        try:
            for rel, data in files.items():
                target = folder / rel
                made += _new_folders(target.parent)
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
            journal.record([*made, *(t for t, _ in staged)])
            raise
        journal.record(made)
        _replay(_journal_path(folder, name), digests)


@contextmanager
def _nothing():
    yield


def _replay(pending: Path, digests: dict[str, str] | None = None) -> None:
    import json

    plan = json.loads(pending.read_text(encoding="utf-8"))
    touched = [*(p for pair in plan["rename"] for p in pair), *plan["remove"], pending]
    try:
        for tmp, target in plan["rename"]:
            if Path(tmp).exists():
                os.replace(tmp, target)
        for target in plan["remove"]:
            Path(target).unlink(missing_ok=True)
        pending.unlink()
        if _remove_if_empty(pending.parent):
            touched.append(pending.parent)
    finally:
        journal.record(touched, digests)


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
            except (OSError, ValueError, KeyError):
                pending.unlink(missing_ok=True)  # an unreadable journal: its renames never started
                gone = [pending.parent] if _remove_if_empty(pending.parent) else []
                journal.record([pending, *gone])
            done.append(pending.stem)
        for tmp in folder.rglob(".*.tmp"):
            if tmp.is_file() and not tmp.is_symlink():
                tmp.unlink(missing_ok=True)
                journal.record([tmp])
                done.append(tmp.relative_to(folder).as_posix())
    return done


def recovered_line(name: str) -> str:
    """What :func:`recover` did about ``name`` (one of the names it returned), in a line for the user."""
    if name.endswith(".tmp"):
        return f"{name}: removed (staged by an interrupted run that never wrote it)"
    return f"{name}: completed the writes an interrupted run had begun"


@contextmanager
def _exclusive_if_free():
    """The project, for writes by any means, if it can be had now: no other run holds it and no arm of this
    process runs (this thread may hold it already); yields whether it was."""
    h, me = _HOLD, threading.get_ident()
    if _windows_here() or not h.enter(blocking=False):
        yield False
        return
    try:
        with h.cv:
            free = h.windows == 0 and h.alone in (None, me)
            if free:
                h.alone, h.alone_depth = me, h.alone_depth + 1
        if not free:
            yield False
            return
        try:
            with h.mutex:
                yield True
        finally:
            with h.cv:
                h.alone_depth -= 1
                if h.alone_depth == 0:
                    h.alone = None
                h.cv.notify_all()
    finally:
        h.leave()
