"""Claim files: YAML read with a safe loader into frozen, typed objects.

A claim file is data. It names a registered protocol and its parameters, the
input tables it reads (by their names in the data lock), the paper's targets
with tolerances and reasons, the destructive controls with what must happen
under each, its own limitations, and its seed. It never names code to run.

Every problem in a file is reported at once, each with its path in the file::

    claims/x.yaml: targets[2].tolerance: must be >= 0, got -0.001
"""

from __future__ import annotations

import difflib
import hashlib
import math
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from .errors import SpecError

__all__ = ["Claim", "Target", "Control", "Condition", "load_claim", "spec_sha256", "format_validation_error"]

Relation = Literal["~", "<", "<=", ">", ">=", "abs<"]


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=False)


class Target(_Frozen):
    """One number or relation the paper asserts.

    ``relation: "~"`` (the default) means the measured ``quantity`` must lie
    within ``tolerance`` of ``paper``. Any other relation compares the measured
    quantity with ``value`` (a number) or with ``other`` (a second measured
    quantity), e.g. ``gamma > 0`` or ``a < b``.
    """

    quantity: str = Field(min_length=1)
    label: str | None = None
    relation: Relation = "~"
    paper: float | str | None = None
    tolerance: float | None = Field(default=None, ge=0)
    value: float | None = None
    other: str | None = None
    reason: str = Field(min_length=1)
    role: Literal["headline", "supporting"] = "headline"

    @model_validator(mode="after")
    def _relation_fields(self):
        if self.relation == "~":
            if not isinstance(self.paper, (int, float)):
                raise ValueError("relation '~' needs a numeric 'paper' value")
            if self.tolerance is None:
                raise ValueError("relation '~' needs a 'tolerance' (a number >= 0)")
            if self.value is not None or self.other is not None:
                raise ValueError("relation '~' takes 'paper' and 'tolerance', not 'value'/'other'")
        else:
            if (self.value is None) == (self.other is None):
                raise ValueError(f"relation '{self.relation}' needs exactly one of 'value' or 'other'")
        return self


class Condition(_Frozen):
    """What must happen to some quantities under a control for it to count as broken.

    The compared number is, per quantity, ``measure`` of the control's value
    against ``reference``: ``value`` (the control's value itself), ``shift``
    (control - reference), ``abs_shift`` (|control - reference|) or ``ratio``
    (control / reference). ``reference`` is the claim's unperturbed
    re-implementation (``baseline``) or the paper's value (``paper``). Every
    listed quantity must satisfy ``op value``.
    """

    quantities: list[str] = Field(min_length=1)
    measure: Literal["value", "shift", "abs_shift", "ratio"] = "value"
    reference: Literal["baseline", "paper"] = "baseline"
    op: Relation
    value: float


class Control(_Frozen):
    """A destructive control: a change that must break the result."""

    id: str = Field(pattern=r"^[a-z0-9_]+$")
    control: str = Field(min_length=1)
    params: dict[str, Any] = Field(default_factory=dict)
    changes: str = Field(min_length=1)
    must: list[Condition] = Field(default_factory=list)
    must_fail_targets: bool = False

    @model_validator(mode="after")
    def _has_expectation(self):
        if not self.must and not self.must_fail_targets:
            raise ValueError("a control needs 'must' conditions or 'must_fail_targets: true'")
        return self


class Claim(_Frozen):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]*$")
    claim: str = Field(min_length=1)
    locator: str = Field(min_length=1)
    protocol: str
    params: dict[str, Any] = Field(default_factory=dict)
    inputs: list[str] = Field(min_length=1)
    upstream: str | None = None
    seed: int = Field(ge=0)
    targets: list[Target] = Field(min_length=1)
    controls: list[Control] = Field(default_factory=list)
    limitations: list[str] = Field(default_factory=list)


def _loc(loc: tuple) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part.startswith(("function-after", "function-before")):
            continue
        else:
            out += ("." if out else "") + str(part)
    return out or "(top level)"


