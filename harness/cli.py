"""Command line: ``python -m harness {run,validate,render,list,diff,vendor}``.

Exit status of ``run``: 0 when every claim is up to date or ran (whatever its
verdict); 2 when a claim could not be processed (a bad claim file, missing or
altered data, an unwritable output, a crash), after the others have been
processed; 3 when a run was poorer than the committed report (the authors'
arm could not run where the report has it) and was written beside it, under
``<out>/.degraded/``, instead of over it. Nothing is written for a claim that
failed, and the two files of a report are replaced together or not at all.

Heavy modules (numpy, scipy, pandas) are imported only once a command runs,
so ``--help`` is fast.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import os
import sys
import traceback
from pathlib import Path

from .paths import CLAIMS_DIR, DEFAULT_LOCK, PINS_FILE, REPORTS_DIR, RUN_LOG_DIR, VENDOR_DIR

EXIT_OK, EXIT_ERROR, EXIT_DEGRADED = 0, 2, 3
DEGRADED_DIR = ".degraded"


def _err(msg: str) -> None:
    print(f"error: {msg}", file=sys.stderr, flush=True)


def _claim_files() -> list[Path]:
    return sorted(CLAIMS_DIR.glob("*.yaml"))


def resolve_claims(names: list[str]) -> list[Path]:
    """Claim files from ids, number prefixes (``002``) or paths; every claim in ``claims/`` when none is named."""
    from .errors import HarnessError

    if not names:
        return _claim_files()
    out = []
    stems = {f.stem: f for f in _claim_files()}
    for name in names:
        p = Path(name)
        if p.suffix in (".yaml", ".yml") or os.sep in name:
            if not (p.exists() or p.is_symlink()):
                raise HarnessError(f"{p}: no such claim file")
            # Not resolved: a symlink keeps its own name in messages; a FIFO or a device is refused when read.
            out.append(Path(os.path.abspath(p)))
            continue
        matches = [f for s, f in stems.items() if s == name or s.startswith(name + "_")]
        if len(matches) == 1:
            out.append(matches[0])
            continue
        numbers = {s.split("_", 1)[0]: s for s in stems}
        close = difflib.get_close_matches(name, list(stems) + list(numbers), n=3, cutoff=0.4)
        close += [s for s in stems if name.lower() in s.lower() and s not in close]
        hint = f"; did you mean {', '.join(repr(numbers.get(c, c)) for c in dict.fromkeys(close))}?" if close else ""
        what = "no claim" if not matches else "more than one claim"
        raise HarnessError(f"claim {name!r}: {what} has this id or number{hint} (known: {', '.join(stems)})")
    return out


def _tables(args):
    from .datalock import Tables, load_lock, resolve_data_root

    return Tables(load_lock(args.lock), resolve_data_root(args.data_root))


def _pins(args=None):
    from .upstream import load_pins

    return load_pins(getattr(args, "pins", None) or PINS_FILE)


def _check_ids(specs: dict[Path, object]) -> tuple[list[str], set[Path]]:
    """Claim ids must be unique across the batch: the problems, and the files that share an id."""
    seen: dict[str, Path] = {}
    problems, clashing = [], set()
    for path, spec in specs.items():
        if spec.id in seen:
            problems.append(f"{path}: id '{spec.id}' is also the id of {seen[spec.id]}")
            clashing |= {path, seen[spec.id]}
        seen.setdefault(spec.id, path)
    return problems, clashing


# -- validate ------------------------------------------------------------------------------------------------


def cmd_validate(args) -> int:
    from .datalock import load_lock
    from .errors import HarnessError
    from .spec import load_claim

    lock = load_lock(args.lock)
    tables = _tables(args) if args.data else None
    pins = _pins()
    bad, specs = 0, {}
    for path in resolve_claims(args.claims):
        try:
            spec = load_claim(path, lock=lock, tables=tables, pins=pins)
        except HarnessError as exc:
            _err(str(exc))
            bad += 1
            continue
        specs[path] = spec
        print(
            f"ok  {path.name}  ({spec.protocol.name}, {len(spec.claim.targets)} targets, "
            f"{len(spec.claim.controls)} controls)"
        )
    for problem in _check_ids(specs)[0]:
        _err(problem)
        bad += 1
    if args.data:
        for name in sorted(lock.tables):
            try:
                tables.path(name)
                print(f"ok  table {name}")
            except (HarnessError, OSError) as exc:
                _err(f"table {name}: {exc}")
                bad += 1
    return EXIT_ERROR if bad else EXIT_OK


# -- run -----------------------------------------------------------------------------------------------------


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
    )


def _job(path: Path, args, build: dict, verbose: bool) -> dict:
    """Run one claim; everything the parent needs to write its outputs (this never writes files)."""
    import scipy.optimize  # noqa: F401  (load every BLAS before limiting its threads)
    from threadpoolctl import threadpool_limits

    from . import progress
    from .errors import HarnessError
    from .figures import draw_figures
    from .record import record_json
    from .render import render_report
    from .runner import run_claim

    progress.start(path.stem, verbose=verbose)
    try:
        with threadpool_limits(limits=1, user_api="blas"):
            tables = _tables(args)
            result = run_claim(path, tables, upstream_options=_upstream_options(args), build=build)
            record = result.record
            figures = draw_figures(record)
            record = record.model_copy(update={"figures": [f for f, _ in figures]})
            return {
                "path": path,
                "id": record.claim.id,
                "json": record_json(record),
                "md": render_report(record),
                "figures": {f.path: data for f, data in figures},
                "log": result.log,
                "verdict": record.verdict.verdict,
                "reimpl": record.arms.reimpl.status,
                "upstream": record.arms.upstream.status,
                "upstream_reason": record.arms.upstream.reason,
            }
    except HarnessError as exc:  # the claim named in every message (a table's problem is the claim's to solve)
        return {"path": path, "error": str(exc) if str(path) in str(exc) else f"{path}: {exc}"}
    except Exception:  # a crash: say where; the other claims go on
        return {"path": path, "error": f"{path}: the run crashed; no report was written\n{traceback.format_exc()}"}


def _plan(args, paths: list[Path]):
    """Which claims are up to date, which only need rendering, which must run (and why)."""
    from .build import dependencies, stale_reasons
    from .datalock import load_lock
    from .errors import HarnessError
    from .record import read_record
    from .spec import load_claim

    lock, pins = load_lock(args.lock), _pins(args)
    tables = _tables(args)
    plan, failed, specs = [], 0, {}
    for path in paths:
        try:
            specs[path] = load_claim(path, lock=lock, tables=tables, pins=pins)
        except HarnessError as exc:
            _err(str(exc))
            failed += 1
    problems, clashing = _check_ids(specs)
    for problem in problems:
        _err(problem)
    failed += len(clashing)
    specs = {p: s for p, s in specs.items() if p not in clashing}
    out = Path(args.out)
    for path, spec in specs.items():
        deps = dependencies(spec, lock, pins)
        existing = None
        if (out / f"{spec.id}.json").is_file():
            try:
                existing = read_record(out / f"{spec.id}.json")
            except HarnessError as exc:
                existing, why = None, f"the last record is unreadable ({exc})"
        run, render = stale_reasons(existing.build if existing else None, deps)
        if existing is None:
            run = [why] if (out / f"{spec.id}.json").is_file() else ["no report yet"]
        elif args.force:
            run = ["forced (--force)"]
        elif existing.arms.upstream.status != "ok" and not args.no_upstream and spec.claim.upstream:
            run = run + ["the authors' arm did not run last time"]
        plan.append((path, spec, deps, existing, run, render))
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
    import json

    from .fileio import atomic_write_text

    with contextlib.suppress(OSError):  # the run log is a convenience; its loss is no error
        atomic_write_text(RUN_LOG_DIR / f"{cid}.json", json.dumps(log, indent=1, default=str) + "\n")


def _finish(res: dict, args, existing) -> int:
    """Write one claim's outputs, or put them beside the report when they are poorer; print one line."""
    if "error" in res:
        _err(res["error"])
        return EXIT_ERROR
    out, cid = Path(args.out), res["id"]
    _log(cid, res["log"])
    seconds = res["log"].get("total_seconds", 0.0)
    if res["reimpl"] != "ok" and existing is not None:
        _err(
            f"{cid}: the re-implementation could not run; {out / (cid + '.json')} and its report were left as they were"
        )
        return EXIT_ERROR
    poorer = existing is not None and existing.arms.upstream.status == "ok" and res["upstream"] != "ok"
    where = out / DEGRADED_DIR if (poorer and not args.accept_degraded) else out
    try:
        _write_pair(where, cid, res["json"], res["md"], res["figures"])
    except OSError as exc:
        _err(f"{cid}: could not write the report into {where}: {exc.strerror or exc}; nothing was written")
        return EXIT_ERROR
    up = res["upstream"] + ("" if res["upstream"] == "ok" else f" ({res['upstream_reason']})")
    print(f"{cid}: {res['verdict']}  (authors' code: {up}; {seconds:.0f} s) -> {where / (cid + '.md')}", flush=True)
    if where != out:
        _err(
            f"{cid}: the authors' arm did not run ({res['upstream']}: {res['upstream_reason']}), so this report is "
            f"poorer than the one in {out}; it was written to {where} instead (use --accept-degraded to replace "
            "the report)"
        )
        return EXIT_DEGRADED
    return EXIT_OK


