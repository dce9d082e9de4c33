"""Confining the authors' code: a bubblewrap sandbox where the machine allows it, and a check always.

* :func:`confinement` chooses how a command runs: inside bubblewrap
  (``bwrap``), seeing only what it needs (:func:`bubblewrap_command`: the
  system's programs and libraries, the Python environment, and the folders the
  caller names, read-only; its scratch folder, writable), so that no other
  file, and no socket file, outside is reachable; its own user, pid, IPC and
  network namespaces, no capabilities, a private ``/dev`` and ``/proc``, dying
  with its parent -- or, where bubblewrap is missing or cannot make its
  namespaces, unconfined, with the reason. A sandbox is used only after a
  probe has shown that, here, a write inside its folder succeeds and one
  outside fails.
* :func:`snapshot` and :func:`changed` are the check made in every case:
  the paths, types, sizes, modes, inodes, mtimes and ctimes of the files
  under some roots (ctime cannot be set back by a process, so a file written
  and "restored" still shows; it is left out for files with several hard
  links, whose ctime others change), with the sha256 of the small ones. A
  difference between a snapshot before the authors' code ran and one after
  means it wrote outside its folder (or something else did meanwhile): the
  run is not trusted.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

__all__ = [
    "Confinement",
    "confinement",
    "bubblewrap_unavailable",
    "bubblewrap_command",
    "WatchRoot",
    "snapshot",
    "changed",
    "describe_changes",
    "SANDBOX_MODES",
]

SANDBOX_MODES = ("auto", "bubblewrap", "none")
HASH_LIMIT = 1 << 20  # files up to this size are hashed too (where the root asks for it)
PROBE_TIMEOUT_S = 30.0
SHOWN_CHANGES = 8


# -- bubblewrap -----------------------------------------------------------------------------------------------


#: The system's programs, libraries and the loader's configuration: all a program started here needs of the
#: machine besides its own files (a symbolic link, such as ``/lib -> usr/lib``, is made again as one).
SYSTEM_PATHS = (
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/alternatives",
    "/etc/localtime",
)


def python_paths() -> list[Path]:
    """The Python environment this interpreter runs from: its prefixes (a virtual environment's and the one it
    was made from), as named and resolved."""
    found = []
    for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix):
        found += [Path(p), Path(os.path.realpath(p))]
    return list(dict.fromkeys(found))


def bubblewrap_command(
    bwrap: str, writable: Path, read_only: Iterable[Path] = (), visible: Iterable[Path] = ()
) -> list[str]:
    """The ``bwrap ... --`` prefix: an empty root with the system's paths (:data:`SYSTEM_PATHS`), the Python
    environment (:func:`python_paths`) and ``visible`` read-only, ``writable`` writable, and ``read_only``
    inside it read-only again; nothing else of the machine (no home, project, data root, ``/tmp``, ``/run``,
    and so no socket file) is there."""
    cmd = [
        bwrap,
        "--die-with-parent",
        "--new-session",
        "--unshare-user",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-net",
        "--cap-drop",
        "ALL",
    ]
    for path in SYSTEM_PATHS:
        if os.path.islink(path):
            cmd += ["--symlink", os.readlink(path), path]
        elif os.path.exists(path):
            cmd += ["--ro-bind", path, path]
    cmd += ["--dev", "/dev", "--proc", "/proc"]
    binds = [(str(p), "--ro-bind") for p in [*python_paths(), *visible]]
    binds += [(str(writable), "--bind")] + [(str(p), "--ro-bind") for p in read_only]
    for path, how in sorted(dict(binds).items(), key=lambda b: len(Path(b[0]).parts)):  # a folder before its own
        cmd += [how, path, path]
    return cmd + ["--remount-ro", "/", "--chdir", str(writable), "--"]


_PROBE = """
import os, sys
open(os.path.join(sys.argv[1], "inside"), "w").close()
try:
    open(sys.argv[2], "w").close()
except OSError:
    sys.exit(0)
