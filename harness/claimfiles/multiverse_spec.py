"""A claim file's ``multiverse:`` block: its schema, its specifications, and the checks
:func:`harness.claimfiles.spec.load_claim` runs on it.

A protocol declares every choice a multiverse may vary (:attr:`~harness.protocols.base.Protocol.CHOICES`), each
with its role (:class:`~harness.protocols.base.Choice`): an **estimand** is named by the claim (the quantile, the
benchmark columns and their scale, the budget, the cutoff that defines a release), so another value of it asks
another question; an **analysis** choice is left to the analyst (λ, κ's schedule, restarts, bins, one row per
base model). The block keeps them apart::

    multiverse:
      curve: gamma                # the quantity the specification curve sorts by
      max_specifications: 12      # the claim's budget: analysis specifications plus other estimands
      choices:                    # analysis choices: their full factorial is counted ("k of n")
        n_bins: [{value: 5, reason: ...}, {value: 10, reason: ...}]
      estimands:                  # other estimands: run and shown apart, never counted
        cutoff: [{value: "2025-01-06", reason: ...}, {value: "2025-02-06", reason: ...}]
      exclude: [{n_bins: 5, eps: 1.0e-3}]   # combinations of analysis choices left out
      joint_null: {n_datasets: 200, seed: 1}  # the curve tested under the null (protocols with a test)

An estimand under ``choices`` is refused (with where it belongs), as is an analysis choice under
``estimands``. Each other estimand changes one estimand of the claim from the paper's value, every other
choice at the paper's (:func:`estimand_specifications`).
"""

from __future__ import annotations

import itertools
import math

from pydantic import Field, ValidationError

from ..core.schema import Count, Label, Number, Strict, Text, format_validation_error, unknown_name, validate_plain

__all__ = [
    "MULTIVERSE_BUDGET",
    "Alternative",
    "JointNull",
    "Multiverse",
    "multiverse_grid",
    "estimand_specifications",
    "n_specifications",
    "same_value",
    "specification_params",
    "check_multiverse",
    "check_data_choices",
]

#: Specifications a claim's multiverse may declare (each is one run of the measurement, without its diagnostics).
MULTIVERSE_BUDGET = 64


class Alternative(Strict):
    """One alternative of a choice: the parameter's value, and why a reviewer would accept it."""

    value: bool | Count | Number | Label = Field(
        description="a value of the choice's parameter, one the protocol can take; no value may be written twice"
    )
    reason: Text = Field(min_length=1, description="why a reviewer would accept this value, shown in the report")


class JointNull(Strict):
    """The specification curve tested under the null (Simonsohn, Simmons & Nelson 2020): ``n_datasets`` data sets
    drawn under the protocol's own null, every analysis specification's test run on each, from ``seed``."""

    n_datasets: Count = Field(
        200,
        ge=20,
        le=5000,
        description="data sets drawn under the protocol's null, every analysis specification's test run on each",
    )
    seed: Count = Field(ge=0, description="seed of the null data sets' draws, apart from the claim's `seed`")


class Multiverse(Strict):
    """The choices the claim could reasonably have made otherwise (``multiverse:``).

    ``choices`` maps an analysis choice the protocol declares (:attr:`Protocol.CHOICES`, a parameter name) to its
    alternatives, the claim's own value among them; the specifications are their full factorial, in the order
    written, less every combination an ``exclude`` entry matches (an entry names some choices and one
    alternative of each). ``estimands`` maps an estimand the protocol declares to its alternatives likewise: each
    other value is run once, at the paper's analysis choices, and shown apart. ``max_specifications`` is the
    claim's budget for both. ``curve`` is the quantity the specification curve sorts by (default: the first
    headline target's). ``joint_null`` asks for the curve's test under the null, where the protocol has a test.
    """

    choices: dict[Label, list[Alternative]] = Field(
        min_length=1,
        description="analysis choices the protocol declares (parameter names), each with at least two alternatives, "
        "the claim's own value among them: their full factorial, less `exclude`, is the specifications counted",
    )
    estimands: dict[Label, list[Alternative]] = Field(
        default_factory=dict,
        description="estimands the protocol declares, each with at least two alternatives, the claim's own value "
        "among them: each other value is run once, every analysis choice at the claim's, and shown apart",
    )
    exclude: list[dict[Label, bool | Count | Number | Label]] = Field(
        default_factory=list,
        description="combinations of analysis choices left out: an entry names some choices and one alternative of "
        "each, and drops every specification that matches it (never the claim's own)",
    )
    max_specifications: Count = Field(
        ge=2,
        le=MULTIVERSE_BUDGET,
        description="the claim's budget: the specifications left after `exclude` plus the other estimands' runs may "
        "not exceed it",
    )
    curve: Label | None = Field(
        None,
        description="the measured quantity the specification curve shows and sorts by (default: the first headline "
        "target's quantity, else the first target's)",
    )
    joint_null: JointNull | None = Field(
        None, description="asks for the curve's test under the null (only where the protocol has a test)"
    )


