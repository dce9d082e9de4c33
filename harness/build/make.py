"""``make claims`` as a build (docs/build.md): what is stale and why (a claim the lock finds up to date is decided
without parsing its claim file or importing its protocol), then its run, each claim's outputs written as soon as it
is done, its lock entry last. It prints nothing: it speaks on the console it is given (``info(message)``: a result
line, on standard output; ``note``: what happens, and ``error``: what went wrong, on standard error)."""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import json
import queue
import threading
import time
import traceback
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from ..core import progress
from ..core.claimslock import changed, claim_deps, edited, entry, file_sha, listed, render_deps, stale_reasons, update
from ..core.datalock import Tables, load_lock, resolve_data_root
from ..core.errors import HarnessError
from ..core.fileio import atomic_write_text, failed_path, project_lock, write_files
from ..core.paths import CLAIMS_DIR, REPORTS_DIR, RUN_LOG_DIR
from ..core.provenance import package_versions
from ..core.record import read_record, record_json
from ..parallel import fanout
from ..resampling.calibration import STUDY_DIR, read_study, run_study, study_deps, study_path
from ..resampling.calibration import stale_reasons as study_reasons


@dataclass
class Planned:
    path: Path
    spec: object  # the loaded claim (None when it was found up to date from the lock alone)
    deps: dict  # what its record is made from (:func:`harness.core.claimslock.claim_deps`)
    run: list[str]  # why it must run
    render: list[str]  # why it must be re-rendered

    @property
    def id(self) -> str:
        return self.path.stem  # a claim's id is its file's name


@dataclass
class StudyPlan:
    """A coverage study the build measures (again), and why (e.g. ``no study yet``)."""

    spec: object
    why: str


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


def checked_record(out: Path, cid: str):
    """The record ``out/<cid>.json``, read and checked against the lock; :class:`HarnessError` says why it
    cannot be believed (none there, unreadable, of an old schema, not in the lock, or edited)."""
    path = Path(out) / f"{cid}.json"
    record = read_record(path)
    why = edited(out, entry(out, "claims", cid), path.name)
    if why is not None:
        raise HarnessError(f"{path}: {why}; run the claim again")
    return record


def current_record(out: Path, cid: str):
    """The record in ``out``: ``(Record, None)``, ``(None, why)`` (:func:`checked_record`), ``(None, None)`` if none."""
    path = Path(out) / f"{cid}.json"
    if not (path.is_file() or path.is_symlink()):
        return None, None
    try:
        return checked_record(out, cid), None
    except HarnessError as exc:
        return None, str(exc).removeprefix(f"{path}: ").removesuffix("; run the claim again")


def record_deps(path: Path, protocol: str, inputs, upstream, lock, pins, paper=None) -> dict:
    return claim_deps(path, protocol, inputs, upstream, lock, pins, package_versions(), study_path(path.stem), paper)


def _claim_plan(path: Path, spec, claim, paper, existing, why, out: Path, lock, pins, args) -> Planned:
    """Why the claim (``claim``: its claim file's, or its record's when ``spec`` is None) must run or its report
    be drawn again; ``existing``, ``why``: its record there now (:func:`current_record`)."""
    deps = record_deps(path, claim.protocol, claim.inputs, claim.upstream, lock, pins, paper)
    found = entry(out, "claims", claim.id) or {}
    render = []
    if existing is None:
        run = [why or "no report yet"]
    elif args.force:
        run = ["forced (--force)"]
    else:
        run = stale_reasons(found.get("deps"), deps)
        if existing.arms.upstream.status != "ok" and not args.no_upstream and claim.upstream:
            run.append("the authors' arm did not run last time")
        if not run:  # its templates or drawing code changed, or it was edited
            drawn = changed(found.get("render"), render_deps(claim.protocol))
            md = edited(out, found, f"{claim.id}.md")
            render = ([f"template or rendering code changed: {listed(drawn)}"] if drawn else []) + ([md] if md else [])
    return Planned(path, spec, deps, run, render)


def _study_measured(record) -> bool:
    """Whether the record was made with its claim's coverage study up to date (or with none asked for)."""
    rob = record.robustness
    if rob is None or (rob.state == "not run" and rob.facts.get("why") == "the claim file asks for no resampling"):
        return True
    return (rob.facts.get("calibration") or {}).get("state") in ("measured", "not asked")