def _rerender(existing, args) -> int:
    """The report and figures of a record drawn again from the record alone; its render hashes updated."""
    from .build import render_dependencies
    from .figures import draw_figures
    from .record import record_json
    from .render import render_report

    build = {**existing.build, "render": render_dependencies(existing.claim.protocol)}
    figures = draw_figures(existing)
    record = existing.model_copy(update={"build": build, "figures": [f for f, _ in figures]})
    try:
        _write_pair(
            Path(args.out),
            record.claim.id,
            record_json(record),
            render_report(record),
            {f.path: data for f, data in figures},
        )
    except OSError as exc:
        _err(f"{record.claim.id}: could not write the report: {exc.strerror or exc}")
        return EXIT_ERROR
    return EXIT_OK


def cmd_run(args) -> int:
    from .errors import HarnessError
    from .fileio import recover

    verbose = sys.stderr.isatty()
    if Path(args.out).is_dir():
        for name in recover(args.out):
            print(f"{name}: completed the writes an interrupted run had begun", file=sys.stderr)
    try:
        paths = resolve_claims(args.claims)
        plan, failed = _plan(args, paths)
    except HarnessError as exc:
        _err(str(exc))
        return EXIT_ERROR
    status = EXIT_ERROR if failed else EXIT_OK
    jobs = []
    for path, spec, deps, existing, run, render in plan:
        if run:
            print(f"{spec.id}: re-run: {'; '.join(run)}", file=sys.stderr, flush=True)
            jobs.append((path, spec, deps, existing))
        elif render:
            print(f"{spec.id}: re-render: {'; '.join(render)}", file=sys.stderr, flush=True)
            status = max(status, _rerender(existing, args))
        else:
            print(f"{spec.id}: up to date", file=sys.stderr, flush=True)
    for i, res in _execute(jobs, args, verbose):
        status = max(status, _finish(res, args, jobs[i][3]))  # written as soon as it is done
    if jobs or plan:
        _write_index(Path(args.out))
    return status


