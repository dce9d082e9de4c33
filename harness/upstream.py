"""The authors' arm: their code at a pinned commit, run by an adapter in a subprocess.

This is the only module that runs git or the adapters for the authors' arm (the
guards of :mod:`harness.lifecycle` and the probe of :mod:`harness.sandbox` are
the only other processes it starts).

* Pins (``data/upstream.yaml``) name a repository URL, a commit and the paths
  a sparse checkout needs. The URL is always the public one; a local mirror,
  if any, is git's business (``url.<mirror>.insteadOf <url>``).
* :func:`checkout` clones the pin into ``vendor/<name>`` (no checkout),
  sparse-checks-out its ``paths`` (non-cone patterns, ``/<path>``) and
  detaches HEAD at the pinned commit. :func:`verify_checkout` runs before
  every use and refuses a missing, moved, re-pointed or modified checkout,
  and one holding anything but the pinned tree (untracked or ignored files,
  ``__pycache__``, empty folders).
* :func:`run_upstream_arm` runs ``harness/adapters/<protocol.adapter>``
  through ``_launch.py`` with this interpreter (``-s -P -B``), in a scratch
  folder, with a minimal environment and the checkout first on ``sys.path``;
  it reads the adapter's JSON answer and caches successful results under
  ``.cache/upstream/``. Problems with the checkout or the adapter make the
  arm "could not run"; they never raise, so the other arm and other claims
  carry on.
* The adapter reads copies, in its scratch folder, of exactly the table
  bytes that were verified (:meth:`~harness.datalock.Tables.data`), never
  the files by path. It runs confined where the machine allows it
  (:mod:`harness.sandbox`: bubblewrap, everything read-only but its scratch
  folder), and in every case the project's folders that a run reads or
  writes (``vendor/``, ``reports/``, the cache, the harness's code...), the
  interpreter's prefix and the data root are compared before and after: a
  run that changed anything there "could not run" and is not cached. Its
  processes and its scratch folder go with the run, however the run ends
  (:mod:`harness.lifecycle`).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Annotated, Any

import git
import yaml
from pydantic import BaseModel, ConfigDict, Field, StringConstraints, TypeAdapter, ValidationError, field_validator

from . import lifecycle, sandbox
from .datalock import PROJECT_ROOT
from .errors import UpstreamError
from .fileio import atomic_write_bytes, atomic_write_text, project_lock
from .numerics import pinned_env
from .schema import did_you_mean as _did_you_mean
from .schema import format_validation_error

__all__ = [
    "Pin",
    "UpstreamOptions",
    "load_pins",
    "checkout",
    "verify_checkout",
    "run_upstream_arm",
    "PINS_FILE",
    "VENDOR_DIR",
    "CACHE_DIR",
    "ADAPTERS_DIR",
]

PINS_FILE = PROJECT_ROOT / "data" / "upstream.yaml"
VENDOR_DIR = PROJECT_ROOT / "vendor"
CACHE_DIR = PROJECT_ROOT / ".cache" / "upstream"
HARNESS_DIR = Path(__file__).resolve().parent
ADAPTERS_DIR = HARNESS_DIR / "adapters"
LAUNCHER = "_launch.py"
OUTPUT_TAIL_CHARS = 20_000  # kept of the adapter's stdout and stderr
REASON_STDERR_LINES = 15  # of stderr quoted in the reason when the adapter crashes
GIT_ENV = {"GIT_TERMINAL_PROMPT": "0"}  # never wait for credentials
SCRATCH_PREFIX = "upstream-"  # scratch folders: <tmp>/upstream-<pid>-<random>
LAUNCH_FLAGS = ("-s", "-P", "-B")  # no user site, no script folder on sys.path, no .pyc written
# What a run reads or writes in the project: compared before and after the authors' code runs.
PROJECT_WATCH = ("harness", "claims", "data", "templates", "reports", "vendor", ".cache")


# -- pins ---------------------------------------------------------------------------------------------------


class Pin(BaseModel):
    """One pinned repository: where it is, which commit, which paths to check out."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    url: str = Field(min_length=1)
    commit: str = Field(pattern=r"^[0-9a-f]{40}$", description="full 40-hex commit id")
    paths: list[str] = Field(min_length=1)

    @field_validator("paths")
    @classmethod
    def _relative_paths(cls, paths: list[str]) -> list[str]:
        for p in paths:
            if not p.strip("/") or p.startswith("/") or ".." in Path(p).parts:
                raise ValueError(f"paths must be relative paths inside the repository, got {p!r}")
        return paths

    def sparse_patterns(self) -> list[str]:
        """Non-cone sparse-checkout patterns: ``/<path>``, anchored at the repository root."""
        return ["/" + p for p in self.paths]


