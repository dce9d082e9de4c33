"""The one way this project writes a file: atomically, world-readable.

A reader sees the old content or the new, never a part: the bytes go to a
temporary file in the same folder, are flushed to disk, and are renamed over
the target. ``tempfile.mkstemp`` creates files with mode 0600; committed
reports and shared caches must be readable by others, so the mode is set
explicitly (0644 by default) before the rename.

Between processes (two runs of one checkout), :func:`project_lock` holds the
project's lock file exclusively while a process writes.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
import threading
from contextlib import contextmanager
from pathlib import Path

from .paths import PROJECT_ROOT

FILE_MODE = 0o644
LOCK_FILE = PROJECT_ROOT / ".cache" / "writes.lock"


_MUTEX = threading.RLock()  # no two writes of this process at once
_HELD = {"fd": None, "depth": 0}  # the lock file, while this process holds it


def _close_in_child() -> None:  # a forked pool worker closes its copy: the lock goes when this process lets go
    if _HELD["fd"] is not None:
        os.close(_HELD["fd"])
        _HELD.update(fd=None, depth=0)


os.register_at_fork(after_in_child=_close_in_child)


@contextmanager
def _hold(*, blocking: bool = True):
    """The project's lock file (exclusive between processes) and this process's write mutex; re-entrant.
    Yields False, holding nothing, when ``blocking`` is off and another process holds it."""
    if not _MUTEX.acquire(blocking=blocking):
        yield False
        return
    try:
        if _HELD["depth"] == 0:
            LOCK_FILE.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX if blocking else fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BaseException as exc:
                os.close(fd)
                if not isinstance(exc, BlockingIOError):
                    raise
                yield False
                return
            _HELD["fd"] = fd
        _HELD["depth"] += 1
        try:
            yield True
        finally:
            _HELD["depth"] -= 1
            if _HELD["depth"] == 0:
                os.close(_HELD["fd"])
                _HELD["fd"] = None
    finally:
        _MUTEX.release()


def project_lock():
    """Hold the project for writes: no other process writes meanwhile, nor another thread of this one.
    Re-entrant."""
    return _hold()


@contextmanager
def _writing(path: Path):
    """Around one write through this module: the project held when ``path`` is in it; in every case, no other
    write of this process at once."""
    if _in_project(path):
        with project_lock():
            yield
    else:
        with _MUTEX:
            yield


def _in_project(path: Path) -> bool:
    try:
        return path.resolve().is_relative_to(PROJECT_ROOT)
    except OSError:
        return False


def atomic_write_bytes(path: str | Path, data: bytes, *, mode: int = FILE_MODE) -> Path:
    """Write ``data`` to ``path`` atomically (a temporary file renamed over it; on failure the old content
    stays); return ``path``."""
    path = Path(path)
    with _writing(path):
        return _write(path, data, mode)


def _write(path: Path, data: bytes, mode: int) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _stage(path, data, mode)
    try:
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


def _stage(target: Path, data: bytes, mode: int) -> str:
    """``data`` in a file staged beside ``target``, flushed to disk, with its mode: that file's path."""
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f"{STAGED}{target.name[:80]}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return tmp


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
    """Replace ``files`` (relative to ``folder``) and delete ``remove``, all or none: every file is staged
    (fsynced) beside its target, then a journal of the renames is written, then they are made; :func:`recover`
    completes a journal a killed run left."""
    import json

    folder = Path(folder).absolute()
    with _writing(folder):
        recover(folder)
        staged = []
        try:
            for rel, data in files.items():
                target = folder / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                staged.append((_stage(target, data, FILE_MODE), str(target)))
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


def _remove_if_empty(folder: Path) -> None:
    """Remove the journal's folder once it holds nothing (a run leaves no empty ``.pending/`` behind)."""
    with contextlib.suppress(OSError):  # not empty (another group of writes is being journalled), or already gone
        folder.rmdir()


def recover(folder: str | Path) -> list[str]:
    """Complete every journalled group of writes a killed run left in ``folder``, and remove the staged files
    no journal names (under the write lock, when it is free); return their names. Every command runs this."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    done = []
    with _hold(blocking=False) as free:
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