#: Rough cost of a claim by protocol, to start the slowest first when claims run in parallel.
_COST = {
    "hyperparameters": 5,
    "estimator_comparison": 4,
    "temporal_coverage": 3,
    "boundary_at_budget": 2,
    "shift_test": 1,
}


def _execute(jobs, args, verbose: bool):
    """Run the jobs, ``-j`` at a time in worker processes; yield ``(job index, result)`` as each finishes.

    The results do not depend on ``-j``: every claim runs from its own seed.
    """
    n = min(args.jobs, len(jobs))
    if n <= 1:
        for i, (path, _, deps, _) in enumerate(jobs):
            yield i, _job(path, args, deps, verbose)
        return
    from concurrent.futures import as_completed

    from .lifecycle import process_pool

    os.environ["HARNESS_INNER_JOBS"] = "1"  # claims in parallel: each claim's own fits run serially
    order = sorted(range(len(jobs)), key=lambda i: -_COST.get(jobs[i][1].protocol.name, 0))
    with process_pool(n) as pool:
        futures = {pool.submit(_job, jobs[i][0], args, jobs[i][2], verbose): i for i in order}
        for f in as_completed(futures):
            yield futures[f], f.result()


# -- render, list, diff, vendor ---------------------------------------------------------------------------


def _records(out: Path):
    from .errors import HarnessError
    from .fileio import recover
    from .record import read_record

    if out.is_dir():
        recover(out)
    for f in sorted(out.glob("*.json")):
        try:
            yield f, read_record(f)
        except HarnessError as exc:
            _err(str(exc))


