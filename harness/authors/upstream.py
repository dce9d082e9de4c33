"""The authors' arm: their code at a pinned commit, run by the protocol's adapter in a subprocess.

This is the only module that runs the adapters (the checkout is
:mod:`harness.authors.checkout`'s; the guards of :mod:`harness.core.lifecycle` and the
probe of :mod:`harness.core.sandbox` are the only other processes the arm starts).

* :func:`run_upstream_arm` runs ``harness.protocols.<name>.adapter`` through
  ``harness/authors/adapters/_launch.py`` with this interpreter (``-s -P -B``), in a
  scratch folder, with a minimal environment and the checkout first on
  ``sys.path``; it reads the adapter's JSON answer and caches successful
  results under ``.cache/upstream/``, keyed by the pin, the input hashes, the
  request and the hash of every file of the harness the adapter may load (declared:
  :data:`harness.core.claimslock.ADAPTER_CODE`; the run reports what it loaded, and a
  file outside what is declared voids the answer). Problems with
  the checkout or the adapter make the arm "could not run"; they never
  raise, so the other arm and other claims carry on.
* The adapter reads copies, in its scratch folder, of exactly the table
  bytes that were verified (:meth:`~harness.core.datalock.Tables.data`), never
  the files by path. It runs confined (:mod:`harness.core.sandbox`: bubblewrap,
  seeing only the Python environment, the harness, the checkout and its
  scratch folder; else :mod:`harness.authors.confine`: Landlock and seccomp, so
  that it can neither write outside its folder nor stop the harness), and
  in every case the project's folders that a run reads or
  writes (``vendor/``, ``reports/``, the cache, the harness's code...), the
  interpreter's prefix and the data root are compared before and after: a
  run that changed anything there "could not run" and is not cached. Its
  processes and its scratch folder go with the run, however the run ends
  (:mod:`harness.core.lifecycle`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import importlib.metadata
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..core import cores, lifecycle, sandbox
from ..core.claimslock import ADAPTER_CODE, digest, files_of
from ..core.errors import UpstreamError
from ..core.fileio import atomic_write_bytes, atomic_write_text, project_lock, snapshot_after
from ..core.numerics import pinned_env
from ..core.paths import HARNESS, LAUNCHER, PROJECT_ROOT, scrub_paths, shown
from ..core.schema import format_validation_error
from . import confine as confine_guards
from .checkout import PINS_FILE, VENDOR_DIR, checkout, find_pin, verified_tree

__all__ = ["UpstreamOptions", "UpstreamResult", "run_upstream_arm", "CACHE_DIR"]

CACHE_DIR = PROJECT_ROOT / ".cache" / "upstream"
OUTPUT_TAIL_CHARS = 20_000  # kept of the adapter's stdout and stderr
REASON_STDERR_LINES = 15  # of stderr quoted in the reason when the adapter crashes
SCRATCH_PREFIX = "upstream-"  # scratch folders: <tmp>/upstream-<pid>-<random>
LAUNCH_FLAGS = ("-s", "-P", "-B")  # no user site, no script folder on sys.path, no .pyc written
# What a run reads or writes in the project: compared before and after the authors' code runs.
PROJECT_WATCH = ("harness", "claims", "data", "templates", "reports", "vendor", ".cache")


@dataclass(frozen=True)
class UpstreamOptions:
    """How the authors' arm runs. ``auto_checkout`` clones a missing checkout first.

    ``sandbox``: "auto" (bubblewrap where it works here, else unconfined,
    said in the result), "bubblewrap" (required: without it the arm cannot
    run) or "none". ``watch``: the folders compared before and after the run,
    by the label they are shown with (default: the project's folders that a
    run reads or writes, :data:`PROJECT_WATCH`); the data root,
    ``vendor_dir``, ``cache_dir`` and the interpreter's prefix are always
    added. ``harness_dir``: the harness package the adapter imports from.
    """

    enabled: bool = True
    vendor_dir: Path = VENDOR_DIR
    cache_dir: Path = CACHE_DIR
    timeout_s: float = 900.0
    force: bool = False
    auto_checkout: bool = False
    pins_file: Path = PINS_FILE
    harness_dir: Path = HARNESS
    sandbox: str = "auto"
    watch: Mapping[str, Path] | None = None
    jobs: int | None = None  # requests run at once (default: this machine's cores)


@dataclass(frozen=True)
class UpstreamResult:
    """What the authors' arm gave: its measurement (``status`` "ok"), or why there is none, and how it ran.

    ``status`` is "ok", "not run" or "could not run"; ``values``,
    ``details`` and ``controls`` (control id -> ``{"values", "details"}``)
    are the adapter's answer. The run's own facts (``seconds``, ``cached``,
    ``stdout``, ``stderr``) go to the run log, never into a record.
    """

    status: str
    reason: str | None = None
    values: dict[str, float] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)
    controls: dict[str, dict] = field(default_factory=dict)
    seconds: float = 0.0
    cached: bool = False
    cache_key: str | None = None
    commit: str | None = None
    url: str | None = None
    stdout: str = ""
    stderr: str = ""
    sandbox: str | None = None
    request_seconds: list[float] = field(default_factory=list)  # each request's run (0 when cached)
    confinement: dict[str, Any] = field(default_factory=dict)  # what held (harness.authors.confine), for the record
    leftovers_killed: int = 0  # processes it left behind, killed: varies from run to run, so for the run log
    watch_note: str | None = None  # watched files that changed during the run, not by the authors' code

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def to_json(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> UpstreamResult:
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


def _failed(reason: str, **fields) -> UpstreamResult:
    return UpstreamResult(status="could not run", reason=reason, **fields)


class _Part(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)
    values: dict[str, float]
    details: dict[str, Any] = Field(default_factory=dict)


class _Answer(_Part):
    controls: dict[str, _Part] = Field(default_factory=dict)


class _Launched(BaseModel):
    """What the launcher writes around the adapter's answer: the harness files the run loaded."""

    model_config = ConfigDict(extra="forbid", strict=True)
    answer: dict[str, Any]
    harness_modules: list[str]


