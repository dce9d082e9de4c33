"""A reviewer's reading of a rendered report, as checks: what a careful reader would flag on GitHub.

:func:`review` returns every problem it finds in a report's Markdown, given the record it was rendered
from (so that numbers in prose can be held against the record's numbers):

* **tables parse**: every row of a table has the header's number of cells, the second line is its
  separator, and the line right after the table is blank (a sentence directly under a table would be read as
  one more row);
* **no raw quantity key** (``boundary.MATH Lvl 5``, ``audit.n_failed``), no raw setting key
  (``tau=0.98,kappa=10``) and no internal notation such as ``z*=z_min`` in prose;
* **no Python traceback** (``Traceback (most recent call last)``, ``File "...", line 3``);
* **no nested parentheses** in the harness's own prose, "(… (…))";
* **no "0 of 0"** or "of the 0 cells", **no "(paper —)"** for a value the paper does not give, **no count
  written as a float** ("474.0 models"), **no sentence run into the next**
  ("models).Every");
* **numbers in prose agree with the record**: every number the harness writes in a sentence is one of the
  record's numbers (its targets, controls, data, parameters, evidence, resampling) or its results object's in one
  of the report's formats; a number typed into a template, or computed in one, has no counterpart and is flagged.

Claim-supplied text (the claim, titles, labels, reasons, changes, limitations) is the claim file's, printed
as written: it is taken out before the prose checks, which judge the harness's own sentences.

:data:`KINDS` holds the checks of the false or unreadable sentences of issue 28 that can be checked
mechanically, one function each, ``check(md, record) -> [problem]``, run one kind at a time
(:func:`review_kind`) so that a kind the templates still get wrong is known by name:

* ``number_agreement``: "All 1 targets", "0 of the 1 hold", "1 models", "3 target";
* ``raw_exception``: an exception's text (``ValueError: …``) outside a folded ``<details>`` block;
* ``negative_zero``: ``-0.0000`` (a value that rounds to zero, printed with a sign);
* ``count_with_decimals``: a count printed with decimals, in prose (``474.0000 models``) or as the measured
  value of a count target (``audit.n_failed`` as ``0.0000``);
* ``exponent_plus``: a number in prose written the way Python prints it, ``3.16e+24`` or ``1e+04``;
* ``box_off`` and ``cold_start_off``: a sentence about the refit inside the authors' box, or about fitting
  from the other start, in the report of a claim that turned it off (``box_check: null``,
  ``robustness_cold_start: false``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable

__all__ = ["review", "review_kind", "KINDS", "cells", "tables", "record_numbers", "prose_numbers"]


def cells(line: str) -> int:
    """Cells of a GFM table row: split on every | not escaped by an odd run of backslashes."""
    count, backslashes = 0, 0
    for c in line.strip():
        if c == "|" and backslashes % 2 == 0:
            count += 1
        backslashes = backslashes + 1 if c == "\\" else 0
    return count - 1


def tables(md: str) -> Iterable[tuple[int, list[str], str]]:
    """``(first line number, rows, the line after)`` of every table outside code fences."""
    lines = md.splitlines()
    fence, table, start = False, [], 0
    for i, line in enumerate(lines + [""]):
        if line.startswith("```"):
            fence = not fence
        if not fence and line.startswith("|"):
            if not table:
                start = i + 1
            table.append(line)
            continue
        if table:
            yield start, table, line
            table = []


_CODE_SPAN = re.compile(r"(`+)(?:.*?)\1")
_LINK = re.compile(r"\]\([^)]*\)|https?://\S+")


def _blank_code_spans(md: str) -> str:
    """Code spans blanked (a span may run over a line break), line breaks kept so that line numbers hold."""
    return re.sub(r"`[^`\n]*(?:\n[^`\n]+)*`", lambda m: re.sub(r"[^\n]", " ", m.group()), md)


def _prose_lines(md: str) -> list[tuple[int, str]]:
    """The report's lines of prose: no code fences, no table rows, no HTML tags, no images; code spans and link
    targets blanked."""
    out, fence = [], False
    lines = md.splitlines()
    blanked = _blank_code_spans("\n".join(line if not line.startswith("```") else "" for line in lines)).splitlines()
    for i, (line, bl) in enumerate(zip(lines, blanked), 1):
        if line.startswith("```"):
            fence = not fence
            continue
        if fence or line.startswith(("|", "<", "![", "#")):
            continue
        text = _LINK.sub("]", _CODE_SPAN.sub(" ", bl))
        out.append((i, text))
    return out


def _claim_texts(record) -> list[str]:
    """The claim file's own text in the record, as the report prints it (through the ``md`` filter)."""
    from harness.rendering.render import md

    texts = [record.claim.claim, record.claim.title or "", *record.claim.limitations]
    for t in record.targets:
        texts += [t.title, t.reason, t.quantity_label, t.other_label or ""]
    for c in record.controls:
        texts += [c.id, c.changes]
    texts += list(record.quantities.values())
    texts += [str(k) for k in (record.claim.params.get("tasks") or {})]
    texts += [str(v) for v in (record.claim.params.get("tasks") or {}).values()]
    if record.robustness is not None:
        texts += [c.get("label", "") for c in record.robustness.facts.get("comparisons", [])]
        texts += [record.robustness.facts.get("cluster_col") or ""]
    for f in record.figures:
        texts.append(f.caption)
    out = set()
    for t in texts:
        if t:
            out.add(md(t))
            out.add(md(t, cell=True))
    return sorted(out, key=len, reverse=True)