sys.exit(3)
"""


@cache
def bubblewrap_unavailable() -> str | None:
    """None if bubblewrap confines a process here as :func:`bubblewrap_command` asks; else why not."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return "bubblewrap (bwrap) is not installed"
    with tempfile.TemporaryDirectory(prefix="bwrap-probe-") as tmp:
        inside, outside = Path(tmp) / "w", Path(tmp) / "outside"
        inside.mkdir()
        cmd = bubblewrap_command(bwrap, inside) + [
            sys.executable,
            "-s",
            "-P",
            "-B",
            "-c",
            _PROBE,
            str(inside),
            str(outside),
        ]
        try:
            proc = subprocess.run(
                cmd,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=PROBE_TIMEOUT_S,
                cwd=tmp,
                env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"bubblewrap could not be run: {exc}"
        said = " ".join(proc.stderr.decode(errors="replace").split())[:300]
        if proc.returncode == 3 or outside.exists():
            return "bubblewrap let a write outside its folder through"
        if proc.returncode != 0 or not (inside / "inside").exists():
            return f"bubblewrap cannot make its sandbox here (exit status {proc.returncode}: {said or 'no message'})"
    return None


@dataclass(frozen=True)
class Confinement:
    """How the authors' code runs: ``name`` is "bubblewrap" or "none: <why>". Without bubblewrap,
    ``landlock`` asks :mod:`harness.authors.confine` to keep its writes in its folder (mode "auto"); the network,
    memory and process guards hold in every mode."""

    name: str
    bwrap: str | None = None
    landlock: bool = False

    @property
    def confined(self) -> bool:
        return self.bwrap is not None

    def command(
        self, cmd: Sequence[str], writable: Path, read_only: Iterable[Path] = (), visible: Iterable[Path] = ()
    ) -> list[str]:
        """``cmd``, wrapped in the sandbox if there is one (seeing ``visible`` read-only besides its folder)."""
        if self.bwrap is None:
            return list(cmd)
        return bubblewrap_command(self.bwrap, writable, read_only, visible) + list(cmd)


def confinement(mode: str = "auto") -> Confinement | str:
    """The confinement for ``mode`` ("auto", "bubblewrap", "none"), or why the one required cannot be had."""
    if mode not in SANDBOX_MODES:
        return f"unknown sandbox mode {mode!r}; known: {', '.join(SANDBOX_MODES)}"
    if mode == "none":
        return Confinement("none: switched off for this run")
    why = bubblewrap_unavailable()
    if why is None:
        return Confinement("bubblewrap", shutil.which("bwrap"))
    if mode == "bubblewrap":
        return f"a bubblewrap sandbox was required, but {why}"
    return Confinement(f"none: {why}", landlock=True)


# -- the before/after check -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class WatchRoot:
    """A folder to watch, shown as ``label/relative/path`` (``label`` "" shows bare relative paths).

    ``hashed`` asks for the sha256 of files up to :data:`HASH_LIMIT` bytes.
    """

    label: str
    path: Path
    hashed: bool = True

    def show(self, rel: str) -> str:
        return "/".join(p for p in (self.label, rel) if p) or "."

    def covers(self, other: Path) -> bool:
        """Whether ``other`` lies in this root (and so is walked with it)."""
        return Path(other).resolve().is_relative_to(self.path.resolve())


def _digest(path: str) -> str | None:
    h = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    except OSError:
        return None
    return h.hexdigest()


def _state(path: str, st: os.stat_result, hashed: bool) -> tuple:
    """What is compared. The ctime of a file with several hard links changes when another of its names
    is made or removed (git clones of a local mirror share their packs), so it is left out there."""
    kind = stat.S_IFMT(st.st_mode)
    ctime = st.st_ctime_ns if kind == stat.S_IFDIR or st.st_nlink == 1 else None
    state = (kind, st.st_size, stat.S_IMODE(st.st_mode), st.st_ino, st.st_mtime_ns, ctime)
    if kind == stat.S_IFREG and hashed and st.st_size <= HASH_LIMIT:
        return state + (_digest(path),)
    if kind == stat.S_IFLNK:
        return state + (os.readlink(path),)
    return state


def snapshot(roots: Iterable[WatchRoot]) -> dict[str, tuple]:
    """Every entry under ``roots`` (not following symbolic links) by its shown name -> its state."""
    out: dict[str, tuple] = {}
    for root in roots:
        try:
            out[root.show("")] = _state(str(root.path), os.lstat(root.path), False)
        except OSError:
            continue  # a missing root: if it appears, that shows
        stack = [("", str(root.path))]
        while stack:
            rel, folder = stack.pop()
            try:
                entries = list(os.scandir(folder))
            except OSError:
                continue
            for entry in entries:
                sub = f"{rel}/{entry.name}" if rel else entry.name
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                out[root.show(sub)] = _state(entry.path, st, root.hashed)
                if stat.S_ISDIR(st.st_mode):
                    stack.append((sub, entry.path))
    return out


def changed(before: Mapping[str, tuple], after: Mapping[str, tuple]) -> list[str]:
    """What differs, as "new X", "removed X", "changed X"; a folder only when nothing under it is named."""
    found = {}
    for name in sorted(set(before) | set(after)):
        if name not in before:
            found[name] = "new"
        elif name not in after:
            found[name] = "removed"
        elif before[name] != after[name]:
            found[name] = "changed"
    names = list(found)
    kept = [n for n in names if not any(o.startswith(n + "/") for o in names)]
    return [f"{found[n]} {n}" for n in kept]


def describe_changes(changes: Sequence[str], limit: int = SHOWN_CHANGES) -> str:
    shown = ", ".join(changes[:limit])
    return shown + (f" and {len(changes) - limit} more" if len(changes) > limit else "")
