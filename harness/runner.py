"""Run one claim: both arms, the comparisons, the controls, the verdict -> a run record.

The record (a JSON-able dict) is the single source of truth; the Markdown
report is rendered from it alone (:mod:`harness.render`).
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from .datalock import Tables
from .errors import ProtocolError
from .protocols import PROTOCOLS, Measurement
from .provenance import provenance
from .spec import Claim, load_claim, spec_sha256
from .verdict import arm_disagreements, decide_verdict, evaluate_control, evaluate_targets

__all__ = ["run_claim", "write_outputs", "RECORD_SCHEMA"]

RECORD_SCHEMA = 1


def _arm_generators(seed: int, n_controls: int) -> list[np.random.Generator]:
    """Independent, reproducible streams: one for the measurement, one per control."""
    return [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(1 + n_controls)]


def _checkout_for(claim: Claim, upstream_options) -> dict[str, Any]:
    """The verified pinned checkout for protocols that read the authors' files themselves."""
    from . import upstream
    from .errors import UpstreamError

    if claim.upstream is None:
        return {"checkout": None, "checkout_error": "the claim names no upstream"}
    kw = {} if upstream_options is None else {"vendor_dir": upstream_options.vendor_dir,
                                              "pins_file": upstream_options.pins_file}
    try:
        return {"checkout": upstream.verify_checkout(claim.upstream, **kw), "checkout_error": None}
    except UpstreamError as exc:
        return {"checkout": None, "checkout_error": str(exc)}


def _run_reimpl(claim: Claim, protocol, params, tables, upstream_options=None) -> dict[str, Any]:
    gens = _arm_generators(claim.seed, len(claim.controls))
    extra = _checkout_for(claim, upstream_options) if protocol.needs_checkout else {}
    t0 = time.perf_counter()
    try:
        base = protocol.measure(params, tables, gens[0], **extra)
    except ProtocolError as exc:
        return {"status": "could not run", "reason": str(exc), "values": {}, "details": {}, "controls": {},
                "seconds": time.perf_counter() - t0}
    seconds = time.perf_counter() - t0
    controls, timings = {}, {}
    for ctl, rng in zip(claim.controls, gens[1:]):
        t1 = time.perf_counter()
        cparams = protocol.controls[ctl.control].model_validate(ctl.params)
        m = protocol.control(ctl.control, cparams, params, tables, rng, base)
        controls[ctl.id] = m.to_json()
        timings[ctl.id] = time.perf_counter() - t1
    return {"status": "ok", "reason": None, **base.to_json(), "controls": controls,
            "seconds": seconds, "control_seconds": timings}


def _not_run(reason: str) -> dict[str, Any]:
    return {"status": "not run", "reason": reason, "values": {}, "details": {}, "controls": {},
            "seconds": 0.0, "cached": False, "cache_key": None, "commit": None, "url": None,
            "stdout": "", "stderr": ""}


def _run_upstream(claim: Claim, protocol, params, tables, options) -> dict[str, Any]:
    if options is None:
        return _not_run("the authors' arm was switched off for this run (--no-upstream)")
    from . import upstream  # touches git and subprocesses: imported only when used

    return upstream.run_upstream_arm(claim, protocol, params, tables, options=options)


def run_claim(path: str | Path, tables: Tables, *, upstream_options=None) -> dict[str, Any]:
    """Run the claim file at ``path`` and return its run record.

    Raises :class:`~harness.errors.HarnessError` for a bad claim or bad
    inputs; an arm that cannot run is recorded, not raised.
    """
    path = Path(path)
    claim = load_claim(path, data_names=set(tables.lock.tables))
    protocol = PROTOCOLS[claim.protocol]
    params = protocol.Params.model_validate(claim.params)
    t_start = time.perf_counter()
    inputs = tables.describe(claim.inputs)
    data_summary = protocol.data_summary(params, tables)

    reimpl = _run_reimpl(claim, protocol, params, tables, upstream_options)
    upstream = _run_upstream(claim, protocol, params, tables, upstream_options)
    up_ok = upstream["status"] == "ok"
    re_ok = reimpl["status"] == "ok"

    target_rows = evaluate_targets(claim, reimpl["values"] if re_ok else None, upstream["values"] if up_ok else None)
    control_rows = []
    for ctl in claim.controls:
        row = {"id": ctl.id, "name": ctl.id, "control": ctl.control, "params": dict(ctl.params), "changes": ctl.changes,
               "must_fail_targets": ctl.must_fail_targets}
        mine = reimpl["controls"].get(ctl.id) if re_ok else None
        theirs = upstream["controls"].get(ctl.id) if up_ok else None
        ev = evaluate_control(ctl, claim, mine["values"] if mine else None, reimpl["values"])
        row.update(ev)
        row["upstream"] = (evaluate_control(ctl, claim, theirs["values"], upstream["values"])
                           if theirs else {"broke": None, "conditions": [], "targets_failed": None})
        control_rows.append(row)

    disagreements = arm_disagreements(claim, target_rows) if (re_ok and up_ok) else []
    explanation = {}
    if re_ok and up_ok:
        explanation = protocol.explain(params, tables, Measurement(reimpl["values"], reimpl["details"]),
                                       Measurement(upstream["values"], upstream["details"]))
    verdict, reasons = decide_verdict(re_ok, target_rows, control_rows, up_ok, disagreements)

    return _jsonable({
        "schema": RECORD_SCHEMA,
        "claim": {"id": claim.id, "claim": claim.claim, "locator": claim.locator, "protocol": claim.protocol,
                  "protocol_summary": protocol.summary, "path": path.name, "spec_sha256": spec_sha256(path),
                  "params": params.model_dump(mode="json"), "seed": claim.seed, "upstream": claim.upstream,
                  "limitations": list(claim.limitations), "inputs": list(claim.inputs)},
        "inputs": inputs,
        "data_summary": data_summary,
        "provenance": provenance(),
        "arms": {"reimpl": reimpl, "upstream": upstream},
        "targets": target_rows,
        "controls": control_rows,
        "disagreements": disagreements,
        "explanation": explanation,
        "verdict": verdict,
        "verdict_reasons": reasons,
        "timings": {"reimpl_seconds": reimpl["seconds"], "upstream_seconds": upstream.get("seconds", 0.0),
                    "upstream_cached": upstream.get("cached", False),
                    "total_seconds": time.perf_counter() - t_start},
    })


def _jsonable(obj):
    """Plain JSON types only (numpy scalars and arrays become floats and lists)."""
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return [_jsonable(v) for v in obj.tolist()]
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, (np.floating, float)):
        v = float(obj)
        return v if np.isfinite(v) else None
    return obj


def _atomic_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_outputs(record: dict, markdown: str, out_dir: str | Path) -> tuple[Path, Path]:
    """Write ``<id>.json`` and ``<id>.md`` atomically; called only after both exist in memory.

    The JSON keeps the record's own key order (not sorted), so that ``render``
    from the file gives the same report as the run did.
    """
    out_dir = Path(out_dir)
    cid = record["claim"]["id"]
    jpath, mpath = out_dir / f"{cid}.json", out_dir / f"{cid}.md"
    _atomic_write(jpath, json.dumps(record, indent=2, ensure_ascii=False) + "\n")
    _atomic_write(mpath, markdown)
    return jpath, mpath
