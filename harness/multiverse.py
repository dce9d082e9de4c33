"""Would a different, equally reasonable analysis say the same? The claim's multiverse.

A claim file may declare a ``multiverse:`` (:class:`harness.spec.Multiverse`): analysis choices the paper
made once (τ, κ, λ, the cutoff date, the bins, raw or normalised scores, every fine-tune or one per base
model), each with alternatives a reviewer would accept, the paper's own value among them. Each
specification of the full factorial (less the exclusions) is one task of the fan-out layer
(:mod:`harness.fanout`): the **re-implementation's** measurement with the specification's parameters, from a
generator spawned for it from the claim's seed, without the diagnostics its headline targets do not rest on
(:meth:`Protocol.multiverse_params`). The authors' code is not run per specification.

Each specification is judged by the one target rule (:func:`harness.verdict.target_reading`, which applies
:func:`harness.relations.target_holds`) on every headline target the re-implementation is judged on, and by
:func:`harness.relations.relation_holds` on every ordering the claim's bootstrap asserts. A specification
*holds* when all of them hold. The findings (:func:`multiverse_finding`): how many of the specifications hold
(k of n); for each value target, the range of its value across specifications against the paper's; for each
choice, how many hold with it fixed at each alternative, and whether changing it alone, from the paper's
specification, changes the conclusion (the choice *flips* it); and where the paper's specification lies on
the curve of the sorting quantity. The verdict does not depend on any of it.
"""

from __future__ import annotations

import math

import numpy as np

from . import fanout, progress
from .errors import HarnessError
from .fanout import Task
from .record import Finding, MultiverseRecord, MultiverseSpecification, plain
from .relations import relation_holds
from .schema import validate_plain
from .spec import multiverse_grid, specification_params
from .spec import same_value as _same
from .verdict import target_reading

__all__ = ["run_multiverse", "multiverse_finding", "MULTIVERSE_STATES", "EDGE_SHARE", "SEED_WORD"]

#: The states of the ``multiverse`` finding.
MULTIVERSE_STATES = ("not_run", "holds_throughout", "depends_on_choices", "holds_in_none")
#: The paper's specification is *at an edge* of the curve when it is among the lowest or highest this share
#: of the specifications that ran (at least the single lowest or highest), else *typical*.
EDGE_SHARE = 0.1
#: Where a specification's generator comes from (the claim's seed, a word apart from the run's own streams).
SEED_WORD = 20


def _measure_one(protocol_name: str, params: dict, tables, seed_seq, names: list[str]) -> dict:
    """One specification: the re-implementation's measurement with ``params``; a task of the fan-out layer.

    Returns ``{"status": "ok", "values": {name: value}}`` for the ``names`` asked for, or ``{"status": "could
    not run", "reason": ...}`` when the protocol cannot measure on this specification (too few rows left, a
    fit that fails): that is a result about the specification, not a crash of the run."""
    from .errors import DataError, ProtocolError
    from .registry import PROTOCOLS

    protocol = PROTOCOLS[protocol_name].protocol
    p = validate_plain(protocol.Params, params)
    try:
        m = protocol.measure(p, tables, np.random.default_rng(seed_seq))
    except (ProtocolError, DataError, ValueError, FloatingPointError, np.linalg.LinAlgError) as exc:
        return {"status": "could not run", "reason": " ".join(f"{type(exc).__name__}: {exc}".split())[:300]}
    return {"status": "ok", "values": plain({n: m.values.get(n) for n in names})}


def _headline(spec) -> list:
    """The headline targets the re-implementation is judged on (a check of the authors' code is not run per
    specification)."""
    return [t for t in spec.claim.targets if t.role == "headline" and spec.vocabulary[t.quantity].arm != "upstream"]


def _relations(spec) -> list:
    b = spec.claim.bootstrap
    return list(b.comparisons) if b is not None else []


def _relation_label(c) -> str:
    right = c.right if isinstance(c.right, str) else f"{c.right:g}"
    return c.label or f"{c.left} {c.relation} {right}"


def _curve_quantity(spec) -> str:
    mv = spec.claim.multiverse
    if mv.curve is not None:
        return mv.curve
    heads = _headline(spec)
    return heads[0].quantity if heads else spec.claim.targets[0].quantity


def _value_text(spec, name: str, i: int, value) -> str:
    written = spec.text_of("multiverse", "choices", name, i, "value")
    if written is not None:
        return written
    if isinstance(value, bool):
        return "true" if value else "false"
    return f"{value:g}" if isinstance(value, float) else str(value)


