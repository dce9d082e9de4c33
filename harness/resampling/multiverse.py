"""Would a different, equally reasonable analysis say the same? The claim's multiverse of analysis choices.

A claim file may declare a ``multiverse:`` (:mod:`harness.claimfiles.multiverse_spec`). Its **analysis choices** (λ, κ's
schedule, restarts, bins, the clip, the weight of a base model's fine-tunes: settings the claim leaves to the analyst)
span the specifications that are counted; its **other estimands** (another quantile, another κ, another score
scale, another cutoff: questions other than the claim's) are each run once, at the paper's analysis choices, and
shown apart.
Each specification is one task of the fan-out layer (:mod:`harness.parallel.fanout`): the **re-implementation's**
measurement with the specification's parameters, without the diagnostics its assertions do not rest on
(:meth:`Protocol.multiverse_params`). Every specification draws from the run's own measurement stream
(common random numbers), so two specifications differ by their choices only, and the paper's specification
is the run's own measurement. The authors' code is not run per specification.

**What a specification is judged on** is the claim's substance, not its printed digits: every headline
relation target (``gamma > 0``, ``p > 0.05``, a signed coverage below 0) and every ordering the claim's
bootstrap asserts. Each is *read* (:func:`read_assertion`) as ``holds`` or ``fails``, or ``unsettled`` where
the protocol measures the quantity with Monte Carlo error (:meth:`Protocol.decision_margin`: a permutation
p-value) and it lies within that error of the threshold, on either side: its side is then not established
by the measurement. Where the claim has a bootstrap, each specification has its own noise too: a cluster
bootstrap of that specification with the claim's resamples, and an assertion within ``z(1 - alpha)`` of its
standard deviations of the threshold, as measured or corrected for the bootstrap's bias, or on different sides
of it so, is ``unsettled`` (within noise), not held or failed: the one-sided decision of the bias-corrected
normal interval (method ``normal``), whose error the claim's coverage study measures where it lists it.
A value target
(``relation: "~"``) is not
judged per specification: the finding shows how far the value moves across specifications against the
paper's value, in units of its tolerance (:attr:`harness.rendering.results.Results.multiverse`).

Where the protocol has a test (:attr:`Protocol.JOINT_NULL`) and the claim asks for it (``joint_null:``), the
curve is tested as a whole under the null (Simonsohn, Simmons & Nelson 2020): the share of significant
specifications and the median effect, each against its distribution over data sets drawn under the
protocol's own null with every analysis specification run on each (:meth:`Protocol.joint_null`), from the
seed of its ``joint_null:`` (``multiverse.joint_null.seed``). The verdict does not depend on any of it.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.stats

from ..claimfiles.multiverse_spec import estimand_specifications, multiverse_grid, specification_params
from ..claimfiles.multiverse_spec import same_value as _same
from ..core import progress
from ..core.errors import HarnessError
from ..core.record import MultiverseRecord, MultiverseSpecification
from ..core.relations import relation_holds
from ..core.schema import validate_plain
from ..parallel import fanout
from ..parallel.fanout import Task
from ..stats.plain import plain

__all__ = [
    "run_multiverse",
    "read_assertion",
    "specification_reading",
    "curve_p_value",
    "NULL_CHUNK",
]

#: Data sets of the joint null per fan-out task: large, since a task computes the strata and draws the permutations
#: of each support it meets once for all its data sets.
NULL_CHUNK = 100


def curve_p_value(observed: float, null) -> float:
    """One-sided p-value of a statistic of the curve against its null draws, ``(1 + #{T_r >= T}) / (R + 1)``
    (a draw within rounding of ``T`` counts as at least as large)."""
    null = np.asarray(null, dtype=float)
    return float((1 + np.sum(null >= observed - 1e-12 * max(1.0, abs(observed)))) / (null.size + 1))


def _measure_one(protocol_name: str, params: dict, tables, seed_seq, names: list[str], noise=None) -> dict:
    """One specification: the re-implementation's measurement with ``params``; a task of the fan-out layer.

    Returns ``{"status": "ok", "values": {name: value}}`` for the ``names`` asked for, or ``{"status": "could
    not run", "reason": ...}`` when the protocol cannot measure on this specification (too few rows left, a
    fit that fails): that is a result about the specification, not a crash of the run. With ``noise``
    (``(cluster column, seed, [(left, right)], B, alpha)``), also ``margins`` and ``biases``: per assertion
    ``z(1 - alpha)`` times the standard deviation of ``left - right`` over ``B`` cluster-bootstrap resamples of this
    specification, and their mean's distance from it."""
    from ..claimfiles.registry import PROTOCOLS
    from ..core.errors import DataError, ProtocolError
    from ..stats.resample import cluster_bootstrap, cluster_ids_from_labels

    protocol = PROTOCOLS[protocol_name].protocol
    p = validate_plain(protocol.Params, params)
    failures = (ProtocolError, DataError, ValueError, FloatingPointError, np.linalg.LinAlgError)
    try:
        m = protocol.measure(p, tables, np.random.default_rng(seed_seq))
    except failures as exc:
        return {"status": "could not run", "reason": " ".join(f"{type(exc).__name__}: {exc}".split())[:300]}
    out = {"status": "ok", "values": plain({n: m.values.get(n) for n in names})}
    if noise is not None:
        cluster_col, seed, sides, n_resamples, alpha = noise
        z = float(scipy.stats.norm.ppf(1.0 - alpha))
        read = sorted({x for pair in sides for x in pair if isinstance(x, str)})
        res = protocol.resampling(p, tables, m, cluster_col=cluster_col, quantities=read)
        draws = cluster_bootstrap(
            res.statistic,
            res.n_rows,
            cluster_ids_from_labels(res.cluster_labels),
            n_resamples=n_resamples,
            rng=np.random.default_rng(seed),
            catch=failures,
            with_rng=True,
        )
        margins, biases = [], []
        for left, right in sides:
            d = draws.column(left) - (draws.column(right) if isinstance(right, str) else float(right))
            d = d[np.isfinite(d)]
            value = m.values[left] - (m.values[right] if isinstance(right, str) else float(right))
            margins.append(float(z * np.std(d, ddof=1)) if d.size > 2 else None)
            biases.append(float(d.mean() - value) if d.size > 2 else None)
        out["margins"], out["biases"] = margins, biases
    return out


def _null_chunk(protocol_name: str, params: dict, specifications: list[dict], tables, seed_seq, n: int) -> dict:
    """``n`` data sets of the joint null (:meth:`Protocol.joint_null`); a task of the fan-out layer."""
    from ..claimfiles.registry import PROTOCOLS

    protocol = PROTOCOLS[protocol_name].protocol
    out = protocol.joint_null(
        validate_plain(protocol.Params, params),
        [validate_plain(protocol.Params, s) for s in specifications],
        tables,
        np.random.default_rng(seed_seq),
        n,
    )
    return {"effect": np.asarray(out["effect"]).tolist(), "significant": np.asarray(out["significant"]).tolist()}


def _run_stream(seed: int) -> np.random.SeedSequence:
    """The run's own measurement stream (:func:`harness.build.runner._generators`'s first), as a fresh object for each
    specification: a protocol that spawns from its generator advances the sequence it was built on, and one
    shared object would hand the next specification other children in one process than in a worker."""
    return np.random.SeedSequence(seed).spawn(1)[0]


def _reimpl(spec, name: str) -> bool:
    return spec.vocabulary[name].arm != "upstream" if name in spec.vocabulary else True


def _assertions(spec) -> list[dict]:
    """What each specification is judged on: the headline relation targets the re-implementation is judged on,
    then the orderings the claim's bootstrap asserts; each with the margin within which its side is unsettled."""
    out = []
    for t in spec.claim.targets:
        if t.role != "headline" or t.relation == "~" or not _reimpl(spec, t.quantity):
            continue
        right = t.other if t.other is not None else t.value
        out.append(
            {
                "label": t.label or spec.label_of(t.quantity),
                "kind": "target",
                "left": t.quantity,
                "relation": t.relation,
                "right": right,
            }
        )
    b = spec.claim.bootstrap
    for c in b.comparisons if b is not None else []:
        right = c.right if isinstance(c.right, str) else float(c.right)
        label = c.label or f"{c.left} {c.relation} {right if isinstance(right, str) else f'{right:g}'}"
        out.append({"label": label, "kind": "ordering", "left": c.left, "relation": c.relation, "right": right})
    for a in out:
        numeric = not isinstance(a["right"], str)
        a["margin"] = spec.protocol.decision_margin(spec.params, a["left"], a["right"]) if numeric else None
        a["left_label"] = spec.label_of(a["left"])
        a["right_label"] = None if numeric else spec.label_of(a["right"])
    return out


def _value_targets(spec) -> list[dict]:
    """The headline value targets (``relation: "~"``) the re-implementation is judged on: shown as movement."""
    out = []
    for i, t in enumerate(spec.claim.targets):
        if t.role == "headline" and t.relation == "~" and _reimpl(spec, t.quantity):
            out.append(
                {
                    "title": t.label or spec.label_of(t.quantity),
                    "quantity": t.quantity,
                    "paper": t.paper,
                    "tolerance": t.tolerance,
                    "paper_text": spec.text_of("targets", i, "paper"),
                    "tolerance_text": spec.text_of("targets", i, "tolerance"),
                }
            )
    return out


def read_assertion(a: dict, values: dict, noise: float | None = None, bias: float | None = None) -> str | None:
    """One assertion on one specification's values: ``holds``, ``fails``, ``unsettled`` (within its margin of
    the threshold, either side: the protocol's Monte Carlo margin, or the specification's own bootstrap
    ``noise``, the larger), or None when a value is missing. With the bootstrap's ``bias`` of ``left - right``,
    the side must hold both as measured and bias-corrected (:func:`harness.stats.intervals.normal`)."""
    left = values.get(a["left"])
    right = values.get(a["right"]) if isinstance(a["right"], str) else a["right"]
    if left is None or right is None:
        return None
    margin, bias = max(a.get("margin") or 0.0, noise or 0.0), bias or 0.0
    if margin and min(abs(left - right), abs(left - bias - right)) <= margin:
        return "unsettled"
    held = relation_holds(a["relation"], left, right)
    if margin and held != relation_holds(a["relation"], left - bias, right):
        return "unsettled"
    return "holds" if held else "fails"


def specification_reading(readings: list) -> str | None:
    """A specification's reading: ``fails`` if an assertion fails, else ``unsettled`` if one is, else ``holds``;
    None when an assertion could not be read or there is none."""
    if not readings or any(r is None for r in readings):
        return None
    if "fails" in readings:
        return "fails"
    return "unsettled" if "unsettled" in readings else "holds"


def _value_text(spec, block: str, name: str, i: int, value) -> str:
    written = spec.text_of("multiverse", block, name, i, "value")
    if written is not None:
        return written
    if isinstance(value, bool):
        return "true" if value else "false"
    return f"{value:g}" if isinstance(value, float) else str(value)


def _described(spec, block: str, paper: dict) -> list[dict]:
    """The choices of one block (``choices`` or ``estimands``) with their role's reason and alternatives."""
    protocol = spec.protocol
    out = []
    for name, alts in getattr(spec.claim.multiverse, block).items():
        texts = [_value_text(spec, block, name, i, a.value) for i, a in enumerate(alts)]
        out.append(
            {
                "name": name,
                "words": protocol.CHOICES[name].words,
                "why": protocol.CHOICES[name].why,
                "kind": protocol.CHOICES[name].kind,
                "paper_text": next(t for t, a in zip(texts, alts) if _same(a.value, paper[name])),
                "alternatives": [
                    {"value": a.value, "text": t, "reason": a.reason, "paper": _same(a.value, paper[name])}
                    for t, a in zip(texts, alts)
                ],
            }
        )
    return out


def _names(spec, assertions: list[dict], targets: list[dict], curve: str) -> list[str]:
    """Every quantity a specification must report: what it is judged on, the curve and its interval, the test."""
    protocol = spec.protocol
    names = {a["left"] for a in assertions} | {a["right"] for a in assertions if isinstance(a["right"], str)}
    names |= {t["quantity"] for t in targets} | {curve, *protocol.INTERVALS.get(curve, ())}
    names |= set(protocol.MULTIVERSE_REPORTS)
    if spec.claim.multiverse.joint_null is not None and protocol.JOINT_NULL:
        names |= set(protocol.JOINT_NULL.values())
    return sorted(names)


def _specification(choice: dict, res: dict, *, paper: bool, estimand: bool, assertions, curve, ends):
    if res["status"] != "ok":
        return MultiverseSpecification(
            choices=choice, paper=paper, estimand=estimand, status="could not run", reason=res["reason"]
        )
    values = res["values"]
    margins = res.get("margins") or [None] * len(assertions)
    biases = res.get("biases") or [None] * len(assertions)
    readings = [read_assertion(a, values, m, bias) for a, m, bias in zip(assertions, margins, biases)]
    return MultiverseSpecification(
        choices=choice,
        paper=paper,
        estimand=estimand,
        status="ok",
        values=values,
        readings=readings,
        margins=[a["margin"] if m is None else max(m, a["margin"] or 0.0) for a, m in zip(assertions, margins)],
        reading=specification_reading(readings),
        curve=values.get(curve),
        curve_lo=values.get(ends[0]) if ends else None,
        curve_hi=values.get(ends[1]) if ends else None,
    )


def run_multiverse(spec, tables) -> MultiverseRecord | None:
    """Every specification of the claim's multiverse, measured and read (``None``: the claim declares none)."""
    mv = spec.claim.multiverse
    if mv is None:
        return None
    protocol = spec.protocol
    base = spec.params.model_dump(mode="json")
    paper = {name: base[name] for name in [*mv.choices, *mv.estimands]}
    grid = multiverse_grid({n: [a.value for a in alts] for n, alts in mv.choices.items()}, mv.exclude)
    others = estimand_specifications({n: [a.value for a in alts] for n, alts in mv.estimands.items()}, base)
    assertions, targets = _assertions(spec), _value_targets(spec)
    curve = mv.curve or (next((t.quantity for t in spec.claim.targets if t.role == "headline"), None))
    curve = curve or spec.claim.targets[0].quantity
    names = _names(spec, assertions, targets, curve)
    b = spec.claim.bootstrap
    noise = None
    if b is not None and assertions:  # a bootstrap block is refused where the protocol has none (claimfiles.spec)
        noise = (b.cluster_col, b.seed, [(a["left"], a["right"]) for a in assertions], b.n_resamples, b.alpha)
    params_of = []
    tasks = []
    for i, choice in enumerate(grid + others):
        params = specification_params(protocol, base, choice)
        light = protocol.multiverse_params(validate_plain(protocol.Params, params))
        params_of.append({**params, **light})
        key = f"multiverse specification {i + 1}/{len(grid) + len(others)}"
        args = (protocol.name, params_of[-1], tables, _run_stream(spec.seed), names, noise)
        tasks.append(Task(key, _measure_one, args))
    progress.stage(f"multiverse: {len(grid)} specifications and {len(others)} other estimands")
    results = fanout.run(tasks)
    ends = protocol.INTERVALS.get(curve)
    specs = [
        _specification(
            choice,
            res,
            paper=i < len(grid) and all(_same(choice[k], paper[k]) for k in choice),
            estimand=i >= len(grid),
            assertions=assertions,
            curve=curve,
            ends=ends,
        )
        for i, (choice, res) in enumerate(zip(grid + others, results))
    ]
    if sum(s.paper for s in specs) != 1:
        raise HarnessError(
            f"{spec.path}: the multiverse holds the paper's specification {sum(s.paper for s in specs)} times"
        )
    return MultiverseRecord(
        curve=curve,
        curve_label=spec.label_of(curve),
        choices=plain(_described(spec, "choices", paper)),
        estimands=plain(_described(spec, "estimands", paper)),
        assertions=plain(assertions),
        targets=plain(targets),
        excluded=math.prod(len(v) for v in mv.choices.values()) - len(grid),
        left_out=sorted(k for k, v in protocol.multiverse_params(spec.params).items() if plain(v) != base.get(k)),
        reported=[
            {"quantity": q, "label": spec.label_of(q), "how": how}
            for q, how in protocol.MULTIVERSE_REPORTS.items()
            if any(s.values.get(q) is not None for s in specs)
        ],
        specifications=specs,
        joint_null=_joint_null(spec, tables, params_of[: len(grid)], specs[: len(grid)]),
    )


def _joint_null(spec, tables, params_of: list[dict], specs: list) -> dict | None:
    """The curve under the null: each null data set's share of significant specifications and median effect,
    beside the observed ones (the specifications' own values); None when not asked for or a specification
    could not run."""
    mv, protocol = spec.claim.multiverse, spec.protocol
    if mv.joint_null is None or protocol.JOINT_NULL is None or any(s.status != "ok" for s in specs):
        return None
    n = mv.joint_null.n_datasets
    sizes = [min(NULL_CHUNK, n - start) for start in range(0, n, NULL_CHUNK)]
    seeds = np.random.SeedSequence(mv.joint_null.seed).spawn(len(sizes))
    base = spec.params.model_dump(mode="json")
    tasks = [
        Task(f"joint null data sets {j + 1}/{len(sizes)}", _null_chunk, (protocol.name, base, params_of, tables, s, k))
        for j, (s, k) in enumerate(zip(seeds, sizes))
    ]
    progress.stage(f"multiverse: the curve under the null, {n} data sets")
    chunks = fanout.run(tasks)
    effect = np.concatenate([np.asarray(c["effect"], dtype=float) for c in chunks])
    significant = np.concatenate([np.asarray(c["significant"], dtype=bool) for c in chunks])
    alpha = spec.params.alpha
    eff, pv = protocol.JOINT_NULL["effect"], protocol.JOINT_NULL["p_value"]
    observed_effect = [s.values[eff] for s in specs]
    return plain(
        {
            "n_datasets": n,
            "seed": mv.joint_null.seed,
            "alpha": alpha,
            "effect": eff,
            "effect_label": spec.label_of(eff),
            "p_value": pv,
            "n_specifications": len(specs),
            "observed_significant": (k := int(sum(s.values[pv] < alpha for s in specs))),
            "observed_median": (med := float(np.median(observed_effect))),
            "significant_p": curve_p_value(k, significant.sum(axis=1)),
            "median_p": curve_p_value(med, np.median(effect, axis=1)),
        }
    )
