"""The authors' arm: the protocol's adapter run through ``adapters/_launch.py`` on the pinned checkout, in a
scratch folder under bubblewrap (:mod:`.sandbox`; unconfined only with ``--sandbox none``), on copies of the
verified tables. Answers are cached under ``.cache/upstream/``, keyed by everything they depend on (the harness
files the adapter may load: :data:`~harness.core.claimslock.ADAPTER_CODE`), and used only when they verify.
Trouble with the checkout or the adapter makes the arm "could not run"; it never raises."""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.metadata
import json
import os
import sys
import tempfile
import threading
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..core.claimslock import ADAPTER_CODE, digest, files_of
from ..core.datalock import FileRefused, read_regular_file
from ..core.errors import UpstreamError
from ..core.fileio import atomic_write_bytes, atomic_write_text, project_lock
from ..core.numerics import pinned_env
from ..core.paths import HARNESS, LAUNCHER, PROJECT_ROOT, scrub_paths, shown
from ..core.schema import format_validation_error
from . import sandbox
from .checkout import PINS_FILE, VENDOR_DIR, checkout, find_pin, verified_tree
from .environment import ENVS_DIR, environment

CACHE_DIR = PROJECT_ROOT / ".cache" / "upstream"
OUTPUT_TAIL_CHARS = 20_000  # kept of the requests' stdout and stderr joined (each request's: sandbox.TAIL_BYTES)
REASON_STDERR_LINES = 15  # of stderr quoted in the reason when the adapter crashes
SCRATCH_PREFIX = "upstream-"  # scratch folders: <tmp>/upstream-<pid>-<random>
LAUNCH_FLAGS = ("-s", "-P", "-B")  # no user site, no script folder on sys.path, no .pyc written
CACHE_MAX_BYTES = 64 << 20  # a cache entry larger than this is not read
_RUNNING: dict[int, threading.BoundedSemaphore] = {}  # -j -> the authors' processes at once, over a build's claims
_KEYS: dict[str, threading.Lock] = {}  # a request's cache key -> held while it is answered
_FRESH: dict[str, int] = {}  # a cache key -> how many runs of this process answered it


@dataclass(frozen=True)
class UpstreamOptions:
    """How the authors' arm runs: ``sandbox`` "bubblewrap" or "none" (unconfined, said in the result)."""

    vendor_dir: Path = VENDOR_DIR
    cache_dir: Path = CACHE_DIR
    timeout_s: float = 900.0
    force: bool = False
    auto_checkout: bool = False
    pins_file: Path = PINS_FILE
    harness_dir: Path = HARNESS
    sandbox: str = "bubblewrap"
    jobs: int | None = None  # requests run at once (default: this machine's cores)
    envs_dir: Path = ENVS_DIR  # the environments pins declare


@dataclass(frozen=True)
class UpstreamResult:
    """What the authors' arm gave (``status`` "ok", "not run" or "could not run", with ``reason``) and how it ran
    (``seconds``, ``cached``, ``stdout``, ``stderr``: the run log's, never a record's)."""

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
    request_seconds: list[float] = field(default_factory=list)  # each request's run (0 when cached)
    confinement: dict[str, Any] = field(default_factory=dict)  # the profile's words (harness.authors.sandbox)

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def _failed(reason: str, **fields) -> UpstreamResult:
    return UpstreamResult(status="could not run", reason=reason, **fields)


class _Part(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)
    values: dict[str, float]
    details: dict[str, Any] = Field(default_factory=dict)


class _Answer(_Part):
    controls: dict[str, _Part] = Field(default_factory=dict)


class _Launched(BaseModel):  # the answer, and the harness files the run loaded
    model_config = ConfigDict(extra="forbid", strict=True)
    answer: dict[str, Any]
    harness_modules: list[str]


def _cache_key(
    commit: str, inputs: list[dict], code: dict[str, str], request: dict, tree: str, confined: dict, env: str | None
) -> str:
    """sha256 of everything the answer depends on, each file by hash."""
    material = {
        "commit": commit,
        "checkout": tree,
        "inputs": {t["name"]: t["sha256"] for t in inputs},
        "code": code,
        "request": {k: request[k] for k in ("params", "controls", "seed", "part") if k in request},
        "python": sys.version,
        "packages": {pkg: importlib.metadata.version(pkg) for pkg in ("numpy", "scipy", "pandas")},
        "numerics": pinned_env(os.environ),  # the kernels the answer was computed with
        "confinement": confined,  # an answer made unconfined is never served to a confined run
    }
    if env is not None:
        material["environment"] = env
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()