PinName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")]
_PINS = TypeAdapter(dict[PinName, Pin])


def load_pins(path: str | Path = PINS_FILE) -> dict[str, Pin]:
    """Every pin in ``path``; :class:`UpstreamError` names the file and each bad field."""
    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UpstreamError(f"{path}: the file of upstream pins does not exist") from None
    except yaml.YAMLError as exc:
        raise UpstreamError(f"{path}: not valid YAML: {exc}") from None
    if not isinstance(raw, dict):
        raise UpstreamError(f"{path}: expected a mapping of pin names to pins, got {type(raw).__name__}")
    try:
        return _PINS.validate_python(raw)
    except ValidationError as err:
        raise UpstreamError(f"{path}: " + "; ".join(format_validation_error(err))) from None


def _pin(name: str, pins_file: str | Path) -> Pin:
    pins = load_pins(pins_file)
    if name not in pins:
        raise UpstreamError(
            f"{pins_file}: no upstream pin named '{name}'{_did_you_mean(name, pins)};"
            f" known: {', '.join(sorted(pins)) or 'none'}"
        )
    return pins[name]


# -- checkout -----------------------------------------------------------------------------------------------


def _open_repo(dest: Path, fix: str) -> git.Repo:
    try:
        return git.Repo(dest)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise UpstreamError(f"{_show(dest)} is not a git repository; {fix}") from None


def _origin_url(repo: git.Repo) -> str | None:
    try:
        return repo.git.config("--get", "remote.origin.url")
    except git.GitCommandError:
        return None


def _show(path: str | Path) -> str:
    """``path`` relative to the project when it is inside it (reports carry no local absolute paths)."""
    try:
        return str(Path(path).resolve().relative_to(PROJECT_ROOT))
    except ValueError:
        return str(path)


def _local_changes(repo: git.Repo) -> list[str]:
    """Everything in the work tree that is not the checked-out tree, as ``git status --porcelain`` lines.

    Ignored files count (``!!``): a module planted and listed in
    ``.git/info/exclude``, or a stale ``__pycache__``, would be imported as
    readily as an untracked one. Folders that hold no tracked file (git lists
    none of them when they are empty) count as untracked. No optional lock is
    taken, so the check does not rewrite ``.git/index``.
    """
    with repo.git.custom_environment(GIT_OPTIONAL_LOCKS="0"):
        out = repo.git.status("--porcelain", "--ignored", "--untracked-files=all")
        tracked = repo.git.ls_files("-z").split("\0")
    lines = [line for line in out.splitlines() if line.strip()]
    listed = [line[3:] for line in lines]
    stray = [
        d for d in _stray_folders(Path(repo.working_tree_dir), tracked) if not any(p.startswith(d) for p in listed)
    ]
    return lines + ["?? " + d for d in stray]


def _stray_folders(root: Path, tracked: list[str]) -> list[str]:
    """Folders under ``root`` (``.git`` aside) that no tracked path lies in, as ``name/``."""
    needed = {str(PurePosixPath(t).parent) for t in tracked if t} | {"."}
    needed |= {str(p) for n in list(needed) for p in PurePosixPath(n).parents}
    stray = []
    for dirpath, dirnames, _ in os.walk(root):
        rel = Path(dirpath).relative_to(root).as_posix()
        for d in sorted(dirnames):
            sub = d if rel == "." else f"{rel}/{d}"
            if rel == "." and d == ".git":
                dirnames.remove(d)
            elif sub not in needed:
                stray.append(sub + "/")
                dirnames.remove(d)  # what it holds is git's to list (as untracked or ignored), or nothing
    return stray


def _describe_changes(lines: list[str], limit: int = 6) -> str:
    kinds = {"??": "untracked ", "!!": "ignored "}
    shown = ", ".join(kinds.get(ln[:2], "changed ") + ln[3:] for ln in lines[:limit])
    return shown + (f" and {len(lines) - limit} more" if len(lines) > limit else "")


def _git_failure(exc: git.GitCommandError) -> str:
    """git's own error lines, without gitpython's wrapping and clone's progress line."""
    text = (exc.stderr or "").strip().removeprefix("stderr:").strip().strip("'")
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("Cloning into")]
    return " ".join(lines) or str(exc)


