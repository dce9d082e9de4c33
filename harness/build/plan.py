"""What a build would do, and why (docs/build.md, "What runs, and why"): which claims are up to date, which need
their report drawn again, which must run, and which coverage studies must be measured again. Nothing here runs
anything. A claim found up to date from its entry in the lock is decided without parsing its claim file or
importing its protocol; anything else is planned from its claim file, read and checked.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


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
    from ..core.claimslock import edited, entry
    from ..core.errors import HarnessError
    from ..core.record import read_record

    path = Path(out) / f"{cid}.json"
    record = read_record(path)
    why = edited(out, entry(out, "claims", cid), path.name)
    if why is not None:
        raise HarnessError(f"{path}: {why}; run the claim again")
    return record


def current_record(out: Path, cid: str):
    """The record in ``out`` now, and why it cannot be believed: ``(Record, None)``, ``(None, None)`` when there
    is none, ``(None, reason)`` when it is unreadable, of an old schema, not in the lock or edited."""
    from ..core.errors import HarnessError

    path = Path(out) / f"{cid}.json"
    if not (path.is_file() or path.is_symlink()):
        return None, None
    try:
        return checked_record(out, cid), None
    except HarnessError as exc:
        return None, str(exc).removeprefix(f"{path}: ").removesuffix("; run the claim again")


def record_deps(path: Path, protocol: str, inputs, upstream, lock, pins, paper=None) -> dict:
    """:func:`harness.core.claimslock.claim_deps` of a claim, its coverage study read where the build writes it."""
    from ..core.claimslock import claim_deps
    from ..core.provenance import package_versions
    from ..resampling.calibration import study_path

    return claim_deps(path, protocol, inputs, upstream, lock, pins, package_versions(), study_path(path.stem), paper)


def _claim_plan(path: Path, spec, claim, paper, existing, why, out: Path, lock, pins, args) -> Planned:
    """Why the claim (``claim``: its claim file's, or its record's when ``spec`` is None) must run or its report
    be drawn again; ``existing``, ``why``: its record there now (:func:`current_record`)."""
    from ..core.claimslock import changed, edited, entry, listed, render_deps, stale_reasons

    protocol = claim.protocol
    deps = record_deps(path, protocol, claim.inputs, claim.upstream, lock, pins, paper)
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
            drawn = changed(found.get("render"), render_deps(protocol))
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
    from ..core.claimslock import entry
    from ..core.errors import HarnessError

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
    if item.run or (getattr(args, "studies", False) and not _study_measured(existing)):
        return None
    return item


def load_claims(paths: list[Path], lock, pins, tables, console) -> tuple[dict[Path, object], int]:
    """The claim files read and checked, each problem said; ``(specs, how many failed)``."""
    if not paths:
        return {}, 0  # a warm build imports no protocol
    from ..claimfiles.spec import load_claim
    from ..core.errors import HarnessError

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
    """The tables of a build: the lock ``args.lock`` names, read from ``args.data_root``."""
    from ..core.datalock import Tables, load_lock, resolve_data_root

    return Tables(load_lock(args.lock), resolve_data_root(args.data_root))


def pins_of(args=None):
    """The upstream pins of a build (``args.pins`` or the project's pins file)."""
    from ..authors.checkout import PINS_FILE, load_pins

    return load_pins(getattr(args, "pins", None) or PINS_FILE)


def _not_over_a_committed_claim(paths: list[Path], out: Path, console) -> tuple[list[Path], int]:
    """The claim files that may write into ``out``: into the project's reports, no file from elsewhere whose id
    is a claim of ``claims/`` (its report would replace that claim's)."""
    from ..core.paths import CLAIMS_DIR, REPORTS_DIR

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
    from ..core.datalock import load_lock
    from ..resampling.calibration import stale_reasons as study_reasons

    lock, pins, tables = load_lock(args.lock), pins_of(args), tables_of(args)
    out = Path(args.out)
    paths, failed = _not_over_a_committed_claim(paths, out, console)
    stems = [p.stem for p in paths]
    quick = (
        {}
        if args.force
        else {p: _from_lock(p, out, lock, pins, tables, args) for p in paths if stems.count(p.stem) == 1}
    )
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
