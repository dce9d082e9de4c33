"""The authors' code at its pinned commit: the pins (``data/upstream.yaml``) and the sparse checkout in ``vendor/``
that :func:`verified_tree` checks byte for byte before every use; git in an environment of its own
(:data:`GIT_ENV`, :data:`GIT_OPTIONS`, :data:`OWN_CONFIG`). See docs/authors-arm.md."""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from pathlib import Path
from typing import Annotated

import git
from pydantic import BaseModel, ConfigDict, Field, StringConstraints, TypeAdapter, field_validator

from ..core.claimslock import listed
from ..core.datalock import read_yaml
from ..core.errors import UpstreamError
from ..core.paths import PINS_FILE, VENDOR_DIR, shown
from ..core.schema import RelativePath, did_you_mean

GIT_ENV = {
    "GIT_TERMINAL_PROMPT": "0",  # never wait for credentials
    "GIT_NO_REPLACE_OBJECTS": "1",  # a replace ref cannot make other objects stand for the pinned ones
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}
GIT_OPTIONS = ["core.hooksPath=/dev/null", "core.fsmonitor=false"]
#: The keys of a checkout's own configuration that clone, sparse-checkout and checkout write; any other is refused.
OWN_CONFIG = {"core.repositoryformatversion", "core.filemode", "core.bare", "core.logallrefupdates"}
OWN_CONFIG |= {"core.sparsecheckout", "core.sparsecheckoutcone", "extensions.worktreeconfig"}
OWN_CONFIG |= {"remote.origin.url", "remote.origin.fetch"}
EXACT_REQUIREMENT = re.compile(r"[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?==[0-9][A-Za-z0-9.+!_-]*")


def package_name(requirement: str) -> str:
    """A package's normalised name (PEP 503) in ``name==version``."""
    return re.sub(r"[-_.]+", "-", requirement.split("==")[0]).lower()