def _canonical(result: dict) -> bytes:
    return json.dumps(result, sort_keys=True, allow_nan=False, separators=(",", ":")).encode()


def _read_cache(path: Path, confinement: dict) -> UpstreamResult | None:
    """The cached answer at ``path`` when it verifies (a bounded regular file, sha256, shape, confinement; a NaN
    or an infinity fails :func:`_canonical`)."""
    try:
        stored = json.loads(read_regular_file(path, limit=CACHE_MAX_BYTES))
        result = stored["result"]
        verified = hashlib.sha256(_canonical(result)).hexdigest() == stored["sha256"]
        _Answer.model_validate({k: result[k] for k in ("values", "details", "controls")})
        ok = verified and result["status"] == "ok" and result["confinement"] == confinement
        return UpstreamResult(**result) if ok else None
    except (OSError, FileRefused, ValueError, TypeError, KeyError, ValidationError):
        return None


def _write_cache(path: Path, body: dict) -> None:
    """Store ``body`` (a result as canonical JSON's data) with its sha256; a cache that cannot be written is skipped."""
    envelope = {"sha256": hashlib.sha256(_canonical(body)).hexdigest(), "result": body}
    try:
        atomic_write_text(path, json.dumps(envelope, indent=1, allow_nan=False))
    except OSError as exc:
        warnings.warn(f"the authors' answer was used but not cached: {path}: {exc.strerror or exc}", stacklevel=2)


def _child_env(scratch: Path) -> dict[str, str]:
    """A minimal environment: none of the caller's PYTHON*/MPL* settings, one BLAS thread, the pinned CPU kernels
    (:mod:`harness.core.numerics`). Not ``-E``/``-I``: they would drop ``PYTHONHASHSEED``."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(scratch / "home"),
        "MPLCONFIGDIR": str(scratch / "mpl"),
        "TMPDIR": str(scratch / "tmp"),
        "MPLBACKEND": "Agg",
        "PYTHONHASHSEED": "0",
        "PYTHONUTF8": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        **dict.fromkeys(("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"), "1"),
        **pinned_env(os.environ),
    }


@dataclass(frozen=True)
class _Adapter:
    """The adapter of one protocol: its module, and the harness's files it may load, by hash."""

    module: str
    name: str  # for reasons: ``boundary_at_budget/adapter.py``
    harness_dir: Path
    code: dict[str, str]  # relative path -> sha256
    plan: Any  # the adapter module (for its ``parts`` and ``combine``) when it is the harness's own; else None


