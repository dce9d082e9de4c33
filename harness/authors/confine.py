"""What every run of the authors' code gets, sandbox or not: no network, no signal or trace of a process
outside its own (so the time limit holds whatever it does), a memory and a process limit, writes only in its
own folder, and every process it started killed before its answer is accepted.

Under bubblewrap (:mod:`harness.core.sandbox`) only what the code needs is visible (the Python environment, the
harness's code and the checkout, read-only; its scratch folder, writable), the network is a namespace of its
own, and so are its processes: it can name no process outside, and the pid namespace goes with its init.
Where bubblewrap cannot be had, the child confines itself before ``exec`` (a ``preexec_fn``, nothing
imported between fork and exec beyond resolved ctypes calls):

* **Landlock** (Linux >= 5.13): every write, create, remove, rename or truncate is refused outside the
  scratch folder (``/dev`` keeps file writes, for ``/dev/null``); from Landlock ABI 6 (Linux 6.12) its
  *scopes* refuse signals to any process outside the child's own (and abstract UNIX sockets outside it),
  and in every ABI a process outside cannot be traced;
* a **seccomp** filter (:mod:`harness.authors.seccomp`, x86-64): no UNIX socket, no ``io_uring``, no trace, limit or
  priority of another process, no change of a file's mode, owner, times or extended attributes (which
  Landlock lets through) where the filesystem is confined, and without Landlock's scopes signals only to
  its own process group;
* a **network namespace** of its own (``unshare(CLONE_NEWNET)``: only a loopback that is down);
* ``RLIMIT_AS`` (address space) as the **memory limit**;
* a **pids cgroup** (v1 or v2, where the harness may make one) as the **process limit**, and the set of
  every process the run started: after the run each is killed, and the answer is accepted only when none
  is left. Where no cgroup can be made, the processes are found by a token in their environment.

Each piece is probed here once; :class:`Guards` says, for the record, which ones held, and in words what
the confinement does not cover where a piece is missing.
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

from .seccomp import probe_child

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
_EXECUTE, _WRITE_FILE = 1 << 0, 1 << 1
_WRITE_RIGHTS_V1 = sum(1 << b for b in (1, 4, 5, 6, 7, 8, 9, 10, 11, 12))
_REFER, _TRUNCATE = 1 << 13, 1 << 14
CGROUP_ROOTS = (Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup"))


_SCOPE_ABSTRACT_UNIX_SOCKET, _SCOPE_SIGNAL = 1 << 0, 1 << 1  # Landlock ABI 6
_SCOPES = _SCOPE_ABSTRACT_UNIX_SOCKET | _SCOPE_SIGNAL


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),  # ABI 4
        ("scoped", ctypes.c_uint64),  # ABI 6
    ]


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


def _landlock_ruleset(writable: str | None, *, scoped: bool = False) -> int:
    """A Landlock ruleset (its fd) that allows changes beneath ``writable`` only (and file writes in /dev); with
    ``scoped``, signals and abstract UNIX sockets only within the domain (ABI 6). With ``writable`` None the
    filesystem is left as it is (without ``scoped``, a right handled and granted everywhere: the domain alone,
    in which no process outside can be traced or have its memory read or written through /proc)."""
    abi = _landlock_abi()
    if writable is not None:
        rights = _write_rights(abi)
        rules = [(writable, rights), ("/dev", _WRITE_FILE | (_TRUNCATE if abi >= 3 else 0))]
    else:
        rights, rules = (0, []) if scoped else (_EXECUTE, [("/", _EXECUTE)])
    attr = _RulesetAttr(rights, 0, _SCOPES if scoped else 0)
    size = 24 if scoped else 8  # the fields this ruleset uses: a kernel before ABI 6 reads only the first
    fd = _LIBC.syscall(_SYS_LANDLOCK_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), 0)
    if fd < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset")
    for path, allowed in rules:
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

        if not probe_child(probe) or outside.exists():
            return "Landlock did not confine a write here"
    return None


@cache
def scopes_unavailable() -> str | None:
    """None when Landlock's scopes keep a process's signals inside its own domain here (probed in a child: it
    may not even probe its parent with signal 0), else why not."""
    if _landlock_abi() < 6:
        return "the kernel's Landlock has no scopes (ABI 6, Linux 6.12)"

    def probe() -> bool:
        _restrict(_landlock_ruleset(None, scoped=True))
        try:
            os.kill(os.getppid(), 0)
        except PermissionError:
            return True
        return False

    return None if probe_child(probe) else "Landlock's scopes did not refuse a signal here"


@cache
def seccomp_unavailable() -> str | None:
    """None when the seccomp filter (:mod:`harness.authors.seccomp`) loads here and refuses what it should."""
    from .seccomp import unavailable

    return unavailable()


@cache
def network_unavailable() -> str | None:
    """None when a child can take a network namespace of its own here, else why not."""

    def probe() -> bool:
        return _LIBC.unshare(_CLONE_NEWNET) == 0

    return None if probe_child(probe) else "a network namespace cannot be made here (no privilege)"


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
    landlock: str | None = None  # why not, when writes are not confined
    network: str | None = None  # why not, when not cut
    scopes: str | None = None  # why Landlock's scopes are not used (signals, abstract UNIX sockets)
    seccomp: str | None = None  # why no seccomp filter is loaded
    domain: str | None = None  # why no Landlock domain at all (none: no process outside can be traced)

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
        """What held, in words, for the record; what is not covered, where a piece is missing, said as such."""
        if self.sandboxed:
            filesystem = (
                "only the Python environment, the harness's code and the authors' checkout visible, read-only, and"
                " its own folder, with its inputs, writable (bubblewrap): no other file or socket file reachable"
            )
            network = "cut (a network namespace of its own)"
            signals = "only to its own processes, which are all it can name (a pid namespace of its own)"
        else:
            filesystem, network, signals = self._filesystem(), self._network(), self._signals()
        return {
            "filesystem": filesystem,
            "network": network,
            "signals": signals,
            "memory": f"at most {self.limits.memory_bytes / (1 << 30):g} GiB of address space",
            "processes": (
                f"at most {self.limits.max_processes}, in a cgroup of their own"
                if self.cgroup is not None
                else "not limited (no cgroup can be made here); found by a token in their environment"
            ),
            "leftovers": "every process it started is killed before its answer is accepted",
        }

    def _filesystem(self) -> str:
        if self.landlock is not None:
            return f"not confined ({self.landlock})"
        readable = "; every file this user may read is readable"
        if self.seccomp is None:
            return (
                "writable only in its own folder (Landlock), and no file's mode, owner, times or extended"
                f" attributes changeable anywhere (seccomp){readable}"
            )
        return (
            "contents writable only in its own folder (Landlock), but the mode, owner, times and extended"
            f" attributes of files elsewhere not confined (no seccomp filter: {self.seccomp}){readable}"
        )

    def _network(self) -> str:
        if self.network is not None:
            return f"not cut ({self.network})"
        if self.seccomp is None:
            return "cut (a network namespace of its own), and no UNIX socket can be made (seccomp)"
        return (
            "cut for TCP and UDP (a network namespace of its own), but a UNIX socket file outside its folder"
            f" reachable (no seccomp filter: {self.seccomp})"
        )

    def _signals(self) -> str:
        if self.scopes is None and self.seccomp is None:
            return "only to its own processes (Landlock scopes), and no other process traced or reprioritised"
        if self.scopes is None:
            return (
                "only to its own processes (Landlock scopes), and no other process traced (Landlock), but the limits"
                f" and priority of another process of this user open to it (no seccomp filter: {self.seccomp})"
            )
        if self.seccomp is None and self.domain is None:
            return "only to its own process group (seccomp), and no other process traced or reprioritised"
        if self.seccomp is None:
            return (
                "only to its own process group (seccomp), but the memory of another process of this user open to it"
                f" through /proc (no Landlock: {self.domain}): the time limit does not hold against it"
            )
        return (
            f"not confined ({self.scopes}; no seccomp filter: {self.seccomp}): it could stop the harness, so"
            " the time limit does not hold against it"
        )

    def env(self) -> dict[str, str]:
        return {ARM_TOKEN_ENV: self.token}

    def preexec(self, writable: Path):
        """The ``preexec_fn`` of the child: the parent-death signal, the limits, the cgroup, and without
        bubblewrap the network namespace, Landlock (writes, and its scopes) and the seccomp filter."""
        from ..core.lifecycle import parent_death_preexec
        from .seccomp import Filter

        death = parent_death_preexec()
        import resource

        mem, procs_file = self.limits.memory_bytes, str(self.cgroup / "cgroup.procs") if self.cgroup else None
        own = not self.sandboxed
        use_net = own and self.network is None
        writes, scoped = own and self.landlock is None, own and self.scopes is None
        domain = own and self.domain is None  # a Landlock domain even where nothing of the filesystem is confined
        ruleset = _landlock_ruleset(str(writable) if writes else None, scoped=scoped) if domain else None
        flt = Filter(metadata=writes, signals=not scoped) if (own and self.seccomp is None) else None

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
            if flt is not None and not flt.install(os.getpid()):  # its process group, after setsid
                os._exit(123)

        self._ruleset, self._filter = ruleset, flt
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
    False leaves the filesystem unconfined (the sandbox switched off): signals, sockets and other processes
    stay guarded."""
    g = Guards(sandboxed=sandboxed, limits=limits or Limits())
    if not sandboxed:
        g.landlock = landlock_unavailable() if landlock else "the sandbox was switched off for this run"
        g.network = network_unavailable()
        g.domain = landlock_unavailable()  # the kernel's, whatever the mode
        g.scopes = scopes_unavailable() if g.domain is None else g.domain
        g.seccomp = seccomp_unavailable()
    g.setup()
    return g
