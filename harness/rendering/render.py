"""Markdown reports rendered with jinja2 from a run record, and nothing else."""

from __future__ import annotations

import math
import re
from pathlib import Path

import jinja2

from ..core.quantities import number_text
from ..core.record import Record
from ..core.schema import CONTROL_CHARS

TEMPLATES_DIR = Path(__file__).resolve().parents[2] / "templates"
DASH = "—"


def _missing(x) -> bool:
    return x is None or isinstance(x, bool) or (isinstance(x, float) and not math.isfinite(x))


def _unsigned_zero(text: str) -> str:
    """A number that rounds to zero at the digits shown, without a sign: ``0.0000``, never ``-0.0000``."""
    return text.lstrip("+-") if text.lstrip("+-").strip("0.") == "" else text


def fmt_num(x, digits: int = 4) -> str:
    """Fixed point with ``digits`` decimals; a dash for a missing value; no negative zero."""
    return DASH if _missing(x) else _unsigned_zero(f"{x:.{digits}f}")


def fmt_signed(x, digits: int = 4) -> str:
    """Fixed point with its sign (``+0.0143``); a value that rounds to zero has none (``0.0000``)."""
    return DASH if _missing(x) else _unsigned_zero(f"{x:+.{digits}f}")


def fmt_sci(x, digits: int = 2) -> str:
    """Scientific notation for a small measured number (``2.22e-16``); an exact zero is ``0``."""
    return DASH if _missing(x) else ("0" if x == 0 else f"{x:.{digits}e}")


def fmt_pct(x, digits: int = 2) -> str:
    """A share as a percentage; a share that is not zero but rounds to it prints as ``< 0.1%``, not ``0.0%``."""
    if _missing(x):
        return DASH
    if x != 0 and abs(100 * x) < 0.5 * 10**-digits:
        return f"< {10.0**-digits:g}%"
    return f"{100 * x:.{digits}f}%"


def fmt_level(x) -> str:
    """A set level or rate (a parameter, not a measurement) as a percentage in its shortest exact form:
    ``2%``, ``2.5%`` for 0.025 (never rounded to ``2%``), ``97.5%``."""
    return DASH if _missing(x) else f"{100 * x:.6g}%"


def fmt_count(x) -> str:
    """A count as an integer (``474``, not ``474.0``)."""
    return DASH if _missing(x) else str(round(float(x)))


def count_of(n, singular: str, plural: str | None = None) -> str:
    """``1 model``, ``2 models``: a count with its noun in the right number."""
    k = None if _missing(n) else round(float(n))
    return f"{DASH if k is None else k} {singular if k == 1 else (plural or singular + 's')}"


def titles(items, last: str = " and ") -> str:
    """Target titles in prose, each in italics, so that a title with a comma stays one item:
    ``*Sigmoid, OOD pinball* and *Sigmoid, ID calibration*``."""
    return join_labels([f"*{md(t)}*" for t in items], last=last).replace("; ", ", ")


def period(text: str) -> str:
    """``text`` ended as a sentence: a full stop added unless it ends in one (or in ``?`` or ``!``)."""
    text = str(text).rstrip()
    return text if text.endswith((".", "?", "!")) else text + "."


def every(n, singular: str, plural: str | None = None) -> str:
    """All of a count, as a reader says it: ``the one target``, ``both targets``, ``all 12 targets``."""
    plural = plural or singular + "s"
    if _missing(n):
        return f"all {plural}"
    k = int(round(float(n)))
    return f"the one {singular}" if k == 1 else (f"both {plural}" if k == 2 else f"all {k} {plural}")


def agree(n, singular: str, plural: str) -> str:
    """The form of a verb (or any word) that agrees with a count: ``sits`` for 1, ``sit`` otherwise."""
    return singular if (not _missing(n) and int(round(float(n))) == 1) else plural


def fmt_general(x, digits: int = 4) -> str:
    """Shortest faithful form for parameters such as 0.001 or 50; a number that would need an exponent, or is
    below 0.001, as a power of ten (``10⁴``, ``10⁻⁴``, ``2.5 × 10⁻⁶``), never ``1e+04`` or ``0.0001``."""
    if isinstance(x, int) and abs(x) < 10**digits:
        return str(x)
    return DASH if _missing(x) else number_text(x, digits)


def fmt_auto(x, digits: int = 4) -> str:
    """A measured number: integers as integers, small magnitudes in scientific notation, else fixed point."""
    if _missing(x):
        return DASH
    if isinstance(x, int) or float(x).is_integer():  # a count, or an exact zero: 0, not 0.0000
        return f"{int(x)}"
    if x != 0 and abs(x) < 10 ** -(digits - 1):
        return f"{x:.2e}"
    return f"{x:.{digits}f}"


def fmt_magnitude(x, digits: int = 4) -> str:
    """A size (a shift, a gap) at ``digits`` decimals; below what they can show: ``< 1e-4``, not ``0.0000``."""
    if _missing(x):
        return DASH
    if x != 0 and abs(x) < 0.5 * 10**-digits:
        return f"< 1e-{digits}"
    return f"{x:.{digits}f}"


def fmt_bool(x) -> str:
    return DASH if x is None else ("yes" if x else "no")