def cmd_render(args) -> int:
    """Draw reports again from their records: no protocol, no data, no scipy (a record names its template)."""
    from .errors import HarnessError
    from .record import read_record

    out, failed = Path(args.out), 0
    for path in resolve_claims(args.claims):
        try:
            existing = read_record(out / f"{path.stem}.json")  # a claim's id is its file's name
        except HarnessError as exc:
            hint = f"; run `python -m harness run {path.stem}` first" if "no run record" in str(exc) else ""
            _err(f"{exc}{hint}")
            failed += 1
            continue
        failed += _rerender(existing, args) != EXIT_OK
        print(f"rendered {out / (existing.claim.id + '.md')}")
    _write_index(out)
    return EXIT_ERROR if failed else EXIT_OK


def _write_index(out: Path) -> None:
    from .fileio import atomic_write_text
    from .index import index_markdown

    records = [r for _, r in _records(out)]
    if records:
        atomic_write_text(out / "README.md", index_markdown(records))


def cmd_list(args) -> int:
    from .index import summary_rows

    rows = summary_rows([r for _, r in _records(Path(args.out))])
    for r in rows:
        print(f"{r['id']:<34} {r['verdict']:<22} {r['robustness']:<10} authors' code: {r['upstream']}")
    return EXIT_OK


def cmd_diff(args) -> int:
    from .index import diff_records

    lines, changed = diff_records(Path(args.out), args.ref, fraction=args.fraction)
    print("\n".join(lines))
    return EXIT_OK if not changed else 1


def cmd_vendor(args) -> int:
    from .upstream import checkout, load_pins

    for name in load_pins(PINS_FILE):
        path = checkout(name)
        print(f"{name}: checked out at {path}")
    return EXIT_OK