class Pin(BaseModel):
    """One pinned repository: where it is, which commit, which paths to check out, and the packages its code needs."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    url: str = Field(min_length=1)
    commit: str = Field(pattern=r"^[0-9a-f]{40}$", description="full 40-hex commit id")
    paths: list[Annotated[RelativePath, StringConstraints(min_length=1)]] = Field(min_length=1)
    #: The environment its code runs in (:mod:`harness.authors.environment`): every package, at an exact version;
    #: without it, the harness's own interpreter.
    packages: list[str] | None = Field(default=None, min_length=1)
    timeout_s: float | None = Field(default=None, gt=0, description="a request's time limit, in seconds")

    @field_validator("packages")
    @classmethod
    def _exact_versions(cls, packages: list[str]) -> list[str]:
        if bad := [p for p in packages if not EXACT_REQUIREMENT.fullmatch(p)]:
            raise ValueError(f"each package must be name==version (an exact version), got {', '.join(map(repr, bad))}")
        names = [package_name(p) for p in packages]
        if twice := sorted({n for n in names if names.count(n) > 1}):
            raise ValueError(f"each package must be named once, got {', '.join(twice)} more than once")
        return packages

    def sparse_patterns(self) -> list[str]:
        """Non-cone sparse-checkout patterns: ``/<path>``, anchored at the repository root."""
        return ["/" + p for p in self.paths]


PinName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")]
_PINS = TypeAdapter(dict[PinName, Pin])


def load_pins(path: str | Path = PINS_FILE) -> dict[str, Pin]:
    """Every pin in ``path``; :class:`UpstreamError` names the file and each bad field."""
    return read_yaml(Path(path), "the file of upstream pins", UpstreamError, _PINS.validate_python)


def find_pin(name: str, pins_file: str | Path = PINS_FILE) -> Pin:
    pins = load_pins(pins_file)
    if name not in pins:
        raise UpstreamError(
            f"{pins_file}: no upstream pin named '{name}'{did_you_mean(name, pins)};"
            f" known: {', '.join(sorted(pins)) or 'none'}"
        )
    return pins[name]


def _git(g: git.Git, mirrors: bool = False) -> git.Git:
    """``g`` (``repo.git`` or a bare :class:`git.Git`) in the harness's git environment; with ``mirrors``, the user's
    ``url.<mirror>.insteadOf`` settings (global configuration) as ``-c`` values, for clone and fetch."""
    g.update_environment(**GIT_ENV)
    found = mirrors and git.Git().config("--global", "--get-regexp", r"^url\..*\.insteadof$", with_exceptions=False)
    pairs = (line.split(" ", 1) for line in (found or "").splitlines() if " " in line)
    g.set_persistent_git_options(c=GIT_OPTIONS + [f"{key}={value}" for key, value in pairs])
    return g


def _open_repo(dest: Path, pin: Pin, fix: str) -> git.Repo:
    """The checkout at ``dest``: refused unless a clone of the pin's URL whose own configuration holds only keys
    the harness wrote (not an include, a hook path, a filter...)."""
    try:
        repo = git.Repo(dest)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise UpstreamError(f"{shown(dest)} is not a git repository; {fix}") from None
    foreign = []
    for path in (dest / ".git" / "config", dest / ".git" / "config.worktree"):
        if path.exists():
            out = _git(git.Git()).config("--file", str(path), "--list", "--name-only")
            foreign += [k for k in out.split() if k not in OWN_CONFIG and not k.startswith("branch.")]
    if foreign:
        repo.close()
        raise UpstreamError(f"{shown(dest)}: its git configuration holds {', '.join(foreign[:6])}; {fix}")
    origin = _git(repo.git).config("--get", "remote.origin.url", with_exceptions=False) or None
    if origin != pin.url:
        repo.close()
        raise UpstreamError(f"{shown(dest)} is a clone of {origin}, expected {pin.url}; {fix}")
    return repo


def _check_unchanged(repo: git.Repo, dest: Path, fix: str) -> None:
    """Refuse anything in the work tree that is not the checked-out tree (``git status --porcelain``): ignored
    files (``!!``) count, and so do folders that hold nothing ``git status`` lists but ``git clean -ndx`` would
    remove (an empty one is a namespace package): either would be imported."""
    with repo.git.custom_environment(GIT_OPTIONAL_LOCKS="0"):
        lines = repo.git.status("--porcelain", "--ignored", "--untracked-files=all").splitlines()
        folders = re.findall(r"^Would remove (.*/)$", repo.git.clean("-ndx"), re.MULTILINE)
    lines += ["?? " + d for d in folders if not any(ln[3:].startswith(d) for ln in lines)]
    if lines:
        kinds = {"??": "untracked ", "!!": "ignored "}
        found = listed([kinds.get(ln[:2], "changed ") + ln[3:] for ln in lines], 6)
        raise UpstreamError(f"{shown(dest)} has local changes ({found}); {fix}")


def _git_failure(exc: git.GitCommandError) -> str:
    """git's own error lines, without gitpython's wrapping and clone's progress line."""
    text = (exc.stderr or "").strip().removeprefix("stderr:").strip().strip("'")
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("Cloning into")]
    return " ".join(lines) or str(exc)


def checkout(pin_name: str, vendor_dir: str | Path = VENDOR_DIR, *, pins_file: str | Path = PINS_FILE) -> Path:
    """Clone (or reuse, fetching when it lacks the commit) ``vendor_dir/<pin_name>`` and check out the pin, sparse
    and detached; the path of the verified checkout."""
    pin = find_pin(pin_name, pins_file)
    dest = Path(vendor_dir) / pin_name
    fix = f"remove {shown(dest)} and run `make vendor`"
    fresh = not dest.exists()
    failed = f"could not clone {pin.url} into {shown(dest)}"
    try:
        if fresh:
            dest.parent.mkdir(parents=True, exist_ok=True)
            _git(git.Git(), mirrors=True).clone("--quiet", "--no-checkout", pin.url, str(dest))
        failed = f"git failed while checking out {pin.url} at {pin.commit} in {shown(dest)}"
        with _open_repo(dest, pin, fix) as repo:
            if not fresh:  # a fresh --no-checkout clone lists every file as deleted
                _check_unchanged(repo, dest, fix)
            if not _has_commit(repo, pin.commit):  # fetched by a git of its own: repo.git keeps no mirror settings
                _git(git.Git(dest), mirrors=True).fetch("--quiet", "origin")
            if not _has_commit(repo, pin.commit):
                raise UpstreamError(f"commit {pin.commit} is not in {pin.url} (fetched into {shown(dest)})")
            repo.git.sparse_checkout("set", "--no-cone", *pin.sparse_patterns())
            repo.git.checkout("--quiet", "--detach", pin.commit)
    except git.GitCommandError as exc:
        raise UpstreamError(
            f"{failed}: {_git_failure(exc)}; without network access, point git at a local mirror"
            f" (docs/authors-arm.md): git config --global url.<mirror>.insteadOf {pin.url}"
        ) from None
    return verified_tree(pin_name, vendor_dir, pins_file=pins_file)[0]


