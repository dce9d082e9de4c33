"""Claim files: YAML read with a safe loader into frozen, typed objects, checked all at once.

A claim file is data. It names a registered protocol and its parameters, the
input tables it reads (by their names in the data lock), the paper's targets
with tolerances and reasons, the destructive controls with what must happen
under each, its own limitations, and its seed. It never names code to run.

Every problem in a file is reported at once, each with its path in the file::

    claims/x.yaml: targets[2].tolerance: must be >= 0, got -0.001

This module holds the schema (:class:`Claim` and its parts; the schema is
strict: a quoted number is not a number) and :func:`load_claim`, which runs
the checks, each kept where its concern is:

* :mod:`harness.claimfiles.claim_yaml`: the hardened YAML reader (YAML 1.2 core schema,
  sizes, depth, anchors, tags, encodings, control characters, the literal text
  of every number);
* here: an ``id`` other than the file's name, unknown protocols, controls,
  tables, columns (checked against the table headers when the tables are at
  hand) and upstream pins;
* :mod:`harness.claimfiles.claim_vocabulary`: any target, control or comparison that names
  a quantity its protocol cannot measure (with "did you mean");
* :mod:`harness.claimfiles.claim_checks`: two targets under one label, a compute axis or
  evaluation point that cannot be training compute in the unit given, score
  columns above 1 without ``scale: percent`` (with the tables at hand), and the
  warnings (a tolerance of 0 on a printed decimal: :attr:`ClaimSpec.warnings`);
* :mod:`harness.claimfiles.multiverse_spec`: the analysis choices a multiverse varies;
* :mod:`harness.claimfiles.budgets`: counts that together ask for more work than a claim
  may.

A problem in one part of the file hides none in the others: what validates is
still checked (:func:`~harness.core.schema.validate_lenient`).

The loaded claim (:class:`ClaimSpec`) carries the *validated* protocol and
control parameters, the vocabulary of quantities, and the literal text of
every number as the file writes it (``0.700`` keeps its three decimals).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from ..core.errors import SpecError
from ..core.quantities import Quantity
from ..core.schema import (
    Count,
    Label,
    Number,
    Strict,
    Text,
    did_you_mean,
    format_validation_error,
    shorten,
    unknown_name,
    validate_lenient,
    validate_plain,
)
from ..protocols.base import Protocol
from ..stats.methods import METHODS
from .budgets import budget_checks
from .claim_checks import (
    budget_problems,
    eval_point_problems,
    input_data_problems,
    label_problems,
    resample_problems,
    target_kind_problems,
    tolerance_warnings,
)
from .claim_vocabulary import partial_vocabularies, vocabulary_checks
from .claim_yaml import read_claim_yaml
from .multiverse_spec import (
    MULTIVERSE_BUDGET,
    Alternative,
    Multiverse,
    check_data_choices,
    check_multiverse,
    multiverse_grid,
    same_value,
    specification_params,
)
from .papers import PAPERS, papers_beside
from .registry import PROTOCOLS

__all__ = [
    "Claim",
    "ClaimSpec",
    "Target",
    "Control",
    "Condition",
    "Bootstrap",
    "Comparison",
    "load_claim",
    "MULTIVERSE_BUDGET",
    "Multiverse",
    "Alternative",
    "multiverse_grid",
    "specification_params",
    "same_value",
]

Relation = Literal["~", "<", "<=", ">", ">=", "abs<"]


class Target(Strict):
    """One number or relation the paper asserts.

    ``relation: "~"`` (the default) means the measured ``quantity`` must lie
    within ``tolerance`` of ``paper``. Any other relation compares the measured
    quantity with ``value`` (a number) or with ``other`` (a second measured
    quantity), e.g. ``gamma > 0`` or ``a < b``.
    """

    quantity: Label = Field(
        min_length=1,
        description="the measured quantity, by its name in the protocol's vocabulary (e.g. `boundary.IFEval`); "
        "judged on the authors' arm when the vocabulary gives it to that arm, else on the re-implementation",
    )
    label: Label | None = Field(
        None,
        description="the target's row title in the report (default: the quantity's own label); no two targets may "
        "share one",
    )
    relation: Relation = Field(
        "~",
        description="`~`: the quantity within `tolerance` of `paper`; otherwise `quantity relation value` or "
        "`quantity relation other` (`abs<`: its magnitude below the right side)",
    )
    paper: Number | None = Field(
        None,
        description="the paper's value (required by `~`), printed as the file writes it; a control condition with "
        "`reference: paper` measures from it",
    )
    tolerance: Number | None = Field(
        default=None,
        ge=0,
        description="how far the measured value may lie from `paper` (required by `~`); also how far the two arms' "
        "values may differ before the arms are said to disagree",
    )
    value: Number | None = Field(
        None, description="the number a relation other than `~` compares the quantity with (or give `other`)"
    )
    other: Label | None = Field(
        None,
        description="a second measured quantity a relation other than `~` compares the quantity with, in the same "
        "arm (or give `value`)",
    )
    reason: Text = Field(
        min_length=1, description="why the target is set as it is (its tolerance or relation), shown in the report"
    )
    role: Literal["headline", "supporting"] = Field(
        "headline",
        description="a failing `headline` target makes the verdict *not reproduced* (*partially reproduced* when it "
        "is judged on the re-implementation and the authors' code meets it); a failing `supporting` target makes it "
        "at most *partially reproduced*",
    )

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

    quantities: list[Label] = Field(
        min_length=1, description="quantities the control measures; each must satisfy the condition"
    )
    measure: Literal["value", "shift", "abs_shift", "ratio"] = Field(
        "value",
        description="the number compared, per quantity: the control's `value`, its `shift` (control - reference), "
        "`abs_shift` (|control - reference|) or `ratio` (control / reference)",
    )
    reference: Literal["baseline", "paper"] = Field(
        "baseline",
        description="what `shift`, `abs_shift` and `ratio` measure from: the unperturbed measurement in the same "
        "arm (`baseline`) or the `paper` value of the quantity's `~` target; unused with `measure: value`",
    )
    op: Relation = Field(
        description="the comparison of the measured number with `value` (`abs<`: its magnitude below `value`); "
        "`~` is refused"
    )
    value: Number = Field(description="the threshold the measured number is compared with")

    @model_validator(mode="after")
    def _op(self):
        if self.op == "~":
            raise ValueError("a control condition needs a comparison (< <= > >= abs<), not '~'")
        return self


class Control(Strict):
    """A destructive control: a change that must break the result."""

    id: str = Field(
        pattern=r"^[a-z0-9_]{1,60}$",
        description="the control's name in the report and the record; no two controls of a claim may share one",
    )
    control: Label = Field(
        min_length=1,
        description="the kind of control: one the protocol registers (its `params` are listed below, by protocol)",
    )
    params: dict[str, Any] = Field(
        default_factory=dict, description="the control's parameters, validated against its kind's fields"
    )
    changes: Text = Field(
        min_length=1, description="what the control changes, in words: printed under its id in the report"
    )
    must: list[Condition] = Field(
        default_factory=list,
        description="conditions that must all hold on the control's measurement for it to count as broken (a "
        "control needs these or `must_fail_targets: true`)",
    )
    must_fail_targets: bool = Field(
        False,
        description="also require every target to fail on the control's measurement (the control must measure "
        "every target's quantity)",
    )

    @model_validator(mode="after")
    def _has_expectation(self):
        if not self.must and not self.must_fail_targets:
            raise ValueError("a control needs 'must' conditions or 'must_fail_targets: true'")
        return self


class Comparison(Strict):
    """An ordering the claim asserts, checked in every bootstrap resample: ``left relation right``."""

    left: Label = Field(description="the measured quantity on the left of the ordering")
    relation: Literal["<", "<=", ">", ">="] = Field(description="the ordering asserted: `left relation right`")
    right: Label | Number = Field(description="a second measured quantity, or a number")
    label: Label | None = Field(
        None, description="the ordering's name in the report (default: the ordering written out from its sides)"
    )


#: The interval methods a claim file may name (:data:`harness.stats.methods.METHODS`).
IntervalMethod = Literal[tuple(METHODS)]


class Calibration(Strict):
    """A coverage study of the claim's interval methods on its own design (``python -m harness calibrate``).

    ``params`` replaces some of the claim's parameters in the study's design only (fewer tasks, to make it
    cheaper): every quantity the study measures must still be measured by it.
    """

    replicates: Count = Field(
        100, ge=10, le=1000, description="R, the most simulated data sets the study runs (each with the claim's B)"
    )
    batch: Count | None = Field(
        None,
        ge=10,
        description="a sequential study: data sets run this many at a time, and the study stops once the error "
        "of every ordering's claimed decision is bounded on one side of 1.5 alpha (default: all R at once)",
    )
    methods: list[IntervalMethod] = Field(
        default_factory=lambda: ["percentile", "basic", "bca"], min_length=1, description="methods to measure"
    )
    params: dict[str, Any] = Field(default_factory=dict, description="the claim's parameters, changed for the study")


class Bootstrap(Strict):
    """A resampling of the claim's measurement: clusters of rows drawn with replacement."""

    n_resamples: Count = Field(
        ge=10,
        le=100_000,
        description="B, resamples drawn (cluster bootstrap resamples, or subsamples for `subsampling`); the coverage "
        "study resamples each of its data sets as often",
    )
    seed: Count = Field(
        ge=0,
        description="seed of the resampling's draws (resamples, jackknife groups, subsamples) and of the coverage "
        "study, apart from the claim's `seed`",
    )
    cluster_col: Label = Field(description="column whose value names a row's cluster (its base model)")
    level: Number = Field(0.95, gt=0, lt=1, description="coverage of the two-sided intervals of the values")
    alpha: Number = Field(0.05, gt=0, lt=0.5, description="one-sided level of the decision on each asserted ordering")
    quantities: list[Label] = Field(default_factory=list, description="values to give an interval for")
    comparisons: list[Comparison] = Field(
        default_factory=list,
        description="orderings the claim asserts, each given a one-sided decision at `alpha` on its resampled "
        "difference `left - right`",
    )
    method: IntervalMethod = Field(
        "basic",
        description="the interval method: percentile, basic (reflected), bca (a 20-group cluster jackknife) or "
        "subsampling (m = ceil(G^(2/3)) clusters without replacement)",
    )
    calibration: Calibration | None = Field(
        None,
        description="asks for a coverage study of the interval methods on the claim's design; without a measured, "
        "up-to-date study each ordering is *not assessed*",
    )

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
    id: str = Field(
        pattern=r"^[a-z0-9][a-z0-9_-]{0,99}$",
        description="the claim's name, which must be the file's name without `.yaml`: its report is `<id>.md` and "
        "`<id>.json`",
    )
    title: Label | None = Field(
        None,
        min_length=1,
        max_length=MAX_TITLE_CHARS,
        description="a short title: the report's heading and the index's entry (the claim is printed under it)",
    )
    claim: Text = Field(
        min_length=1,
        description="the claim in full: printed under the title (the report's heading when there is no title)",
    )
    paper: Label | None = Field(
        None,
        description="the paper the claim is from, by its file in `claims/papers/` (required when the claims folder "
        "has that folder)",
    )
    locator: Text = Field(
        min_length=1, description="where the paper makes the claim (e.g. `Table 1`), kept in the record"
    )
    protocol: Label = Field(
        description="the registered protocol that measures the claim (`harness/claimfiles/registry.py`)"
    )
    params: dict[str, Any] = Field(
        default_factory=dict,
        description="the protocol's parameters, validated against its fields (listed below, under the protocol's name)",
    )
    inputs: list[Label] = Field(
        min_length=1,
        description="the tables the claim reads, by their names in the data lock (`data/lock.yaml`): verified before "
        "either arm reads them; every table `params` names must be listed",
    )

    upstream: Label | None = Field(
        None,
        description="the pin in `data/upstream.yaml` of the authors' code that the authors' arm runs; without it, "
        "that arm is not run",
    )
    seed: Count = Field(
        ge=0,
        description="the run's seed: the measurement and each control draw from their own stream spawned from it "
        "(every multiverse specification from the measurement's), and the authors' adapter is given it",
    )
    targets: list[Target] = Field(
        min_length=1, description="the numbers and relations the paper asserts: the verdict rests on them"
    )
    controls: list[Control] = Field(
        default_factory=list,
        description="destructive controls; one that does not break in the re-implementation makes the verdict at "
        "most *partially reproduced*",
    )
    bootstrap: Bootstrap | None = Field(
        None, description="a resampling of the measurement by clusters of rows (the verdict does not depend on it)"
    )
    multiverse: Multiverse | None = Field(
        None,
        description="the analysis choices and estimands the claim could have made otherwise, each run by the "
        "re-implementation (the verdict does not depend on it)",
    )
    figures: bool = Field(
        True, description="whether the report draws its figures; `false` draws none (nor the specification curve)"
    )
    limitations: list[Text] = Field(
        default_factory=list,
        description="the claim's own limitations, each a bullet of the report's Limitations section",
    )

    @field_validator("inputs")
    @classmethod
    def _each_table_once(cls, v):
        twice = sorted({t for t in v if v.count(t) > 1})
        if twice:
            raise ValueError(f"lists {', '.join(twice)} more than once; name each table once")
        return v


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
    warnings: tuple[str, ...] = ()  # what validate says but does not refuse (harness.claimfiles.claim_checks)

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