def _from_lock(path: Path, out: Path, lock, pins, tables, args) -> Planned | None:
    """The plan of a claim found up to date from its lock entry and its record, or None (then its claim file
    decides). Its input tables are still verified against the data lock."""
    existing, _ = current_record(out, path.stem)
    if existing is None or existing.claim.id != path.stem:
        return None
    if not isinstance((entry(out, "claims", path.stem) or {}).get("protocol"), str):
        return None
    c = existing.claim
    try:
        tables.describe(c.inputs)
    except HarnessError:
        return None
    item = _claim_plan(path, None, c, c.paper and c.paper.id, existing, None, out, lock, pins, args)
    return None if item.run or (getattr(args, "studies", False) and not _study_measured(existing)) else item


def load_claims(paths: list[Path], lock, pins, tables, console) -> tuple[dict[Path, object], int]:
    """The claim files read and checked, each problem said; ``(specs, how many failed)``."""
    if not paths:
        return {}, 0  # a warm build imports no protocol
    from ..claimfiles.spec import load_claim

    specs, failed = {}, 0
    for path in paths:
        try:
            specs[path] = load_claim(path, lock=lock, tables=tables, pins=pins)
        except HarnessError as exc:
            console.error(str(exc))
            failed += 1
    problems, clashing = check_ids(specs)
    for problem in problems:
        console.error(problem)
    return {p: s for p, s in specs.items() if p not in clashing}, failed + len(clashing)


def tables_of(args):
    return Tables(load_lock(args.lock), resolve_data_root(args.data_root))


def pins_of(args=None):
    from ..authors.checkout import PINS_FILE, load_pins

    return load_pins(getattr(args, "pins", None) or PINS_FILE)


def _not_over_a_committed_claim(paths: list[Path], out: Path, console) -> tuple[list[Path], int]:
    """The claim files that may write into ``out``: into the project's reports, no file from elsewhere whose id
    is a claim of ``claims/`` (its report would replace that claim's)."""
    if out.resolve() != REPORTS_DIR.resolve():
        return paths, 0
    kept = []
    for path in paths:
        home = CLAIMS_DIR / path.name
        if home.exists() and path.resolve() != home.resolve():
            console.error(
                f"{path}: claims/{path.name} has this id and its report is in reports/; run a claim file from "
                "elsewhere with --out DIR"
            )
        else:
            kept.append(path)
    return kept, len(paths) - len(kept)


def plan(args, paths: list[Path], console) -> tuple[list[Planned], list[StudyPlan], int]:
    """``(claims, studies, failed)``: each claim with why it must run or be drawn again (both empty: up to
    date); the coverage studies the build measures first (with ``args.studies``); how many claim files could
    not be read. Problems are said on ``console``."""
    lock, pins, tables = load_lock(args.lock), pins_of(args), tables_of(args)
    out = Path(args.out)
    paths, failed = _not_over_a_committed_claim(paths, out, console)
    stems = [p.stem for p in paths]
    unique = [] if args.force else [p for p in paths if stems.count(p.stem) == 1]
    quick = {p: _from_lock(p, out, lock, pins, tables, args) for p in unique}
    specs, unread = load_claims([p for p in paths if quick.get(p) is None], lock, pins, tables, console)
    planned, studies = [], []
    for path in paths:
        if quick.get(path) is not None:
            planned.append(quick[path])
        elif path in specs:
            spec, c = specs[path], specs[path].claim
            existing, why = current_record(out, spec.id)
            item = _claim_plan(path, spec, c, c.paper, existing, why, out, lock, pins, args)
            stale = study_reasons(spec, lock) if getattr(args, "studies", False) else []
            if stale:
                studies.append(StudyPlan(spec, stale[0]))
                item.run += [] if item.run == ["forced (--force)"] else [f"coverage study stale: {stale[0]}"]
            planned.append(item)
    return planned, studies, failed + unread


EXIT_OK, EXIT_ERROR, EXIT_DEGRADED = 0, 2, 3
#: Held while a figure is drawn (matplotlib's rc context is process-wide).
DRAWING = threading.Lock()


def _error(console, message: str) -> int:
    console.error(message)
    return EXIT_ERROR


@dataclass
class ClaimOutput:
    """What a claim's run produced, for :func:`_finish` to write."""

    path: Path
    record: object = None  # the Record
    deps: dict = field(default_factory=dict)  # what the record was made from (the lock's entry)
    md: str = ""
    figures: dict[str, bytes] = field(default_factory=dict)
    log: dict = field(default_factory=dict)
    error: str | None = None


