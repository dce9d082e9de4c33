"""``make claims`` as a build: which claims are up to date, running the others, writing what they produced.

:func:`run_claims` plans (:mod:`harness.build` says what each report depends
on and why it is stale), runs the stale claims ``-j`` at a time in worker
processes (slowest protocol first, by its card's ``cost``), re-renders the
reports whose templates or drawing changed, and writes each claim's outputs
as soon as it is done: ``<id>.json``, ``<id>.md`` and its figures together or
not at all (:func:`harness.fileio.write_together`). A run poorer than the
report already there (the authors' arm did not run where the report has it)
goes beside it, under ``<out>/.degraded/``. Nothing is written for a claim
that failed.

This module decides and writes; it prints nothing. What a user should read
goes to the ``console`` it is given (:class:`Console`: the command line
prints it), with the exit status the command returns.
"""

from __future__ import annotations

import contextlib
import json
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from .paths import RUN_LOG_DIR

__all__ = ["Console", "ClaimOutput", "run_claims", "render_claims", "records", "write_index", "tables_of", "pins_of"]

EXIT_OK, EXIT_ERROR, EXIT_DEGRADED = 0, 2, 3
DEGRADED_DIR = ".degraded"


class Console(Protocol):
    def info(self, message: str) -> None: ...  # a result line (standard output)

    def note(self, message: str) -> None: ...  # what happens (standard error)

    def error(self, message: str) -> None: ...  # what went wrong (standard error)


@dataclass
class ClaimOutput:
    """What a claim's run produced, for the parent to write (a worker never writes into the project)."""

    path: Path
    id: str | None = None
    json: str = ""
    md: str = ""
    figures: dict[str, bytes] = field(default_factory=dict)
    log: dict = field(default_factory=dict)
    verdict: str | None = None
    reimpl: str | None = None
    upstream: str | None = None
    upstream_reason: str | None = None
    error: str | None = None


def tables_of(args):
    from .datalock import Tables, load_lock, resolve_data_root

    return Tables(load_lock(args.lock), resolve_data_root(args.data_root))


def pins_of(args=None):
    from .checkout import PINS_FILE, load_pins

    return load_pins(getattr(args, "pins", None) or PINS_FILE)


def check_ids(specs: dict[Path, object]) -> tuple[list[str], set[Path]]:
    """Claim ids must be unique across the batch: the problems, and the files that share an id."""
    seen: dict[str, Path] = {}
    problems, clashing = [], set()
    for path, spec in specs.items():
        if spec.id in seen:
            problems.append(f"{path}: id '{spec.id}' is also the id of {seen[spec.id]}")
            clashing |= {path, seen[spec.id]}
        seen.setdefault(spec.id, path)
    return problems, clashing


def _upstream_options(args):
    if args.no_upstream:
        return None
    from .upstream import UpstreamOptions

    return UpstreamOptions(
        force=args.force_upstream,
        timeout_s=args.upstream_timeout,
        auto_checkout=True,
        sandbox=args.sandbox,
        pins_file=Path(args.pins),
        vendor_dir=Path(args.vendor),
        jobs=args.jobs,
    )


def _executor(args, *, claims_in_parallel: bool):
    """Where a claim's fan-outs run: the run's executor (``--executor``), but serially inside each claim when
    claims already share this machine's cores in parallel."""
    from .fanout import SERIAL, executor_from

    ex = executor_from(getattr(args, "executor", None), jobs=args.jobs)
    return SERIAL if (claims_in_parallel and ex.kind == "local") else ex


def _job(path: Path, args, build: dict, verbose: bool, claims_in_parallel: bool = False) -> ClaimOutput:
    """Run one claim; everything the parent needs to write its outputs (this never writes files)."""
    import scipy.optimize  # noqa: F401  (load every BLAS before limiting its threads)
    from threadpoolctl import threadpool_limits

    from . import fanout, progress
    from .errors import HarnessError
    from .figures import draw_figures
    from .record import record_json
    from .render import render_report
    from .runner import run_claim

    progress.start(path.stem, verbose=verbose)
    try:
        executor = _executor(args, claims_in_parallel=claims_in_parallel)
        with threadpool_limits(limits=1, user_api="blas"), fanout.using(executor):
            result = run_claim(path, tables_of(args), upstream_options=_upstream_options(args), build=build)
            record = result.record
            figures = draw_figures(record)
            record = record.model_copy(update={"figures": [f for f, _ in figures]})
            return ClaimOutput(
                path=path,
                id=record.claim.id,
                json=record_json(record),
                md=render_report(record),
                figures={f.path: data for f, data in figures},
                log=result.log,
                verdict=record.verdict.verdict,
                reimpl=record.arms.reimpl.status,
                upstream=record.arms.upstream.status,
                upstream_reason=record.arms.upstream.reason,
            )
    except HarnessError as exc:  # the claim named in every message (a table's problem is the claim's to solve)
        return ClaimOutput(path=path, error=str(exc) if str(path) in str(exc) else f"{path}: {exc}")
    except Exception:  # a crash: say where; the other claims go on
        return ClaimOutput(path=path, error=f"{path}: the run crashed; no report was written\n{traceback.format_exc()}")


