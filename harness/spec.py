"""Claim files: YAML read with a safe loader into frozen, typed objects, checked all at once.

A claim file is data. It names a registered protocol and its parameters, the
input tables it reads (by their names in the data lock), the paper's targets
with tolerances and reasons, the destructive controls with what must happen
under each, its own limitations, and its seed. It never names code to run.

Every problem in a file is reported at once, each with its path in the file::

    claims/x.yaml: targets[2].tolerance: must be >= 0, got -0.001

The file is read as YAML 1.2 (core schema) with a loader of its own: only a
regular file of at most 1 MiB is read (a FIFO or a device is refused unread);
``true``/``false`` are the only booleans, ``1:30``, ``0132``, ``0.8_28`` and
``yes`` are text, not numbers or booleans; a date must be quoted (``"2025-02-06"``:
unquoted, YAML 1.1 readers take it for a date, so the file would mean two things); anchors,
aliases and merge keys (``&a``, ``*a``, ``<<:``), explicit tags (``!!binary``,
``!!set``), nesting deeper than :data:`MAX_DEPTH`, more than
:data:`MAX_NODES` values and integers of more than :data:`MAX_INT_DIGITS`
digits are refused. The schema is strict: a quoted number is not a number.

Beyond the schema, :func:`load_claim` refuses: bytes that are not UTF-8,
duplicate keys, keys that are not text, non-finite numbers anywhere,
booleans where numbers are expected, control characters, bidirectional
overrides and lone surrogates anywhere, an ``id`` other than the file's
name, unknown protocols, controls, tables, columns (checked against the
table headers when the tables are at hand) and upstream pins, any target or
control that names a quantity its protocol cannot measure (with "did you
mean"), and a claim whose counts ask for more work than the budgets
:data:`FIT_BUDGET` and :data:`PERMUTATION_BUDGET` allow; and, in
:mod:`harness.claim_checks`, two targets under one label, a compute axis or
evaluation point that cannot be training compute in the unit given, and score
columns above 1 without ``scale: percent`` (with the tables at hand). A
problem in one part of the file hides none in the others: what validates is
still checked (:func:`~harness.schema.validate_lenient`). What is accepted
but worth saying (a tolerance of 0 on a printed decimal) is a warning
(:attr:`ClaimSpec.warnings`).

The loaded claim (:class:`ClaimSpec`) carries the *validated* protocol and
control parameters, the vocabulary of quantities, and the literal text of
every number as the file writes it (``0.700`` keeps its three decimals).
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import Field, ValidationError, model_validator

from .claim_checks import (
    eval_point_problems,
    input_data_problems,
    label_problems,
    tolerance_warnings,
    unknown_quantity,
)
from .datalock import FileRefused, read_regular_file
from .errors import SpecError
from .multiverse_spec import (
    MULTIVERSE_BUDGET,
    Alternative,
    Multiverse,
    check_data_choices,
    check_multiverse,
    multiverse_grid,
    n_specifications,
    same_value,
    specification_params,
)
from .protocols.base import Protocol
from .quantities import Quantity
from .registry import PROTOCOLS
from .schema import (
    CONTROL_CHARS,
    Count,
    Label,
    Number,
    Strict,
    Text,
    did_you_mean,
    forbidden_char,
    format_validation_error,
    shorten,
    validate_lenient,
    validate_plain,
)
from .stats.methods import METHODS, needed, resampling_calls

__all__ = [
    "Claim",
    "ClaimSpec",
    "Target",
    "Control",
    "Condition",
    "Bootstrap",
    "Comparison",
    "load_claim",
    "spec_sha256",
    "MAX_CLAIM_BYTES",
    "MAX_DEPTH",
    "MAX_NODES",
    "MAX_INT_DIGITS",
    "FIT_BUDGET",
    "PERMUTATION_BUDGET",
    "CALIBRATION_BUDGET",
    "MULTIVERSE_BUDGET",
    "Multiverse",
    "Alternative",
    "multiverse_grid",
    "specification_params",
    "same_value",
]

#: A claim file is a few KB; a larger one is refused before it is parsed.
MAX_CLAIM_BYTES = 1 << 20
#: The deepest nesting of lists and mappings a claim file may use (the claims use 5 levels).
MAX_DEPTH = 16
#: The most values (scalars, lists and mappings) a claim file may hold (the claims hold a few hundred).
MAX_NODES = 10_000
#: The longest integer a claim file may write, in digits (a 64-bit seed has 20).
MAX_INT_DIGITS = 20
#: Model fits a claim may ask for: its measurement, each control and each bootstrap resample redo the
#: protocol's fits (tasks x splits x settings x estimators); the claims ask for at most about 10,000.
FIT_BUDGET = 20_000
#: Permuted refits a claim may ask for (the permutation test, its eps table, its precise p-value and the
#: power study's replicates x shifts x permutations x 2 mean models); the claims ask for about 6.5 million.
PERMUTATION_BUDGET = 32_000_000
#: Model fits a claim's coverage study may ask for (replicates x calls per replicate x fits per call); the
#: studies of the committed claims ask for about 400,000.
CALIBRATION_BUDGET = 1_000_000

Relation = Literal["~", "<", "<=", ">", ">=", "abs<"]


class Target(Strict):
    """One number or relation the paper asserts.

    ``relation: "~"`` (the default) means the measured ``quantity`` must lie
    within ``tolerance`` of ``paper``. Any other relation compares the measured
    quantity with ``value`` (a number) or with ``other`` (a second measured
    quantity), e.g. ``gamma > 0`` or ``a < b``.
    """

    quantity: Label = Field(min_length=1)
    label: Label | None = None
    relation: Relation = "~"
    paper: Number | None = None
    tolerance: Number | None = Field(default=None, ge=0)
    value: Number | None = None
    other: Label | None = None
    reason: Text = Field(min_length=1)
    role: Literal["headline", "supporting"] = "headline"

    @model_validator(mode="after")
    def _relation_fields(self):
        if self.relation == "~":
            if self.paper is None:
                raise ValueError("relation '~' needs a numeric 'paper' value")
            if self.tolerance is None:
                raise ValueError("relation '~' needs a 'tolerance' (a number >= 0)")
            if self.value is not None or self.other is not None:
                raise ValueError("relation '~' takes 'paper' and 'tolerance', not 'value'/'other'")
        elif (self.value is None) == (self.other is None):
            raise ValueError(f"relation '{self.relation}' needs exactly one of 'value' or 'other'")
        return self


class Condition(Strict):
    """What must happen to some quantities under a control for it to count as broken.

    The compared number is, per quantity, ``measure`` of the control's value
    against ``reference``: ``value`` (the control's value itself), ``shift``
    (control - reference), ``abs_shift`` (|control - reference|) or ``ratio``
    (control / reference). ``reference`` is the claim's unperturbed
    measurement in the same arm (``baseline``) or the paper's value
    (``paper``). Every listed quantity must satisfy ``op value``.
    """

    quantities: list[Label] = Field(min_length=1)
    measure: Literal["value", "shift", "abs_shift", "ratio"] = "value"
    reference: Literal["baseline", "paper"] = "baseline"
    op: Relation
    value: Number

    @model_validator(mode="after")
    def _op(self):
        if self.op == "~":
            raise ValueError("a control condition needs a comparison (< <= > >= abs<), not '~'")
        return self


class Control(Strict):
    """A destructive control: a change that must break the result."""

    id: str = Field(pattern=r"^[a-z0-9_]{1,60}$")
    control: Label = Field(min_length=1)
    params: dict[str, Any] = Field(default_factory=dict)
    changes: Text = Field(min_length=1)
    must: list[Condition] = Field(default_factory=list)
    must_fail_targets: bool = False

    @model_validator(mode="after")
    def _has_expectation(self):
        if not self.must and not self.must_fail_targets:
            raise ValueError("a control needs 'must' conditions or 'must_fail_targets: true'")
        return self


class Comparison(Strict):
    """An ordering the claim asserts, checked in every bootstrap resample: ``left relation right``."""

    left: Label
    relation: Literal["<", "<=", ">", ">="]
    right: Label | Number
    label: Label | None = None


#: The interval methods a claim file may name (:data:`harness.stats.methods.METHODS`).
IntervalMethod = Literal[tuple(METHODS)]


class Calibration(Strict):
    """A coverage study of the claim's interval methods on its own design (``python -m harness calibrate``).

    ``params`` replaces some of the claim's parameters in the study's design only (fewer tasks, to make it
    cheaper): every quantity the study measures must still be measured by it.
    """

    replicates: Count = Field(100, ge=10, le=1000, description="R, simulated data sets (each with the claim's B)")
    methods: list[IntervalMethod] = Field(
        default_factory=lambda: ["percentile", "basic", "bca"], min_length=1, description="methods to measure"
    )
    params: dict[str, Any] = Field(default_factory=dict, description="the claim's parameters, changed for the study")


class Bootstrap(Strict):
    """A resampling of the claim's measurement: clusters of rows drawn with replacement."""

    n_resamples: Count = Field(ge=10, le=100_000)
    seed: Count = Field(ge=0)
    cluster_col: Label = Field(description="column whose value names a row's cluster (its base model)")
    level: Number = Field(0.95, gt=0, lt=1, description="coverage of the two-sided intervals of the values")
    alpha: Number = Field(0.05, gt=0, lt=0.5, description="one-sided level of the decision on each asserted ordering")
    quantities: list[Label] = Field(default_factory=list, description="values to give an interval for")
    comparisons: list[Comparison] = Field(default_factory=list)
    method: IntervalMethod = Field(
        "basic",
        description="the interval method: percentile, basic (reflected), bca (a 20-group cluster jackknife) or "
        "subsampling (m = ceil(G^(2/3)) clusters without replacement)",
    )
    calibration: Calibration | None = None

    @model_validator(mode="after")
    def _method_studied(self):
        if self.calibration is not None and self.method not in self.calibration.methods:
            raise ValueError(
                f"the claim's interval method {self.method!r} must be among those its calibration measures "
                f"({', '.join(self.calibration.methods)})"
            )
        return self


#: The longest short title a claim file may give (the report's heading and the index's first column).
MAX_TITLE_CHARS = 80


class Claim(Strict):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]{0,99}$")
    title: Label | None = Field(
        None,
        min_length=1,
        max_length=MAX_TITLE_CHARS,
        description="a short title: the report's heading and the index's entry (the claim is printed under it)",
    )
    claim: Text = Field(min_length=1)
    locator: Text = Field(min_length=1)
    protocol: Label
    params: dict[str, Any] = Field(default_factory=dict)
    inputs: list[Label] = Field(min_length=1)
    upstream: Label | None = None
    seed: Count = Field(ge=0)
    targets: list[Target] = Field(min_length=1)
    controls: list[Control] = Field(default_factory=list)
    bootstrap: Bootstrap | None = None
    multiverse: Multiverse | None = None
    figures: bool = True
    limitations: list[Text] = Field(default_factory=list)


