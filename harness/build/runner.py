"""Run one claim: both arms, the judgement of targets and controls, the verdict, the protocol's evidence: its
record (:mod:`harness.core.record`), what its figures are drawn from, and its run log (timings, cache hits, the
authors' output: what this machine and moment add, never committed)."""

from __future__ import annotations

import contextvars
import re
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..claimfiles.claim_yaml import spec_sha256
from ..claimfiles.papers import load_paper
from ..claimfiles.spec import ClaimSpec, load_claim
from ..core import progress
from ..core.datalock import Tables
from ..core.errors import ProtocolError
from ..core.paths import PROJECT_ROOT, scrub_paths
from ..core.provenance import package_versions, project_state
from ..core.record import (
    Arm,
    ArmControl,
    Arms,
    ClaimInfo,
    InputTable,
    MultiverseRecord,
    PaperRef,
    Provenance,
    Record,
    Robustness,
)
from ..parallel import fanout
from ..protocols.base import Context, Measurement
from ..resampling.multiverse import run_multiverse
from ..resampling.robustness import run_bootstrap
from ..stats.plain import plain
from ..verdicts.judging import arm_disagreements, judge_controls, judge_targets
from ..verdicts.verdict import decide_verdict


@dataclass
class RunResult:
    record: Record
    log: dict[str, Any] = field(default_factory=dict)
    plots: dict[str, Any] = field(default_factory=dict)  # what the figures are drawn from (Protocol.plots)


def _generators(seed: int, n_controls: int, extra: int = 0) -> list[np.random.Generator]:
    """Independent, reproducible streams: one for the measurement, one per control, then ``extra`` more (the
    evidence's); a stream's seed depends on its index only, so adding one changes no other."""
    return [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(1 + n_controls + extra)]


def _arm(status: str, reason: str | None, base: Measurement | None = None, controls=None, confinement=None) -> Arm:
    return Arm(
        status=status,
        reason=reason,
        values=plain(base.values) if base is not None else {},
        details=plain(base.details) if base is not None else {},
        controls={k: ArmControl(values=plain(m.values), details=plain(m.details)) for k, m in (controls or {}).items()},
        confinement=plain(confinement or {}),
    )


#: A failed arm's full text (a traceback, the tail of stderr) is kept in the run log, never in the record.
_EXCEPTION_LINE = re.compile(
    r"^(?:[A-Za-z_][\w.]*\.)?[A-Z][A-Za-z0-9_]*(?:Error|Exception|Exit|Interrupt|Failure)\b(?::.*)?$"
)
_STDERR_TAIL = re.compile(r"[;:,]?\s*(?:the )?last lines of stderr:?\s*$")
MAX_REASON_CHARS = 300


def one_line_reason(text: str | None, claim_id: str) -> str | None:
    """Why an arm did not run, in one line: a multi-line reason (an adapter's crash with the tail of its
    stderr, a Python traceback) becomes its first sentence and the exception's type and message, with
    where the full text is kept (the claim's run log). A one-line reason is returned as it is."""
    if text is None:
        return None
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if len(lines) <= 1 and "Traceback (most recent call last)" not in text:
        return lines[0] if lines else text.strip()
    head = _STDERR_TAIL.sub("", lines[0]).rstrip(" ;:,")
    if head.startswith("Traceback (most recent call last)"):
        head = "the authors' code raised an exception"
    tail = lines[1:]  # its exception's line, else its last line
    exc = next((line for line in reversed(tail) if _EXCEPTION_LINE.match(line)), tail[-1] if tail else None)
    out = head if exc is None else f"{head}: {exc}"
    if len(out) > MAX_REASON_CHARS:
        out = out[: MAX_REASON_CHARS - 1].rstrip() + "…"
    return f"{out} (full text in the run log, .cache/runs/{claim_id}.json)"


def _run_reimpl(spec: ClaimSpec, tables: Tables, log: dict) -> Arm:
    protocol, params = spec.protocol, spec.params
    gens = _generators(spec.claim.seed, len(spec.claim.controls))
    t0 = time.perf_counter()
    progress.stage("re-implementation: measurement")
    try:
        base = protocol.measure(params, tables, gens[0])
    except ProtocolError as exc:
        return _arm("could not run", one_line_reason(str(exc), spec.id))
    finally:
        log["reimpl_seconds"] = time.perf_counter() - t0
    controls = {}
    for ctl, rng in zip(spec.claim.controls, gens[1:]):
        progress.stage(f"re-implementation: control {ctl.id}")
        t1 = time.perf_counter()
        controls[ctl.id] = protocol.control(ctl.control, spec.control_params[ctl.id], params, tables, rng, base)
        log.setdefault("control_seconds", {})[ctl.id] = time.perf_counter() - t1
    return _arm("ok", None, base, controls)