# -- parser --------------------------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    fmt = argparse.ArgumentDefaultsHelpFormatter

    def options(parser, default):
        parser.add_argument("--lock", default=default(str(DEFAULT_LOCK)), help="the data lock file")
        parser.add_argument(
            "--data-root",
            default=default(None),
            help="folder holding the input tables ($HARNESS_DATA_ROOT, else ../shared/data)",
        )
        return parser

    # The options are accepted before and after the subcommand; after it they must not reset them.
    common = options(argparse.ArgumentParser(add_help=False), lambda d: argparse.SUPPRESS)
    p = options(
        argparse.ArgumentParser(
            prog="python -m harness",
            formatter_class=fmt,
            description="Audit published claims: two arms, controls, a verdict.",
        ),
        lambda d: d,
    )
    sub = p.add_subparsers(dest="command", required=True)

    r = sub.add_parser(
        "run",
        parents=[common],
        formatter_class=fmt,
        help="run the claims whose reports are out of date; write reports/<id>.json and .md",
    )
    r.add_argument("claims", nargs="*", help="claim ids, number prefixes (002) or YAML paths; default: all in claims/")
    r.add_argument("--out", default=str(REPORTS_DIR), help="folder of the reports")
    r.add_argument(
        "-j", "--jobs", type=int, default=os.cpu_count() or 1, help="claims run at once, each in its own process"
    )
    r.add_argument("--force", action="store_true", help="run every named claim even when its report is up to date")
    r.add_argument("--no-upstream", action="store_true", help="do not run the authors' code")
    r.add_argument("--force-upstream", action="store_true", help="rerun the authors' code even when cached")
    r.add_argument(
        "--accept-degraded", action="store_true", help="let a run without the authors' arm replace a report that has it"
    )
    r.add_argument("--upstream-timeout", type=float, default=900.0, help="seconds before the authors' run is killed")
    r.add_argument("--pins", default=str(PINS_FILE), help="the file of upstream pins")
    r.add_argument("--vendor", default=str(VENDOR_DIR), help="where the pinned checkouts are kept")
    r.add_argument(
        "--sandbox",
        choices=("auto", "bubblewrap", "none"),
        default="auto",
        help="how the authors' code is confined: bubblewrap where it works (auto), required, or not at "
        "all; the check for writes outside its folder is made in every case",
    )
    r.set_defaults(func=cmd_run)

    v = sub.add_parser(
        "validate",
        parents=[common],
        formatter_class=fmt,
        help="check claim files: schema, protocol, quantities, tables, columns, pins, unique ids",
    )
    v.add_argument("claims", nargs="*", help="claim ids or YAML paths; default: all in claims/")
    v.add_argument(
        "--data",
        action="store_true",
        help="also verify every locked table and check column names against the table headers",
    )
    v.set_defaults(func=cmd_validate)

    d = sub.add_parser(
        "render",
        parents=[common],
        formatter_class=fmt,
        help="redraw reports/<id>.md and its figures from reports/<id>.json, running nothing",
    )
    d.add_argument("claims", nargs="*", help="claim ids or YAML paths; default: all in claims/")
    d.add_argument("--out", default=str(REPORTS_DIR), help="folder of the reports")
    d.set_defaults(func=cmd_render)

    ls = sub.add_parser("list", parents=[common], formatter_class=fmt, help="print every report's verdict")
    ls.add_argument("--out", default=str(REPORTS_DIR), help="folder of the reports")
    ls.set_defaults(func=cmd_list)

    df = sub.add_parser(
        "diff",
        parents=[common],
        formatter_class=fmt,
        help="compare the records with those at a git ref (exit 1 when something changed)",
    )
    df.add_argument("ref", nargs="?", default="HEAD", help="git ref to compare with")
    df.add_argument("--out", default=str(REPORTS_DIR), help="folder of the reports")
    df.add_argument(
        "--fraction",
        type=float,
        default=0.1,
        help="report a target whose value moved by more than this fraction of its tolerance (one without a "
        "tolerance: by more than 1e-4 of its size)",
    )
    df.set_defaults(func=cmd_diff)

    g = sub.add_parser(
        "vendor",
        parents=[common],
        formatter_class=fmt,
        help="check out every pinned upstream into vendor/ (sparse, at the pinned commit)",
    )
    g.set_defaults(func=cmd_vendor)
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    from .errors import HarnessError
    from .lifecycle import Terminated, handle_sigterm_as_interrupt

    handle_sigterm_as_interrupt()
    try:
        return args.func(args)
    except HarnessError as exc:
        _err(str(exc))
        return EXIT_ERROR
    except Terminated as exc:
        _err(f"{exc}; reports already written stay, the others were left as they were")
        return exc.exit_status
    except KeyboardInterrupt:
        _err("interrupted; reports already written stay, the others were left as they were")
        return 130