def multiverse_grid(choices: dict[str, list], exclude: list[dict]) -> list[dict]:
    """Every specification of a multiverse, ``{choice: value}``: the full factorial of ``choices`` (each a list
    of values), the first choice varying slowest, less the combinations an entry of ``exclude`` matches."""
    names = list(choices)
    out = []
    for combo in itertools.product(*(choices[n] for n in names)):
        spec = dict(zip(names, combo))
        if not any(all(same_value(spec.get(k), v) for k, v in ex.items()) for ex in exclude):
            out.append(spec)
    return out


def estimand_specifications(estimands: dict[str, list], paper: dict) -> list[dict]:
    """The other estimands, ``{estimand: value}``: each alternative of each estimand but the paper's value, one
    at a time (every other estimand and every analysis choice at the paper's), in the order written."""
    return [{name: v} for name, values in estimands.items() for v in values if not same_value(v, paper.get(name))]


def n_specifications(mv: Multiverse, paper: dict, *, excluded: bool = True) -> int:
    """How many runs a multiverse asks for: its analysis grid (with or without its exclusions) and its other
    estimands."""
    grid = multiverse_grid({k: [a.value for a in v] for k, v in mv.choices.items()}, mv.exclude if excluded else [])
    others = estimand_specifications({k: [a.value for a in v] for k, v in mv.estimands.items()}, paper)
    return len(grid) + len(others)


def same_value(a, b) -> bool:
    """One value of a choice: equal and of one kind (``true`` is not ``1``)."""
    return isinstance(a, bool) == isinstance(b, bool) and a == b


def specification_params(protocol, base: dict, choice: dict) -> dict:
    """The claim's parameters (``base``, JSON) with one specification's ``choice`` replacing some of them, and
    every parameter that follows from a replaced one dropped (it takes its default from the replacement)."""
    out = dict(base)
    for name, value in choice.items():
        for follower in protocol.CHOICES[name].follows:
            out.pop(follower, None)
        out[name] = value
    return out


def _alternative_error(protocol, base: dict, choice: dict) -> str | None:
    """Why the claim's parameters with ``choice`` replaced (and what follows from it left to its default) are
    not parameters the protocol takes, in one line, or None."""
    try:
        validate_plain(protocol.Params, specification_params(protocol, base, choice))
    except ValidationError as err:
        return "; ".join(format_validation_error(err, model=protocol.Params))[:300]
    return None


def _role_problem(where: str, name: str, choice, protocol, want: str) -> str | None:
    """The problem of a choice written under the block of the other role, or None."""
    if choice.role == want:
        return None
    home = "multiverse.estimands" if choice.role == "estimand" else "multiverse.choices"
    shown = (
        "where it is run and shown apart as another estimand, not counted among the analysis choices"
        if choice.role == "estimand"
        else "where its specifications are counted"
    )
    return (
        f"{where}: expected an {want} choice, found {name!r}, which protocol '{protocol.name}' declares an "
        f"{choice.role} ({choice.why}); move it under {home}, {shown}"
    )


def _alternatives(where: str, name: str, alts: list, protocol, base: dict, problems: list[str]) -> list | None:
    """The values of one choice's alternatives, checked: at least two (else None), none twice, the claim's own
    among them, each one the protocol can take."""
    values = [a.value for a in alts]
    if len(values) < 2:
        problems.append(f"{where}: needs at least two alternatives, the claim's own value and another")
        return None
    dups = [v for i, v in enumerate(values) if any(same_value(v, w) for w in values[:i])]
    if dups:
        problems.append(f"{where}: alternative {dups[0]!r} is written more than once")
    if not any(same_value(base.get(name), v) for v in values):
        problems.append(
            f"{where}: the claim's own value {base.get(name)!r} (params.{name}) is not among the alternatives "
            f"{values}; the paper's specification must be one of the grid"
        )
    for i, v in enumerate(values):
        err = _alternative_error(protocol, base, {name: v})
        if err:
            problems.append(f"{where}[{i}].value: protocol '{protocol.name}' cannot take {name} = {v!r}: {err}")
    return values