def _job(job: Planned, args, study: threading.Event | None = None) -> ClaimOutput:
    """Run one claim (in a thread of the build); what :func:`_finish` needs to write its outputs. ``study``: set once
    the claim's coverage study is written (its resampling waits for it)."""
    from ..rendering.figures import draw_figures
    from ..rendering.render import render_report
    from .runner import run_claim

    path = job.path
    progress.start(path.stem)

    def before_resampling() -> None:
        if study is not None:
            study.wait()
            job.deps["study"] = file_sha(study_path(job.spec.id))

    try:
        options = None
        if not args.no_upstream:
            from ..authors.upstream import UpstreamOptions

            options = UpstreamOptions(
                force=args.force_upstream,
                timeout_s=args.upstream_timeout,
                auto_checkout=True,
                sandbox=args.sandbox,
                pins_file=Path(args.pins),
                vendor_dir=Path(args.vendor),
                jobs=args.jobs,
            )
        result = run_claim(path, tables_of(args), upstream_options=options, before_resampling=before_resampling)
        record = result.record
        with DRAWING:
            figures = draw_figures(record, result.plots)
        record = record.model_copy(update={"figures": [f for f, _ in figures]})
        log = {**result.log, "executor": fanout.current().describe()}
        figures = {f.path: data for f, data in figures}
        return ClaimOutput(path, record, job.deps, render_report(record), figures, log)
    except HarnessError as exc:  # the claim named in every message (a table's problem is the claim's to solve)
        return ClaimOutput(path=path, error=str(exc) if str(path) in str(exc) else f"{path}: {exc}")
    except Exception:  # a crash: say where; the other claims go on
        return ClaimOutput(path=path, error=f"{path}: the run crashed; no report was written\n{traceback.format_exc()}")


def _finish(res: ClaimOutput, args, has_upstream: bool, console) -> int:
    """Write one claim's outputs, unless they are poorer than the report there now (decided under the write lock;
    a record that cannot be believed is taken to have had the authors' arm); say one line. The figures,
    ``<id>.md`` and ``<id>.json`` are written each atomically, then, last, the claim's entry in the lock."""
    if res.error is not None:
        return _error(console, res.error)
    out, rec = Path(args.out), res.record
    cid, upstream = rec.claim.id, rec.arms.upstream
    with contextlib.suppress(OSError):  # the run log is a convenience; its loss is no error
        atomic_write_text(RUN_LOG_DIR / f"{cid}.json", json.dumps(res.log, indent=1, default=str) + "\n")
    with project_lock():
        existing, broken = current_record(out, cid)
        if rec.arms.reimpl.status != "ok" and (existing is not None or broken):
            return _error(
                console,
                f"{cid}: the re-implementation could not run; {out / (cid + '.json')} and its report were left as"
                " they were",
            )
        had = existing.arms.upstream.status == "ok" if existing is not None else bool(broken and has_upstream)
        if had and upstream.status != "ok" and not args.accept_degraded:
            than = f"the one in {out}" if existing is not None else f"a run with it, since {broken}"
            console.error(
                f"{cid}: the authors' arm did not run ({upstream.status}: {upstream.reason}), so this run "
                f"({rec.verdict.verdict}) is poorer than {than}; nothing was written; --accept-degraded lets it "
                "replace the report"
            )
            return EXIT_DEGRADED
        files = {**res.figures, f"{cid}.md": res.md.encode("utf-8"), f"{cid}.json": record_json(rec).encode("utf-8")}
        try:
            write_files(out, files)
            for p in (out / "figures" / cid).glob("*.svg"):  # the figures no longer drawn
                if p.relative_to(out).as_posix() not in res.figures:
                    p.unlink(missing_ok=True)
            outs = {name: hashlib.sha256(files[name]).hexdigest() for name in (f"{cid}.json", f"{cid}.md")}
            protocol = rec.claim.protocol
            locked = {"protocol": protocol, "deps": res.deps, "render": render_deps(protocol), "outs": outs}
            update(out, "claims", cid, locked)
        except OSError as exc:
            return unwritable(console, out / f"{cid}.md", exc, f"{cid}'s entry in the lock")
    up = upstream.status if upstream.status == "ok" else f"{upstream.status}: {upstream.reason}"
    seconds = res.log.get("total_seconds", 0.0)
    console.info(f"{cid}: {rec.verdict.verdict} -> {out / (cid + '.md')}; authors' code: {up}; {seconds:.0f} s")
    return EXIT_OK