@dataclass(frozen=True)
class ClaimSpec:
    """A claim file, validated against its protocol: what the runner and the adapters receive."""

    path: Path
    claim: Claim
    protocol: Any  # harness.protocols.base.Protocol
    params: Any  # the protocol's validated parameter model
    control_params: dict[str, Any]  # control id -> validated parameter model
    vocabulary: dict[str, Quantity]
    control_vocabularies: dict[str, dict[str, Quantity]]
    texts: dict[tuple, str] = field(default_factory=dict)  # path in the file -> a number as written
    warnings: tuple[str, ...] = ()  # what validate says but does not refuse (harness.claim_checks)

    @property
    def id(self) -> str:
        return self.claim.id

    @property
    def seed(self) -> int:
        return self.claim.seed

    @property
    def upstream(self) -> str | None:
        return self.claim.upstream

    @property
    def inputs(self) -> list[str]:
        return self.claim.inputs

    @property
    def controls(self) -> list[Control]:
        return self.claim.controls

    @property
    def targets(self) -> list[Target]:
        return self.claim.targets

    def text_of(self, *path) -> str | None:
        """A scalar exactly as the file writes it (``("targets", 2, "paper")`` -> ``"0.539"``)."""
        return self.texts.get(tuple(path))

    def label_of(self, name: str) -> str:
        """The reader-facing label of a quantity of the measurement or of any control."""
        if name in self.vocabulary:
            return self.vocabulary[name].label
        for vocab in self.control_vocabularies.values():
            if name in vocab:
                return vocab[name].label
        return name


