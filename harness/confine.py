"""What every run of the authors' code gets, sandbox or not: no network, a memory and a process limit, writes
only in its own folder, and every process it started killed before its answer is accepted.

Under bubblewrap (:mod:`harness.sandbox`) the filesystem is read-only but the scratch folder, the network
is a namespace of its own, and the pid namespace goes with its init. Where bubblewrap cannot be had, the
child confines itself before ``exec`` (a ``preexec_fn``, nothing allocated or imported between fork and
exec beyond resolved ctypes calls):

* **Landlock** (Linux >= 5.13): every write, create, remove, rename or truncate is refused outside the
  scratch folder (``/dev`` keeps file writes, for ``/dev/null``);
* a **network namespace** of its own (``unshare(CLONE_NEWNET)``: only a loopback that is down);
* ``RLIMIT_AS`` (address space) as the **memory limit**;
* a **pids cgroup** (v1 or v2, where the harness may make one) as the **process limit**, and the set of
  every process the run started: after the run each is killed, and the answer is accepted only when none
  is left. Where no cgroup can be made, the processes are found by a token in their environment.

Each piece is probed here once; :class:`Guards` says, for the record, which ones held.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import time
import uuid
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

__all__ = ["Limits", "Guards", "guards_for", "ARM_TOKEN_ENV"]

#: Marks the environment of every process of one run of the authors' code (found through /proc afterwards).
ARM_TOKEN_ENV = "HARNESS_ARM_TOKEN"

_LIBC = ctypes.CDLL(None, use_errno=True)
_SYS_LANDLOCK_CREATE_RULESET, _SYS_LANDLOCK_ADD_RULE, _SYS_LANDLOCK_RESTRICT_SELF = 444, 445, 446
_LANDLOCK_CREATE_RULESET_VERSION = 1
_LANDLOCK_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38
_CLONE_NEWNET = 0x40000000
# Landlock filesystem rights that change the filesystem (ABI 1; REFER from ABI 2, TRUNCATE from ABI 3)
_WRITE_FILE = 1 << 1
_WRITE_RIGHTS_V1 = sum(1 << b for b in (1, 4, 5, 6, 7, 8, 9, 10, 11, 12))
_REFER, _TRUNCATE = 1 << 13, 1 << 14
CGROUP_ROOTS = (Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup"))


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


@dataclass(frozen=True)
class Limits:
    """The limits of one run: its address space and its number of processes."""

    memory_bytes: int = 6 << 30
    max_processes: int = 256


def _landlock_abi() -> int:
    abi = _LIBC.syscall(_SYS_LANDLOCK_CREATE_RULESET, None, ctypes.c_size_t(0), _LANDLOCK_CREATE_RULESET_VERSION)
    return max(int(abi), 0)


def _write_rights(abi: int) -> int:
    return _WRITE_RIGHTS_V1 | (_REFER if abi >= 2 else 0) | (_TRUNCATE if abi >= 3 else 0)


def _landlock_ruleset(writable: str) -> int:
    """A Landlock ruleset (its fd) that allows changes beneath ``writable`` only (and file writes in /dev)."""
    abi = _landlock_abi()
    rights = _write_rights(abi)
    attr = _RulesetAttr(rights)
    fd = _LIBC.syscall(_SYS_LANDLOCK_CREATE_RULESET, ctypes.byref(attr), ctypes.sizeof(attr), 0)
    if fd < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset")
    for path, allowed in ((writable, rights), ("/dev", _WRITE_FILE | (_TRUNCATE if abi >= 3 else 0))):
        pfd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        rule = _PathBeneath(allowed, pfd)
        ok = _LIBC.syscall(_SYS_LANDLOCK_ADD_RULE, fd, _LANDLOCK_RULE_PATH_BENEATH, ctypes.byref(rule), 0)
        os.close(pfd)
        if ok != 0:
            raise OSError(ctypes.get_errno(), f"landlock_add_rule {path}")
    return fd


def _restrict(fd: int) -> None:
    if _LIBC.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or _LIBC.syscall(_SYS_LANDLOCK_RESTRICT_SELF, fd, 0) != 0:
        os._exit(121)


def _probe_child(fn) -> bool:
    """Whether ``fn()`` returns True in a forked child (the parent is left untouched)."""
    pid = os.fork()
    if pid == 0:
        try:
            os._exit(0 if fn() else 1)
        except BaseException:
            os._exit(2)
    _, status = os.waitpid(pid, 0)
    return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


@cache
def landlock_unavailable() -> str | None:
    """None when Landlock confines writes here (probed in a child), else why not."""
    if _landlock_abi() < 1:
        return "the kernel offers no Landlock"
    import tempfile

    with tempfile.TemporaryDirectory(prefix="landlock-probe-") as tmp:
        inside, outside = Path(tmp) / "w", Path(tmp) / "outside"
        inside.mkdir()

        def probe() -> bool:
            _restrict(_landlock_ruleset(str(inside)))
            (inside / "ok").write_text("x")
            try:
                outside.write_text("x")
            except OSError:
                return True
            return False

        if not _probe_child(probe) or outside.exists():
            return "Landlock did not confine a write here"
    return None


@cache
def network_unavailable() -> str | None:
    """None when a child can take a network namespace of its own here, else why not."""

    def probe() -> bool:
        return _LIBC.unshare(_CLONE_NEWNET) == 0

    return None if _probe_child(probe) else "a network namespace cannot be made here (no privilege)"


def _cgroup_root() -> Path | None:
    for root in CGROUP_ROOTS:
        if (root / "cgroup.procs").is_file() and os.access(root, os.W_OK):
            probe = root / f"harness-probe-{os.getpid()}"
            try:
                probe.mkdir()
            except OSError:
                continue
            ok = (probe / "pids.max").is_file()
            probe.rmdir()
            if ok:
                return root
    return None


@cache
def cgroup_root() -> Path | None:
    """A pids cgroup hierarchy the harness may make groups in, or None."""
    return _cgroup_root()


@dataclass
class Guards:
    """The confinement of one run of the authors' code, beyond (or instead of) bubblewrap."""

    sandboxed: bool  # bubblewrap: filesystem, network and pid namespace are its
    limits: Limits = field(default_factory=Limits)
    token: str = field(default_factory=lambda: uuid.uuid4().hex)
    cgroup: Path | None = None
    landlock: str | None = None  # why not, when not used
    network: str | None = None  # why not, when not cut

    def setup(self) -> None:
        root = cgroup_root()
        if root is not None:
            group = root / f"harness-arm-{self.token}"
            try:
                group.mkdir()
                (group / "pids.max").write_text(str(self.limits.max_processes))
                self.cgroup = group
            except OSError:
                self.cgroup = None

    def describe(self) -> dict:
        """What held, in words, for the record."""
        if self.sandboxed:
            filesystem, network = "read-only but its own folder (bubblewrap)", "cut (a network namespace of its own)"
        else:
            filesystem = (
                "writable only in its own folder (Landlock)"
                if self.landlock is None
                else f"not confined ({self.landlock})"
            )
            network = "cut (a network namespace of its own)" if self.network is None else f"not cut ({self.network})"
        return {
            "filesystem": filesystem,
            "network": network,
            "memory": f"at most {self.limits.memory_bytes / (1 << 30):g} GiB of address space",
            "processes": (
                f"at most {self.limits.max_processes}, in a cgroup of their own"
                if self.cgroup is not None
                else "not limited (no cgroup can be made here); found by a token in their environment"
            ),
            "leftovers": "every process it started is killed before its answer is accepted",
        }

    def env(self) -> dict[str, str]:
        return {ARM_TOKEN_ENV: self.token}

    def preexec(self, writable: Path):
        """The ``preexec_fn`` of the child: the parent-death signal, the limits, the cgroup, and without
        bubblewrap the network namespace and Landlock."""
        from .lifecycle import parent_death_preexec

        death = parent_death_preexec()
        import resource

        mem, procs_file = self.limits.memory_bytes, str(self.cgroup / "cgroup.procs") if self.cgroup else None
        use_net = not self.sandboxed and self.network is None
        ruleset = _landlock_ruleset(str(writable)) if (not self.sandboxed and self.landlock is None) else None

        def preexec():
            if death is not None:
                death()
            resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
            if procs_file is not None:
                fd = os.open(procs_file, os.O_WRONLY)
                os.write(fd, str(os.getpid()).encode())
                os.close(fd)
            if use_net and _LIBC.unshare(_CLONE_NEWNET) != 0:
                os._exit(122)
            if ruleset is not None:
                _restrict(ruleset)

        self._ruleset = ruleset
        return preexec

    def close_parent_fds(self) -> None:
        fd = getattr(self, "_ruleset", None)
        if fd is not None:
            os.close(fd)
            self._ruleset = None

    def members(self) -> set[int]:
        """The processes of this run still alive: the cgroup's, and those that carry the token."""
        found: set[int] = set()
        if self.cgroup is not None:
            with contextlib.suppress(OSError):
                found |= {int(p) for p in (self.cgroup / "cgroup.procs").read_text().split()}
        marker = f"{ARM_TOKEN_ENV}={self.token}".encode()
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit() or int(entry.name) == os.getpid():
                continue
            try:
                if marker in (entry / "environ").read_bytes().split(b"\0") and _alive(entry):
                    found.add(int(entry.name))
            except OSError:
                continue
        return found

    def kill_all(self, wait_s: float = 5.0) -> set[int]:
        """Kill every process of this run; the ones still alive after ``wait_s`` (none, normally)."""
        deadline = time.monotonic() + wait_s
        left = self.members()
        while left and time.monotonic() < deadline:
            for pid in left:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.05)
            left = self.members()
        return left

    def teardown(self) -> None:
        self.close_parent_fds()
        if self.cgroup is not None:
            with contextlib.suppress(OSError):
                self.cgroup.rmdir()


def _alive(entry: Path) -> bool:
    try:
        return (entry / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def guards_for(sandboxed: bool, *, landlock: bool = True, limits: Limits | None = None) -> Guards:
    """The guards of one run: what holds here besides bubblewrap (probed once per process); ``landlock``
    False leaves the filesystem unconfined (the sandbox switched off)."""
    g = Guards(sandboxed=sandboxed, limits=limits or Limits())
    if not sandboxed:
        g.landlock = landlock_unavailable() if landlock else "the sandbox was switched off for this run"
        g.network = network_unavailable()
    g.setup()
    return g