@dataclass
class _Planned:
    path: Path
    spec: object
    deps: dict
    existing: object  # the Record there now, or None
    run: list[str]  # why it must run
    render: list[str]  # why it must be re-rendered


def _plan(args, paths: list[Path], console: Console) -> tuple[list[_Planned], int]:
    """Which claims are up to date, which only need rendering, which must run (and why)."""
    from .build import dependencies, stale_reasons
    from .datalock import load_lock
    from .errors import HarnessError
    from .spec import load_claim

    lock, pins = load_lock(args.lock), pins_of(args)
    tables = tables_of(args)
    plan, failed, specs = [], 0, {}
    for path in paths:
        try:
            specs[path] = load_claim(path, lock=lock, tables=tables, pins=pins)
        except HarnessError as exc:
            console.error(str(exc))
            failed += 1
    problems, clashing = check_ids(specs)
    for problem in problems:
        console.error(problem)
    failed += len(clashing)
    specs = {p: s for p, s in specs.items() if p not in clashing}
    out = Path(args.out)
    for path, spec in specs.items():
        deps = dependencies(spec, lock, pins)
        existing, why = _current(out, spec.id)
        run, render = stale_reasons(existing.build if existing else None, deps)
        if existing is None:
            run = [why] if why else ["no report yet"]
        elif args.force:
            run = ["forced (--force)"]
        elif existing.arms.upstream.status != "ok" and not args.no_upstream and spec.claim.upstream:
            run = run + ["the authors' arm did not run last time"]
        plan.append(_Planned(path, spec, deps, existing, run, render))
    return plan, failed


def _write_pair(out: Path, cid: str, json_text: str, md: str, figures: dict[str, bytes]) -> None:
    """Replace ``<id>.json``, ``<id>.md`` and the figures together, and remove the claim's figures that are no
    longer drawn: all of them or none (:func:`harness.fileio.write_together`)."""
    from .fileio import write_together

    stale = tuple(
        p.relative_to(out).as_posix()
        for p in (out / "figures" / cid).glob("*.svg")
        if p.relative_to(out).as_posix() not in figures
    )
    files = {**figures, f"{cid}.json": json_text.encode("utf-8"), f"{cid}.md": md.encode("utf-8")}
    write_together(out, cid, files, remove=stale)


def _log(cid: str, log: dict) -> None:
    from .fileio import atomic_write_text

    with contextlib.suppress(OSError):  # the run log is a convenience; its loss is no error
        atomic_write_text(RUN_LOG_DIR / f"{cid}.json", json.dumps(log, indent=1, default=str) + "\n")


def _current(out: Path, cid: str):
    """The record in ``out`` now, and why it cannot be believed: ``(Record, None)``, ``(None, None)`` when there
    is none, ``(None, reason)`` when it is unreadable, of an old schema or edited."""
    from .errors import HarnessError
    from .record import read_record

    path = out / f"{cid}.json"
    if not (path.is_file() or path.is_symlink()):
        return None, None
    try:
        return read_record(path), None
    except HarnessError as exc:
        return None, f"the last record is unreadable or was edited ({exc})"


