"""The run record: one typed, versioned document per claim, the single source of truth (the report is rendered
from it alone). Only what the claim and its inputs determine goes in (no timing, host, temporary path or cache
state). Written by :func:`record_json`, read by :func:`read_record`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .datalock import MAX_FILE_BYTES, FileRefused, read_regular_file
from .errors import HarnessError
from .schema import format_validation_error

SCHEMA_VERSION = 2


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Reason(_Model):
    """One reason of a verdict (:mod:`harness.verdicts.verdict`): what decided it, and the targets or controls it
    names (their titles or ids, in the claim file's order)."""

    state: str
    titles: list[str] = Field(default_factory=list)


class PaperRef(_Model):
    id: str  # its file in claims/papers/
    title: str
    arxiv: str  # with its version: 2404.10102v2


class ClaimInfo(_Model):
    id: str
    title: str | None = None  # the claim file's short title (the report's heading); the claim itself under it
    claim: str
    paper: PaperRef | None = None
    locator: str
    protocol: str
    path: str  # relative to the project root, e.g. claims/002_table1_boundary_1e24.yaml
    spec_sha256: str
    params: dict[str, Any]
    seed: int
    upstream: str | None
    inputs: list[str]
    limitations: list[str]
    figures: bool = True


class InputTable(_Model):
    name: str
    path: str  # relative to the data root
    sha256: str
    rows: int
    provenance: str


class Provenance(_Model):
    project_commit: str | None
    project_dirty: bool | None
    project_error: str | None = None
    python: str
    packages: dict[str, str | None]
    upstream_url: str | None = None
    upstream_commit: str | None = None


class ArmControl(_Model):
    values: dict[str, float | None] = Field(default_factory=dict)
    details: dict[str, Any] = Field(default_factory=dict)


class Arm(_Model):
    """One arm's measurement (``status`` "ok"), or why there is none, in one line
    (:func:`harness.build.runner.one_line_reason`: the traceback is the run log's)."""

    status: Literal["ok", "not run", "could not run"]
    reason: str | None = None
    values: dict[str, float | None] = Field(default_factory=dict)
    details: dict[str, Any] = Field(default_factory=dict)
    controls: dict[str, ArmControl] = Field(default_factory=dict)
    #: How the authors' code was confined (:mod:`harness.authors.sandbox`: the same words on every machine).
    confinement: dict[str, Any] = Field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status == "ok"


class Arms(_Model):
    reimpl: Arm
    upstream: Arm


class ArmTarget(_Model):
    """One arm's reading of a target."""

    value: float | None = None
    other_value: float | None = None
    holds: bool | None = None  # None: not measured
    delta: float | None = None  # value - paper, for a target with a tolerance
    beyond: float | None = None  # |delta| - tolerance, where positive


class TargetOutcome(_Model):
    quantity: str
    quantity_label: str
    title: str  # the claim file's label, or the quantity's label
    role: Literal["headline", "supporting"]
    relation: str
    requirement: str  # the relation actually tested, derived from the target
    paper: float | None = None
    paper_text: str | None = None  # as the claim file writes it (its precision)
    tolerance: float | None = None
    tolerance_text: str | None = None
    value: float | None = None
    value_text: str | None = None
    other: str | None = None
    other_label: str | None = None
    reason: str
    judged_on: Literal["reimpl", "upstream"]
    decimals: int  # decimals for printing measured values
    reimpl: ArmTarget
    upstream: ArmTarget
    outcome: Literal["holds", "fails", "unmeasured"]  # on the arm it is judged on


class ConditionRow(_Model):
    quantity: str
    quantity_label: str
    control_value: float | None
    reference_value: float | None
    measured: float | None
    holds: bool


class ConditionOutcome(_Model):
    measure: str
    reference: str
    op: str
    threshold: float
    requirement: str
    rows: list[ConditionRow]
    holds: bool


class ArmControlOutcome(_Model):
    ran: bool
    broke: bool | None = None
    conditions: list[ConditionOutcome] = Field(default_factory=list)
    targets_failed: bool | None = None


class ControlOutcome(_Model):
    id: str
    control: str
    params: dict[str, Any]
    changes: str
    must_fail_targets: bool
    reimpl: ArmControlOutcome
    upstream: ArmControlOutcome


class Verdict(_Model):
    verdict: Literal["reproduced", "partially reproduced", "not reproduced", "inconclusive", "could not run"]
    reasons: list[Reason]


class Figure(_Model):
    """A figure of the report: an SVG beside it, and where it goes in the report (``section``)."""

    name: str
    path: str  # relative to the report's folder, e.g. figures/002_table1_boundary_1e24/boundaries.svg
    caption: str  # one line: what to look at
    section: Literal["result", "controls", "after_controls", "arms", "multiverse"] = "result"
    missing: list[str] = Field(default_factory=list)  # what could not be drawn (an arm that did not run)


class Robustness(_Model):
    state: Literal["supported", "contradicted", "inconclusive", "not assessed", "mixed", "intervals only", "not run"]
    facts: dict[str, Any] = Field(default_factory=dict)


#: How a specification reads an assertion of the claim: on the claim's side, on the other side, or on either
#: side within the measurement's own Monte Carlo error of the threshold (a permutation p-value near the level).
Reading = Literal["holds", "fails", "unsettled"]


class MultiverseSpecification(_Model):
    """One specification of a claim's multiverse: its choices, the re-implementation's values, and its reading of
    each assertion of the claim (in the order of :attr:`MultiverseRecord.assertions`)."""

    choices: dict[str, Any]
    paper: bool  # the paper's own specification
    estimand: bool = False  # another estimand: shown apart, not counted among the analysis specifications
    status: Literal["ok", "could not run"]
    reason: str | None = None
    values: dict[str, float | None] = Field(default_factory=dict)
    readings: list[Reading | None] = Field(default_factory=list)  # per assertion (None: a value is missing)
    margins: list[float | None] = Field(default_factory=list)  # per assertion: within this of its threshold, unsettled
    reading: Reading | None = None  # fails if one fails, else unsettled if one is, else holds (None: not judged)
    curve: float | None = None  # the value the specification curve sorts by
    curve_lo: float | None = None  # its interval, where the protocol gives one
    curve_hi: float | None = None


class MultiverseRecord(_Model):
    """A claim's multiverse as run (:mod:`harness.resampling.multiverse`): what was varied, what each specification is
    judged on, every specification, and the curve's test under the null where the protocol has one."""

    curve: str  # the quantity the curve sorts by
    curve_label: str
    choices: list[dict[str, Any]]  # analysis choices: name, words, why, paper_text, alternatives [value, text, ...]
    estimands: list[dict[str, Any]] = Field(default_factory=list)  # the other estimands' choices, described alike
    assertions: list[dict[str, Any]]  # what a specification is judged on: label, kind, left, relation, right, margin
    targets: list[dict[str, Any]]  # the headline value targets, shown as movement: title, quantity, paper, tolerance
    excluded: int = 0
    #: parameters each specification changes from the claim to stay cheap
    left_out: list[str] = Field(default_factory=list)
    specifications: list[MultiverseSpecification]
    reported: list[dict[str, Any]] = Field(default_factory=list)  # also shown per specification: quantity, label, how
    joint_null: dict[str, Any] | None = None  # harness.resampling.multiverse.joint_null_record


class Record(_Model):
    schema_version: Literal[2] = SCHEMA_VERSION
    claim: ClaimInfo
    inputs: list[InputTable]
    data: dict[str, Any]
    provenance: Provenance
    arms: Arms
    quantities: dict[str, str]  # reader-facing labels of the quantities this record names
    targets: list[TargetOutcome]
    controls: list[ControlOutcome]
    verdict: Verdict
    robustness: Robustness | None = None
    multiverse: MultiverseRecord | None = None
    unmeasured: list[str] = Field(default_factory=list)  # quantities the re-implementation declares, not measured
    evidence: dict[str, Any] = Field(default_factory=dict)  # measured for the report (Protocol.evidence)
    figures: list[Figure] = Field(default_factory=list)


#: A JSON array of scalars as indented text (no bracket or brace inside: a nested array stays as it is).
_SCALAR_ARRAY = re.compile(r"\[\n\s*([^\[\]{}\n]*(?:\n\s*[^\[\]{}\n]*)*?)\n\s*\]")


def record_json(record: Record) -> str:
    """The record's canonical JSON text: key order as in the model, one-space indent, an array of scalars on
    one line (a string holds no raw newline, so ``,\\n`` only ever separates items), final newline."""
    text = json.dumps(record.model_dump(mode="json"), indent=1, ensure_ascii=False, allow_nan=False)
    return _SCALAR_ARRAY.sub(lambda m: "[" + re.sub(r",\n\s*", ", ", m.group(1)) + "]", text) + "\n"


def read_record(path: str | Path) -> Record:
    """Read and validate a record; :class:`HarnessError` names the file and what is wrong. (Whether it was
    edited since it was written is the build's lock's to say: :func:`harness.build.make.checked_record`.)"""
    path = Path(path)
    try:
        raw = json.loads(read_regular_file(path, limit=MAX_FILE_BYTES).decode("utf-8"))
    except FileNotFoundError:
        raise HarnessError(f"{path}: no run record here") from None
    except FileRefused as exc:
        raise HarnessError(f"{path}: not a run record: {exc.reason}") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise HarnessError(f"{path}: not a readable JSON run record ({exc})") from None
    if not isinstance(raw, dict) or raw.get("schema_version") != SCHEMA_VERSION:
        found = raw.get("schema_version", raw.get("schema")) if isinstance(raw, dict) else type(raw).__name__
        raise HarnessError(f"{path}: schema_version {found!r}, expected {SCHEMA_VERSION}; run the claim again")
    try:
        return Record.model_validate(raw)
    except ValidationError as err:
        first = "; ".join(format_validation_error(err, model=Record)[:5])
        raise HarnessError(f"{path}: not a valid run record: {first}") from None