def _run_adapter(checkout_dir: Path, adapter: _Adapter, request: dict, inputs: dict, timeout_s, bwrap, env, confined):
    """Run the launcher once in a scratch folder, confined."""
    python, env_paths = (sys.executable, []) if env is None else (str(env.python), [env.folder, env.base_prefix])
    with tempfile.TemporaryDirectory(prefix=SCRATCH_PREFIX) as tmp:
        scratch = Path(tmp) / "work"  # the writable folder (a tmpfs under bubblewrap)
        scratch.mkdir()
        folder = Path(tmp) / "inputs"
        copies = {n: atomic_write_bytes(folder / str(i) / f, data) for i, (n, (f, data)) in enumerate(inputs.items())}
        request = {**request, "tables": {name: str(path) for name, path in copies.items()}}
        req = atomic_write_text(Path(tmp) / "request.json", json.dumps(request))
        launch = [str(adapter.harness_dir / LAUNCHER), str(checkout_dir), str(adapter.harness_dir), adapter.module]
        visible = [checkout_dir, adapter.harness_dir, folder, req, *env_paths]
        cmd = sandbox.command(bwrap, [python, *LAUNCH_FLAGS, *launch, str(req)], scratch, visible)
        out = sandbox.run(cmd, env=_child_env(scratch), cwd=scratch, timeout_s=timeout_s)
        said = {name: getattr(out, name).decode("utf-8", errors="replace") for name in ("stdout", "stderr")}
        run = scrub_paths({"seconds": out.seconds, **said}, scratch=scratch, any_temp=False) | {"confinement": confined}
    rc = out.returncode
    if out.stopped:
        return _failed(f"the adapter {adapter.name} {out.stopped}", **run)
    if rc != 0:
        how = f"was killed by signal {-rc}" if rc < 0 else f"exited with status {rc}"
        if bwrap is not None and rc > 128:  # bubblewrap relays a signal as 128 + its number
            how = f"was killed by signal {rc - 128} (exit status {rc} of its sandbox)"
        last = "\n".join(run["stderr"].rstrip().splitlines()[-REASON_STDERR_LINES:]) or "(stderr is empty)"
        return _failed(f"the adapter {adapter.name} {how}; last lines of stderr:\n{last}", **run)
    if out.answer is None:
        return _failed(f"the adapter {adapter.name} exited without writing its answer", **run)
    try:
        launched = _Launched.model_validate_json(out.answer)
        answer = _Answer.model_validate(launched.answer)
    except ValidationError as verr:
        problems = "; ".join(format_validation_error(verr))
        return _failed(f"the answer of the adapter {adapter.name} is not JSON of the expected shape: {problems}", **run)
    answer = scrub_paths(answer.model_dump(), scratch=scratch, any_temp=False)
    if unhashed := sorted(set(launched.harness_modules) - set(adapter.code)):
        return _failed(
            f"the adapter {adapter.name} loaded harness files its cache key does not cover ({', '.join(unhashed[:6])}):"
            " an import the build cannot see; its answer was discarded",
            **run,
        )
    return UpstreamResult(status="ok", **answer, **run)


def _adapter(protocol, harness_dir: Path) -> _Adapter | None:
    """The protocol's adapter in the package at ``harness_dir``, with the hashes of what it loads."""
    if (module := protocol.card.adapter_module) is None:
        return None
    name = "/".join(module.split(".")[1:]) + ".py"
    own = harness_dir / name
    if not own.is_file():
        raise UpstreamError(f"{shown(own)} does not exist")
    folder = own.parent.relative_to(harness_dir).as_posix()
    patterns = ADAPTER_CODE + (name, *(f"{folder}/{n}" for n in ("__init__.py", "quantities.py")))
    files = {f for p in patterns for f in files_of(p, harness_dir)}
    plan = importlib.import_module(module) if harness_dir.resolve() == HARNESS.resolve() else None
    return _Adapter(module, name, harness_dir, digest(files, root=harness_dir), plan)