def spec_sha256(path: str | Path) -> str:
    """The sha256 of a claim file, read as :func:`load_claim` reads it (a regular file of at most 1 MiB)."""
    return hashlib.sha256(_read_bytes(Path(path))).hexdigest()


# -- reading YAML --------------------------------------------------------------------------------------------

_STR, _INT, _FLOAT = "tag:yaml.org,2002:str", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float"


class _Refused(yaml.YAMLError):
    """A YAML construct a claim file may not use, at a place in the file."""

    def __init__(self, where: str, mark, problem: str):
        self.where, self.mark, self.problem = where, mark, problem
        super().__init__(problem)

    def line(self) -> str:
        at = f" (line {self.mark.line + 1}, column {self.mark.column + 1})" if self.mark is not None else ""
        return f"{self.where}: {self.problem}{at}"


class _ClaimLoader(yaml.SafeLoader):
    """YAML 1.2 core schema, and nothing of YAML 1.1's extras, for one claim file.

    Plain scalars resolve to null (``null``, ``~``, empty), booleans (``true``/``false`` only), decimal
    integers without a leading zero, and decimal floats (with ``.inf``/``.nan``, refused later); everything
    else is text: ``yes``, ``1:30``, ``0132``, ``0x1F``, ``0.8_28`` (an unquoted date such as ``2025-02-06`` is
    refused by :func:`_walk`: YAML 1.1 readers take it for a date). Anchors, aliases,
    explicit tags and merge keys are refused, as are nesting deeper than :data:`MAX_DEPTH` and more than
    :data:`MAX_NODES` values, so that no file can make the reader recurse, loop or blow up.
    """

    yaml_implicit_resolvers: dict = {}

    def __init__(self, stream):
        super().__init__(stream)
        self._path: list = []
        self._nodes = 0

    def compose_node(self, parent, index):
        if isinstance(index, yaml.ScalarNode):
            part = index.value
        elif isinstance(parent, yaml.MappingNode):  # a key, or the value of a key that is not text
            part = "(a key)"
        else:
            part = index
        path = (*self._path, part) if parent is not None else ()
        where = _fmt_path(path)
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent):
            raise _Refused(where, event.start_mark, f"an alias (*{event.anchor}) is not accepted; write the value out")
        if event.anchor is not None:
            raise _Refused(where, event.start_mark, f"an anchor (&{event.anchor}) is not accepted; write the value out")
        tag = getattr(event, "tag", None)
        if tag not in (None, "!"):
            shown = tag.replace("tag:yaml.org,2002:", "!!")
            raise _Refused(where, event.start_mark, f"an explicit tag ({shown}) is not accepted; write a plain value")
        self._nodes += 1
        if self._nodes > MAX_NODES:
            raise _Refused(where, event.start_mark, f"the file holds more than {MAX_NODES} values")
        if len(path) > MAX_DEPTH:
            raise _Refused(where, event.start_mark, f"nested more than {MAX_DEPTH} levels deep")
        self._path = list(path)
        try:
            return super().compose_node(parent, index)
        finally:
            self._path = list(path[:-1])

    def construct_yaml_int(self, node):
        return int(node.value)

    def construct_yaml_float(self, node):
        value = node.value.lower()
        if value.endswith(".inf"):
            return -math.inf if value.startswith("-") else math.inf
        return math.nan if value == ".nan" else float(value)


_ClaimLoader.add_constructor(_INT, _ClaimLoader.construct_yaml_int)
_ClaimLoader.add_constructor(_FLOAT, _ClaimLoader.construct_yaml_float)
for _tag, _pattern, _first in (
    ("tag:yaml.org,2002:null", r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""]),
    ("tag:yaml.org,2002:bool", r"^(?:true|True|TRUE|false|False|FALSE)$", list("tTfF")),
    (_INT, r"^[-+]?(?:0|[1-9][0-9]*)$", list("-+0123456789")),
    (
        _FLOAT,
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*|[0-9]+(?:\.[0-9]*)?[eE][-+]?[0-9]+|\.[0-9]+[eE][-+]?[0-9]+)"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
        list("-+.0123456789"),
    ),
):
    _ClaimLoader.add_implicit_resolver(_tag, re.compile(_pattern), _first)