def run_multiverse(spec, tables) -> MultiverseRecord | None:
    """Every specification of the claim's multiverse, measured and judged (``None``: the claim declares none)."""
    mv = spec.claim.multiverse
    if mv is None:
        return None
    protocol = spec.protocol
    choices = {name: [a.value for a in alts] for name, alts in mv.choices.items()}
    grid = multiverse_grid(choices, mv.exclude)
    base = spec.params.model_dump(mode="json")
    paper = {name: base[name] for name in choices}
    heads, rels = _headline(spec), _relations(spec)
    curve = _curve_quantity(spec)
    names = sorted(
        {t.quantity for t in heads}
        | {t.other for t in heads if t.other}
        | {c.left for c in rels}
        | {c.right for c in rels if isinstance(c.right, str)}
        | {curve}
    )
    seeds = np.random.SeedSequence([spec.seed, SEED_WORD]).spawn(len(grid))
    tasks = []
    for i, (choice, seed) in enumerate(zip(grid, seeds)):
        params = specification_params(protocol, base, choice)
        light = protocol.multiverse_params(validate_plain(protocol.Params, params))
        tasks.append(
            Task(
                f"multiverse specification {i + 1}/{len(grid)}",
                _measure_one,
                (protocol.name, {**params, **light}, tables, seed, names),
            )
        )
    progress.stage(f"multiverse: {len(grid)} specifications")
    results = fanout.run(tasks, stage="multiverse specifications")
    specs = []
    for choice, res in zip(grid, results):
        is_paper = all(_same(choice[k], paper[k]) for k in choice)
        if res["status"] != "ok":
            specs.append(
                MultiverseSpecification(choices=choice, paper=is_paper, status="could not run", reason=res["reason"])
            )
            continue
        values = res["values"]
        targets = [target_reading(t, values, True).holds for t in heads]
        relations = []
        for c in rels:
            left = values.get(c.left)
            right = values.get(c.right) if isinstance(c.right, str) else c.right
            relations.append(None if left is None or right is None else relation_holds(c.relation, left, right))
        judged = targets + relations
        holds = None if any(h is None for h in judged) else all(judged)
        specs.append(
            MultiverseSpecification(
                choices=choice,
                paper=is_paper,
                status="ok",
                values=values,
                targets=targets,
                relations=relations,
                holds=holds,
                curve=values.get(curve),
            )
        )
    if sum(s.paper for s in specs) != 1:
        raise HarnessError(
            f"{spec.path}: the multiverse holds the paper's specification {sum(s.paper for s in specs)} times"
        )
    described = [
        {
            "name": name,
            "words": protocol.CHOICES[name].words,
            "kind": protocol.CHOICES[name].kind,
            "paper_text": next(
                _value_text(spec, name, i, a.value) for i, a in enumerate(alts) if _same(a.value, paper[name])
            ),
            "alternatives": [
                {
                    "value": a.value,
                    "text": _value_text(spec, name, i, a.value),
                    "reason": a.reason,
                    "paper": _same(a.value, paper[name]),
                }
                for i, a in enumerate(alts)
            ],
        }
        for name, alts in mv.choices.items()
    ]
    targets = [
        {
            "title": t.label or spec.label_of(t.quantity),
            "quantity": t.quantity,
            "relation": t.relation,
            "paper": t.paper,
            "paper_text": spec.text_of("targets", spec.claim.targets.index(t), "paper"),
        }
        for t in heads
    ]
    relations = [{"label": _relation_label(c)} for c in rels]
    return MultiverseRecord(
        curve=curve,
        curve_label=spec.label_of(curve),
        choices=plain(described),
        targets=plain(targets),
        relations=relations,
        excluded=math.prod(len(v) for v in choices.values()) - len(grid),
        left_out=sorted(protocol.multiverse_params(spec.params)),
        specifications=specs,
    )


def _range(values: list) -> tuple:
    vals = [v for v in values if v is not None]
    return (min(vals), max(vals)) if vals else (None, None)