def _finish(res: ClaimOutput, args, has_upstream: bool, console: Console) -> int:
    """Write one claim's outputs, or put them beside the report when they are poorer; say one line.

    Decided under the project's write lock against the record there *now* (re-read: another run or a
    ``render`` may have written it since this run was planned), so a poorer run never overwrites a fresher
    report. A record that cannot be believed (unreadable, old schema, edited) is taken to have had the
    authors' arm: only a run that has it, too, replaces it.
    """
    from .fileio import project_lock

    if res.error is not None:
        console.error(res.error)
        return EXIT_ERROR
    out, cid = Path(args.out), res.id
    _log(cid, res.log)
    seconds = res.log.get("total_seconds", 0.0)
    with project_lock(shared=False):
        existing, broken = _current(out, cid)
        if res.reimpl != "ok" and (existing is not None or broken):
            console.error(
                f"{cid}: the re-implementation could not run; {out / (cid + '.json')} and its report were left as"
                " they were"
            )
            return EXIT_ERROR
        had = existing.arms.upstream.status == "ok" if existing is not None else bool(broken and has_upstream)
        poorer = had and res.upstream != "ok"
        where = out / DEGRADED_DIR if (poorer and not args.accept_degraded) else out
        try:
            _write_pair(where, cid, res.json, res.md, res.figures)
        except OSError as exc:
            console.error(f"{where / (cid + '.md')}: {unwritable(exc)}; nothing was written for {cid}")
            return EXIT_ERROR
    # The reason the authors' arm did not run is said once: on the result line, or in the error that says
    # where a poorer report went.
    up = res.upstream if (res.upstream == "ok" or where != out) else f"{res.upstream}: {res.upstream_reason}"
    console.info(f"{cid}: {res.verdict} -> {where / (cid + '.md')}; authors' code: {up}; {seconds:.0f} s")
    if where != out:
        than = f"the one in {out}" if existing is not None else f"a run with it, since {broken}"
        console.error(
            f"{cid}: the authors' arm did not run ({res.upstream}: {res.upstream_reason}), so this report is "
            f"poorer than {than}; it was written to {where} instead; --accept-degraded lets it replace "
            "the report"
        )
        return EXIT_DEGRADED
    return EXIT_OK


def rerender(cid: str, out: Path, console: Console) -> int:
    """The report and figures of ``out/<cid>.json`` drawn again from the record alone; its render hashes updated.

    The record is read, and the report written, under one hold of the project's write lock: a run that
    writes the claim meanwhile waits, so its fresh report is never replaced by one drawn from the old record.
    A record that cannot be believed (unreadable, old schema, edited, or without the digest of its content)
    is not drawn.
    """
    from .build import render_dependencies
    from .errors import HarnessError
    from .figures import draw_figures
    from .fileio import project_lock
    from .record import read_record, record_json
    from .render import render_report

    out = Path(out)
    with project_lock(shared=False):
        try:
            existing = read_record(out / f"{cid}.json")
        except HarnessError as exc:
            hint = f"; run `python -m harness run {cid}` first" if "no run record" in str(exc) else ""
            console.error(f"{exc}{hint}")
            return EXIT_ERROR
        build = {**existing.build, "render": render_dependencies(existing.claim.protocol)}
        try:
            figures = draw_figures(existing)
            record = existing.model_copy(update={"build": build, "figures": [f for f, _ in figures]})
            md = render_report(record)
        except Exception as exc:  # a record older than today's templates or findings: say so in one line
            first = (str(exc).splitlines() or [""])[0]
            console.error(
                f"{cid}: the report could not be drawn from its record ({type(exc).__name__}: {first});"
                f" run `python -m harness run {cid}` again"
            )
            return EXIT_ERROR
        try:
            _write_pair(out, cid, record_json(record), md, {f.path: d for f, d in figures})
        except OSError as exc:
            console.error(f"{out / (cid + '.md')}: {unwritable(exc)}; the report and its record were left as they were")
            return EXIT_ERROR
    return EXIT_OK


def _execute(jobs: list[_Planned], args, verbose: bool):
    """Run the jobs, ``-j`` at a time in worker processes; yield ``(job index, output)`` as each finishes.

    The results do not depend on ``-j``: every claim runs from its own seed.
    """
    n = min(args.jobs, len(jobs))
    if n <= 1:
        for i, job in enumerate(jobs):
            yield i, _job(job.path, args, job.deps, verbose)
        return
    from concurrent.futures import as_completed

    from .lifecycle import process_pool

    order = sorted(range(len(jobs)), key=lambda i: -jobs[i].spec.protocol.card.cost)
    with process_pool(n) as pool:
        futures = {pool.submit(_job, jobs[i].path, args, jobs[i].deps, verbose, True): i for i in order}
        for f in as_completed(futures):
            yield futures[f], f.result()


def run_claims(args, paths: list[Path], console: Console, *, verbose: bool) -> int:
    """Bring the reports of ``paths`` up to date; the exit status of ``run``."""
    from .errors import HarnessError
    from .fileio import recover, recovered_line

    for name in recover(args.out):
        console.note(recovered_line(name))
    try:
        plan, failed = _plan(args, paths, console)
    except HarnessError as exc:
        console.error(str(exc))
        return EXIT_ERROR
    status = EXIT_ERROR if failed else EXIT_OK
    jobs = []
    for item in plan:
        if item.run:
            console.note(f"{item.spec.id}: re-run: {'; '.join(item.run)}")
            jobs.append(item)
        elif item.render:
            console.note(f"{item.spec.id}: re-render: {'; '.join(item.render)}")
            status = max(status, rerender(item.spec.id, Path(args.out), console))
        else:
            console.note(f"{item.spec.id}: up to date")
    for i, res in _execute(jobs, args, verbose):
        has_upstream = bool(jobs[i].spec.claim.upstream)
        status = max(status, _finish(res, args, has_upstream, console))  # written as soon as it is done
    if jobs or plan:
        status = max(status, write_index(Path(args.out), console))
    return status