def _walk(node, path: tuple, texts: dict, problems: list[str]) -> None:
    """Record every scalar's literal text by path; find duplicate keys, keys that are not text, merge keys
    and integers too long to read."""
    if isinstance(node, yaml.MappingNode):
        seen: dict[str, int] = {}
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else str(key_node)
            line = key_node.start_mark.line + 1
            where = _fmt_path(path + (key,))
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag != _STR:
                problems.append(
                    f"{_fmt_path(path)}: a key must be text, got {shorten(key)} on line {line} (put it in quotes)"
                )
                continue
            if key == "<<" and key_node.style is None:
                problems.append(f"{where}: a merge key ('<<', line {line}) is not accepted; write the keys out")
                continue
            if key in seen:
                problems.append(f"{where}: duplicate key (lines {seen[key]} and {line}); a key may appear once")
            seen[key] = line
            _walk(value_node, path + (key,), texts, problems)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _walk(item, path + (i,), texts, problems)
    elif isinstance(node, yaml.ScalarNode):
        texts[path] = node.value
        if node.tag == _STR and node.style is None and _is_yaml11_date(node.value):
            problems.append(
                f'{_fmt_path(path)}: the date {node.value} must be written in quotes ("{node.value}", line '
                f"{node.start_mark.line + 1}): without them a YAML 1.1 reader takes it for a date, while this one "
                "reads every plain value but numbers, booleans and null as text"
            )
        digits = len(node.value.lstrip("+-"))
        if node.tag == _INT and digits > MAX_INT_DIGITS:
            problems.append(
                f"{_fmt_path(path)}: must be an integer of at most {MAX_INT_DIGITS} digits, got one of {digits} digits"
            )


_YAML11 = yaml.resolver.Resolver()  # PyYAML's own YAML 1.1 resolver: what most readers make of a plain value


def _is_yaml11_date(value: str) -> bool:
    """Whether a YAML 1.1 reader would read the plain value ``value`` as a date or time (``2025-02-06``)."""
    return _YAML11.resolve(yaml.ScalarNode, value, (True, False)) == "tag:yaml.org,2002:timestamp"


def _fmt_path(path: tuple) -> str:
    out = ""
    for part in path:
        if isinstance(part, str) and (CONTROL_CHARS.search(part) or len(part) > 60):
            part = shorten(part, 60)
        out += f"[{part}]" if isinstance(part, int) else ("." if out else "") + str(part)
    return out or "(top level)"


def _values(obj, path: tuple, problems: list[str]) -> None:
    """Every number finite; no text (key or value) with a control character, bidi override or lone surrogate."""
    if isinstance(obj, float) and not math.isfinite(obj):
        problems.append(f"{_fmt_path(path)}: must be a finite number, got {obj!r}")
    elif isinstance(obj, str):
        bad = forbidden_char(obj)
        if bad:
            problems.append(
                f"{_fmt_path(path)}: must be text without control characters (escape, bell, NUL, ...), "
                f"bidirectional overrides or lone surrogates; found {bad} in {shorten(obj)}"
            )
    elif isinstance(obj, dict):
        for k, v in obj.items():
            if isinstance(k, str) and forbidden_char(k):
                problems.append(
                    f"{_fmt_path(path)}: the key {shorten(k)} holds {forbidden_char(k)}, a forbidden character"
                )
            _values(v, path + (k,), problems)
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            _values(v, path + (i,), problems)


def _plain(text: str, limit: int = 400) -> str:
    """A message of the YAML reader on one line, its forbidden characters shown as escapes, cut to ``limit``."""
    text = " ".join(text.split())
    text = "".join(c if not forbidden_char(c) else f"\\u{ord(c):04x}" for c in text)
    return text if len(text) <= limit else text[:limit] + "…"


def _read_bytes(path: Path) -> bytes:
    try:
        return read_regular_file(path, limit=MAX_CLAIM_BYTES)
    except FileNotFoundError:
        raise SpecError(path, ["the file does not exist"]) from None
    except FileRefused as exc:
        raise SpecError(path, [f"the claim file {exc.reason}; a claim file is a YAML text file of a few KB"]) from None


