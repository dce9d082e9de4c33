"""What the harness knows of a protocol before it imports any of its math: the protocol's card."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class ProtocolCard:
    """A protocol's folder, by its package name, and what the build and the reports need of it.

    ``cost``: rough relative cost of one claim (claims run in parallel start
    with the most costly). ``figures``: the names of the figures it can draw
    (``figures/<claim id>/<name>.svg``).
    """

    package: str
    cost: int = 1
    figures: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        """The protocol's name, as claim files write it: its folder's name."""
        return self.package.rpartition(".")[2]

    @property
    def folder(self) -> Path:
        return Path(importlib.import_module(self.package).__file__).parent

    @property
    def template(self) -> str:
        """The report template's file name, in the project's ``templates/``."""
        return f"{self.name}.md.j2"

    def module_file(self, module: str) -> Path | None:
        """The file of one module of the folder (``"adapter"``), or ``None`` when the folder has none."""
        path = self.folder / f"{module}.py"
        return path if path.is_file() else None

    @property
    def adapter_module(self) -> str | None:
        """The adapter's dotted module name, when the protocol can run the authors' code."""
        return f"{self.package}.adapter" if self.module_file("adapter") else None

    def _module(self, module: str):
        return importlib.import_module(f"{self.package}.{module}")

    @cached_property
    def protocol(self) -> Any:
        """The implementation (:class:`harness.protocols.base.Protocol`); imports numpy, scipy, pandas."""
        return self._module("protocol").PROTOCOL

    @property
    def quantities(self) -> Any:
        """The vocabulary module (standard library only): ``vocabulary(params)``, every quantity a measurement with
        these (plain) parameters reports, ``{name: Quantity}``; ``control_vocabulary(kind, params, control_params)``,
        a control's."""
        return self._module("quantities")

    def draw(self, record, plots: dict) -> list:
        """The figures of ``record`` from ``plots``: ``[(Figure, svg bytes)]`` (none when the folder draws none)."""
        if self.module_file("figures") is None:
            return []
        return self._module("figures").draw(record, plots)