def multiverse_finding(mv: MultiverseRecord | None) -> Finding:
    """How the claim fares across its multiverse, in states a report words (see the module docstring)."""
    if mv is None:
        return Finding(state="not_run", facts={"why": "the claim file declares no multiverse"})
    specs = mv.specifications
    ran = [s for s in specs if s.status == "ok"]
    judged = [s for s in ran if s.holds is not None]
    k = sum(bool(s.holds) for s in judged)
    n = len(specs)
    paper = next(s for s in specs if s.paper)

    def holds_of(s):
        return s.holds if s.status == "ok" else None

    # each choice: the specifications with it fixed at each alternative, and whether changing it alone (from the
    # paper's specification) changes whether the claim holds
    choices = []
    for c in mv.choices:
        name = c["name"]
        alts = []
        for a in c["alternatives"]:
            mine = [s for s in judged if _same(s.choices[name], a["value"])]
            kk = sum(bool(s.holds) for s in mine)
            alts.append(
                {
                    "text": a["text"],
                    "reason": a["reason"],
                    "paper": a["paper"],
                    "n": len(mine),
                    "k": kk,
                    "share": kk / len(mine) if mine else None,
                }
            )
        neighbours = [
            s
            for s in specs
            if not s.paper
            and not _same(s.choices[name], paper.choices[name])
            and all(_same(s.choices[o], paper.choices[o]) for o in s.choices if o != name)
        ]
        flipping = [
            s for s in neighbours if holds_of(s) is not None and holds_of(paper) is not None and s.holds != paper.holds
        ]
        flip_texts = [a["text"] for a in c["alternatives"] if any(_same(s.choices[name], a["value"]) for s in flipping)]
        shares = [a["share"] for a in alts if a["share"] is not None]
        choices.append(
            {
                "name": name,
                "words": c["words"],
                "paper_text": c["paper_text"],
                "alternatives": alts,
                "flips": bool(flipping),
                "flipped_by": flip_texts,
                "n_neighbours": len(neighbours),
                "share_spread": (max(shares) - min(shares)) if shares else None,
            }
        )
    # each headline target: how often it holds, and for a value target its range against the paper's value
    targets = []
    for i, t in enumerate(mv.targets):
        readings = [s.targets[i] for s in ran]
        vals = [s.values.get(t["quantity"]) for s in ran]
        lo, hi = _range(vals)
        targets.append(
            {
                **t,
                "k": sum(r is True for r in readings),
                "n": len(ran),
                "lo": lo,
                "hi": hi,
                "paper_inside": None if t["paper"] is None or lo is None else bool(lo <= t["paper"] <= hi),
            }
        )
    relations = [
        {**r, "k": sum(s.relations[i] is True for s in ran), "n": len(ran)} for i, r in enumerate(mv.relations)
    ]
    # where the paper's specification lies on the curve (ranked among the specifications that ran)
    curve = [s.curve for s in ran if s.curve is not None]
    position, rank = None, None
    if paper.status == "ok" and paper.curve is not None and len(curve) > 1:
        below = sum(v < paper.curve for v in curve)
        rank = below + 1
        edge = max(1, math.floor(EDGE_SHARE * len(curve)))
        position = "lowest" if below < edge else ("highest" if len(curve) - rank < edge else "typical")
    state = "holds_throughout" if (k == n) else ("holds_in_none" if k == 0 else "depends_on_choices")
    flips = [c["name"] for c in choices if c["flips"]]
    facts = {
        "n": n,
        "k": k,
        "share": k / n if n else None,
        "n_ran": len(ran),
        "n_failed": n - len(ran),
        "n_undetermined": len(ran) - len(judged),
        "n_excluded": mv.excluded,
        "left_out": mv.left_out,
        "n_choices": len(choices),
        "one_target": len(targets) == 1,
        "n_targets": len(targets),
        "n_relations": len(relations),
        "k_targets": sum(all(x is True for x in s.targets) for s in ran),
        "k_relations": sum(all(x is True for x in s.relations) for s in ran) if relations else None,
        "paper_holds": holds_of(paper),
        "paper_ran": paper.status == "ok",
        "paper_curve": paper.curve,
        "paper_rank": rank,
        "paper_position": position,
        "at_edge": position in ("lowest", "highest"),
        "curve": mv.curve,
        "curve_label": mv.curve_label,
        "curve_lo": min(curve) if curve else None,
        "curve_hi": max(curve) if curve else None,
        "n_curve": len(curve),
        "flips": flips,
        "n_flips": len(flips),
        "choices": choices,
        "targets": targets,
        "relations": relations,
        "failed": [{"choices": s.choices, "reason": s.reason} for s in specs if s.status != "ok"][:5],
    }
    return Finding(state=state, facts=plain(facts))