def join_labels(items, last: str = " and ") -> str:
    """Join names for prose; if any name holds a comma, separate with semicolons so each stays one item."""
    items = [str(i) for i in items]
    sep = "; " if any("," in i for i in items) else ", "
    if len(items) <= 1:
        return "".join(items)
    return sep.join(items[:-1]) + last + items[-1]


#: An HTML character reference (``&lt;``, ``&#60;``): its ``&`` is escaped so that it prints as written.
_ENTITY = re.compile(r"&(?:#[0-9]{1,8}|#[xX][0-9a-fA-F]{1,8}|[A-Za-z][A-Za-z0-9]{0,31});")
#: What a line may start with to open a block: a heading, a quote, a list item, a setext underline.
_BLOCK_START = re.compile(r"^(?:[#>]|[-+=](?=\s|$)|[0-9]{1,9}(?=[.)](?:\s|$)))")


def _controls_shown(text: str) -> str:
    """Line breaks and tabs become spaces; any other control character or bidi override a visible ``\\uXXXX``."""
    return CONTROL_CHARS.sub(lambda m: " " if m.group() in "\t\n\r\u2028\u2029" else f"\\u{ord(m.group()):04x}", text)


def _inline(text: str, cell: bool) -> str:
    out = []
    for i, c in enumerate(text):
        if c in "\\`*[]~" or (c == "|" and cell):
            out.append("\\" + c)
        elif c == "_":  # emphasis only opens or closes at a word's edge: q_tau stays as it is
            inner = 0 < i < len(text) - 1 and text[i - 1].isalnum() and text[i + 1].isalnum()
            out.append("_" if inner else "\\_")
        elif c == "<" and i + 1 < len(text) and not text[i + 1].isspace():  # a tag, a comment, an autolink
            out.append("&lt;")
        elif c == "&" and _ENTITY.match(text, i):
            out.append("&amp;")
        else:
            out.append(c)
    escaped = "".join(out)
    m = None if cell else _BLOCK_START.match(escaped)  # a table cell holds inline text only
    if m:
        escaped = escaped[: m.end()] + "\\" + escaped[m.end() :] if m.group()[0].isdigit() else "\\" + escaped
    return escaped


def _fence(text: str, least: int) -> str:
    """A run of backticks longer than any in ``text``, and at least ``least`` long."""
    return "`" * max(least, 1 + max((len(r) for r in re.findall(r"`+", text)), default=0))


def md(value, cell: bool = False, code: bool = False) -> str:
    """Text from a claim file (or from outside) as Markdown that prints it literally (``code``: as a code span)."""
    if value is None:
        return DASH
    if not code:
        return _controls_shown(_inline(str(value), cell))
    text = _controls_shown(str(value))
    if cell:
        text = text.replace("|", "\\|")  # a table splits cells on | even inside a code span
    fence = _fence(text, 1)
    pad = " " if text.startswith(("`", " ")) or text.endswith(("`", " ")) else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def code_block(value) -> str:
    """Text from outside (an arm's recorded reason) as a fenced code block that shows it literally: its fence
    longer than any run of backticks in it, control characters as visible escapes."""
    text = _controls_shown(str(value))
    fence = _fence(text, 3)
    return f"{fence}text\n{text}\n{fence}"


FILTERS = {
    "num": fmt_num,
    "signed": fmt_signed,
    "sci": fmt_sci,
    "pct": fmt_pct,
    "level": fmt_level,
    "integer": fmt_count,
    "count_of": count_of,
    "every": every,
    "agree": agree,
    "period": period,
    "titles": titles,
    "g": fmt_general,
    "auto": fmt_auto,
    "mag": fmt_magnitude,
    "yesno": fmt_bool,
    "labels": join_labels,
    "md": md,
    "code_block": code_block,
}


def environment(templates_dir: str | Path = TEMPLATES_DIR) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir)),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.filters.update(FILTERS)
    return env


def _is_row(line: str) -> bool:
    """A table row: the templates write every row from its first ``|`` to its last."""
    return line.startswith("|") and line.rstrip().endswith("|")


def _tidy(text: str) -> str:
    """One blank line at most between blocks, a blank line before every heading, every figure and around every
    table (a line of text right under a table would be read as one more row, a figure right under a
    paragraph would sit inside it), one newline at the end."""
    out: list[str] = []
    for line in text.splitlines():
        if line.strip() == "" and (not out or out[-1].strip() == ""):
            continue
        if (
            out
            and out[-1].strip() != ""
            and (
                line.startswith(("#", "<details>", "!["))
                or out[-1].startswith("</details>")
                or (_is_row(line) != _is_row(out[-1]) and line.strip() != "")
            )
        ):
            out.append("")
        out.append(line.rstrip())
    return "\n".join(out).rstrip() + "\n"


def render_page(name: str, **context) -> str:
    return _tidy(environment().get_template(name).render(**context))


def render_report(record: Record) -> str:
    """The Markdown report of a run record: its protocol's template, given the record's results object."""
    from ..claimfiles.registry import PROTOCOLS
    from .results import results_for

    template = PROTOCOLS[record.claim.protocol].template
    return render_page(template, r=results_for(record), **record.model_dump(mode="json"))
