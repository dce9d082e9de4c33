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
from contextlib import contextmanager
from pathlib import Path

from .paths import PROJECT_ROOT

__all__ = ["atomic_write_bytes", "atomic_write_text", "project_lock", "FILE_MODE", "LOCK_FILE"]

FILE_MODE = 0o644
LOCK_FILE = PROJECT_ROOT / ".cache" / "writes.lock"


@contextmanager
def project_lock(*, shared: bool):
    """Hold the project's write lock: ``shared`` while an adapter runs, exclusive for a write."""
    LOCK_FILE.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(LOCK_FILE, os.O_RDWR | os.O_CREAT, FILE_MODE)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
        yield
    finally:
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


def atomic_write_text(path: str | Path, text: str, *, mode: int = FILE_MODE) -> Path:
    """:func:`atomic_write_bytes` of ``text`` encoded as UTF-8."""
    return atomic_write_bytes(path, text.encode("utf-8"), mode=mode)
