"""Markdown reports rendered with jinja2 from a run record, and nothing else.

Undefined variables are errors (``StrictUndefined``), so a template that asks
for a number the record lacks fails loudly instead of printing a blank.
"""

from __future__ import annotations

import math
from pathlib import Path

import jinja2

from .datalock import PROJECT_ROOT
from .protocols import PROTOCOLS

__all__ = ["render_report", "environment", "TEMPLATES_DIR"]

TEMPLATES_DIR = PROJECT_ROOT / "templates"


def _missing(x) -> bool:
    return x is None or (isinstance(x, float) and not math.isfinite(x))


def fmt_num(x, digits: int = 4) -> str:
    """Fixed-point with ``digits`` decimals; an em dash for a missing value."""
    return "—" if _missing(x) else f"{x:.{digits}f}"


def fmt_signed(x, digits: int = 4) -> str:
    return "—" if _missing(x) else f"{x:+.{digits}f}"


def fmt_sci(x, digits: int = 2) -> str:
    return "—" if _missing(x) else f"{x:.{digits}e}"


def fmt_pct(x, digits: int = 2) -> str:
    return "—" if _missing(x) else f"{100 * x:.{digits}f}%"


def fmt_general(x, digits: int = 4) -> str:
    """Shortest faithful form for parameters such as 0.001 or 50."""
    if _missing(x):
        return "—"
    if isinstance(x, bool):
        return str(x)
    return f"{x:.{digits}g}"


def fmt_bool(x) -> str:
    return "—" if x is None else ("yes" if x else "no")


def environment(templates_dir: str | Path = TEMPLATES_DIR) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir)),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.filters.update(num=fmt_num, signed=fmt_signed, sci=fmt_sci, pct=fmt_pct, g=fmt_general, yesno=fmt_bool)
    env.globals.update(max=max, min=min, abs=abs, sum=sum, len=len, sorted=sorted, zip=zip)
    return env


def render_report(record: dict, templates_dir: str | Path = TEMPLATES_DIR) -> str:
    """The Markdown report of a run record."""
    template = PROTOCOLS[record["claim"]["protocol"]].template
    text = environment(templates_dir).get_template(template).render(**record)
    # One blank line at most between blocks, one newline at the end.
    lines, out = text.splitlines(), []
    for line in lines:
        if line.strip() == "" and (not out or out[-1].strip() == ""):
            continue
        if line.startswith("#") and out and out[-1].strip() != "":
            out.append("")  # a heading always starts a block
        out.append(line.rstrip())
    return "\n".join(out).rstrip() + "\n"