def _checked_block(block: dict, key: str, want: str, protocol, base: dict, problems: list[str]) -> dict | None:
    """``{name: values}`` of one block (``choices`` or ``estimands``), each name a choice the protocol declares
    in the role the block wants; None when a name is unknown."""
    known = protocol.CHOICES
    good: dict[str, list] = {}
    complete = True
    for name, alts in block.items():
        where = f"multiverse.{key}.{name}"
        if name not in known:
            problems.append(
                unknown_name(f"multiverse.{key}", name, known, f"a choice protocol '{protocol.name}' can vary")
            )
            complete = False
            continue
        role = _role_problem(where, name, known[name], protocol, want)
        if role:
            problems.append(role)
            complete = False
            continue
        values = _alternatives(where, name, alts, protocol, base, problems)
        if values is None:
            complete = False
            continue
        good[name] = values
    return good if complete else None


def _exclusion_checks(mv: Multiverse, good: dict, base: dict, problems: list[str]) -> None:
    for j, ex in enumerate(mv.exclude):
        for k, v in ex.items():
            if k not in good:
                problems.append(
                    unknown_name(f"multiverse.exclude[{j}]", k, good, "an analysis choice of this multiverse")
                )
            elif not any(same_value(v, w) for w in good[k]):
                problems.append(f"multiverse.exclude[{j}].{k}: {v!r} is not one of its alternatives {good[k]}")
        if not ex:
            problems.append(f"multiverse.exclude[{j}]: an empty exclusion would exclude every specification")
        elif all(k in good and same_value(base.get(k), v) for k, v in ex.items()):
            problems.append(f"multiverse.exclude[{j}]: excludes the paper's own specification")


def check_multiverse(claim, params, protocol, vocab: dict, problems: list[str]) -> None:
    """Each choice one the protocol declares, in the block of its role, each alternative one it can take, the
    claim's own value among them, the exclusions naming alternatives, the paper's specification kept, the grid
    and the other estimands within budget, and a joint null only where the protocol has a test."""
    mv = claim.multiverse
    if mv is None or params is None:
        return
    base = params.model_dump(mode="json")
    if not protocol.CHOICES:
        problems.append(f"multiverse: protocol '{protocol.name}' declares no choice it can vary")
        return
    for name in sorted(set(mv.choices) & set(mv.estimands)):
        problems.append(f"multiverse.estimands.{name}: {name!r} is under multiverse.choices too; a choice has one role")
    good = _checked_block(mv.choices, "choices", "analysis", protocol, base, problems)
    others = _checked_block(mv.estimands, "estimands", "estimand", protocol, base, problems)
    if mv.joint_null is not None and protocol.JOINT_NULL is None:
        problems.append(
            f"multiverse.joint_null: expected only where the protocol has a test, found it under protocol "
            f"'{protocol.name}', which has none whose specification curve could be tested under the null; remove it"
        )
    if mv.curve is not None and mv.curve not in vocab:
        problems.append(
            unknown_name("multiverse.curve", mv.curve, vocab, f"a quantity protocol '{protocol.name}' measures")
        )
    if good is None or others is None:
        return
    _exclusion_checks(mv, good, base, problems)
    grid = multiverse_grid(good, mv.exclude)
    extra = estimand_specifications(others, base)
    full = math.prod(len(v) for v in good.values())
    if len(grid) + len(extra) > mv.max_specifications:
        sizes = " × ".join(str(len(v)) for v in good.values())
        problems.append(
            f"multiverse: {len(grid) + len(extra)} specifications ({sizes} = {full}, less {full - len(grid)} "
            f"excluded, and {len(extra)} other estimands) exceed max_specifications {mv.max_specifications}; "
            "exclude combinations or drop alternatives"
        )
    elif len(grid) < 2:
        problems.append("multiverse: the exclusions leave fewer than two specifications")
    else:
        for s in grid + extra:
            err = _alternative_error(protocol, base, s)
            if err:
                problems.append(
                    f"multiverse: the specification {s} is not one protocol '{protocol.name}' can run: {err}"
                )
                break


def check_data_choices(claim, params, protocol, problems: list[str]) -> None:
    """A data choice (:class:`~harness.protocols.base.Choice` of kind "data") changes rows or scores in the
    re-implementation only: the authors' code reads the table as it is. So a claim with an authors' arm keeps
    each at its default in its own parameters and varies it in its multiverse."""
    if params is None or claim.upstream is None:
        return
    for name, choice in protocol.CHOICES.items():
        field_ = type(params).model_fields.get(name)
        if choice.kind == "data" and field_ is not None and getattr(params, name) != field_.default:
            block = "choices" if choice.role == "analysis" else "estimands"
            problems.append(
                f"params.{name}: {getattr(params, name)!r} is a data choice the authors' code does not make (it "
                f"reads the table as it is); keep {field_.default!r} here and vary it under multiverse.{block}"
            )
