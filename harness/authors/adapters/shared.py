"""What every protocol's adapter does alike, whatever the authors' code it drives (standard library only)."""

from __future__ import annotations

import csv
import os
from collections.abc import Iterable


class OutsideTheirCodeError(ValueError):
    """The claim asks for something the authors' code does not do (other periods, another compute unit). The
    message's words up to its first colon are the report's reason; the rest goes to its folded detail."""


def unsupported(control: dict) -> ValueError:
    """The error for a control whose kind the adapter does not run."""
    return ValueError(f"control '{control['id']}': kind '{control['control']}' is not supported by this adapter")


def argv(options: dict) -> list[str]:
    """A command line from ``{flag: value or list of values}``, in the dict's order."""
    return [a for flag, value in options.items() for a in [flag, *(value if isinstance(value, list) else [value])]]


def shown(args: list[str], table: str) -> list[str]:
    """A command line as the record keeps it: the table's path (a scratch or input path) as ``<table>``."""
    return [a if a != table else "<table>" for a in args]


def scratch(*names: str) -> str:
    """A folder in the run's scratch folder (the working folder): fixed names, so nothing random is kept."""
    return os.path.join(os.getcwd(), "runs", *names)


def read_rows(path: str) -> list[dict]:
    """The rows of a CSV file the authors' script must have written."""
    if not os.path.exists(path):
        raise RuntimeError(f"their script wrote no {path} (task skipped?)")
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def write_table(path: str, headers: list[str], rows: Iterable[dict]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=headers)
        w.writeheader()
        w.writerows(rows)


def require_columns(table: str, headers: Iterable[str], columns: Iterable[str]) -> None:
    if missing := [c for c in columns if c not in headers]:
        raise ValueError(f"{table}: columns {missing} are missing")