def _cache_key(commit: str, inputs: list[dict], code: dict[str, str], request: dict, tree: str) -> str:
    """sha256 of everything the answer depends on (input files by hash, not by path; the harness's files the
    adapter loads, by hash; the authors' files as they were on disk when verified, by hash)."""
    versions = {pkg: importlib.metadata.version(pkg) for pkg in ("numpy", "scipy", "pandas")}
    material = {
        "commit": commit,
        "checkout": tree,
        "inputs": {t["name"]: t["sha256"] for t in inputs},
        "code": code,
        "request": {k: request[k] for k in ("params", "controls", "seed", "part") if k in request},
        "python": sys.version,
        "packages": versions,
        "numerics": pinned_env(os.environ),  # the kernels the answer was computed with
    }
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()


def _read_cache(path: Path) -> UpstreamResult | None:
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(stored, dict) or stored.get("status") != "ok":
        return None
    try:
        return UpstreamResult.from_json(stored)
    except TypeError:
        return None


def _write_cache(path: Path, result: UpstreamResult) -> None:
    atomic_write_text(path, json.dumps(result.to_json(), indent=1, allow_nan=False))


def _tail(path: Path, limit: int = OUTPUT_TAIL_CHARS) -> str:
    text = path.read_bytes().decode("utf-8", errors="replace")
    return text if len(text) <= limit else "[... truncated ...]\n" + text[-limit:]


