"""What a build would do, and why: which claims are up to date, which need their report drawn again, which must
run, and which coverage studies must be measured again. Nothing here runs anything (``harness status`` prints
the plan; ``harness run`` carries it out).

An up-to-date claim is decided from its record alone where that can be done exactly: the record is sealed,
the claim file's bytes are those it was made from, and every other hash of its build key (tables, harness
code, pin, packages, coverage study, templates) is today's. Then neither the claim file is parsed nor its
protocol imported (a warm build stays cheap); anything else goes through the full plan, which reads and
checks the claim file and says what changed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["Planned", "StudyPlan", "plan", "check_ids", "current_record"]


@dataclass
class Planned:
    path: Path
    spec: object  # the loaded claim (None when it was found up to date from its record alone)
    deps: dict
    existing: object  # the Record there now, or None
    run: list[str]  # why it must run
    render: list[str]  # why it must be re-rendered

    @property
    def id(self) -> str:
        return self.path.stem  # a claim's id is its file's name


@dataclass
class StudyPlan:
    """A coverage study the build measures (again): its claim, and why (``no study yet``, ``its design
    changed``, ``its file is unreadable``, ``forced (--force)``)."""

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


def current_record(out: Path, cid: str):
    """The record in ``out`` now, and why it cannot be believed: ``(Record, None)``, ``(None, None)`` when there
    is none, ``(None, reason)`` when it is unreadable, of an old schema or edited."""
    from ..core.errors import HarnessError
    from ..core.record import read_record

    path = out / f"{cid}.json"
    if not (path.is_file() or path.is_symlink()):
        return None, None
    try:
        return read_record(path), None
    except HarnessError as exc:
        return None, f"the last record is unreadable or was edited ({exc})"


def _study_measured(record) -> bool:
    """Whether the record was made with its claim's coverage study up to date (or with none asked for)."""
    rob = record.robustness
    if rob is None or (rob.state == "not run" and rob.facts.get("why") == "the claim file asks for no resampling"):
        return True
    return (rob.facts.get("calibration") or {}).get("state") in ("measured", "not asked")


def _from_record(path: Path, out: Path, lock, pins, tables, args) -> Planned | None:
    """The plan of a claim found up to date from its record alone, or None (then the full plan decides). Its
    input tables are still verified against the lock (a table altered since says so through the full plan)."""
    from ..core.errors import HarnessError
    from .keys import claim_dependencies, stale_reasons

    existing, _ = current_record(out, path.stem)  # read_record refuses a record without its seal, or edited
    if existing is None or existing.claim.id != path.stem:
        return None
    c = existing.claim
    try:
        tables.describe(c.inputs)
    except HarnessError:
        return None
    deps = claim_dependencies(path, c.id, c.protocol, c.inputs, c.upstream, lock, pins)
    if deps is None or any(stale_reasons(existing.build, deps)):
        return None
    if existing.arms.upstream.status != "ok" and not args.no_upstream and c.upstream:
        return None
    if getattr(args, "studies", False) and not _study_measured(existing):
        return None
    return Planned(path, None, deps, existing, [], [])


def _load(paths: list[Path], lock, pins, tables, console) -> tuple[dict[Path, object], int]:
    if not paths:
        return {}, 0
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


def plan(args, paths: list[Path], console) -> tuple[list[Planned], list[StudyPlan], int]:
    """``(claims, studies, failed)``: each claim with why it must run or be drawn again (both empty: up to
    date); the coverage studies the build measures first (with ``args.studies``); how many claim files could
    not be read. Problems are said on ``console``."""
    from ..core.datalock import load_lock
    from ..resampling.calibration import stale_reasons as study_reasons
    from .keys import dependencies, stale_reasons

    lock, pins, tables = load_lock(args.lock), pins_of(args), tables_of(args)
    out = Path(args.out)
    stems = [p.stem for p in paths]
    quick = {}
    if not args.force:
        for path in paths:
            found = _from_record(path, out, lock, pins, tables, args) if stems.count(path.stem) == 1 else None
            if found is not None:
                quick[path] = found
    specs, failed = _load([p for p in paths if p not in quick], lock, pins, tables, console)
    planned, studies = [], []
    for path in paths:
        if path in quick:
            planned.append(quick[path])
            continue
        if path not in specs:
            continue
        spec = specs[path]
        deps = dependencies(spec, lock, pins)
        existing, why = current_record(out, spec.id)
        run, render = stale_reasons(existing.build if existing else None, deps)
        if existing is None:
            run = [why] if why else ["no report yet"]
        elif args.force:
            run = ["forced (--force)"]
        elif existing.arms.upstream.status != "ok" and not args.no_upstream and spec.claim.upstream:
            run = run + ["the authors' arm did not run last time"]
        stale = study_reasons(spec, lock) if getattr(args, "studies", False) else []
        if stale:
            studies.append(StudyPlan(spec, stale[0]))
            run = run if run == ["forced (--force)"] else run + [f"coverage study stale: {stale[0]}"]
        planned.append(Planned(path, spec, deps, existing, run, render))
    return planned, studies, failed