def checkout(pin_name: str, vendor_dir: str | Path = VENDOR_DIR, *, pins_file: str | Path = PINS_FILE) -> Path:
    """Clone (or reuse) ``vendor_dir/<pin_name>`` and check out the pin, sparse and detached.

    An existing clone is reused if it is a clone of the pin's URL without
    local changes; it is fetched if it lacks the commit. Returns the path of
    the verified checkout.
    """
    pin = _pin(pin_name, pins_file)
    dest = Path(vendor_dir) / pin_name
    fix = f"remove {_show(dest)} and run `make vendor`"
    fresh = not dest.exists()
    try:
        if fresh:
            dest.parent.mkdir(parents=True, exist_ok=True)
            try:
                repo = git.Repo.clone_from(pin.url, dest, no_checkout=True, env=GIT_ENV)
            except git.GitCommandError as exc:
                raise UpstreamError(f"could not clone {pin.url} into {_show(dest)}: {_git_failure(exc)}") from None
        else:
            repo = _open_repo(dest, fix)
        with repo:
            found = _origin_url(repo)
            if found != pin.url:
                raise UpstreamError(f"{_show(dest)} is a clone of {found}, expected {pin.url}; {fix}")
            changes = [] if fresh else _local_changes(repo)  # a fresh --no-checkout clone lists every file as deleted
            if changes:
                raise UpstreamError(f"{_show(dest)} has local changes ({_describe_changes(changes)}); {fix}")
            with repo.git.custom_environment(**GIT_ENV):
                if not _has_commit(repo, pin.commit):
                    repo.git.fetch("--quiet", "origin")
                if not _has_commit(repo, pin.commit):
                    raise UpstreamError(f"commit {pin.commit} is not in {pin.url} (fetched into {_show(dest)})")
            repo.git.sparse_checkout("set", "--no-cone", *pin.sparse_patterns())
            repo.git.checkout("--quiet", "--detach", pin.commit)
    except git.GitCommandError as exc:
        raise UpstreamError(
            f"git failed while checking out {pin.url} at {pin.commit} in {_show(dest)}: {_git_failure(exc)}"
        ) from None
    return verify_checkout(pin_name, vendor_dir, pins_file=pins_file)


def _has_commit(repo: git.Repo, commit: str) -> bool:
    try:
        repo.git.cat_file("-e", f"{commit}^{{commit}}")
        return True
    except git.GitCommandError:
        return False


def verify_checkout(pin_name: str, vendor_dir: str | Path = VENDOR_DIR, *, pins_file: str | Path = PINS_FILE) -> Path:
    """Check that ``vendor_dir/<pin_name>`` is the pin, untouched; return its path.

    Refused, with what was found and how to fix it: a missing folder, a folder
    that is not a git repository or is a clone of another URL, HEAD not at the
    pinned commit, sparse paths other than the pin's, and any modified, staged,
    deleted, untracked or ignored file (``__pycache__`` and ``.pyc`` included:
    the authors' arm would import them) and any folder holding no tracked file.
    """
    pin = _pin(pin_name, pins_file)
    dest = Path(vendor_dir) / pin_name
    fix = f"remove {_show(dest)} and run `make vendor`"
    if not dest.exists():
        raise UpstreamError(
            f"no checkout of '{pin_name}' at {_show(dest)}; run `make vendor` (it clones {pin.url} at {pin.commit})"
        )
    try:
        with _open_repo(dest, fix) as repo:
            found = _origin_url(repo)
            if found != pin.url:
                raise UpstreamError(f"{_show(dest)} is a clone of {found}, expected {pin.url}; {fix}")
            try:
                head = repo.git.rev_parse("--verify", "--quiet", "HEAD^{commit}")
            except git.GitCommandError:
                head = None
            if head != pin.commit:
                raise UpstreamError(
                    f"{_show(dest)}: HEAD is {head[:7] if head else 'not a commit'}, expected {pin.commit};"
                    " run `make vendor` to check out the pinned commit"
                )
            try:
                sparse = repo.git.sparse_checkout("list").splitlines()
            except git.GitCommandError:
                sparse = None
            if sparse != pin.sparse_patterns():
                raise UpstreamError(
                    f"{_show(dest)}: sparse-checkout paths are {sparse or 'not set (full checkout)'},"
                    f" expected {pin.sparse_patterns()}; run `make vendor`"
                )
            changes = _local_changes(repo)
            if changes:
                raise UpstreamError(f"{_show(dest)} has local changes ({_describe_changes(changes)}); {fix}")
    except git.GitCommandError as exc:
        raise UpstreamError(f"git failed while checking {_show(dest)}: {_git_failure(exc)}; {fix}") from None
    return dest


