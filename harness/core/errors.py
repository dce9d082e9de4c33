"""Typed errors. The library raises them; only the CLI prints them."""

from __future__ import annotations


class HarnessError(Exception):
    """Base class: a problem with the inputs that stops a run (exit status 2)."""


class SpecError(HarnessError):
    """A claim file that does not validate. Holds every problem found at once."""

    def __init__(self, path, problems: list[str]):
        self.path = str(path)
        self.problems = list(problems)
        lines = "\n".join(f"  {self.path}: {p}" for p in self.problems)
        super().__init__(f"{self.path}: {len(self.problems)} problem(s) in the claim file\n{lines}")


class DataError(HarnessError):
    """A missing, unreadable or altered input table, or a bad data lock."""


class UpstreamError(HarnessError):
    """The authors' checkout is missing, at the wrong commit, or modified."""


class ProtocolError(HarnessError):
    """A protocol could not compute what it promised (e.g. a missing quantity)."""
