"""The data lock: input tables by logical name, verified by sha256 before use; and :func:`read_regular_file`,
how every input file (a table, the lock, a claim file) is read."""

from __future__ import annotations

import csv
import hashlib
import io
import os
import re
import stat
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import yaml
from pydantic import Field, ValidationError

from .errors import DataError
from .fileio import atomic_write_text, project_lock
from .paths import DEFAULT_LOCK, PROJECT_ROOT
from .schema import CONTROL_CHARS, Strict, forbidden_char, format_validation_error

if TYPE_CHECKING:  # pandas is imported where a table is parsed: reading the lock needs none of it
    import pandas as pd

DATA_ROOT_ENV = "HARNESS_DATA_ROOT"
#: The data lock is a short YAML file; a larger one is refused unread.
MAX_LOCK_BYTES = 1 << 20
#: An input table is read whole, hashed, parsed and copied for the authors' code: one larger than this (256 MiB,
#: some forty times the largest table the claims read) is refused before a byte of it is read.
MAX_TABLE_BYTES = 256 << 20
#: A run record, or a file the build's lock hashes, larger than this is refused unread.
MAX_FILE_BYTES = 64 << 20


class FileRefused(Exception):
    """A file that is there but is not read: ``reason`` says what was found (``is a FIFO, not a regular file``)."""

    @property
    def reason(self) -> str:
        return self.args[0]


_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _too_big(size: int | None, limit: int) -> FileRefused:
    found = "longer" if size is None else f"{size} bytes ({sized(size)})"
    return FileRefused(f"is {found}, more than the {limit} bytes ({sized(limit)}) read from such a file")


def _check_regular(st: os.stat_result, limit: int) -> None:
    if not stat.S_ISREG(st.st_mode):
        kind = next((words for test, words in _KINDS if test(st.st_mode)), "something other than a file")
        raise FileRefused(f"is {kind}, not a regular file")
    if st.st_size > limit:
        raise _too_big(st.st_size, limit)


