"""Templates word the results object's facts; they do not compute them.

Every template is read with jinja2's own lexer: no arithmetic, no comparison of numbers, no
accumulators, no aggregation filters. A template may test a state (a string), a boolean fact, or
whether something is defined or none.
"""

from pathlib import Path

import jinja2
import pytest

from harness.rendering.render import environment

TEMPLATES = sorted((Path(__file__).resolve().parents[2] / "templates").glob("*.j2"))
ARITHMETIC = {"+", "-", "*", "/", "//", "%", "**"}
ORDERING = {"<", ">", "<=", ">="}
FORBIDDEN_NAMES = {
    "append",
    "update",
    "namespace",
    "sum",
    "max",
    "min",
    "abs",
    "round",
    "int",
    "float",
    "range",
    "count",
    "reduce",
}


def _expression_tokens(path: Path):
    env = environment(path.parent)
    inside = False
    for lineno, kind, value in env.lex(path.read_text(encoding="utf-8")):
        if kind in ("variable_begin", "block_begin"):
            inside = True
        elif kind in ("variable_end", "block_end"):
            inside = False
        elif inside:
            yield lineno, kind, value


@pytest.mark.parametrize("path", TEMPLATES, ids=lambda p: p.name)
def test_no_arithmetic_comparison_or_accumulator(path):
    problems = []
    tokens = [t for t in _expression_tokens(path) if t[1] != "whitespace"]
    for i, (lineno, kind, value) in enumerate(tokens):
        before = tokens[i - 1] if i else (0, "", "")
        if kind == "operator" and (value in ARITHMETIC or value in ORDERING):
            problems.append(f"line {lineno}: operator {value!r}")
        elif kind == "name" and value in FORBIDDEN_NAMES and before[2] != ".":  # x.max is an attribute
            problems.append(f"line {lineno}: {value!r}")
        elif kind == "operator" and value in ("==", "!="):
            neighbours = {tokens[j][1] for j in (i - 1, i + 1) if 0 <= j < len(tokens)}
            if {"integer", "float"} & neighbours:
                problems.append(f"line {lineno}: a number compared with {value!r}")
    assert not problems, f"{path.name}: " + "; ".join(problems)


@pytest.mark.parametrize("path", TEMPLATES, ids=lambda p: p.name)
def test_lines_stay_readable(path):
    long = [i for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if len(line) > 120]
    # Markdown table header rows cannot be broken inside a template without changing the output;
    # everything else stays within 120 characters (the code's line length).
    long = [i for i in long if not path.read_text(encoding="utf-8").splitlines()[i - 1].startswith("| ")]
    assert not long, f"{path.name}: lines {long} are longer than 120 characters"


def test_the_lexer_sees_what_the_test_forbids():
    # The check must be able to fail: a template with arithmetic and a comparison is caught.
    env = jinja2.Environment()
    values = [v for _, k, v in env.lex("{{ a - b }}{% if x > 0.5 %}{% endif %}") if k == "operator"]
    assert "-" in values and ">" in values


_BLOCK_TAG = __import__("re").compile(r"\{%(?!-).*?(?<!-)%\}", __import__("re").S)


def _joined_lines(text: str) -> list[int]:
    """Lines where a block tag closes a line of text and text goes on on the next line: with ``trim_blocks``
    the newline after the tag is dropped, so the two lines would run together without a space
    ("models).Every")."""
    out = []
    for m in _BLOCK_TAG.finditer(text):
        line_start = text.rfind("\n", 0, m.start()) + 1
        before = text[line_start : m.start()]
        after = text[m.end() : m.end() + 2]
        if before.strip() and after[:1] == "\n" and after[1:2] not in ("", "\n", " ", "{", "|", "#"):
            out.append(text.count("\n", 0, m.start()) + 1)
    return out


@pytest.mark.parametrize("path", TEMPLATES, ids=lambda p: p.name)
def test_no_text_runs_into_the_next_line(path):
    joined = _joined_lines(path.read_text(encoding="utf-8"))
    assert not joined, f"{path.name}: lines {joined} end in a block tag that swallows the line break before text"


def test_the_join_check_can_fail():
    assert _joined_lines("models){% endif %}\nEvery estimator") == [1]
    assert _joined_lines("{% if x %}\nEvery estimator") == []
    assert _joined_lines("models){% endif %} and\nEvery") == []
