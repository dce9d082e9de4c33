"""Claim files: YAML read with a safe loader into frozen, typed objects, checked all at once.

A claim file is data. It names a registered protocol and its parameters, the
input tables it reads (by their names in the data lock), the paper's targets
with tolerances and reasons, the destructive controls with what must happen
under each, its own limitations, and its seed. It never names code to run.

Every problem in a file is reported at once, each with its path in the file::

    claims/x.yaml: targets[2].tolerance: must be >= 0, got -0.001

Beyond the schema, :func:`load_claim` refuses: bytes that are not UTF-8,
duplicate keys, non-finite numbers anywhere, booleans where numbers are
expected, control characters in names and labels, an ``id`` other than the
file's name, unknown protocols, controls, tables, columns (checked against
the table headers when the tables are at hand) and upstream pins, and any
target or control that names a quantity its protocol cannot measure (with
"did you mean").

The loaded claim (:class:`ClaimSpec`) carries the *validated* protocol and
control parameters, the vocabulary of quantities, and the literal text of
every number as the file writes it (``0.700`` keeps its three decimals).
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import Field, ValidationError, model_validator

from .errors import SpecError
from .protocols.base import Protocol
from .quantities import Quantity
from .registry import PROTOCOLS
from .schema import Count, Label, Number, Strict, Text, did_you_mean, format_validation_error, shorten

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
]

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


class Bootstrap(Strict):
    """A resampling of the claim's measurement: clusters of rows drawn with replacement."""

    n_resamples: Count = Field(ge=10, le=100_000)
    seed: Count = Field(ge=0)
    cluster_col: Label = Field(description="column whose value names a row's cluster (its base model)")
    level: Number = Field(0.95, gt=0, lt=1, description="coverage of the percentile intervals")
    robust_share: Number = Field(
        0.95, gt=0.5, le=1, description="share of resamples in which every comparison must hold"
    )
    quantities: list[Label] = Field(default_factory=list, description="values to give an interval for")
    comparisons: list[Comparison] = Field(default_factory=list)


class Claim(Strict):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]{0,99}$")
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
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


# -- reading YAML --------------------------------------------------------------------------------------------


def _walk(node, path: tuple, texts: dict, problems: list[str]) -> None:
    """Record every scalar's literal text by path, and every duplicate key."""
    if isinstance(node, yaml.MappingNode):
        seen: dict[str, int] = {}
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else str(key_node)
            line = key_node.start_mark.line + 1
            if key in seen:
                where = _fmt_path(path + (key,))
                problems.append(f"{where}: duplicate key (lines {seen[key]} and {line}); a key may appear once")
            seen[key] = line
            _walk(value_node, path + (key,), texts, problems)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _walk(item, path + (i,), texts, problems)
    elif isinstance(node, yaml.ScalarNode):
        texts[path] = node.value


def _fmt_path(path: tuple) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else ("." if out else "") + str(part)
    return out or "(top level)"


def _non_finite(obj, path: tuple, problems: list[str]) -> None:
    if isinstance(obj, float) and not math.isfinite(obj):
        problems.append(f"{_fmt_path(path)}: must be a finite number, got {obj!r}")
    elif isinstance(obj, dict):
        for k, v in obj.items():
            _non_finite(v, path + (k,), problems)
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            _non_finite(v, path + (i,), problems)


def _read_yaml(path: Path) -> tuple[Any, dict]:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise SpecError(path, ["the file does not exist"]) from None
    except OSError as exc:
        raise SpecError(path, [f"the file could not be read: {exc.strerror or exc}"]) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SpecError(path, [f"not UTF-8 text (byte {data[exc.start]:#04x} at offset {exc.start})"]) from None
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        texts: dict = {}
        problems: list[str] = []
        if node is not None:
            _walk(node, (), texts, problems)
        raw = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as exc:
        raise SpecError(path, [f"not valid YAML: {' '.join(str(exc).split())}"]) from None
    finally:
        loader.dispose()
    if not isinstance(raw, dict):
        raise SpecError(path, [f"(top level): expected a mapping of keys, got {type(raw).__name__}"])
    _non_finite(raw, (), problems)
    if problems:
        raise SpecError(path, problems)
    return raw, texts


# -- the checks ---------------------------------------------------------------------------------------------


