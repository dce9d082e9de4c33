"""The one way this project writes a file: atomically, world-readable.

A reader sees the old content or the new, never a part: the bytes go to a
temporary file in the same folder, are flushed to disk, and are renamed over
the target. ``tempfile.mkstemp`` creates files with mode 0600; committed
reports and shared caches must be readable by others, so the mode is set
explicitly (0644 by default) before the rename.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["atomic_write_bytes", "atomic_write_text", "FILE_MODE"]

FILE_MODE = 0o644


def atomic_write_bytes(path: str | Path, data: bytes, *, mode: int = FILE_MODE) -> Path:
    """Write ``data`` to ``path`` atomically and return ``path``.

    The parent folder is created if needed. On any failure the temporary file
    is removed and the previous content of ``path`` is left untouched.
    """
    path = Path(path)
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