def _without_claim_text(md_text: str, record) -> str:
    for t in _claim_texts(record):
        if len(t) >= 3:
            md_text = md_text.replace(t, " ")
    return md_text


# -- numbers ------------------------------------------------------------------------------------------------

_NUMBER = re.compile(r"(?<![\w.^·/−-])[-−+]?(?:\d+\.\d+|\d+)(?:e[-+]?\d+)?%?(?![\w.]*\d)(?![A-Za-z])")
#: Numbers a template may write as words of its own: small counts and the fixed parts of formulas and units.
TEMPLATE_NUMBERS = {"0", "1", "2", "3", "4", "5", "10", "100", "95%", "1e21", "21", "24"}


def _numbers_in(obj, out: set[float]) -> None:
    if isinstance(obj, bool):
        return
    if isinstance(obj, (int, float)):
        if math.isfinite(obj):
            out.add(float(obj))
    elif isinstance(obj, dict):
        for v in obj.values():
            _numbers_in(v, out)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            _numbers_in(v, out)


def record_numbers(record) -> set[float]:
    """Every number a report may print: the record's targets, controls, verdict, data, parameters, inputs,
    evidence, resampling, analysis choices and arms' values (not the arms' bulky details), and every fact its
    results object derives from them (:func:`harness.rendering.results.results_for`): a number typed into a
    template has no counterpart."""
    from functools import cached_property

    from harness.rendering.results import results_for

    out: set[float] = set()
    dump = record.model_dump(mode="json")
    for key in ("targets", "controls", "verdict", "data", "robustness", "inputs", "multiverse", "evidence"):
        _numbers_in(dump.get(key), out)
    _numbers_in(dump["claim"]["params"], out)
    _numbers_in(dump["claim"]["seed"], out)
    for arm in ("reimpl", "upstream"):
        _numbers_in(dump["arms"][arm]["values"], out)
        for c in dump["arms"][arm]["controls"].values():
            _numbers_in(c["values"], out)
    r = results_for(record)
    for name in dir(type(r)):
        if isinstance(getattr(type(r), name, None), cached_property):
            _numbers_in(_plain(getattr(r, name)), out)
    for x in list(out):  # the signed and percentage forms the templates print
        out.add(-x)
        out.add(100 * x)
        out.add(abs(x))
    return out