def rerender(cid: str, out: Path, console) -> int:
    """The report ``out/<cid>.md`` worded again from its record alone (one that cannot be believed is not), under
    the write lock; its entry in the lock updated."""
    from ..rendering.render import render_report

    with project_lock():
        try:
            record = checked_record(out, cid)
        except HarnessError as exc:
            hint = f"; run `python -m harness run {cid}` first" if "no run record" in str(exc) else ""
            return _error(console, f"{exc}{hint}")
        try:
            md = render_report(record)
        except Exception as exc:  # a record older than today's templates: say so in one line
            first = (str(exc).splitlines() or [""])[0]
            return _error(
                console,
                f"{cid}: the report could not be worded from its record ({type(exc).__name__}: {first});"
                f" run `python -m harness run {cid}` again",
            )
        try:
            atomic_write_text(out / f"{cid}.md", md)
        except OSError as exc:
            return unwritable(console, out / f"{cid}.md", exc, "the report")
        old = entry(out, "claims", cid)
        outs = {**old["outs"], f"{cid}.md": hashlib.sha256(md.encode("utf-8")).hexdigest()}
        update(out, "claims", cid, {**old, "render": render_deps(record.claim.protocol), "outs": outs})
    return EXIT_OK


def _study_job(study: StudyPlan, args, folder: Path, done: threading.Event, console) -> int:
    """Measure one claim's coverage study, write it into ``folder`` (the claim's run waits for it: ``done``) and
    say so; the exit status."""
    from ..rendering.study_files import write_study
    from .runner import measurement_arm

    spec = study.spec
    progress.start(f"{spec.id} study")
    t0 = time.perf_counter()
    try:
        tables = tables_of(args)
        result = run_study(spec, tables, measurement_arm(spec, tables))
        with project_lock(), DRAWING:
            files = write_study(result, folder)
            outs = {f"{folder.name}/{spec.id}.json": hashlib.sha256(files[f"{spec.id}.json"]).hexdigest()}
            found = {"protocol": spec.protocol.name, "deps": study_deps(spec, tables.lock), "outs": outs}
            update(folder.parent, "studies", spec.id, found)
    except HarnessError as exc:
        return _error(console, f"{spec.path}: {exc}")
    except OSError as exc:  # an unwritable folder, a full disk
        return unwritable(console, folder / f"{spec.id}.json", exc, "its entry in the lock")
    except Exception:  # a crash: say where; the claims go on
        return _error(console, f"{spec.path}: the coverage study crashed\n{traceback.format_exc()}")
    finally:
        done.set()
    calls, seconds = result["statistic_calls"]["total"], time.perf_counter() - t0
    console.info(
        f"{spec.id}: calibration written to {folder / (spec.id + '.md')} ({result['n_replicates']} data sets, "
        f"{calls} statistic calls, {seconds:.0f} s, {calls / max(seconds, 1e-9):.1f} calls/s)"
    )
    return EXIT_OK


def _build(jobs: list[Planned], studies: list[StudyPlan], args, executor, folder: Path, console) -> int:
    """Run the studies and the claims as one build on ``executor``, each a thread sending its tasks to one pool
    (with ``-j 1``: one after the other, studies first, slowest first); each writes and says its outputs as soon
    as it is done (:func:`_finish`)."""
    if not jobs and not studies:
        return EXIT_OK
    import scipy.optimize  # noqa: F401  (load every BLAS before limiting its threads)
    from threadpoolctl import threadpool_limits

    done = {st.spec.id: threading.Event() for st in studies}
    slowest = sorted(studies, key=lambda st: -st.spec.protocol.card.cost)

    finished: queue.Queue = queue.Queue()

    def claim(j: Planned) -> int:  # run it, then write and say its outputs
        return _finish(_job(j, args, done.get(j.id)), args, bool(j.spec.claim.upstream), console)

    def body(piece) -> None:  # a thread's: what its piece returned or raised, for the thread that waits
        try:
            finished.put((piece(), None))
        except BaseException as exc:
            finished.put((None, exc))

    pieces = [partial(_study_job, st, args, folder, done[st.spec.id], console) for st in slowest]
    pieces += [partial(claim, j) for j in sorted(jobs, key=lambda j: -j.spec.protocol.card.cost)]
    status = EXIT_OK
    try:
        with threadpool_limits(limits=1, user_api="blas"), fanout.shared(executor) as ex:
            if args.jobs <= 1 or ex.kind == "serial" or (ex.kind == "local" and ex.workers <= 1):
                return max([piece() for piece in pieces])
            # Daemon threads: an interrupted build does not wait for them; what they started dies with the process.
            for piece in pieces:
                threading.Thread(target=contextvars.copy_context().run, args=(body, piece), daemon=True).start()
            for _ in pieces:
                res, exc = finished.get()
                if exc is not None:
                    raise exc
                status = max(status, res)
    except HarnessError as exc:  # the executor could not be had (a Dask scheduler, a wrong worker)
        return _error(console, str(exc))
    return status