def _protocol_checks(raw: dict, protocol, problems: list[str]):
    """Validate the protocol's parameters and every control's; return (params, {control index: params})."""
    params, cparams = None, {}
    try:
        params = protocol.Params.model_validate(raw.get("params") or {})
    except ValidationError as err:
        problems += format_validation_error(err, prefix="params")
    for i, ctl in enumerate(raw.get("controls") or []):
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
            cparams[i] = model.model_validate(ctl.get("params") or {})
        except ValidationError as err:
            problems += format_validation_error(err, prefix=f"controls[{i}].params")
    return params, cparams


def _unknown(where: str, name: str, known, what: str) -> str:
    return f"{where}: {shorten(name)} is not {what}{did_you_mean(name, known)}; known: " + (
        ", ".join(sorted(known)[:12]) + (" …" if len(known) > 12 else "")
    )


def _vocabulary_checks(claim: Claim, vocab: dict, cvocabs: dict, problems: list[str]) -> None:
    for i, t in enumerate(claim.targets):
        for key in ("quantity", "other"):
            name = getattr(t, key)
            if name is not None and name not in vocab:
                problems.append(
                    _unknown(f"targets[{i}].{key}", name, vocab, f"a quantity protocol '{claim.protocol}' measures")
                )
    paper_names = {t.quantity for t in claim.targets if t.relation == "~"}
    for i, ctl in enumerate(claim.controls):
        cv = cvocabs.get(i)
        if cv is None:
            continue
        for j, cond in enumerate(ctl.must):
            for k, name in enumerate(cond.quantities):
                where = f"controls[{i}].must[{j}].quantities[{k}]"
                if name not in cv:
                    problems.append(_unknown(where, name, cv, f"a quantity control '{ctl.control}' measures"))
                elif cond.measure != "value" and cond.reference == "baseline" and name not in vocab:
                    problems.append(
                        f"{where}: {name!r} has no baseline: the unperturbed measurement has no such "
                        "quantity (use measure: value)"
                    )
                elif cond.measure != "value" and cond.reference == "paper" and name not in paper_names:
                    problems.append(f"{where}: reference 'paper' needs a target with a paper value for {name!r}")
        if ctl.must_fail_targets:
            missing = [t.quantity for t in claim.targets if t.quantity not in cv]
            if missing:
                problems.append(
                    f"controls[{i}].must_fail_targets: control '{ctl.control}' does not measure "
                    f"{missing}, so it cannot fail those targets"
                )
    if claim.bootstrap is not None:
        b = claim.bootstrap
        for k, name in enumerate(b.quantities):
            if name not in vocab:
                problems.append(_unknown(f"bootstrap.quantities[{k}]", name, vocab, "a measured quantity"))
        for k, c in enumerate(b.comparisons):
            for side in ("left", "right"):
                name = getattr(c, side)
                if isinstance(name, str) and name not in vocab:
                    problems.append(_unknown(f"bootstrap.comparisons[{k}].{side}", name, vocab, "a measured quantity"))


def _bootstrap_checks(claim: Claim, params, protocol, tables, problems: list[str]) -> None:
    """The bootstrap needs a protocol that resamples, and its cluster column in the protocol's first table."""
    if claim.bootstrap is None or params is None:
        return
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


def _input_checks(path: Path, claim: Claim, params, protocol, lock, tables, problems: list[str]) -> None:
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
        if table not in claim.inputs:
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
    claim = None
    try:
        claim = Claim.model_validate(raw)
    except ValidationError as err:
        problems += format_validation_error(err)
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
    if claim is not None and protocol is not None:
        _input_checks(path, claim, params, protocol, lock, tables, problems)
        _bootstrap_checks(claim, params, protocol, tables, problems)
        if pins is not None and claim.upstream is not None and claim.upstream not in pins:
            problems.append(_unknown("upstream", claim.upstream, pins, "a pin in data/upstream.yaml"))
        ids = [c.id for c in claim.controls]
        for dup in sorted({x for x in ids if ids.count(x) > 1}):
            problems.append(f"controls: id '{dup}' is used more than once")
    vocab, cvocabs = {}, {}
    if claim is not None and params is not None:
        pdump = params.model_dump(mode="json")
        vocab = card.vocabulary(pdump)
        cvocabs = {
            i: card.control_vocabulary(claim.controls[i].control, pdump, m.model_dump(mode="json"))
            for i, m in cparams.items()
        }
        _vocabulary_checks(claim, vocab, cvocabs, problems)
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
    )