def measurement_arm(spec: ClaimSpec, tables: Tables) -> Arm:
    """The re-implementation's measurement alone (no control), from the run's own measurement stream: the fits
    a resampling starts from (:mod:`harness.resampling.calibration`)."""
    base = spec.protocol.measure(spec.params, tables, _generators(spec.claim.seed, len(spec.claim.controls))[0])
    return _arm("ok", None, base)


def _run_upstream(spec: ClaimSpec, tables: Tables, options, log: dict) -> tuple[Arm, dict]:
    """The authors' arm as an :class:`~harness.core.record.Arm`, and where their code came from (url, commit)."""
    if options is None:
        return _arm("not run", "the authors' arm was switched off for this run by --no-upstream"), {}
    from ..authors.upstream import run_upstream_arm  # touches git and subprocesses: imported only when used

    progress.stage("authors' code: started")
    res = run_upstream_arm(spec, spec.protocol, spec.params, tables, options=options)
    for name in ("seconds", "request_seconds", "cached", "stdout", "stderr", "commit", "url"):
        log[f"upstream_{name}"] = getattr(res, name)
    log["upstream_ended_at"] = time.time()  # the run log's: when the last request ended (benchmarks)
    progress.stage(f"authors' code: {res.status}" + (" (from the cache)" if res.cached else ""))
    controls = {k: Measurement(v["values"], v.get("details", {})) for k, v in res.controls.items()}
    base = Measurement(res.values, res.details) if res.ok else None
    reason = one_line_reason(scrub_paths(res.reason, data_root=tables.root), spec.id)
    arm = _arm(res.status, reason, base, controls, res.confinement)
    return arm, ({"url": res.url, "commit": res.commit} if res.ok else {})


def _check_vocabulary(spec: ClaimSpec, arm: Arm, who: str) -> None:
    """A measurement must use only declared names: an undeclared one is a bug in the protocol or adapter."""
    if not arm.ok:
        return
    extra = sorted(set(arm.values) - set(spec.vocabulary))
    for cid, c in arm.controls.items():
        extra += sorted(f"{cid}: {k}" for k in set(c.values) - set(spec.control_vocabularies[cid]))
    if extra:
        raise ProtocolError(
            f"{spec.path}: the {who} reported quantities protocol '{spec.protocol.name}' does not declare: {extra[:8]}"
        )


def run_claim(
    path: str | Path, tables: Tables, *, upstream_options=None, before_resampling: Callable[[], None] = lambda: None
) -> RunResult:
    """Run a claim and return its record and run log. The authors' arm runs in a thread beside the
    re-implementation (in a shared build, the multiverse too); each part has its own seed, so the order changes
    no byte. A bad claim or bad inputs raise :class:`~harness.core.errors.HarnessError`; an arm that cannot run
    is recorded."""
    spec = load_claim(path, tables=tables)
    log: dict[str, Any] = {"claim": spec.id}
    t_start = time.perf_counter()
    project_state()  # measured before anything is written (and cached)
    tables.describe(spec.claim.inputs)  # verify the inputs before either arm reads them
    spec.protocol.data_summary(spec.params, tables)
    with ThreadPoolExecutor(max_workers=2) as pool:  # threads see this one's executor and progress
        upstream_job = pool.submit(contextvars.copy_context().run, _run_upstream, spec, tables, upstream_options, log)
        reimpl = _run_reimpl(spec, tables, log)
        beside = None
        if reimpl.ok and fanout.current().shared_pool is not None:
            beside = pool.submit(contextvars.copy_context().run, _multiverse, spec, tables, reimpl, log)
        upstream, upstream_source = upstream_job.result()
        before_resampling()
        t_boot = time.perf_counter()
        robustness = run_bootstrap(spec, tables, reimpl, judge_targets(spec, reimpl, upstream))
        log["bootstrap_seconds"] = time.perf_counter() - t_boot
        multiverse = beside.result() if beside is not None else _multiverse(spec, tables, reimpl, log)
    kept = {"upstream_source": upstream_source, "robustness": robustness, "multiverse": multiverse}
    record = assemble_record(spec, tables, reimpl, upstream, **kept)
    plots = plot_data(spec, tables, record)
    log["total_seconds"] = time.perf_counter() - t_start
    return RunResult(record=record, log=log, plots=plots)


