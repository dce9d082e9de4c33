"""The one way this project writes a file: atomically (a reader sees the old content or the new: the bytes go to
a temporary file beside it, flushed, renamed over it) and world-readable (0644, not ``mkstemp``'s 0600: reports
and shared caches are read by others); and :func:`project_lock`, held by whoever reads and then writes.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
import threading
from contextlib import contextmanager
from pathlib import Path

from .paths import PROJECT_ROOT

FILE_MODE = 0o644
#: The names of the files this module stages beside their targets: ``.harness-staged.<name>.<random>.tmp``
#: (a killed run's leftovers, ignored by git; another program's ``.*.tmp`` is never this module's to remove).
STAGED = ".harness-staged."
LOCK_FILE = PROJECT_ROOT / ".cache" / "writes.lock"


_MUTEX = threading.RLock()  # no two threads of this process hold the project at once
_HELD = {"fd": None}  # the lock file, while this process holds it


def _release() -> None:  # also in a forked pool worker, which closes its copy: the lock goes when this process lets go
    fd, _HELD["fd"] = _HELD["fd"], None
    if fd is not None:
        os.close(fd)


os.register_at_fork(after_in_child=_release)


@contextmanager
def project_lock():
    """Hold the project for writes: no other process holds it meanwhile (its lock file, exclusive), nor another
    thread of this one. Re-entrant. A single write needs none (it is atomic); a read-then-write does."""
    with _MUTEX:
        if _HELD["fd"] is not None:  # re-entered by the thread that holds it: the outermost call releases it
            yield
            return
        LOCK_FILE.parent.mkdir(parents=True, exist_ok=True)
        _HELD["fd"] = os.open(LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, FILE_MODE)
        try:
            fcntl.flock(_HELD["fd"], fcntl.LOCK_EX)
            yield
        finally:
            _release()


def atomic_write_bytes(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically, as the module says (on failure the old content stays); return it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f"{STAGED}{path.name[:80]}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, FILE_MODE)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def failed_path(exc: OSError) -> Path | None:
    """The file or folder an :class:`OSError` names, as a user knows it: a file staged beside its target by this
    module (:data:`STAGED`, or any hidden ``.tmp`` file) is named by its folder."""
    named = Path(exc.filename) if exc.filename else None
    staged = named is not None and named.name.startswith(".") and named.name.endswith(".tmp")
    return named.parent if staged else named


def atomic_write_text(path: str | Path, text: str) -> Path:
    return atomic_write_bytes(path, text.encode("utf-8"))


def write_files(folder: str | Path, files: dict[str, bytes]) -> None:
    """Write each of ``files`` (relative to ``folder``) atomically, in the order given. Not all or none: a run
    killed meanwhile leaves some new and some old, and the lock entry the caller writes after them all
    (:func:`harness.core.claimslock.update`) is what says which outputs are good (DVC's way)."""
    for rel, data in files.items():
        atomic_write_bytes(Path(folder) / rel, data)
