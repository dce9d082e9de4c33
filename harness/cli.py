"""Command line: ``python -m harness {run,validate,render,vendor}``.

Exit status: 0 when every requested claim ran (whatever its verdict); 2 when
any claim could not be processed (bad spec, missing or altered data, a crash),
after the others have been processed. Nothing is written for a claim that
failed, so an earlier good report stays in place.
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback
from pathlib import Path

from .datalock import DEFAULT_LOCK, PROJECT_ROOT, Tables, load_lock, resolve_data_root
from .errors import HarnessError, SpecError

CLAIMS_DIR = PROJECT_ROOT / "claims"
REPORTS_DIR = PROJECT_ROOT / "reports"


def _claim_files() -> list[Path]:
    return sorted(CLAIMS_DIR.glob("*.yaml"))


def resolve_claims(names: list[str]) -> list[Path]:
    """Claim files from ids or paths; every claim in ``claims/`` when none is named."""
    if not names:
        return _claim_files()
    out = []
    for name in names:
        p = Path(name)
        if p.suffix in (".yaml", ".yml") or p.exists():
            if not p.is_file():
                raise HarnessError(f"{p}: no such claim file")
            out.append(p.resolve())
            continue
        matches = [f for f in _claim_files() if f.stem == name or f.stem.startswith(name + "_")]
        if len(matches) != 1:
            known = ", ".join(f.stem for f in _claim_files())
            raise HarnessError(f"claim '{name}': {'no' if not matches else 'more than one'} claim file matches (known: {known})")
        out.append(matches[0])
    return out


def _err(msg: str) -> None:
    print(f"error: {msg}", file=sys.stderr)


def cmd_validate(args) -> int:
    from .spec import load_claim

    lock = load_lock(args.lock)
    names = set(lock.tables)
    bad, ids = 0, {}
    for path in resolve_claims(args.claims):
        try:
            claim = load_claim(path, data_names=names)
        except SpecError as exc:
            _err(str(exc))
            bad += 1
            continue
        if claim.id in ids:
            _err(f"{path}: id '{claim.id}' is also used by {ids[claim.id]}")
            bad += 1
            continue
        ids[claim.id] = path
        print(f"ok  {path.name}  ({claim.protocol}, {len(claim.targets)} targets, {len(claim.controls)} controls)")
    if args.data:
        tables = Tables(lock, resolve_data_root(args.data_root))
        for name in sorted(names):
            try:
                tables.path(name)
                print(f"ok  table {name}")
            except HarnessError as exc:
                _err(str(exc))
                bad += 1
    return 2 if bad else 0


def _upstream_options(args):
    if args.no_upstream:
        return None
    from .upstream import UpstreamOptions

    return UpstreamOptions(force=args.force_upstream, timeout_s=args.upstream_timeout)


def cmd_run(args) -> int:
    from .render import render_report
    from .runner import run_claim, write_outputs

    paths = resolve_claims(args.claims)
    tables = Tables(load_lock(args.lock), resolve_data_root(args.data_root))
    options = _upstream_options(args)
    failed = 0
    for path in paths:
        try:
            record = run_claim(path, tables, upstream_options=options)
            markdown = render_report(record)
        except HarnessError as exc:
            _err(str(exc))
            failed += 1
            continue
        except Exception:  # a crash: say where, keep the old report, go on with the next claim
            _err(f"{path}: the run crashed; no report was written\n{traceback.format_exc()}")
            failed += 1
            continue
        previous = Path(args.out) / f"{record['claim']['id']}.json"
        if record["verdict"] == "could not run" and previous.is_file():
            # Keep the last good report: a run that could not measure anything replaces nothing.
            _err(f"{path}: the re-implementation could not run ({record['arms']['reimpl']['reason']}); "
                 f"{previous} and its report were left as they were")
            failed += 1
            continue
        jpath, mpath = write_outputs(record, markdown, args.out)
        up = record["arms"]["upstream"]
        print(f"{record['claim']['id']}: {record['verdict']}  (authors' code: {up['status']}"
              f"{', cached' if up.get('cached') else ''}; {record['timings']['total_seconds']:.1f} s) -> {mpath}")
    return 2 if failed else 0


def cmd_render(args) -> int:
    from .render import render_report
    from .runner import _atomic_write

    out = Path(args.out)
    failed = 0
    for path in resolve_claims(args.claims):
        from .spec import load_claim

        try:
            cid = load_claim(path).id
        except SpecError as exc:
            _err(str(exc))
            failed += 1
            continue
        jpath = out / f"{cid}.json"
        if not jpath.is_file():
            _err(f"{jpath}: no run record to render; run `python -m harness run {cid}` first")
            failed += 1
            continue
        record = json.loads(jpath.read_text(encoding="utf-8"))
        _atomic_write(out / f"{cid}.md", render_report(record))
        print(f"rendered {out / (cid + '.md')}")
    return 2 if failed else 0


def cmd_vendor(args) -> int:
    from .upstream import checkout, load_pins

    for name in load_pins():
        path = checkout(name)
        print(f"{name}: checked out at {path}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m harness", description="Audit published claims: two arms, controls, a verdict.")
    p.add_argument("--lock", default=str(DEFAULT_LOCK), help="data lock file (default: data/lock.yaml)")
    p.add_argument("--data-root", default=None, help="folder holding the input tables (default: $HARNESS_DATA_ROOT or ../shared/data)")
    sub = p.add_subparsers(dest="command", required=True)

    r = sub.add_parser("run", help="run claims and write reports/<id>.json and reports/<id>.md")
    r.add_argument("claims", nargs="*", help="claim ids or paths to YAML files (default: every claim in claims/)")
    r.add_argument("--out", default=str(REPORTS_DIR), help="output folder (default: reports/)")
    r.add_argument("--no-upstream", action="store_true", help="do not run the authors' code")
    r.add_argument("--force-upstream", action="store_true", help="rerun the authors' code even when a cached result exists")
    r.add_argument("--upstream-timeout", type=float, default=900.0, help="seconds before the authors' run is stopped")
    r.set_defaults(func=cmd_run)

    v = sub.add_parser("validate", help="check claim files (schema, protocol, controls, inputs in the lock, unique ids)")
    v.add_argument("claims", nargs="*")
    v.add_argument("--data", action="store_true", help="also verify every locked table's sha256 under the data root")
    v.set_defaults(func=cmd_validate)

    d = sub.add_parser("render", help="re-render reports/<id>.md from reports/<id>.json without re-running")
    d.add_argument("claims", nargs="*")
    d.add_argument("--out", default=str(REPORTS_DIR))
    d.set_defaults(func=cmd_render)

    g = sub.add_parser("vendor", help="check out every pinned upstream into vendor/ (sparse, at the pinned commit)")
    g.set_defaults(func=cmd_vendor)
    return p


def main(argv=None) -> int:
    from threadpoolctl import threadpool_limits

    import scipy.optimize  # noqa: F401  (load every BLAS before limiting its threads)

    args = build_parser().parse_args(argv)
    try:
        # One BLAS thread: the fits are many small vector operations, and on a
        # 2-core machine OpenBLAS's spinning worker threads made them up to
        # 50x slower whenever another process was busy (measured).
        with threadpool_limits(limits=1, user_api="blas"):
            return args.func(args)
    except HarnessError as exc:
        _err(str(exc))
        return 2