def format_validation_error(err: ValidationError, prefix: str = "") -> list[str]:
    """One line per problem: ``path: what was expected, got what``."""
    lines = []
    for e in err.errors():
        where = _loc(tuple(e["loc"]))
        if prefix:
            where = prefix + ("" if where == "(top level)" else ("" if where.startswith("[") else ".") + where)
        msg = e["msg"].removeprefix("Value error, ")
        if e["type"] == "extra_forbidden":
            msg = "unknown key"
        elif e["type"] == "missing":
            msg = "required key is missing"
        got = e.get("input")
        shown = "" if e["type"] in ("missing", "extra_forbidden") or isinstance(got, (dict, list)) else f", got {got!r}"
        lines.append(f"{where}: {msg}{shown}")
    return lines


def spec_sha256(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _did_you_mean(name: str, choices) -> str:
    close = difflib.get_close_matches(name, list(choices), n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""


def load_claim(path: str | Path, *, data_names=None) -> Claim:
    """Read and validate one claim file; raise :class:`SpecError` listing every problem.

    ``data_names`` is the set of table names in the data lock; when given,
    inputs that are not in it are errors too. The protocol's own parameter
    and control schemas are checked here as well.
    """
    from .protocols import PROTOCOLS  # the registry; imported late to avoid a cycle

    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SpecError(path, ["the file does not exist"]) from None
    except yaml.YAMLError as exc:
        raise SpecError(path, [f"not valid YAML: {exc}"]) from None
    if not isinstance(raw, dict):
        raise SpecError(path, [f"(top level): expected a mapping of keys, got {type(raw).__name__}"])

    problems: list[str] = []
    claim = None
    try:
        claim = Claim.model_validate(raw)
    except ValidationError as err:
        problems += format_validation_error(err)

    proto_name = raw.get("protocol")
    protocol = PROTOCOLS.get(proto_name) if isinstance(proto_name, str) else None
    if isinstance(proto_name, str) and protocol is None:
        problems.append(
            f"protocol: unknown protocol '{proto_name}'{_did_you_mean(proto_name, PROTOCOLS)};"
            f" known: {', '.join(sorted(PROTOCOLS))}"
        )
    if protocol is not None:
        try:
            protocol.Params.model_validate(raw.get("params") or {})
        except ValidationError as err:
            problems += format_validation_error(err, prefix="params")
        for i, ctl in enumerate(raw.get("controls") or []):
            if not isinstance(ctl, dict) or "control" not in ctl:
                continue
            kind = ctl["control"]
            model = protocol.controls.get(kind)
            if model is None:
                problems.append(
                    f"controls[{i}].control: unknown control '{kind}' for protocol '{proto_name}'"
                    f"{_did_you_mean(str(kind), protocol.controls)}; known: {', '.join(sorted(protocol.controls))}"
                )
                continue
            try:
                model.model_validate(ctl.get("params") or {})
            except ValidationError as err:
                problems += format_validation_error(err, prefix=f"controls[{i}].params")
    if data_names is not None:
        for i, name in enumerate(raw.get("inputs") or []):
            if isinstance(name, str) and name not in data_names:
                problems.append(
                    f"inputs[{i}]: '{name}' is not a table in the data lock{_did_you_mean(name, data_names)};"
                    f" known: {', '.join(sorted(data_names))}"
                )
    if protocol is not None and claim is not None:
        missing = [t for t in protocol.requires_inputs if t not in claim.inputs]
        if missing:
            problems.append(f"inputs: protocol '{proto_name}' reads {missing}, which the claim does not list")
    if claim is not None:
        for i, t in enumerate(claim.targets):
            for key in ("paper", "value", "tolerance"):
                v = getattr(t, key)
                if isinstance(v, float) and not math.isfinite(v):
                    problems.append(f"targets[{i}].{key}: must be a finite number, got {v!r}")
        ids = [c.id for c in claim.controls]
        for dup in sorted({x for x in ids if ids.count(x) > 1}):
            problems.append(f"controls: id '{dup}' is used more than once")
    if problems:
        raise SpecError(path, problems)
    return claim