# -- running an adapter -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class UpstreamOptions:
    """How the authors' arm runs. ``auto_checkout`` clones a missing checkout first.

    ``sandbox``: "auto" (bubblewrap where it works here, else unconfined,
    said in the result), "bubblewrap" (required: without it the arm cannot
    run) or "none". ``watch``: the folders compared before and after the run,
    by the label they are shown with (default: the project's folders that a
    run reads or writes, :data:`PROJECT_WATCH`); the data root,
    ``vendor_dir``, ``cache_dir`` and the interpreter's prefix are always
    added.
    """

    enabled: bool = True
    vendor_dir: Path = VENDOR_DIR
    cache_dir: Path = CACHE_DIR
    timeout_s: float = 900.0
    force: bool = False
    auto_checkout: bool = False
    pins_file: Path = PINS_FILE
    adapters_dir: Path = ADAPTERS_DIR
    sandbox: str = "auto"
    watch: Mapping[str, Path] | None = None


class _Part(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)
    values: dict[str, float]
    details: dict[str, Any] = Field(default_factory=dict)


class _Answer(_Part):
    controls: dict[str, _Part] = Field(default_factory=dict)


def _result(status: str, reason: str | None = None, **fields) -> dict:
    out = {
        "status": status,
        "reason": reason,
        "values": {},
        "details": {},
        "controls": {},
        "seconds": 0.0,
        "cached": False,
        "cache_key": None,
        "commit": None,
        "url": None,
        "stdout": "",
        "stderr": "",
        "sandbox": None,
    }
    out.update(fields)
    return out


def _cache_key(commit: str, inputs: list[dict], adapter: Path, launcher: Path, request: dict) -> str:
    """sha256 of everything the answer depends on (input files by hash, not by path)."""
    versions = {pkg: importlib.metadata.version(pkg) for pkg in ("numpy", "scipy", "pandas")}
    material = {
        "commit": commit,
        "inputs": {t["name"]: t["sha256"] for t in inputs},
        "adapter": hashlib.sha256(adapter.read_bytes()).hexdigest(),
        "launcher": hashlib.sha256(launcher.read_bytes()).hexdigest(),
        # Adapters may load one another (004 reuses the Table 1 adapter's loading), so
        # any change in the folder invalidates every cached answer.
        "adapters_dir": {
            p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(adapter.parent.glob("*.py"))
        },
        "request": {k: request[k] for k in ("params", "controls", "seed")},
        "python": sys.version,
        "packages": versions,
        "numerics": pinned_env(os.environ),  # the kernels the answer was computed with
    }
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()


def _read_cache(path: Path) -> dict | None:
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return stored if isinstance(stored, dict) and stored.get("status") == "ok" else None


def _write_cache(path: Path, result: dict) -> None:
    atomic_write_text(path, json.dumps(result, indent=1, allow_nan=False))


def _tail(path: Path, limit: int = OUTPUT_TAIL_CHARS) -> str:
    text = path.read_bytes().decode("utf-8", errors="replace")
    return text if len(text) <= limit else "[... truncated ...]\n" + text[-limit:]


def _scrub(obj, scratch: Path):
    """``obj`` with the scratch folder shown as ``<scratch>`` and project paths relative, in every string."""
    if isinstance(obj, str):
        return obj.replace(str(scratch), "<scratch>").replace(str(PROJECT_ROOT) + os.sep, "")
    if isinstance(obj, dict):
        return {k: _scrub(v, scratch) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_scrub(v, scratch) for v in obj]
    return obj