#: Characters the YAML reader refuses outright (NUL, the other C0 controls but tab and line breaks, DEL, C1).
_UNREADABLE = re.compile("[^\t\n\r\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_MARK = "\ue000"  # stands in for such a character while the key that holds it is looked for


def _key_holding(text: str) -> str | None:
    """The path of the first value or key holding :data:`_MARK` once ``text`` is read, if it can be read."""
    loader = _ClaimLoader(text)
    try:
        node = loader.get_single_node()
        found: list = []
        problems: list[str] = []
        _walk(node, (), {}, problems)
        if node is None or problems:  # nothing to look in, or an integer too long to construct
            return None
        stack = [((), loader.construct_document(node))]
        while stack and not found:
            where, obj = stack.pop()
            if isinstance(obj, dict):
                found += [where for k in obj if isinstance(k, str) and _MARK in k]  # a key: where it is
                stack += [(where + (k,), v) for k, v in reversed(list(obj.items()))]
            elif isinstance(obj, list):
                stack += [(where + (i,), v) for i, v in reversed(list(enumerate(obj)))]
            elif isinstance(obj, str) and _MARK in obj:
                found.append(where)
        return _fmt_path(found[0]) if found else None
    except yaml.YAMLError:
        return None
    finally:
        loader.dispose()


def _unreadable_char(text: str) -> str | None:
    """The problem of the first character no claim file may hold raw (a NUL, an escape, ...), with its key."""
    m = _UNREADABLE.search(text)
    if m is None:
        return None
    line = text.count("\n", 0, m.start()) + 1
    column = m.start() - (text.rfind("\n", 0, m.start()) + 1) + 1
    where = _key_holding(_UNREADABLE.sub(_MARK, text)) if _MARK not in text else None
    return (
        f"{where or '(top level)'}: holds the control character U+{ord(m.group()):04X} (line {line}, column "
        f"{column}); a claim file is plain text without control characters but tab and line breaks"
    )


def _read_yaml(path: Path) -> tuple[Any, dict]:
    data = _read_bytes(path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SpecError(path, [f"not UTF-8 text (byte {data[exc.start]:#04x} at offset {exc.start})"]) from None
    bad = _unreadable_char(text)
    if bad:
        raise SpecError(path, [bad])
    texts: dict = {}
    problems: list[str] = []
    loader = None
    try:
        loader = _ClaimLoader(text)
        node = loader.get_single_node()
        if node is not None:
            _walk(node, (), texts, problems)
        if problems:
            raise SpecError(path, problems)
        raw = loader.construct_document(node) if node is not None else None
    except _Refused as exc:
        raise SpecError(path, [exc.line()]) from None
    except yaml.YAMLError as exc:
        raise SpecError(path, [f"not valid YAML: {_plain(str(exc))}"]) from None
    finally:
        if loader is not None:
            loader.dispose()
    if not isinstance(raw, dict):
        raise SpecError(path, [f"(top level): expected a mapping of keys, got {type(raw).__name__}"])
    _values(raw, (), problems)
    if problems:
        raise SpecError(path, problems)
    return raw, texts


# -- the checks ---------------------------------------------------------------------------------------------


def _protocol_checks(raw: dict, protocol, problems: list[str]):
    """Validate the protocol's parameters and every control's; return (params, {control index: params})."""
    params, cparams = None, {}
    try:
        params = validate_plain(protocol.Params, raw.get("params") or {})
    except ValidationError as err:
        problems += format_validation_error(err, prefix="params", model=protocol.Params)
    controls = raw.get("controls")
    for i, ctl in enumerate(controls if isinstance(controls, list) else []):
        if not isinstance(ctl, dict) or "control" not in ctl:
            continue
        kind = ctl["control"]
        model = protocol.controls.get(kind)
        if model is None:
            problems.append(
                f"controls[{i}].control: unknown control {shorten(kind)} for protocol "
                f"'{protocol.name}'{did_you_mean(kind, protocol.controls)}; "
                f"known: {', '.join(sorted(protocol.controls))}"
            )
            continue
        try:
            cparams[i] = validate_plain(model, ctl.get("params") or {})
        except ValidationError as err:
            problems += format_validation_error(err, prefix=f"controls[{i}].params", model=model)
    return params, cparams


def _unknown(where: str, name: str, known, what: str) -> str:
    return f"{where}: {shorten(name)} is not {what}{did_you_mean(name, known)}; known: " + (
        ", ".join(sorted(known)[:12]) + (" …" if len(known) > 12 else "")
    )


def _partial_vocabularies(card, protocol, raw_params, claim: Claim, cparams: dict):
    """The vocabularies of parameters that did not validate, from the keys they do give and the schema's defaults
    (``None`` when the protocol cannot build names from them)."""
    if not isinstance(raw_params, dict):
        return None
    defaults = {
        k: f.get_default(call_default_factory=True)
        for k, f in protocol.Params.model_fields.items()
        if not f.is_required()
    }
    plain_params = {**{k: v for k, v in defaults.items() if not hasattr(v, "model_dump")}, **raw_params}
    fields = protocol.Params.model_fields
    for key in [k for k in raw_params if k not in fields]:  # a misspelt key stands in for the one it misspells
        meant = did_you_mean(key, [f for f in fields if f not in raw_params])
        if meant:
            plain_params.setdefault(meant.split("'")[1], raw_params[key])
    try:
        vocab = card.vocabulary(plain_params)
        cvocabs = {
            i: card.control_vocabulary(claim.controls[i].control, plain_params, m.model_dump(mode="json"))
            for i, m in cparams.items()
        }
    except (KeyError, TypeError, ValueError, AttributeError, IndexError):
        return None
    return vocab, cvocabs


def _claim_names(claim: Claim) -> list[tuple[str, str]]:
    """``(where, quantity name)`` of every quantity the claim file names."""
    out = []
    for i, t in enumerate(claim.targets):
        out += [(f"targets[{i}].{k}", getattr(t, k)) for k in ("quantity", "other") if getattr(t, k) is not None]
    for i, ctl in enumerate(claim.controls):
        for j, cond in enumerate(ctl.must):
            out += [(f"controls[{i}].must[{j}].quantities[{k}]", q) for k, q in enumerate(cond.quantities)]
    if claim.bootstrap is not None:
        out += [(f"bootstrap.quantities[{k}]", q) for k, q in enumerate(claim.bootstrap.quantities)]
        for k, c in enumerate(claim.bootstrap.comparisons):
            out += [(f"bootstrap.comparisons[{k}].{side}", getattr(c, side)) for side in ("left", "right")]
    return [(w, n) for w, n in out if isinstance(n, str)]


def _mistyped_labels(claim: Claim, vocab: dict) -> dict[str, str]:
    """``{label the claim writes: label of params.tasks}`` where a task label looks mistyped *in params.tasks*:
    quantity names the claim writes differ from measured ones only in that label, and no name the claim writes
    uses the params.tasks spelling. (Where another name does use it, the typo is in the claim's name, and the
    ordinary suggestion, which points at the measured name, is the right one.)"""
    tasks = list((claim.params or {}).get("tasks") or {}) if isinstance(claim.params, dict) else []
    names = [n for _, n in _claim_names(claim)]
    found: dict[str, str] = {}
    for label in tasks:
        for known in vocab:
            at = known.find(label)
            if at < 0:
                continue
            pre, post = known[:at], known[at + len(label) :]
            for name in names:
                if name in vocab or not (name.startswith(pre) and name.endswith(post)):
                    continue
                written = name[len(pre) : len(name) - len(post)]
                if written and written not in tasks and did_you_mean(written, [label]):
                    found.setdefault(written, label)
    used = {lab for lab in found.values() if any(lab in n for n in names if n in vocab)}
    return {w: lab for w, lab in found.items() if lab not in used and _blames_tasks(claim, w, lab, names, vocab)}


def _blames_tasks(claim: Claim, written: str, label: str, names: list[str], vocab: dict) -> bool:
    """Whether the claim's spelling ``written`` has more on its side than params.tasks' ``label``: the task's
    column does not spell ``label`` rather than ``written``, and either it spells ``written`` or at least two
    names of the claim do. (One target that spells a task otherwise than params.tasks and its column is the
    target's typo: ``boundary.BHH`` beside ``BBH: BBH Raw``.)"""
    column = str(claim.params["tasks"].get(label, ""))
    if label in column and written not in column:
        return False
    spelled = sum(1 for n in names if n not in vocab and written in n)
    return spelled >= 2 or (written in column and label not in column)


def _vocabulary_checks(claim: Claim, vocab: dict, cvocabs: dict, problems: list[str], bad=frozenset()) -> None:
    typos = _mistyped_labels(claim, vocab)
    for written, label in typos.items():
        where = sorted({w for w, n in _claim_names(claim) if written in n and n not in vocab})
        problems.append(
            f"params.tasks: the task label {label!r} is named by no target, control or comparison, while "
            f"{', '.join(where[:4])}{' …' if len(where) > 4 else ''} name {written!r} (did you mean {written!r}? "
            f"correct the label in params.tasks, and every quantity name built from it follows)"
        )

    def unknown(where: str, name: str, known, what: str) -> str:
        written = next((w for w in typos if w in name), None)
        if written is None:
            return unknown_quantity(where, name, known, what, claim.protocol, claim.params)
        return (
            f"{where}: {shorten(name)} is not {what}: params.tasks has no task {written!r} (it has "
            f"{typos[written]!r}, which looks mistyped; see params.tasks)"
        )

    for i, t in enumerate(claim.targets):
        for key in ("quantity", "other"):
            name = getattr(t, key)
            if name is not None and name not in vocab:
                problems.append(
                    unknown(f"targets[{i}].{key}", name, vocab, f"a quantity protocol '{claim.protocol}' measures")
                )
    # what the targets say is known: each validated and named a measured quantity (an unknown one is said above)
    targets_known = not any(b == "targets" or b.startswith("targets[") for b in bad)
    targets_known = targets_known and all(t.quantity in vocab for t in claim.targets)
    paper_names = {t.quantity for t in claim.targets if t.relation == "~"}
    for i, ctl in enumerate(claim.controls):
        cv = cvocabs.get(i)
        if cv is None:
            continue
        for j, cond in enumerate(ctl.must):
            for k, name in enumerate(cond.quantities):
                where = f"controls[{i}].must[{j}].quantities[{k}]"
                if name not in cv:
                    problems.append(unknown(where, name, cv, f"a quantity control '{ctl.control}' measures"))
                elif cond.measure != "value" and cond.reference == "baseline" and name not in vocab:
                    problems.append(
                        f"{where}: {name!r} has no baseline: the unperturbed measurement has no such "
                        "quantity (use measure: value)"
                    )
                elif (
                    cond.measure != "value" and cond.reference == "paper" and targets_known and name not in paper_names
                ):
                    problems.append(f"{where}: reference 'paper' needs a target with a paper value for {name!r}")
        if ctl.must_fail_targets and targets_known:
            missing = [t.quantity for t in claim.targets if t.quantity in vocab and t.quantity not in cv]
            if missing:
                problems.append(
                    f"controls[{i}].must_fail_targets: control '{ctl.control}' does not measure "
                    f"{missing}, so it cannot fail those targets"
                )
    if claim.bootstrap is not None:
        b = claim.bootstrap
        for k, name in enumerate(b.quantities):
            if name not in vocab:
                problems.append(unknown(f"bootstrap.quantities[{k}]", name, vocab, "a measured quantity"))
        for k, c in enumerate(b.comparisons):
            for side in ("left", "right"):
                name = getattr(c, side)
                if isinstance(name, str) and name not in vocab:
                    problems.append(unknown(f"bootstrap.comparisons[{k}].{side}", name, vocab, "a measured quantity"))


def _bootstrap_checks(claim: Claim, params, protocol, tables, problems: list[str]) -> None:
    """The bootstrap needs a protocol that resamples, and its cluster column in the protocol's first table."""
    if claim.bootstrap is None or params is None:
        return
    c = claim.bootstrap.calibration
    if c is not None and c.params:
        try:
            validate_plain(protocol.Params, {**params.model_dump(mode="json"), **c.params})
        except ValidationError as err:
            problems += format_validation_error(err, prefix="bootstrap.calibration.params")
    if type(protocol).resampling is Protocol.resampling:
        problems.append(f"bootstrap: protocol '{protocol.name}' has no bootstrap")
        return
    tabs = protocol.columns(params)
    if tables is not None and tabs and tabs[0][1] in claim.inputs:
        header = tables.header(tabs[0][1])
        col = claim.bootstrap.cluster_col
        if col not in header:
            problems.append(
                f"bootstrap.cluster_col: column {shorten(col)} is not in table {tabs[0][1]!r}"
                f"{did_you_mean(col, header)}"
            )


def _input_checks(
    path: Path, claim: Claim, params, protocol, lock, tables, problems: list[str], inputs_known: bool = True
) -> None:
    names = set(lock.tables) if lock is not None else None
    if names is not None:
        for i, name in enumerate(claim.inputs):
            if name not in names:
                problems.append(_unknown(f"inputs[{i}]", name, names, "a table in the data lock"))
    if params is None:
        return
    for where, table, columns in protocol.columns(params):
        if names is not None and table not in names:
            problems.append(_unknown(f"params.{where}", table, names, "a table in the data lock"))
            continue
        if inputs_known and table not in claim.inputs:
            problems.append(f"params.{where}: table {table!r} is not listed in inputs")
            continue
        if tables is None or not columns:
            continue
        header = tables.header(table)
        for param, col in columns.items():
            if col not in header:
                problems.append(
                    f"params.{param}: column {shorten(col)} is not in table {table!r}{did_you_mean(col, header)}"
                )


def _fits_per_run(params) -> tuple[int, str]:
    """The model fits one run of a protocol's measurement makes, from its parameters, and how they are counted:
    tasks x rolling splits x settings of a sweep x estimators (each present only where the parameters have it)."""
    n, parts = 1, []
    tasks = getattr(params, "tasks", None)
    if isinstance(tasks, dict) and tasks:
        n, parts = n * len(tasks), [*parts, f"{len(tasks)} tasks"]
    periods = getattr(params, "periods", None)
    if isinstance(periods, list) and len(periods) > 1:
        n, parts = n * (len(periods) - 1), [*parts, f"{len(periods) - 1} splits"]
    grids = [getattr(params, g, None) for g in ("tau_grid", "kappa_grid", "lam_grid")]
    if any(isinstance(g, list) for g in grids):
        k = 1 + sum(len(g) for g in grids if isinstance(g, list))
        n, parts = n * k, [*parts, f"{k} settings"]
    if getattr(params, "ispline_intervals", None) is not None:  # the sigmoid and the I-spline
        n, parts = n * 2, [*parts, "2 estimators"]
    return n, " × ".join(parts) or "1"


def _over_budget(parts: list[tuple[str, int, int, str]], budget: int, unit: str, name: str) -> str | None:
    """``parts``: (key, count, work per count, words for the count). The problem at the largest part, or None."""
    total = sum(count * each for _, count, each, _ in parts)
    if total <= budget:
        return None
    key, count, each, words = max(parts, key=lambda p: p[1] * p[2])
    rest = total - count * each
    most = max((budget - rest) // each, 0) if each else 0
    return (
        f"{key}: {count:,} {words} make {count * each:,} {unit} ({total:,} with the rest of the claim), over the "
        f"budget of {budget:,} {unit} a claim may ask for (spec.{name}); at most {most:,} here"
    )


def _budget_checks(claim: Claim, params, cparams: dict, problems: list[str]) -> None:
    """Refuse counts that are each within their caps but together ask for hours of work."""
    fits, how = _fits_per_run(params)
    each = f"× {fits} fits each ({how})"
    parts = [("params", 1, fits, f"run of the measurement {each}")]
    for i in range(len(claim.controls)):
        cp = cparams.get(i)
        name = next((k for k in ("n_relabellings", "n_shuffles") if hasattr(cp, k)), None)
        repeats = (getattr(cp, name) or getattr(params, name, None) or 1) if name else 1  # shuffle_z: the protocol's
        key = f"controls[{i}].params.{name}" if name else f"controls[{i}]"
        parts.append((key, repeats, fits, f"repetitions of the measurement {each}"))
    if claim.bootstrap is not None:
        parts.append(("bootstrap.n_resamples", claim.bootstrap.n_resamples, fits, f"resamples {each}"))
    if claim.multiverse is not None:
        n_specs = n_specifications(claim.multiverse, params.model_dump(mode="json"), excluded=False)
        parts.append(("multiverse.choices", n_specs, fits, f"specifications (before exclusions) {each}"))
    problem = _over_budget(parts, FIT_BUDGET, "model fits", "FIT_BUDGET")
    if problem:
        problems.append(problem)
    c = claim.bootstrap.calibration if claim.bootstrap is not None else None
    if c is not None:
        B = claim.bootstrap.n_resamples
        calls = resampling_calls(needed([METHODS[m] for m in c.methods], 10**6), B)
        words = f"simulated data sets × {calls:,} calls (the claim's resampling) × {fits} fits each ({how})"
        problem = _over_budget(
            [("bootstrap.calibration.replicates", c.replicates, calls * fits, words)],
            CALIBRATION_BUDGET,
            "model fits",
            "CALIBRATION_BUDGET",
        )
        if problem:
            problems.append(problem)
    n_perm = getattr(params, "n_perm", None)
    if not isinstance(n_perm, int):
        return
    eps = len(getattr(params, "eps_grid", None) or [])
    parts = [("params.n_perm", n_perm, 1 + eps, f"permutations × {1 + eps} (the test and its eps table)")]
    precise = getattr(params, "n_perm_precise", 0) or 0
    parts.append(("params.n_perm_precise", precise, 1, "permutations"))
    power = getattr(params, "power", None)
    if power is not None:
        per = 2 * len(power.shifts) * power.n_perm
        words = f"replicates × {len(power.shifts)} shifts × {power.n_perm:,} permutations × 2 mean models"
        parts.append(("params.power.n_replicates", power.n_replicates, per, words))
    for i, cp in cparams.items():
        if hasattr(cp, "n_draws"):
            parts.append((f"controls[{i}].params.n_draws", cp.n_draws, 1, "relabelled refits"))
        else:
            parts.append((f"controls[{i}]", 1, n_perm, "rerun of the permutation test"))
    mv = claim.multiverse
    if mv is not None and mv.joint_null is not None:
        n_specs = n_specifications(mv.model_copy(update={"estimands": {}}), {}, excluded=False)
        words = f"null data sets × {n_specs} specifications × {n_perm:,} permutations"
        parts.append(("multiverse.joint_null.n_datasets", mv.joint_null.n_datasets, n_specs * n_perm, words))
    problem = _over_budget(parts, PERMUTATION_BUDGET, "permuted refits", "PERMUTATION_BUDGET")
    if problem:
        problems.append(problem)


def load_claim(path: str | Path, *, lock=None, tables=None, pins=None) -> ClaimSpec:
    """Read and validate one claim file; raise :class:`SpecError` listing every problem.

    ``lock`` (a :class:`~harness.datalock.DataLock`) checks the inputs and the
    tables named in the parameters; ``tables`` (verified
    :class:`~harness.datalock.Tables`) also checks the column names against
    the table headers; ``pins`` (a mapping of pin names) checks ``upstream``.
    """
    if tables is not None and lock is None:
        lock = tables.lock
    path = Path(path)
    raw, texts = _read_yaml(path)
    problems: list[str] = []
    bad: set[str] = set()  # what of the file did not validate: the checks that read it are skipped
    try:
        claim = validate_plain(Claim, raw)
    except ValidationError as err:
        problems += format_validation_error(err, model=Claim)
        claim, bad = validate_lenient(Claim, raw)  # the rest of the file is still checked (one typo hides nothing)
    raw_id = raw.get("id")
    if isinstance(raw_id, str) and path.suffix in (".yaml", ".yml") and raw_id != path.stem:
        problems.append(
            f"id: {shorten(raw_id)} must be the file's name without '.yaml' ({path.stem!r}), so that a "
            "claim's report cannot overwrite another's"
        )

    proto_name = raw.get("protocol")
    card = PROTOCOLS.get(proto_name) if isinstance(proto_name, str) else None
    protocol = card.protocol if card is not None else None
    if isinstance(proto_name, str) and protocol is None:
        problems.append(_unknown("protocol", proto_name, PROTOCOLS, "a registered protocol"))
    params, cparams = (None, {})
    if protocol is not None:
        params, cparams = _protocol_checks(raw, protocol, problems)
    if protocol is not None:
        _input_checks(path, claim, params, protocol, lock, tables, problems, inputs_known="inputs" not in bad)
        _bootstrap_checks(claim, params, protocol, tables, problems)
        if pins is not None and claim.upstream is not None and claim.upstream not in pins:
            problems.append(_unknown("upstream", claim.upstream, pins, "a pin in data/upstream.yaml"))
        ids = [c.id for c in claim.controls if c.id is not None]
        for dup in sorted({x for x in ids if ids.count(x) > 1}):
            problems.append(f"controls: id '{dup}' is used more than once")
    vocab, cvocabs = {}, {}
    warnings: list[str] = []
    if params is not None:
        problems += eval_point_problems(params)
        if tables is not None:
            data_problems, data_warnings = input_data_problems(params, tables)
            problems, warnings = problems + data_problems, warnings + data_warnings
    if params is not None:
        pdump = params.model_dump(mode="json")
        vocab = card.vocabulary(pdump)
        cvocabs = {
            i: card.control_vocabulary(claim.controls[i].control, pdump, m.model_dump(mode="json"))
            for i, m in cparams.items()
        }
        _vocabulary_checks(claim, vocab, cvocabs, problems, bad)
        problems += label_problems(claim, vocab)
        check_multiverse(claim, params, protocol, vocab, problems)
        check_data_choices(claim, params, protocol, problems)
        _budget_checks(claim, params, cparams, problems)
        warnings += tolerance_warnings(claim, texts)
    elif protocol is not None:
        # the parameters have problems of their own: the names the claim uses are still checked, against the
        # vocabulary of the parameters as far as they go, so that every kind of problem is said at once
        partial = _partial_vocabularies(card, protocol, raw.get("params"), claim, cparams)
        if partial is not None:
            _vocabulary_checks(claim, *partial, problems, bad)
    if problems:
        raise SpecError(path, problems)
    return ClaimSpec(
        path=path,
        claim=claim,
        protocol=protocol,
        params=params,
        control_params={claim.controls[i].id: m for i, m in cparams.items()},
        vocabulary=vocab,
        control_vocabularies={claim.controls[i].id: v for i, v in cvocabs.items()},
        texts=texts,
        warnings=tuple(warnings),
    )