def sized(n: int) -> str:
    """``n`` bytes in the largest binary unit that keeps it at least 1 (``1 MiB``, ``3.2 GiB``)."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            return f"{n / (1 << shift):.3g} {unit}"
    return f"{n} bytes"


def read_regular_file(path: str | Path, *, limit: int) -> bytes:
    """The bytes of the regular file at ``path`` (a symlink is followed), at most ``limit`` of them: checked
    before it is opened (a folder, a FIFO, a device or a socket never is), opened without blocking and checked
    again. :class:`FileNotFoundError` when nothing is there, :class:`FileRefused` (what was found) for anything
    else that is not a readable file within ``limit``."""
    try:
        _check_regular(os.stat(path), limit)
        with os.fdopen(os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC), "rb") as fh:
            _check_regular(os.fstat(fh.fileno()), limit)  # swapped for something else since the first check
            data = fh.read(limit + 1)
    except (FileNotFoundError, NotADirectoryError):
        raise FileNotFoundError(str(path)) from None
    except PermissionError:
        raise FileRefused("cannot be read: permission denied") from None
    except OSError as exc:
        raise FileRefused(f"cannot be read: {exc.strerror or exc}") from None
    if len(data) > limit:  # grew since it was examined, or a file of /proc
        raise _too_big(None, limit)
    return data


class LockedTable(Strict):
    path: str = Field(min_length=1)
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    rows: int = Field(ge=0)
    header: list[str] | None = None  # the column names, as `harness data add` read them
    provenance: str = Field(min_length=1)


class DataLock(Strict):
    tables: dict[str, LockedTable]


def load_lock(path: str | Path = DEFAULT_LOCK) -> DataLock:
    return read_yaml(Path(path), "the data lock", DataError, DataLock.model_validate, DataLock)


def read_yaml(path: Path, what: str, error: type[Exception], validate, model=None):
    """``validate`` of the YAML in ``path``, read bounded as a regular file; anything wrong is an ``error`` naming
    the file and what was found (``what``: the file's kind; ``model``: the one ``validate`` checks against)."""
    try:
        return validate(yaml.safe_load(read_regular_file(path, limit=MAX_LOCK_BYTES).decode("utf-8")))
    except FileNotFoundError:
        raise error(f"{path}: {what} does not exist") from None
    except FileRefused as exc:
        raise error(f"{path}: {what} {exc.reason}") from None
    except UnicodeDecodeError as exc:
        raise error(f"{path}: {what} is not UTF-8 text (byte offset {exc.start})") from None
    except yaml.YAMLError as exc:
        raise error(f"{path}: not valid YAML: {exc}") from None
    except ValidationError as err:
        raise error(f"{path}: " + "; ".join(format_validation_error(err, model=model))) from None


def resolve_data_root(option: str | Path | None = None) -> Path:
    """The input root: the option, else $HARNESS_DATA_ROOT, else ../shared/data."""
    option = option or os.environ.get(DATA_ROOT_ENV)
    if option:
        return Path(option).resolve()
    default = (PROJECT_ROOT.parent / "shared" / "data").resolve()
    if default.is_dir():
        return default
    raise DataError(
        f"no input root: {default} does not exist; pass --data-root DIR or set {DATA_ROOT_ENV}"
        " to the folder that holds the tables listed in data/lock.yaml"
    )


@dataclass
class Tables:
    """Verified access to locked tables under one input root: each table is read once, its sha256 checked, and
    everything handed out is made from those same bytes (a file swapped after its check is never used)."""

    lock: DataLock
    root: Path
    _bytes: dict[str, bytes] = field(default_factory=dict)
    _frames: dict[str, pd.DataFrame] = field(default_factory=dict)

    def entry(self, name: str) -> LockedTable:
        try:
            return self.lock.tables[name]
        except KeyError:
            raise DataError(
                f"'{name}' is not a table in the data lock (known: {', '.join(sorted(self.lock.tables))})"
            ) from None

    def data(self, name: str) -> bytes:
        """The bytes of table ``name`` whose sha256 matched the lock (read once, then kept)."""
        if name not in self._bytes:
            entry = self.entry(name)
            path = self.root / entry.path
            try:
                raw = read_regular_file(path, limit=MAX_TABLE_BYTES)
            except FileNotFoundError:
                raise DataError(
                    f"{path}: input table '{name}' is missing (expected sha256 {entry.sha256}); "
                    f"put the file there or point --data-root / {DATA_ROOT_ENV} at the folder that holds it"
                ) from None
            except FileRefused as exc:
                raise DataError(
                    f"{path}: input table '{name}' {exc.reason}; expected a readable regular file with sha256 "
                    f"{entry.sha256} (see data/lock.yaml for its provenance)"
                ) from None
            if (found := hashlib.sha256(raw).hexdigest()) != entry.sha256:
                raise DataError(
                    f"{path}: input table '{name}' has been altered: expected sha256 {entry.sha256}, "
                    f"found {found}; restore the original file (see data/lock.yaml for its provenance)"
                )
            self._bytes[name] = raw
        return self._bytes[name]

    def frame(self, name: str) -> pd.DataFrame:
        """The table as a DataFrame, parsed from the verified bytes (once, then shared read-only)."""
        if name not in self._frames:
            import pandas as pd

            df = pd.read_csv(io.BytesIO(self.data(name)))
            entry = self.entry(name)
            if len(df) != entry.rows:
                raise DataError(f"{self.root / entry.path}: expected {entry.rows} rows, found {len(df)}")
            if entry.header is not None and [str(c) for c in df.columns] != entry.header:
                raise DataError(
                    f"{self.root / entry.path}: its columns are not the locked header "
                    f"(expected {entry.header[:6]}..., found {[str(c) for c in df.columns][:6]}...)"
                )
            self._frames[name] = df
        return self._frames[name]

    def header(self, name: str) -> list[str]:
        """The column names of table ``name``: its :meth:`frame`'s (which a locked header is checked against)."""
        return [str(c) for c in self.frame(name).columns]

    def describe(self, names) -> list[dict]:
        """Provenance of the named tables for the run record."""
        for name in names:
            self.data(name)
        return [{"name": n, **self.entry(n).model_dump(exclude={"header"})} for n in names]


@project_lock()
def add_table(name: str, path: str | Path, provenance: str, *, root: Path, lock_file: Path = DEFAULT_LOCK) -> dict:
    """Append table ``name`` (the CSV at ``path``, under ``root``) to the data lock, its path, sha256, rows and
    header from one read; return its entry, or raise a :class:`DataError` naming the problem. The lock is read and
    written holding the project's write lock, so each of two ``data add`` at once appends to what the other wrote."""
    lock = load_lock(lock_file)
    if not re.match(r"^[a-z0-9][a-z0-9_]*$", name):
        raise DataError(f"{name!r}: a table's name is lower-case letters, digits and '_' (e.g. epoch_math_l5)")
    if name in lock.tables:
        raise DataError(f"{lock_file}: a table named {name!r} is already locked ({lock.tables[name].path})")
    root = Path(root).resolve()
    file = Path(path).resolve()
    if not file.is_relative_to(root):
        raise DataError(f"{path}: not under the input root {root}; tables are read in place from there")
    try:
        raw = read_regular_file(file, limit=MAX_TABLE_BYTES)
    except FileRefused as exc:  # a folder, a FIFO, a device, or a file over MAX_TABLE_BYTES: refused unread
        raise DataError(f"{path}: {exc.reason}") from None
    except OSError:
        raise DataError(f"{path}: no such file (a regular file is expected)") from None
    try:
        import pandas as pd

        df = pd.read_csv(io.BytesIO(raw))
        header = next(csv.reader(io.StringIO(raw.decode("utf-8-sig"))), [])
    except (ValueError, UnicodeDecodeError, csv.Error) as exc:
        raise DataError(f"{path}: not a table pandas can read ({' '.join(str(exc).split())})") from None
    if twice := sorted({h for h in header if header.count(h) > 1}):
        raise DataError(f"{path}: the header names {', '.join(map(repr, twice))} more than once; name each column once")
    if bad := [h for h in header if forbidden_char(h, CONTROL_CHARS)]:
        raise DataError(f"{path}: the header's column {bad[0]!r} holds a control character; a column name is one line")
    entry = {
        "path": file.relative_to(root).as_posix(),
        "sha256": hashlib.sha256(raw).hexdigest(),
        "rows": int(len(df)),
        "header": [str(c) for c in df.columns],
        "provenance": " ".join(provenance.split()),
    }
    LockedTable.model_validate(entry)
    text = Path(lock_file).read_text(encoding="utf-8")
    block = yaml.safe_dump({name: entry}, sort_keys=False, allow_unicode=True, width=100, default_flow_style=None)
    new = text.rstrip("\n") + "\n" + textwrap.indent(block, "  ")
    try:
        DataLock.model_validate(yaml.safe_load(new))  # the whole lock still reads
    except (yaml.YAMLError, ValidationError):
        raise DataError(
            f"{lock_file}: the entry of {name!r} cannot be appended to this lock's text (its `tables:` is not a"
            " block mapping, one table per indented key); write the lock in that layout and add the table again"
        ) from None
    atomic_write_text(lock_file, new)
    return entry