def _child_env(scratch: Path) -> dict[str, str]:
    """A minimal environment: nothing of the caller's PYTHON*/MPL* settings leaks in.

    No ``__pycache__`` is written (``-B``; it would dirty ``vendor/``); UTF-8
    I/O whatever the locale; one BLAS thread, so the answer does not depend on
    the number of cores (SLSQP's last bits do) and the arm does not contend
    with the other one; and the CPU kernels pinned (:mod:`harness.numerics`),
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
        "HARNESS_SHARED_DIR": str(HARNESS_DIR),  # where the launcher finds the modules it shares
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


def _run_adapter(
    checkout_dir: Path,
    adapter: Path,
    launcher: Path,
    request: dict,
    inputs: list[_Input],
    timeout_s: float,
    confine: sandbox.Confinement,
) -> dict:
    """Run the launcher once in a scratch folder; the fields of the result that describe the run."""
    with lifecycle.scratch_folder(SCRATCH_PREFIX) as (scratch, guard):
        table_files = _write_inputs(scratch / "inputs", inputs)
        request = {**request, "tables": {name: str(path) for name, path in table_files.items()}}
        req, ans = scratch / "request.json", scratch / "answer.json"
        atomic_write_text(req, json.dumps(request))
        env = _child_env(scratch)
        cmd = confine.command(
            [sys.executable, *LAUNCH_FLAGS, str(launcher), str(checkout_dir), str(adapter), str(req), str(ans)],
            writable=scratch,
            read_only=[scratch / "inputs"],
        )
        timed_out = False
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
                preexec_fn=lifecycle.parent_death_preexec(),
            )
            try:
                guard.watch(proc.pid)
                rc = proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                timed_out, rc = True, None
            finally:
                _kill_group(proc)  # on timeout or interrupt, and any stray child of a finished run
            seconds = time.perf_counter() - t0
        run = _scrub(
            {"seconds": seconds, "stdout": _tail(scratch / "stdout"), "stderr": _tail(scratch / "stderr")}, scratch
        )
        altered = [i.name for i in inputs if hashlib.sha256(table_files[i.name].read_bytes()).hexdigest() != i.sha256]
        if timed_out:
            return _result(
                "could not run",
                f"the adapter {adapter.name} did not finish within {timeout_s:g} s and was killed",
                **run,
            )
        if rc != 0:
            how = f"was killed by signal {-rc}" if rc < 0 else f"exited with status {rc}"
            if confine.confined and rc > 128:  # bubblewrap relays a signal as 128 + its number
                how = f"was killed by signal {rc - 128} (exit status {rc} of its sandbox)"
            last = "\n".join(run["stderr"].rstrip().splitlines()[-REASON_STDERR_LINES:]) or "(stderr is empty)"
            return _result("could not run", f"the adapter {adapter.name} {how}; last lines of stderr:\n{last}", **run)
        if altered:
            return _result(
                "could not run",
                f"the adapter {adapter.name} changed its copy of the input table(s) "
                f"{', '.join(altered)}; its answer was discarded",
                **run,
            )
        try:
            answer = _Answer.model_validate_json(ans.read_bytes())
        except FileNotFoundError:
            return _result("could not run", f"the adapter {adapter.name} exited without writing its answer", **run)
        except ValidationError as verr:
            problems = "; ".join(format_validation_error(verr))
            return _result(
                "could not run",
                f"the answer of the adapter {adapter.name} is not JSON of the expected shape: {problems}",
                **run,
            )
        answer = _scrub(answer.model_dump(), scratch)
    asked = [c["id"] for c in request["controls"]]
    if sorted(answer["controls"]) != sorted(asked):
        return _result(
            "could not run",
            f"the adapter {adapter.name} answered controls {sorted(answer['controls'])}, asked for {sorted(asked)}",
            **run,
        )
    return _result("ok", **answer, **run)


def _label(path: Path) -> str:
    """How a watched folder is named in a reason: relative to the project, else by its own name."""
    shown = _show(path)
    return shown if shown != str(path) else Path(path).name


def _watch_roots(options: UpstreamOptions, data_root: Path) -> list[sandbox.WatchRoot]:
    """The folders compared before and after the run: what a run reads or writes, and the interpreter.

    Not the whole project: a developer's edit of a test or a note while
    ``make claims`` runs must not void the authors' arm.
    """
    if options.watch is None:
        roots = [sandbox.WatchRoot(name, PROJECT_ROOT / name) for name in PROJECT_WATCH]
    else:
        roots = [sandbox.WatchRoot(label, Path(path)) for label, path in options.watch.items()]
    python = Path(sys.prefix)  # the venv the adapter imports from; large: sizes and times only
    extra = [
        ("<data root>", Path(data_root), True),
        (_label(options.vendor_dir), Path(options.vendor_dir), True),
        (_label(options.cache_dir), Path(options.cache_dir), True),
        (_show(python) if python.resolve().is_relative_to(PROJECT_ROOT) else "<python>", python, False),
    ]
    for label, path, hashed in extra:
        if not any(r.covers(path) for r in roots):
            roots.append(sandbox.WatchRoot(label, path, hashed=hashed))
    return roots


def run_upstream_arm(claim, protocol, params, tables, *, options: UpstreamOptions = UpstreamOptions()) -> dict:
    """Run the authors' arm of ``claim``; a JSON-able result that never raises for upstream trouble.

    ``status`` is "ok", "not run" (no pin, no adapter, or the arm switched
    off; ``reason`` says which) or "could not run" (checkout missing, altered
    or holding other files, adapter crashed, timed out, answered in the wrong
    shape, changed its inputs or wrote outside its folder, or a required
    sandbox is missing; ``reason`` says what, with the tail of stderr for a
    crash). ``sandbox`` says how the adapter was confined ("bubblewrap" or
    "none: <why>"). Input tables are verified through ``tables``: a
    :class:`~harness.errors.DataError` there propagates, as it does for the
    other arm; the adapter gets copies of the verified bytes.
    """
    if not options.enabled:
        return _result("not run", "the authors' arm is switched off for this run")
    if claim.upstream is None:
        return _result("not run", "the claim names no upstream pin")
    if protocol.adapter is None:
        return _result("not run", f"protocol '{protocol.name}' has no adapter for the authors' code")
    try:
        pin = _pin(claim.upstream, options.pins_file)
    except UpstreamError as exc:
        return _result("could not run", str(exc))
    where = {"commit": pin.commit, "url": pin.url}
    adapters = Path(options.adapters_dir)
    adapter, launcher = adapters / protocol.adapter, adapters / LAUNCHER
    inputs = _inputs(tables, claim.inputs)
    roots = _watch_roots(options, tables.root)
    try:
        if options.auto_checkout and not (Path(options.vendor_dir) / claim.upstream).exists():
            with project_lock(shared=False):
                checkout(claim.upstream, options.vendor_dir, pins_file=options.pins_file)
    except UpstreamError as exc:
        return _result("could not run", str(exc), **where)
    # The harness writes nothing into the project while the adapter runs (fileio's lock), so any change
    # between the two snapshots is the adapter's.
    with project_lock(shared=True):
        result = _run_watched(claim, params, tables, options, pin, where, adapter, launcher, inputs, roots)
    cache_file = result.pop("_cache_file", None)
    if cache_file is not None:
        _write_cache(cache_file, result)
    return result


def _run_watched(claim, params, tables, options, pin, where, adapter, launcher, inputs, roots) -> dict:
    try:
        before = sandbox.snapshot(roots)  # before the checkout is verified: any change after the check shows
        checkout_dir = verify_checkout(claim.upstream, options.vendor_dir, pins_file=options.pins_file)
    except UpstreamError as exc:
        return _result("could not run", str(exc), **where)
    for f in (adapter, launcher):
        if not f.is_file():
            return _result("could not run", f"{_show(f)} does not exist", **where)

    request = {
        "params": params.model_dump(mode="json"),
        "controls": [
            {"id": c.id, "control": c.control, "params": claim.control_params[c.id].model_dump(mode="json")}
            for c in claim.controls
        ],
        "seed": claim.seed,
        "checkout": str(checkout_dir),
    }
    key = _cache_key(pin.commit, tables.describe(claim.inputs), adapter, launcher, request)
    cache_file = Path(options.cache_dir) / f"{key}.json"
    if not options.force and (stored := _read_cache(cache_file)) is not None:
        return {**_result("ok"), **stored, "cached": True}
    confine = sandbox.confinement(options.sandbox)
    if isinstance(confine, str):
        return _result("could not run", confine, **where, cache_key=key, sandbox=f"none: {confine}")
    result = {
        **_run_adapter(checkout_dir, adapter, launcher, request, inputs, options.timeout_s, confine),
        **where,
        "cache_key": key,
        "sandbox": confine.name,
    }
    escaped = sandbox.changed(before, sandbox.snapshot(roots))
    if escaped:
        after_all = "" if result["status"] == "ok" else f"; besides, {result['reason']}"
        return {
            **result,
            "status": "could not run",
            "values": {},
            "details": {},
            "controls": {},
            "reason": f"the adapter {adapter.name} wrote outside its folder ({sandbox.describe_changes(escaped)}): "
            f"these changed while it ran, so its answer was discarded and nothing was cached{after_all}",
        }
    if result["status"] == "ok":
        result["_cache_file"] = cache_file  # written once the shared lock is released
    return result