def records(out: Path, console: Console, problems: list[str] | None = None):
    """``(path, Record)`` of every readable record in ``out``; an unreadable or edited one is said, skipped and
    named in ``problems``."""
    from .errors import HarnessError
    from .fileio import recover
    from .record import read_record

    recover(out)
    for f in sorted(out.glob("*.json")):
        try:
            yield f, read_record(f)
        except HarnessError as exc:
            console.error(str(exc))
            if problems is not None:
                problems.append(f.name)


def render_claims(out: Path, paths: list[Path], console: Console) -> int:
    """Draw reports again from their records: no protocol, no data, no scipy (a record names its template)."""
    failed = 0
    for path in paths:
        if rerender(path.stem, out, console) != EXIT_OK:  # a claim's id is its file's name
            failed += 1
            continue
        console.info(f"rendered {out / (path.stem + '.md')}")
    index = write_index(out, console)
    return EXIT_ERROR if failed else index


def write_index(out: Path, console: Console) -> int:
    """Rewrite ``out/README.md`` from the records, under the write lock; left as it is (and said, exit status 2)
    while a record cannot be read, since an index without that claim's row would be wrong, or when it cannot be
    written."""
    from .fileio import atomic_write_text, project_lock
    from .index import index_markdown

    with project_lock(shared=False):
        problems: list[str] = []
        found = [r for _, r in records(out, console, problems)]
        if problems:
            console.error(
                f"{out / 'README.md'} was left as it was: {', '.join(problems)} cannot be read"
                f" ({'its row' if len(problems) == 1 else 'their rows'} would be lost)"
            )
            return EXIT_ERROR
        if found:
            try:
                atomic_write_text(out / "README.md", index_markdown(found))
            except OSError as exc:
                console.error(f"{out / 'README.md'}: {unwritable(exc)}; the index was left as it was")
                return EXIT_ERROR
    return EXIT_OK


def unwritable(exc: OSError) -> str:
    """Why a file could not be written, in words: the system's reason, and the file or folder it named."""
    from .fileio import failed_path

    named = failed_path(exc)
    return f"could not be written: {exc.strerror or exc}" + (f" (in {named})" if named is not None else "")


def calibrate_claims(args, paths: list[Path], console: Console) -> int:
    """Run the coverage study of every claim in ``paths`` that asks for one and whose study is absent or out
    of date (``--force``: all of them); write each beside the reports, under ``calibration/``."""
    import time

    from . import fanout
    from .calibration import STUDY_DIR, read_study, run_study
    from .datalock import load_lock
    from .errors import HarnessError
    from .runner import measurement_arm
    from .spec import load_claim
    from .study_files import write_study

    lock, tables = load_lock(args.lock), tables_of(args)
    folder = Path(getattr(args, "out", None) or STUDY_DIR.parent) / "calibration"
    status = EXIT_OK
    for path in paths:
        try:
            spec = load_claim(path, lock=lock, tables=tables)
        except HarnessError as exc:
            console.error(str(exc))
            status = EXIT_ERROR
            continue
        state, _ = read_study(spec, lock, folder)
        if state == "not asked":
            continue
        if state == "measured" and not args.force:
            console.note(f"{spec.id}: calibration up to date")
            continue
        console.note(f"{spec.id}: calibration: {state}; running the study")
        t0 = time.perf_counter()
        try:
            import scipy.optimize  # noqa: F401  (load every BLAS before limiting its threads)
            from threadpoolctl import threadpool_limits

            with threadpool_limits(limits=1, user_api="blas"), fanout.using(_executor(args, claims_in_parallel=False)):
                result = run_study(spec, tables, lock, measurement_arm(spec, tables))
            write_study(result, folder)
        except HarnessError as exc:
            console.error(f"{path}: {exc}")
            status = EXIT_ERROR
            continue
        except OSError as exc:  # an unwritable folder, a full disk: the study there is left as it was
            console.error(f"{folder / (spec.id + '.json')}: {unwritable(exc)}; the study there was left as it was")
            status = EXIT_ERROR
            continue
        calls = result["statistic_calls"]["total"]
        seconds = time.perf_counter() - t0
        console.info(
            f"{spec.id}: calibration written to {folder / (spec.id + '.md')} ({result['n_replicates']} data sets, "
            f"{calls} statistic calls, {seconds:.0f} s, {calls / max(seconds, 1e-9):.1f} calls/s)"
        )
    return status