def _bootstrap_checks(claim: Claim, params, protocol, tables, problems: list[str]) -> None:
    """The bootstrap needs a protocol that resamples, and its cluster column in the protocol's first table."""
    if claim.bootstrap is None or params is None:
        return
    c = claim.bootstrap.calibration
    if c is not None and c.params:
        try:
            validate_plain(protocol.Params, {**params.model_dump(mode="json"), **c.params})
        except ValidationError as err:
            problems += format_validation_error(err, prefix="bootstrap.calibration.params", model=protocol.Params)
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
                problems.append(unknown_name(f"inputs[{i}]", name, names, "a table in the data lock"))
    if params is None:
        return
    for where, table, columns in protocol.columns(params):
        if names is not None and table not in names:
            problems.append(unknown_name(f"params.{where}", table, names, "a table in the data lock"))
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


def _columns_present(protocol, params, tables) -> bool:
    """Whether every table the parameters name is locked and holds every column they name (else that is said by
    :func:`_input_checks`, and the tables are not read further)."""
    for _, table, columns in protocol.columns(params):
        if table not in tables.lock.tables or any(c not in tables.header(table) for c in columns.values()):
            return False
    return True


def _paper_problems(path: Path, claim: Claim, raw: dict) -> list[str]:
    """The claim's ``paper`` against the paper files beside it: named when there are any, known, and
    holding the claim's pin."""
    papers = papers_beside(path)
    name = raw.get("paper")
    if papers is None or (name is not None and not isinstance(name, str)):
        return []
    if name is None:
        return [f"paper: missing; expected one of {sorted(papers)} (the files of {path.parent / PAPERS})"]
    if name not in papers:
        return [unknown_name("paper", name, papers, f"a paper of {path.parent / PAPERS}")]
    if claim.upstream is not None and claim.upstream not in papers[name].pins:
        return [f"upstream: {claim.upstream!r} is not a pin of paper {name!r} (its pins: {papers[name].pins})"]
    return []