def _child_env(scratch: Path) -> dict[str, str]:
    """A minimal environment: nothing of the caller's PYTHON*/MPL* settings leaks in.

    No ``__pycache__`` is written (``-B``; it would dirty ``vendor/``); UTF-8
    I/O whatever the locale; one BLAS thread, so the answer does not depend on
    the number of cores (SLSQP's last bits do) and the arm does not contend
    with the other one; and the CPU kernels pinned (:mod:`harness.core.numerics`),
    so that it does not depend on the CPU either (the authors' I-spline fit
    moves in the sixth significant figure between kernels). The launcher
    runs without ``-E``/``-I`` because they would drop ``PYTHONHASHSEED``;
    with this environment ``-s -P`` isolate the import path as well.
    """
    for sub in ("home", "mpl", "tmp"):
        (scratch / sub).mkdir()
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(scratch / "home"),
        "MPLCONFIGDIR": str(scratch / "mpl"),
        "TMPDIR": str(scratch / "tmp"),
        "MPLBACKEND": "Agg",
        "PYTHONHASHSEED": "0",
        "PYTHONUTF8": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        **pinned_env(os.environ),
    }


def _kill_group(proc: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


@dataclass(frozen=True)
class _Input:
    """A verified table for the adapter: its name in the lock, file name, bytes and their sha256."""

    name: str
    filename: str
    data: bytes
    sha256: str


def _inputs(tables, names) -> list[_Input]:
    out = []
    for row in tables.describe(names):
        out.append(_Input(row["name"], PurePosixPath(row["path"]).name, tables.data(row["name"]), row["sha256"]))
    return out


def _write_inputs(folder: Path, inputs: list[_Input]) -> dict[str, Path]:
    """The verified bytes as files of the adapter's own (``<folder>/<i>/<file name>``), by table name."""
    paths = {}
    for i, item in enumerate(inputs):
        paths[item.name] = atomic_write_bytes(folder / str(i) / item.filename, item.data)
    return paths


@dataclass(frozen=True)
class _Adapter:
    """The adapter of one protocol: its module, and the harness's files it may load (relative to the package)."""

    module: str
    name: str  # for reasons: ``boundary_at_budget/adapter.py``
    harness_dir: Path
    code: dict[str, str]  # relative path -> sha256

    def plan(self):
        """The adapter module, imported here for its ``parts`` and ``combine`` (plain functions of requests and
        answers that import nothing of the authors'), when it is the harness's own; else ``None``."""
        if Path(self.harness_dir).resolve() != HARNESS.resolve():
            return None
        import importlib

        return importlib.import_module(self.module)


def _run_adapter(
    checkout_dir: Path,
    adapter: _Adapter,
    request: dict,
    inputs: list[_Input],
    timeout_s: float,
    confine: sandbox.Confinement,
) -> UpstreamResult:
    """Run the launcher once in a scratch folder; the fields of the result that describe the run."""
    launcher = adapter.harness_dir / LAUNCHER
    with lifecycle.scratch_folder(SCRATCH_PREFIX) as (scratch, guard):
        table_files = _write_inputs(scratch / "inputs", inputs)
        request = {**request, "tables": {name: str(path) for name, path in table_files.items()}}
        req, ans = scratch / "request.json", scratch / "answer.json"
        atomic_write_text(req, json.dumps(request))
        env = _child_env(scratch)
        argv = [str(checkout_dir), str(adapter.harness_dir), adapter.module, str(req), str(ans)]
        cmd = confine.command(
            [sys.executable, *LAUNCH_FLAGS, str(launcher), *argv],
            writable=scratch,
            read_only=[scratch / "inputs"],
            visible=[checkout_dir, adapter.harness_dir],  # all it reads besides the Python environment
        )
        timed_out = False
        guards = confine_guards.guards_for(sandboxed=confine.confined, landlock=confine.landlock)
        env.update(guards.env())
        try:
            with open(scratch / "stdout", "wb") as out, open(scratch / "stderr", "wb") as err:
                t0 = time.perf_counter()
                proc = subprocess.Popen(
                    cmd,
                    cwd=scratch,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=err,
                    start_new_session=True,
                    preexec_fn=guards.preexec(scratch),
                )
                guards.close_parent_fds()
                try:
                    guard.watch(proc.pid)
                    rc = proc.wait(timeout=timeout_s)
                except subprocess.TimeoutExpired:
                    timed_out, rc = True, None
                finally:
                    _kill_group(proc)  # on timeout or interrupt, and any stray child of a finished run
                    # every process it started (a daemon that left the session too) goes before the answer counts
                    stray_before = guards.members()
                    left = guards.kill_all()
                seconds = time.perf_counter() - t0
        finally:
            guards.teardown()
        run = scrub_paths(
            {"seconds": seconds, "stdout": _tail(scratch / "stdout"), "stderr": _tail(scratch / "stderr")},
            scratch=scratch,
            any_temp=False,
        )
        run["confinement"], run["leftovers_killed"] = guards.describe(), len(stray_before - left)
        if left:
            return _failed(
                f"{len(left)} process(es) started by the adapter {adapter.name} could not be killed after it ended; "
                "its answer was discarded",
                **run,
            )
        altered = [i.name for i in inputs if hashlib.sha256(table_files[i.name].read_bytes()).hexdigest() != i.sha256]
        if timed_out:
            return _failed(f"the adapter {adapter.name} did not finish within {timeout_s:g} s and was killed", **run)
        if rc != 0:
            how = f"was killed by signal {-rc}" if rc < 0 else f"exited with status {rc}"
            if confine.confined and rc > 128:  # bubblewrap relays a signal as 128 + its number
                how = f"was killed by signal {rc - 128} (exit status {rc} of its sandbox)"
            last = "\n".join(run["stderr"].rstrip().splitlines()[-REASON_STDERR_LINES:]) or "(stderr is empty)"
            return _failed(f"the adapter {adapter.name} {how}; last lines of stderr:\n{last}", **run)
        if altered:
            return _failed(
                f"the adapter {adapter.name} changed its copy of the input table(s) "
                f"{', '.join(altered)}; its answer was discarded",
                **run,
            )
        try:
            launched = _Launched.model_validate_json(ans.read_bytes())
            answer = _Answer.model_validate(launched.answer)
        except FileNotFoundError:
            return _failed(f"the adapter {adapter.name} exited without writing its answer", **run)
        except ValidationError as verr:
            problems = "; ".join(format_validation_error(verr))
            return _failed(
                f"the answer of the adapter {adapter.name} is not JSON of the expected shape: {problems}", **run
            )
        answer = scrub_paths(answer.model_dump(), scratch=scratch, any_temp=False)
    unhashed = sorted(set(launched.harness_modules) - set(adapter.code))
    if unhashed:
        return _failed(
            f"the adapter {adapter.name} loaded harness files its cache key does not cover ({', '.join(unhashed[:6])}):"
            " an import the build cannot see; its answer was discarded",
            **run,
        )
    asked = [c["id"] for c in request["controls"]]
    if "part" not in request and sorted(answer["controls"]) != sorted(asked):  # a part answers what it is asked
        return _failed(
            f"the adapter {adapter.name} answered controls {sorted(answer['controls'])}, asked for {sorted(asked)}",
            **run,
        )
    return UpstreamResult(status="ok", **answer, **run)


def _label(path: Path) -> str:
    """How a watched folder is named in a reason: relative to the project, else by its own name."""
    label = shown(path)
    return label if label != str(path) else Path(path).name


def _watch_roots(options: UpstreamOptions, data_root: Path, tables: list[str] = ()) -> list[sandbox.WatchRoot]:
    """The folders compared before and after the run: what a run reads or writes, and the interpreter.

    Not the whole project: a developer's edit of a test or a note while
    ``make claims`` runs must not void the authors' arm.
    """
    if options.watch is None:
        roots = [sandbox.WatchRoot(name, PROJECT_ROOT / name) for name in PROJECT_WATCH]
    else:
        roots = [sandbox.WatchRoot(label, Path(path)) for label, path in options.watch.items()]
    python = Path(sys.prefix)  # the venv the adapter imports from; large: sizes and times only
    # of the data root, the claim's own tables only (a file added beside them is nobody's business)
    extra = [(f"<data root>/{rel}", Path(data_root) / rel, True) for rel in tables]
    extra += [
        (_label(options.vendor_dir), Path(options.vendor_dir), True),
        (_label(options.cache_dir), Path(options.cache_dir), True),
        (shown(python) if python.resolve().is_relative_to(PROJECT_ROOT) else "<python>", python, False),
    ]
    for label, path, hashed in extra:
        if not any(r.covers(path) for r in roots):
            roots.append(sandbox.WatchRoot(label, path, hashed=hashed))
    return roots


def _adapter(protocol, harness_dir: Path) -> _Adapter | None:
    """The protocol's adapter in the package at ``harness_dir``, with the hashes of what it loads."""
    module = protocol.card.adapter_module
    if module is None:
        return None
    name = "/".join(module.split(".")[1:]) + ".py"
    own = harness_dir / name
    if not own.is_file():
        raise UpstreamError(f"{shown(own)} does not exist")
    folder = own.parent.relative_to(harness_dir).as_posix()
    patterns = ADAPTER_CODE + (name, *(f"{folder}/{n}" for n in ("__init__.py", "quantities.py")))
    files = {f for p in patterns for f in files_of(p, harness_dir)}
    return _Adapter(module, name, harness_dir, digest(files, root=harness_dir))


def run_upstream_arm(
    claim, protocol, params, tables, *, options: UpstreamOptions = UpstreamOptions()
) -> UpstreamResult:
    """Run the authors' arm of ``claim``; an :class:`UpstreamResult` that never raises for upstream trouble.

    ``status`` is "ok", "not run" (no pin, no adapter, or the arm switched
    off; ``reason`` says which) or "could not run" (checkout missing, altered
    or holding other files, adapter crashed, timed out, answered in the wrong
    shape, changed its inputs, loaded harness code its cache key does not
    cover or wrote outside its folder, or a required sandbox is missing;
    ``reason`` says what, with the tail of stderr for a crash). ``sandbox``
    says how the adapter was confined ("bubblewrap" or "none: <why>"). Input
    tables are verified through ``tables``: a
    :class:`~harness.core.errors.DataError` there propagates, as it does for the
    other arm; the adapter gets copies of the verified bytes.
    """
    if not options.enabled:
        return UpstreamResult(status="not run", reason="the authors' arm is switched off for this run")
    if claim.upstream is None:
        return UpstreamResult(status="not run", reason="the claim names no upstream pin")
    try:
        adapter = _adapter(protocol, Path(options.harness_dir))
    except (UpstreamError, OSError, SyntaxError) as exc:
        return _failed(f"the adapter of protocol '{protocol.name}' cannot be read: {exc}")
    if adapter is None:
        return UpstreamResult(
            status="not run", reason=f"protocol '{protocol.name}' has no adapter for the authors' code"
        )
    try:
        pin = find_pin(claim.upstream, options.pins_file)
    except UpstreamError as exc:
        return _failed(str(exc))
    where = {"commit": pin.commit, "url": pin.url}
    inputs = _inputs(tables, claim.inputs)
    roots = _watch_roots(options, tables.root, [t["path"] for t in tables.describe(claim.inputs)])
    try:
        if options.auto_checkout and not (Path(options.vendor_dir) / claim.upstream).exists():
            with project_lock(shared=False):
                checkout(claim.upstream, options.vendor_dir, pins_file=options.pins_file)
    except UpstreamError as exc:
        return _failed(str(exc), **where)
    # No other run writes into the project while the adapter runs, and this run's own writes meanwhile are
    # recorded and set back before the comparison (fileio's lock and journal): any other change is the adapter's.
    with project_lock(shared=True):
        result, to_cache = _run_watched(claim, params, tables, options, pin, where, adapter, inputs, roots)
    for cache_file, part in to_cache:
        _write_cache(cache_file, part)
    return result


def _writes_confined(confine) -> bool:
    """Whether the authors' code could write nowhere but its scratch folder: under bubblewrap, or Landlock."""
    if isinstance(confine, str):
        return False
    return confine.confined or (confine.landlock and confine_guards.landlock_unavailable() is None)


def _request_parts(adapter: _Adapter, request: dict) -> list[dict]:
    """The requests the arm is answered in: the adapter module's ``parts(request)`` when it has one (each a
    request its ``run`` answers, cached on its own; ``combine(request, answers)`` makes the claim's answer),
    else the one request. Only the harness's own package is planned this way (a test's stand-in package
    answers in one request)."""
    plan = adapter.plan()
    if plan is None or not hasattr(plan, "parts"):
        return [request]
    return list(plan.parts(request))


def _run_part(checkout_dir, adapter, sub, inputs, options, confine, key_of) -> tuple[UpstreamResult, Path | None]:
    key = key_of(sub)
    cache_file = Path(options.cache_dir) / f"{key}.json"
    if not options.force and (stored := _read_cache(cache_file)) is not None:
        return dataclasses.replace(stored, cached=True, cache_key=key, leftovers_killed=0), None  # nothing ran
    if isinstance(confine, str):  # a sandbox was required and cannot be had
        return _failed(confine, cache_key=key, sandbox=f"none: {confine}"), None
    with cores.authors_slot():
        ran = _run_adapter(checkout_dir, adapter, sub, inputs, options.timeout_s, confine)
    return dataclasses.replace(ran, cache_key=key), (cache_file if ran.ok else None)


def _parts_label(sub: dict) -> str:
    part = sub.get("part")
    if part is None:
        return ", ".join(sub["params"].get("tasks", {})) or "the claim"
    return ", ".join(f"{k} {v}" for k, v in part.items())


def _run_watched(claim, params, tables, options, pin, where, adapter, inputs, roots):
    """The arm's run between the two snapshots: ``(result, [(cache file, result to write to it)])``.

    The arm is answered request by request (:func:`_request_parts`), the requests spread over this
    machine's cores (each in its own confined process, each holding one of the build's slots), each
    request cached on its own, so an edit that changes one part re-runs one part.
    """
    try:
        before = sandbox.snapshot(roots)  # before the checkout is verified: any change after the check shows
        checkout_dir, tree = verified_tree(claim.upstream, options.vendor_dir, pins_file=options.pins_file)
    except UpstreamError as exc:
        return _failed(str(exc), **where), []
    request = {
        "params": params.model_dump(mode="json"),
        "controls": [
            {"id": c.id, "control": c.control, "params": claim.control_params[c.id].model_dump(mode="json")}
            for c in claim.controls
        ],
        "seed": claim.seed,
        "checkout": str(checkout_dir),
    }
    described = tables.describe(claim.inputs)
    requests = _request_parts(adapter, request)

    def key_of(sub):
        return _cache_key(pin.commit, described, adapter.code, sub, tree)

    confine = sandbox.confinement(options.sandbox)
    sandbox_name = f"none: {confine}" if isinstance(confine, str) else confine.name
    n_threads = max(1, min(len(requests), options.jobs or os.cpu_count() or 1))
    if n_threads == 1:
        ran = [_run_part(checkout_dir, adapter, sub, inputs, options, confine, key_of) for sub in requests]
    else:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=n_threads) as pool:
            futures = [
                pool.submit(_run_part, checkout_dir, adapter, sub, inputs, options, confine, key_of) for sub in requests
            ]
            ran = [f.result() for f in futures]
    results = [r for r, _ in ran]
    failed = next(((i, r) for i, r in enumerate(results) if not r.ok), None)
    if failed is not None:
        i, r = failed
        label = "" if len(requests) == 1 else f"request {i + 1} of {len(requests)} ({_parts_label(requests[i])}): "
        result = dataclasses.replace(r, reason=label + (r.reason or ""), sandbox=r.sandbox or sandbox_name, **where)
    else:
        result = _combined(adapter, request, requests, results, where, sandbox_name)
    escaped = sandbox.changed(before, snapshot_after(before, roots, sandbox.snapshot))
    if escaped and _writes_confined(confine):
        # it could not write there (read-only filesystem, or Landlock): someone else changed these meanwhile
        shown_changes = sandbox.describe_changes(escaped)
        note = f"changed while the authors' code ran, not by it (it could not write there): {shown_changes}"
        result = dataclasses.replace(result, watch_note=note)
    elif escaped:
        after_all = "" if result.ok else f"; besides, {result.reason}"
        reason = (
            f"these changed while the authors' code ran unconfined ({sandbox.describe_changes(escaped)}): the "
            "adapter {adapter.name} or something else wrote them, which cannot be told apart without a sandbox, "
            f"so its answer was discarded and nothing was cached{after_all}"
        ).replace("{adapter.name}", adapter.name)
        return dataclasses.replace(
            result, status="could not run", values={}, details={}, controls={}, reason=reason
        ), []
    return result, [(f, r) for (r, f) in ran if f is not None]  # a good part is kept even if another failed