def run_upstream_arm(
    claim, protocol, params, tables, *, options: UpstreamOptions = UpstreamOptions()
) -> UpstreamResult:
    """Run the authors' arm of ``claim``: an :class:`UpstreamResult` ("ok", "not run" or "could not run", with
    the reason); only a :class:`~harness.core.errors.DataError` of the input tables propagates."""
    if claim.upstream is None:
        return UpstreamResult("not run", "the claim names no upstream pin")
    try:
        adapter = _adapter(protocol, Path(options.harness_dir))
    except (UpstreamError, OSError, SyntaxError) as exc:
        return _failed(f"the adapter of protocol '{protocol.name}' cannot be read: {exc}")
    if adapter is None:
        return UpstreamResult("not run", f"protocol '{protocol.name}' has no adapter for the authors' code")
    where = {}
    try:
        pin = find_pin(claim.upstream, options.pins_file)
        where = {"commit": pin.commit, "url": pin.url}
        described = tables.describe(claim.inputs)  # a DataError of the input tables propagates
        # the verified bytes of each table, with its file's name: the adapter reads copies of these
        inputs = {r["name"]: (PurePosixPath(r["path"]).name, tables.data(r["name"])) for r in described}
        if options.auto_checkout and not (Path(options.vendor_dir) / claim.upstream).exists():
            with project_lock():
                checkout(claim.upstream, options.vendor_dir, pins_file=options.pins_file)
        checkout_dir, tree = verified_tree(claim.upstream, options.vendor_dir, pins_file=options.pins_file)
        env = None if pin.packages is None else environment(claim.upstream, pin.packages, options.envs_dir)
        bwrap = sandbox.confinement(options.sandbox)
    except UpstreamError as exc:
        return _failed(str(exc), **where)
    jobs = options.jobs or os.cpu_count() or 1
    timeout_s = pin.timeout_s or options.timeout_s
    request = {
        "params": params.model_dump(mode="json"),
        "controls": [
            {"id": c.id, "control": c.control, "params": claim.control_params[c.id].model_dump(mode="json")}
            for c in claim.controls
        ],
        "seed": claim.seed,
        "checkout": str(checkout_dir),
    }
    # each request cached on its own: the adapter's ``parts(request)`` (its ``combine`` makes the claim's answer)
    requests = list(adapter.plan.parts(request)) if hasattr(adapter.plan, "parts") else [request]
    confined = sandbox.describe(bwrap is not None)

    def answer(sub: dict) -> UpstreamResult:
        """One request, answered once however many claims of a build ask it at once (they wait for the first)."""
        key = _cache_key(pin.commit, described, adapter.code, sub, tree, confined, env and env.digest)
        cache_file = Path(options.cache_dir) / f"{key}.json"
        answered = _FRESH.get(key, 0)  # a run that ends while this one waits answers it, --force-upstream or not
        with _KEYS.setdefault(key, threading.Lock()):  # setdefault is atomic: every thread gets the one lock
            reuse = not options.force or _FRESH.get(key, 0) != answered
            if reuse and (stored := _read_cache(cache_file, confined)) is not None:
                return dataclasses.replace(stored, cached=True, cache_key=key)  # nothing ran
            with _RUNNING.setdefault(jobs, threading.BoundedSemaphore(jobs)):
                ran = _run_adapter(checkout_dir, adapter, sub, inputs, timeout_s, bwrap, env, confined)
            if ran.ok:  # in the form the cache keeps (keys sorted): a fresh answer and a cached one are one record
                body = json.loads(_canonical(dataclasses.asdict(ran)))
                ran = UpstreamResult(**body)
                _write_cache(cache_file, body)
                _FRESH[key] = _FRESH.get(key, 0) + 1
        return dataclasses.replace(ran, cache_key=key)

    with ThreadPoolExecutor(max_workers=max(1, min(len(requests), jobs))) as pool:
        results = list(pool.map(answer, requests))
    for i, r in enumerate(results):  # the first request that failed fails the claim's arm
        if not r.ok:
            part, tasks = requests[i].get("part"), requests[i]["params"].get("tasks", {})
            what = (", ".join(tasks) or "the claim") if part is None else ", ".join(f"{k} {v}" for k, v in part.items())
            label = "" if len(requests) == 1 else f"request {i + 1} of {len(requests)} ({what}): "
            return dataclasses.replace(r, reason=label + (r.reason or ""), **where)
    return _combined(adapter, request, results, where)


def _combined(adapter, request, results, where) -> UpstreamResult:
    """The claim's answer from its requests' answers (the adapter's ``combine``; without ``parts``, the one answer)."""
    parts = [{"values": r.values, "details": r.details, "controls": r.controls} for r in results]
    combine = adapter.plan.combine if hasattr(adapter.plan, "parts") else lambda _request, answers: answers[0]
    try:
        answer = _Answer.model_validate(combine(request, parts)).model_dump()
    except (ValueError, KeyError, TypeError, ValidationError) as exc:
        return _failed(
            f"the answers of the adapter {adapter.name}'s {len(results)} requests do not combine: "
            f"{type(exc).__name__}: {exc}",
            **where,
        )
    asked = sorted(c["id"] for c in request["controls"])
    if sorted(answer["controls"]) != asked:  # of the claim's answer: a part answers what it is asked
        return _failed(
            f"the adapter {adapter.name} answered controls {sorted(answer['controls'])}, asked for {asked}", **where
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
        confinement=next((r.confinement for r in results if r.confinement), {}),  # a cached one was verified
        stdout=_joined([r.stdout for r in results]),
        stderr=_joined([r.stderr for r in results]),
        **where,
    )


def _joined(texts: list[str]) -> str:
    if len(texts) == 1:
        return texts[0]
    text = "".join(f"--- request {i + 1} ---\n{t}" for i, t in enumerate(texts) if t)
    return text if len(text) <= OUTPUT_TAIL_CHARS else "[... truncated ...]\n" + text[-OUTPUT_TAIL_CHARS:]