def run_claims(args, paths: list[Path], console, *, would: bool = False) -> int:
    """Bring the reports of ``paths`` up to date (with ``args.studies``, their coverage studies first, in the same
    build); the exit status of ``run``. ``would``: say what it would do, and why, and do nothing (``status``: exit
    0 when nothing is to do, 1 when something is, 2 on a bad claim file). ``--executor`` is checked even when
    nothing is to run (a typo is refused at once)."""
    try:
        executor = fanout.executor_from(args.executor, jobs=args.jobs)
        plan_, studies, failed = plan(args, paths, console)
    except HarnessError as exc:
        return _error(console, str(exc))
    run, draw = ("would re-run", "would re-render") if would else ("re-run", "re-render")
    for st in studies:
        console.note(f"{st.spec.id}: coverage study: {st.why}; {'would be measured' if would else 'measuring it'}")
    for item in plan_:
        if item.run:
            console.note(f"{item.id}: {run}: {'; '.join(item.run)}")
        elif item.render:
            console.note(f"{item.id}: {draw}: {'; '.join(item.render)}")
        else:
            console.note(f"{item.id}: up to date")
    if would:
        return EXIT_ERROR if failed else int(bool(studies or any(item.run or item.render for item in plan_)))
    status = EXIT_ERROR if failed else EXIT_OK
    for item in plan_:
        if item.render and not item.run:
            status = max(status, rerender(item.id, Path(args.out), console))
    status = max(status, _build([item for item in plan_ if item.run], studies, args, executor, STUDY_DIR, console))
    if plan_:
        status = max(status, write_index(Path(args.out), console))
    return status


def records(out: Path, console, problems: list[str]):
    """Every readable record in ``out``; any other is said and named in ``problems``."""
    for f in sorted(out.glob("*.json")):
        try:
            yield checked_record(out, f.stem)
        except HarnessError as exc:
            console.error(str(exc))
            problems.append(f.name)


def render_claims(out: Path, paths: list[Path], console) -> int:
    """Draw reports again from their records: no protocol, no data, no scipy (a record names its template)."""
    status = EXIT_OK
    for path in paths:
        if rerender(path.stem, out, console) == EXIT_OK:  # a claim's id is its file's name
            console.info(f"rendered {out / (path.stem + '.md')}")
        else:
            status = EXIT_ERROR
    return max(status, write_index(out, console))


def write_index(out: Path, console) -> int:
    """Rewrite ``out/README.md`` from the records when it changed; left as it is (exit status 2) while a record
    cannot be read or when it cannot be written."""
    from ..rendering.index import index_markdown

    with project_lock():
        problems: list[str] = []
        found = list(records(out, console, problems))
        if problems:
            return _error(
                console,
                f"{out / 'README.md'} was left as it was: {', '.join(problems)} cannot be read"
                f" ({'its row' if len(problems) == 1 else 'their rows'} would be lost)",
            )
        if found:
            text, index = index_markdown(found), out / "README.md"
            if file_sha(index) == hashlib.sha256(text.encode("utf-8")).hexdigest():
                return EXIT_OK  # as it is: not even its time changes (read as a bounded regular file)
            try:
                atomic_write_text(index, text)
            except OSError as exc:
                return unwritable(console, index, exc, "the index")
    return EXIT_OK


def unwritable(console, path: Path, exc: OSError, kept: str) -> int:
    """Say why ``path`` could not be written (the system's reason, and the file or folder it named), and that
    ``kept`` was left as it was; exit status 2."""
    named = failed_path(exc)
    where = f" (in {named})" if named is not None else ""
    return _error(console, f"{path}: could not be written: {exc.strerror or exc}{where}; {kept} was left as it was")


def calibrate_claims(args, paths: list[Path], console) -> int:
    """Run the coverage studies of ``paths`` that are absent or out of date (``--force``: all), as one build."""
    try:
        executor = fanout.executor_from(args.executor, jobs=args.jobs)
    except HarnessError as exc:
        return _error(console, str(exc))
    lock, tables = load_lock(args.lock), tables_of(args)
    folder = Path(getattr(args, "out", None) or STUDY_DIR.parent) / "calibration"
    specs, failed = load_claims(paths, lock, None, tables, console)
    studies = []
    for spec in specs.values():
        state, _ = read_study(spec, lock, folder)
        if state == "measured" and not args.force:
            console.note(f"{spec.id}: calibration up to date")
        elif state != "not asked":
            console.note(f"{spec.id}: calibration: {state}; running the study")
            studies.append(StudyPlan(spec, state))
    return max(EXIT_ERROR if failed else EXIT_OK, _build([], studies, args, executor, folder, console))