def _multiverse(spec: ClaimSpec, tables: Tables, reimpl: Arm, log: dict) -> MultiverseRecord | None:
    if not reimpl.ok:  # the re-implementation could not run: no multiverse
        return None
    t0 = time.perf_counter()
    try:
        return run_multiverse(spec, tables)
    finally:
        log["multiverse_seconds"] = time.perf_counter() - t0


def assemble_record(
    spec: ClaimSpec,
    tables: Tables,
    reimpl: Arm,
    upstream: Arm,
    *,
    upstream_source: dict | None = None,
    robustness: Robustness | None = None,
    multiverse: MultiverseRecord | None = None,
) -> Record:
    """Judge both arms' measurements, decide the verdict and measure the evidence: the run record (from given arms
    too, as the tests use it)."""
    _check_vocabulary(spec, reimpl, "re-implementation")
    _check_vocabulary(spec, upstream, "authors' arm")
    state, claim, protocol = project_state(), spec.claim, spec.protocol
    inputs = [InputTable(**t) for t in tables.describe(claim.inputs)]
    data = plain(protocol.data_summary(spec.params, tables))
    targets = judge_targets(spec, reimpl, upstream)
    controls = judge_controls(spec, reimpl, upstream)
    verdict = decide_verdict(reimpl, upstream, targets, controls, arm_disagreements(targets))
    labels: dict[str, str] = {}  # a name's first label: the claim's, then its controls' in order
    for vocab in (spec.vocabulary, *spec.control_vocabularies.values()):
        labels.update({name: q.label for name, q in vocab.items() if name not in labels})
    missing = sorted(n for n, q in spec.vocabulary.items() if q.arm != "upstream" and n not in reimpl.values)
    evidence = {}
    if reimpl.ok and not missing:  # a protocol's evidence rests on every value it declares
        ctx = Context(spec, spec.params, data, reimpl, upstream, targets, tables)
        rng = _generators(claim.seed, len(claim.controls), extra=1)[-1]
        evidence = plain(protocol.evidence(ctx, rng))
    full = spec.path.resolve()
    rel_path = full.relative_to(PROJECT_ROOT).as_posix() if full.is_relative_to(PROJECT_ROOT) else spec.path.name
    packages = package_versions()
    paper = load_paper(spec.path, claim.paper) if claim.paper else None
    ref = None if paper is None else PaperRef(id=paper.id, title=paper.title, arxiv=f"{paper.arxiv}v{paper.version}")
    source = (upstream_source or {}) if upstream.ok else {}
    return Record(
        claim=ClaimInfo(
            **claim.model_dump(include=set(ClaimInfo.model_fields) - {"paper", "params"}),
            paper=ref,
            path=rel_path,
            spec_sha256=spec_sha256(spec.path),
            params=spec.params.model_dump(mode="json"),
        ),
        inputs=inputs,
        data=data,
        provenance=Provenance(
            project_commit=state["commit"],
            project_dirty=state["dirty"],
            project_error=state["error"],
            python=packages["python"],
            packages={k: v for k, v in packages.items() if k != "python"},
            upstream_url=source.get("url"),
            upstream_commit=source.get("commit"),
        ),
        arms=Arms(reimpl=reimpl, upstream=upstream),
        quantities=labels,
        targets=targets,
        controls=controls,
        verdict=verdict,
        unmeasured=[labels.get(n, n) for n in missing],
        evidence=evidence,
        robustness=robustness,
        multiverse=multiverse,
    )


def plot_data(spec: ClaimSpec, tables: Tables, record: Record) -> dict:
    """What the protocol's figures are drawn from (:meth:`Protocol.plots`), never stored: none where the
    re-implementation did not measure every value it declares."""
    if not record.arms.reimpl.ok or record.unmeasured:
        return {}
    ctx = Context(spec, spec.params, record.data, record.arms.reimpl, record.arms.upstream, record.targets, tables)
    return plain(spec.protocol.plots(ctx))