def _plain(obj):
    """A results object's fact as dicts, lists and numbers (its records and models dumped)."""
    if hasattr(obj, "model_dump"):
        return obj.model_dump(mode="json")
    if isinstance(obj, dict):
        return {k: _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    return obj


def _matches(token: str, numbers: set[float]) -> bool:
    t = token.replace("−", "-").lstrip("+")
    pct = t.endswith("%")
    t = t.rstrip("%")
    try:
        x = float(t)
    except ValueError:
        return True
    if not pct and token.replace("−", "-").lstrip("+") in TEMPLATE_NUMBERS:
        return True
    if pct and t + "%" in TEMPLATE_NUMBERS:
        return True
    decimals = len(t.split(".")[1].split("e")[0]) if "." in t else 0
    if "e" in t:
        mant = t.split("e")[0]
        decimals = len(mant.split(".")[1]) if "." in mant else 0
        step = abs(x) * 10.0 ** (-decimals)
    else:
        step = 10.0**-decimals
    tol = 0.5 * step * (1 + 1e-9) + 1e-15
    return any(abs(x - y) <= tol for y in numbers)


def prose_numbers(md_text: str) -> list[tuple[int, str]]:
    """``(line, number)`` of every number in the report's prose."""
    out = []
    for i, line in _prose_lines(md_text):
        line = re.sub(r"\d{4}-\d{2}(?:-\d{2})?", " ", line)  # dates
        line = re.sub(r"< (?:1e-\d+|0?\.?0*1%)", " ", line)  # "below what the digits show": a bound, not a value
        line = re.sub(r"(Section|Table|Figure|Equation|Appendix|split|splits|t =|P)\s*\d+(\.\d+)*", " ", line)
        line = re.sub(r"10[⁰¹²³⁴⁵⁶⁷⁸⁹⁻]+", " ", line)  # 10²⁴
        line = re.sub(r"\b[A-Za-z]+[ -]?\d+\b", " ", line)  # MATH Lvl 5, AIME-2025, MATH-500, IFEval-2
        out += [(i, m.group()) for m in _NUMBER.finditer(line)]
    return out


# -- the review ---------------------------------------------------------------------------------------------

_TRACEBACK = re.compile(r"Traceback \(most recent call last\)|File \"[^\"]+\", line \d+")
_RAW_SETTING = re.compile(r"\b(?:tau|kappa|lam|beta)=\d")
_INTERNAL = re.compile(r"[A-Za-z0-9*+]=[A-Za-z0-9_]")
_FLOAT_COUNT = re.compile(
    r"\b\d+\.0 (?:models?|rows?|splits?|pairs?|resamples?|units?|targets?|cells?|lines?|permutations?)\b"
)
_RUN_ON = re.compile(r"[a-z%)\]*][.;:,][A-Z][a-z]")


def _nested_parens(text: str) -> bool:
    depth = 0
    for c in text:
        if c == "(":
            depth += 1
            if depth >= 2:
                return True
        elif c == ")":
            depth = max(depth - 1, 0)
    return False


def review(md_text: str, record=None) -> list[str]:
    """Every problem a reviewer would flag in a rendered report (``record``: the record it was rendered from)."""
    problems = []
    for start, rows, after in tables(md_text):
        widths = {cells(r) for r in rows}
        if len(widths) != 1:
            problems.append(f"line {start}: a table whose rows have {sorted(widths)} cells")
        if len(rows) < 2 or not re.fullmatch(r"\|(?:\s*:?-+:?\s*\|)+", rows[1].strip()):
            problems.append(f"line {start}: a table without its separator row")
        if after.strip():
            problems.append(f"line {start + len(rows)}: text right under a table joins it: {after[:60]!r}")
    if _TRACEBACK.search(md_text):
        problems.append("a Python traceback is pasted into the report")
    text = _without_claim_text(md_text, record) if record is not None else md_text
    keys = sorted((record.quantities if record is not None else {}), key=len, reverse=True)
    for i, line in _prose_lines(text):
        for key in keys:
            if ("." in key or "_" in key) and re.search(rf"(?<![\w.]){re.escape(key)}(?![\w])", line):
                problems.append(f"line {i}: the raw quantity key {key!r} in prose")
        if _RAW_SETTING.search(line):
            problems.append(f"line {i}: a raw setting key in prose: {line.strip()[:80]!r}")
        elif _INTERNAL.search(line):
            problems.append(f"line {i}: internal notation in prose: {_INTERNAL.search(line).group()!r}")
        if _nested_parens(line):
            problems.append(f"line {i}: nested parentheses: {line.strip()[:80]!r}")
        if re.search(r"\b0 of 0\b|\b[Oo]f the 0\b(?!\.\d)", line):  # "of the 0.98 quantile" counts nothing
            problems.append(f"line {i}: a count of nothing: {line.strip()[:60]!r}")
        if re.search(r"\bpaper —|\(paper —\)", line):
            problems.append(f"line {i}: a paper value that is not there: {line.strip()[:60]!r}")
        if _FLOAT_COUNT.search(line):
            problems.append(f"line {i}: a count written as a float: {_FLOAT_COUNT.search(line).group()!r}")
        if _RUN_ON.search(line):
            problems.append(f"line {i}: two sentences run together: {_RUN_ON.search(line).group()!r}")
    for start, rows, _ in tables(md_text):
        for k, row in enumerate(rows):
            if _FLOAT_COUNT.search(row):
                problems.append(f"line {start + k}: a count written as a float: {_FLOAT_COUNT.search(row).group()!r}")
            if _RAW_SETTING.search(row):
                problems.append(f"line {start + k}: a raw setting key in a table")
    if record is not None:
        numbers = record_numbers(record)
        for i, token in prose_numbers(text):
            if not _matches(token, numbers):
                problems.append(f"line {i}: the number {token} in prose is none of the record's numbers")
    return problems


# -- the kinds of false sentence of issue 28 ---------------------------------------------------------------------

#: Nouns the reports count: "1 models" and "3 target" are wrong whichever the number.
COUNTED = (
    "target|model|split|task|benchmark|row|cell|resample|control|specification|permutation|period|pair|"
    "comparison|ordering|quantity|value|cluster|bin|fit|setting|relabelling|shuffle|draw|replicate|point|line|"
    "choice|base model|headline target|supporting target|claim|estimator|line"
)
_PLURAL_COUNTED = "|".join(w[:-1] + "ies" if w.endswith("y") else w + "s" for w in COUNTED.split("|"))
_ONE_PLURAL = re.compile(rf"(?<![\d.,×^/−-])(?<!= )\b1 (?:[a-z-]+ )?(?:{_PLURAL_COUNTED})\b")
_MANY_SINGULAR = re.compile(
    rf"(?<![\d.,×^/−-])(?<!= )\b(?:0|[2-9]|[1-9]\d+) (?:{COUNTED})\b(?![\w-])(?! targets\b)"
)  # "6 value targets": an adjective
_ALL_ONE = re.compile(r"\b(?:[Aa]ll|[Bb]oth|of the|[Tt]he) 1\b(?! of)")
_EXCEPTION = re.compile(r"\b[A-Z][A-Za-z]*(?:Error|Exception|Warning)\b:")
_NEGATIVE_ZERO = re.compile(r"(?<![\w.])[-−]0(?:\.0+)?(?!\.?\d)")
_LONG_FLOAT_COUNT = re.compile(rf"\b\d+\.0+ (?:{_PLURAL_COUNTED}|{COUNTED})\b")
_EXPONENT_PLUS = re.compile(r"\d[eE]\+\d")
_BOX_REFIT = re.compile(
    r"\b(?:inside|in) (?:their|the authors'|the)(?: optimiser| parameter)? box\b|\bnor their box\b|\bboxed\b|"
    r"\bthe box (?:moves|changes|explains|accounts|holds)\b|\b(?:narrows|drops)\b[^.]*`box_check`"
)
_OTHER_START = re.compile(
    r"\bother start\b|\bcold (?:start|restart)s?\b|optimiser's start\b|\bwithout the warm-up stages\b|"
    r"\bstarted the other way\b|\b(?:narrows|drops)\b[^.]*`robustness_cold_start`"
)


def _outside_details(md_text: str) -> list[tuple[int, str]]:
    """``(line number, line)`` of every line of the report outside a ``<details>`` block and a code fence."""
    out, depth, fence = [], 0, False
    for i, line in enumerate(md_text.splitlines(), 1):
        if line.startswith("```"):
            fence = not fence
            continue
        depth += line.count("<details>") - line.count("</details>")
        if depth <= 0 and not fence and "</details>" not in line:
            out.append((i, line))
        depth = max(depth, 0)
    return out


def _text(md_text: str, record) -> str:
    return _without_claim_text(md_text, record) if record is not None else md_text


def _number_agreement(md_text: str, record) -> list[str]:
    out = []
    for i, line in _prose_lines(_text(md_text, record)):
        for rx in (_ALL_ONE, _ONE_PLURAL, _MANY_SINGULAR):
            m = rx.search(line)
            if m:
                out.append(f"line {i}: a count and its words disagree: {m.group()!r} in {line.strip()[:80]!r}")
    return out


def _raw_exception(md_text: str, record) -> list[str]:
    out = []
    for i, line in _outside_details(md_text):
        m = _EXCEPTION.search(line)
        if m:
            out.append(f"line {i}: an exception's text outside a folded detail: {line.strip()[:80]!r}")
    return out


def _negative_zero(md_text: str, record) -> list[str]:
    text = _text(md_text, record)
    lines = [(i, ln) for i, ln in _prose_lines(text)]
    lines += [(start + k, row) for start, rows, _ in tables(text) for k, row in enumerate(rows)]
    return [f"line {i}: a negative zero: {ln.strip()[:80]!r}" for i, ln in sorted(lines) if _NEGATIVE_ZERO.search(ln)]


def _count_targets(record) -> list[tuple[str, int]]:
    """``(title, value)`` of the targets on a count (a quantity whose last part starts with ``n_``) measured whole."""
    out = []
    for t in record.targets if record is not None else []:
        last = t.quantity.rsplit(".", 1)[-1]
        value = record.arms.reimpl.values.get(t.quantity)
        if (last.startswith("n_") or last == "n") and isinstance(value, (int, float)) and float(value).is_integer():
            out.append((t.title, int(value)))
    return out


def _count_with_decimals(md_text: str, record) -> list[str]:
    from harness.rendering.render import md

    out = []
    text = _text(md_text, record)
    for i, line in _prose_lines(text):
        m = _LONG_FLOAT_COUNT.search(line)
        if m:
            out.append(f"line {i}: a count printed with decimals: {m.group()!r}")
    for title, value in _count_targets(record):
        shown = md(title, cell=True)
        for start, rows, _ in tables(md_text):
            for k, row in enumerate(rows):
                if shown in row and re.search(rf"(?<![\d.]){value}\.\d+", row.replace(shown, " ")):
                    out.append(f"line {start + k}: the count {title!r} printed with decimals: {row.strip()[:80]!r}")
    return out


def _exponent_plus(md_text: str, record) -> list[str]:
    out = []
    for i, line in _prose_lines(_text(md_text, record)):
        if _EXPONENT_PLUS.search(line):
            out.append(f"line {i}: a number as Python prints it: {line.strip()[:80]!r}")
    return out


def _knob_off(record, key: str, off) -> bool:
    params = record.claim.params if record is not None else {}
    return key in params and params[key] == off


def _sentences_about(md_text: str, record, rx: re.Pattern, what: str) -> list[str]:
    out = []
    for i, line in _outside_details(_text(md_text, record)):
        if line.startswith("|"):
            continue
        m = rx.search(line)
        if m:
            out.append(f"line {i}: {what}, which the claim turned off: {m.group()!r} in {line.strip()[:80]!r}")
    return out


def _box_off(md_text: str, record) -> list[str]:
    if not _knob_off(record, "box_check", None):
        return []
    return _sentences_about(md_text, record, _BOX_REFIT, "a sentence about the refit inside the authors' box")


def _cold_start_off(md_text: str, record) -> list[str]:
    if not _knob_off(record, "robustness_cold_start", False):
        return []
    return _sentences_about(md_text, record, _OTHER_START, "a sentence about fitting from the other start")


#: The kinds of false or unreadable sentence of issue 28 a reviewer checks mechanically, by name.
KINDS = {
    "number_agreement": _number_agreement,
    "raw_exception": _raw_exception,
    "negative_zero": _negative_zero,
    "count_with_decimals": _count_with_decimals,
    "exponent_plus": _exponent_plus,
    "box_off": _box_off,
    "cold_start_off": _cold_start_off,
}


def review_kind(kind: str, md_text: str, record=None) -> list[str]:
    """The problems of one kind (:data:`KINDS`) in a rendered report."""
    return KINDS[kind](md_text, record)