def load_claim(path: str | Path, *, lock=None, tables=None, pins=None) -> ClaimSpec:
    """Read and validate one claim file; raise :class:`SpecError` listing every problem.

    ``lock`` (a :class:`~harness.core.datalock.DataLock`) checks the inputs and the
    tables named in the parameters; ``tables`` (verified
    :class:`~harness.core.datalock.Tables`) also checks the column names against
    the table headers; ``pins`` (a mapping of pin names) checks ``upstream``.
    """
    if tables is not None and lock is None:
        lock = tables.lock
    path = Path(path)
    raw, texts = read_claim_yaml(path)
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
        problems.append(unknown_name("protocol", proto_name, PROTOCOLS, "a registered protocol"))
    params, cparams = (None, {})
    if protocol is not None:
        params, cparams = _protocol_checks(raw, protocol, problems)
    if protocol is not None:
        _input_checks(path, claim, params, protocol, lock, tables, problems, inputs_known="inputs" not in bad)
        _bootstrap_checks(claim, params, protocol, tables, problems)
        if pins is not None and claim.upstream is not None and claim.upstream not in pins:
            problems.append(unknown_name("upstream", claim.upstream, pins, "a pin in data/upstream.yaml"))
        ids = [c.id for c in claim.controls if c.id is not None]
        for dup in sorted({x for x in ids if ids.count(x) > 1}):
            problems.append(f"controls: id '{dup}' is used more than once")
    problems += _paper_problems(path, claim, raw)
    vocab, cvocabs = {}, {}
    warnings: list[str] = []
    problems += resample_problems(claim)
    point_problems = eval_point_problems(params) if params is not None else []
    if params is not None:
        text_problems, text_warnings = budget_problems(claim, params) if not point_problems else ([], [])
        problems, warnings = problems + point_problems + text_problems, warnings + text_warnings
        if tables is not None:
            data_problems, data_warnings = input_data_problems(params, tables)
            problems, warnings = problems + data_problems, warnings + data_warnings
            if _columns_present(protocol, params, tables):
                problems += protocol.data_problems(params, tables)
    if params is not None and not point_problems:
        pdump = params.model_dump(mode="json")
        vocab = card.quantities.vocabulary(pdump)
        cvocabs = {
            i: card.quantities.control_vocabulary(claim.controls[i].control, pdump, m.model_dump(mode="json"))
            for i, m in cparams.items()
        }
        vocabulary_checks(claim, vocab, cvocabs, problems, bad)
        problems += label_problems(claim, vocab)
        problems += target_kind_problems(claim, vocab)
        check_multiverse(claim, params, protocol, vocab, problems)
        check_data_choices(claim, params, protocol, problems)
        budget_checks(claim, params, cparams, problems)
        warnings += tolerance_warnings(claim, texts)
    elif protocol is not None:
        # the parameters have problems of their own (or name a point no budget is): the names the claim uses are
        # still checked, against the vocabulary of the parameters as far as they go, so that every kind of problem
        # is said at once
        partial = partial_vocabularies(card, protocol, raw.get("params"), claim, cparams)
        if partial is not None:
            vocabulary_checks(claim, *partial, problems, bad)
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