def _combined(adapter, request, requests, results, where, sandbox_name) -> UpstreamResult:
    """The claim's answer from its requests' answers (the adapter's ``combine``), and how the run went."""
    if len(requests) == 1 and requests[0] is request:
        answer = {"values": results[0].values, "details": results[0].details, "controls": results[0].controls}
    else:
        parts = [{"values": r.values, "details": r.details, "controls": r.controls} for r in results]
        try:
            answer = _Answer.model_validate(adapter.plan().combine(request, parts)).model_dump()
        except (ValueError, KeyError, TypeError, ValidationError) as exc:
            return _failed(
                f"the answers of the adapter {adapter.name}'s {len(requests)} requests do not combine: "
                f"{type(exc).__name__}: {exc}",
                **where,
            )
        asked = sorted(c["id"] for c in request["controls"])
        if sorted(answer["controls"]) != asked:
            return _failed(
                f"the adapter {adapter.name}'s requests combine into controls {sorted(answer['controls'])}, "
                f"asked for {asked}",
                **where,
            )
    keys = [r.cache_key or "" for r in results]
    key = keys[0] if len(keys) == 1 else hashlib.sha256("".join(keys).encode()).hexdigest()
    return UpstreamResult(
        status="ok",
        **answer,
        seconds=sum(r.seconds for r in results),
        request_seconds=[0.0 if r.cached else r.seconds for r in results],
        cached=all(r.cached for r in results),
        cache_key=key,
        confinement=_confinement(results),
        leftovers_killed=sum(r.leftovers_killed for r in results),
        stdout=_joined([r.stdout for r in results]),
        stderr=_joined([r.stderr for r in results]),
        sandbox=sandbox_name,
        **where,
    )


def _confinement(results: list[UpstreamResult]) -> dict:
    """How the requests that ran were confined (a cached one keeps how it was), for the record: what held, never
    a count that varies from run to run (``leftovers_killed``, kept in an answer cached before it went to the
    run log, is left out)."""
    described = [r.confinement for r in results if r.confinement]
    if not described:
        return {}
    return {k: v for k, v in described[0].items() if k != "leftovers_killed"}


def _joined(texts: list[str]) -> str:
    if len(texts) == 1:
        return texts[0]
    text = "".join(f"--- request {i + 1} ---\n{t}" for i, t in enumerate(texts) if t)
    return text if len(text) <= OUTPUT_TAIL_CHARS else "[... truncated ...]\n" + text[-OUTPUT_TAIL_CHARS:]