def _has_commit(repo: git.Repo, commit: str) -> bool:
    return repo.git.cat_file("-e", f"{commit}^{{commit}}", with_exceptions=False, with_extended_output=True)[0] == 0


def _blob_id(data: bytes) -> str:
    """git's object id of a blob holding ``data``: sha1 of ``blob <len>\\0<data>``."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _disk_mismatches(root: Path, repo: git.Repo, commit: str, paths: list[str]) -> tuple[list[str], str]:
    """The pinned tree's files whose bytes on disk are not the commit's blob (each read and hashed as git would:
    ``--assume-unchanged`` hides an edit from the index and from ``git status``), and a sha256 of what is on disk."""
    listing = repo.git.ls_tree("-r", "-z", "--full-tree", commit, "--", *paths)
    bad, material = [], hashlib.sha256()
    for entry in filter(None, listing.split("\0")):
        meta, rel = entry.split("\t", 1)
        mode, kind, blob = meta.split()
        if kind != "blob":
            continue  # a submodule's commit: nothing of it is checked out
        path = root / rel
        found = None  # unless it is the kind git pinned (a link, an executable or not) and can be read
        with contextlib.suppress(OSError):
            if mode == "120000":
                found = _blob_id(os.readlink(path).encode()) if path.is_symlink() else None
            elif path.is_file() and not path.is_symlink() and (mode == "100755") == bool(path.stat().st_mode & 0o111):
                found = _blob_id(path.read_bytes())
        if found != blob:
            bad.append(rel)
        material.update(f"{mode} {found} {rel}\0".encode())
    return bad, material.hexdigest()


def verified_tree(
    pin_name: str, vendor_dir: str | Path = VENDOR_DIR, *, pins_file: str | Path = PINS_FILE
) -> tuple[Path, str]:
    """Check that ``vendor_dir/<pin_name>`` is the pin, untouched (else an :class:`UpstreamError` says what was
    found and how to fix it); its path and the sha256 of its bytes on disk (part of a cache key)."""
    pin = find_pin(pin_name, pins_file)
    dest = Path(vendor_dir) / pin_name
    fix = f"remove {shown(dest)} and run `make vendor`"
    if not dest.exists():
        raise UpstreamError(
            f"no checkout of '{pin_name}' at {shown(dest)}; run `make vendor` (it clones {pin.url} at {pin.commit})"
        )
    try:
        with _open_repo(dest, pin, fix) as repo:
            head = repo.git.rev_parse("--verify", "--quiet", "HEAD^{commit}", with_exceptions=False)
            if head != pin.commit:
                raise UpstreamError(
                    f"{shown(dest)}: HEAD is {head[:7] if head else 'not a commit'}, expected {pin.commit};"
                    " run `make vendor` to check out the pinned commit"
                )
            sparse = repo.git.sparse_checkout("list", with_exceptions=False).splitlines()
            if sparse != pin.sparse_patterns():
                raise UpstreamError(
                    f"{shown(dest)}: sparse-checkout paths are {sparse or 'not set (full checkout)'},"
                    f" expected {pin.sparse_patterns()}; run `make vendor`"
                )
            _check_unchanged(repo, dest, fix)
            altered, on_disk = _disk_mismatches(dest, repo, pin.commit, pin.paths)
            if altered:
                raise UpstreamError(
                    f"{shown(dest)}: {listed(altered, 6)} on disk differ from the pinned commit"
                    f" {pin.commit[:7]} although git reports no change (hidden by --assume-unchanged or"
                    f" --skip-worktree?); {fix}"
                )
    except git.GitCommandError as exc:
        raise UpstreamError(f"git failed while checking {shown(dest)}: {_git_failure(exc)}; {fix}") from None
    return dest, on_disk
