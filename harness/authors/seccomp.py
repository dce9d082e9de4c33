"""A small seccomp filter for the authors' code where bubblewrap cannot be had (x86-64 Linux).

Landlock (:mod:`harness.authors.confine`) keeps the *contents* of files outside the scratch folder safe; what it does
not cover, a classic BPF filter installed in the child before ``exec`` refuses (``EPERM``):

* **UNIX sockets**: ``socket(AF_UNIX, ...)``, a channel to any socket file on the machine (TCP is cut by the
  network namespace); ``socketpair`` stays (a pair of connected ends reaches nobody), and ``io_uring``, whose
  operations (it can open sockets) a filter does not see;
* **metadata** (where the filesystem is confined): ``chmod``, ``chown``, ``utime`` and ``setxattr`` /
  ``removexattr`` in all their forms, and the ``ioctl`` that set inode flags and attributes
  (``FS_IOC_SETFLAGS``, ``FS_IOC_FSSETXATTR``, ``FS_IOC_SETVERSION``): a filter cannot tell a path inside
  the scratch folder from one outside, so they are refused everywhere;
* **other processes**: ``ptrace``, ``process_vm_readv``/``writev``, ``process_madvise``, ``pidfd_getfd``,
  and changing another process's limits (``prlimit64``), priority or scheduling (``setpriority``,
  ``sched_set*``, ``ioprio_set``) -- each of which could stop or starve the harness and so its time limit;
* **signals** (where Landlock cannot scope them, :func:`harness.authors.confine.scopes_unavailable`): ``kill`` only
  to its own process group (``pid`` 0, ``-pgid``) or its first process (``pgid``), or with signal 0;
  ``tgkill``, ``tkill``, ``rt_(tg)sigqueueinfo`` only to that first process; ``pidfd_send_signal``
  refused. The group's id, the child's pid after ``setsid``, is written into the program in the child.

Any other architecture than the one the numbers are for (a 32-bit call through ``int 0x80``, the x32 ABI) is
refused as a whole. The program is built in the parent; the child only patches its group id and installs it.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
from dataclasses import dataclass, field

__all__ = ["Filter", "probe_child", "unavailable"]

_AUDIT_ARCH_X86_64 = 0xC000003E
_X32_BIT = 0x40000000
_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 38, 22, 2
_RET_ALLOW, _RET_ERRNO = 0x7FFF0000, 0x00050000
_LD_W_ABS, _JEQ_K, _JGE_K, _RET_K = 0x20, 0x15, 0x35, 0x06
_OFF_NR, _OFF_ARCH = 0, 4
_AF_UNIX = 1
_PGID = object()  # stands for the child's process group id, patched in when it is known


def _arg(i: int) -> int:
    """Offset of the low 32 bits of argument ``i`` in ``struct seccomp_data`` (little-endian)."""
    return 16 + 8 * i


def _neg(pgid: int) -> int:
    return (-pgid) & 0xFFFFFFFF


# x86-64 system call numbers (arch/x86/entry/syscalls/syscall_64.tbl)
_UNIX = {"socket": 41}
_ALWAYS = {
    "ptrace": 101,
    "process_vm_readv": 310,
    "process_vm_writev": 311,
    "process_madvise": 440,
    "pidfd_getfd": 438,
    "io_uring_setup": 425,
    "io_uring_enter": 426,
    "io_uring_register": 427,
}
_METADATA = {
    "chmod": 90,
    "fchmod": 91,
    "fchmodat": 268,
    "fchmodat2": 452,
    "chown": 92,
    "fchown": 93,
    "lchown": 94,
    "fchownat": 260,
    "utime": 132,
    "utimes": 235,
    "futimesat": 261,
    "utimensat": 280,
    "setxattr": 188,
    "lsetxattr": 189,
    "fsetxattr": 190,
    "removexattr": 197,
    "lremovexattr": 198,
    "fremovexattr": 199,
    "setxattrat": 463,
    "removexattrat": 466,
}
_IOCTL = 16
_SET_INODE_IOCTLS = (0x40086602, 0x40046602, 0x401C5820, 0x40087602)  # FS_IOC_SETFLAGS (+32), FSSETXATTR, SETVERSION
# changing another process: allowed only on itself (the named arguments all 0: ``pid``, or ``which``/``who``)
_SELF_ONLY = {"prlimit64": (302, (0,)), "sched_setparam": (142, (0,)), "sched_setscheduler": (144, (0,))}
_SELF_ONLY |= {"sched_setaffinity": (203, (0,)), "sched_setattr": (314, (0,)), "setpriority": (141, (0, 1))}
_SELF_ONLY |= {"ioprio_set": (251, (1,))}  # ioprio_set(IOPRIO_WHO_PROCESS = 1, who = 0, ...): checked below
_KILL, _TKILL, _TGKILL, _SIGQUEUE, _TGSIGQUEUE, _PIDFD_SIGNAL = 62, 200, 234, 129, 297, 424


@dataclass
class _Program:
    """Classic BPF with labels: ``(code, jt, jf, k)``, where a jump target may be a label resolved at the end."""

    ops: list = field(default_factory=list)
    labels: dict = field(default_factory=dict)

    def op(self, code: int, k, jt=0, jf=0) -> None:
        self.ops.append([code, jt, jf, k])

    def label(self, name: str) -> None:
        self.labels[name] = len(self.ops)

    def resolved(self) -> list[list]:
        out = []
        for i, (code, jt, jf, k) in enumerate(self.ops):
            jt = self.labels[jt] - i - 1 if isinstance(jt, str) else jt
            jf = self.labels[jf] - i - 1 if isinstance(jf, str) else jf
            if not (0 <= jt < 256 and 0 <= jf < 256):
                raise ValueError("a seccomp jump too far")
            out.append([code, jt, jf, k])
        return out


def _refuse(p: _Program, nr: int) -> None:
    p.op(_JEQ_K, nr, 0, 1)
    p.op(_RET_K, _RET_ERRNO | errno.EPERM)


def _all_zero(p: _Program, nr: int, args: tuple[int, ...], tag: str, first: int | None = None) -> None:
    """System call ``nr`` allowed only when every argument in ``args`` is 0 (``first``: argument ``args[0]`` must
    be that value instead), i.e. when it names the calling process itself."""
    p.op(_JEQ_K, nr, 0, f"{tag}_next")
    for j, a in enumerate(args):
        p.op(_LD_W_ABS, _arg(a))
        p.op(_JEQ_K, first if (j == 0 and first is not None) else 0, 0, f"{tag}_no")
    p.op(_RET_K, _RET_ALLOW)
    p.label(f"{tag}_no")
    p.op(_RET_K, _RET_ERRNO | errno.EPERM)
    p.label(f"{tag}_next")
    p.op(_LD_W_ABS, _OFF_NR)


def build(*, metadata: bool, signals: bool) -> list[list]:
    """The filter's instructions; where ``signals``, the group id is the placeholder :data:`_PGID`."""
    p = _Program()
    p.op(_LD_W_ABS, _OFF_ARCH)
    p.op(_JEQ_K, _AUDIT_ARCH_X86_64, 1, 0)
    p.op(_RET_K, _RET_ERRNO | errno.EPERM)  # another ABI: nothing of it
    p.op(_LD_W_ABS, _OFF_NR)
    p.op(_JGE_K, _X32_BIT, 0, 1)
    p.op(_RET_K, _RET_ERRNO | errno.EPERM)  # the x32 ABI: nothing of it
    for nr in _ALWAYS.values():
        _refuse(p, nr)
    # socket(AF_UNIX, ...): refused; any other family passes
    p.op(_JEQ_K, _UNIX["socket"], 0, 3)
    p.op(_LD_W_ABS, _arg(0))
    p.op(_JEQ_K, _AF_UNIX, 0, "allow")
    p.op(_RET_K, _RET_ERRNO | errno.EPERM)
    for name, (nr, args) in _SELF_ONLY.items():
        first = 1 if name == "ioprio_set" else None  # IOPRIO_WHO_PROCESS, and who = 0
        _all_zero(p, nr, (0, 1) if name == "ioprio_set" else args, name, first)
    if metadata:
        for nr in _METADATA.values():
            _refuse(p, nr)
        p.op(_JEQ_K, _IOCTL, 0, "ioctl_next")
        p.op(_LD_W_ABS, _arg(1))
        for cmd in _SET_INODE_IOCTLS:
            p.op(_JEQ_K, cmd, "refuse", 0)
        p.op(_RET_K, _RET_ALLOW)
        p.label("ioctl_next")
    if signals:
        _refuse(p, _PIDFD_SIGNAL)
        # kill(pid, sig): pid 0 (its group), -pgid, pgid, or signal 0
        p.op(_JEQ_K, _KILL, 0, "kill_next")
        p.op(_LD_W_ABS, _arg(1))
        p.op(_JEQ_K, 0, "allow", 0)
        p.op(_LD_W_ABS, _arg(0))
        p.op(_JEQ_K, 0, "allow", 0)
        p.op(_JEQ_K, _PGID, "allow", 0)
        p.op(_JEQ_K, ("neg", _PGID), "allow", 0)
        p.op(_RET_K, _RET_ERRNO | errno.EPERM)
        p.label("kill_next")
        for nr in (_TKILL, _TGKILL, _SIGQUEUE, _TGSIGQUEUE):  # the first argument names the process (or thread)
            p.op(_JEQ_K, nr, 0, 3)
            p.op(_LD_W_ABS, _arg(0))
            p.op(_JEQ_K, _PGID, "allow", 0)
            p.op(_RET_K, _RET_ERRNO | errno.EPERM)
    p.label("allow")
    p.op(_RET_K, _RET_ALLOW)
    p.label("refuse")
    p.op(_RET_K, _RET_ERRNO | errno.EPERM)
    return p.resolved()


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


_LIBC = ctypes.CDLL(None, use_errno=True)


class Filter:
    """One child's filter, built in the parent: :meth:`install` in the child (a ``preexec_fn``) patches in its
    process group and loads it; it allocates nothing but a few integers."""

    def __init__(self, *, metadata: bool, signals: bool):
        ops = build(metadata=metadata, signals=signals)
        self._patch = [(i, k) for i, (_, _, _, k) in enumerate(ops) if not isinstance(k, int)]
        self._array = (_SockFilter * len(ops))(
            *[_SockFilter(c, jt, jf, k if isinstance(k, int) else 0) for c, jt, jf, k in ops]
        )
        self._prog = _SockFprog(len(ops), self._array)
        self._addr = ctypes.addressof(self._prog)

    def install(self, pgid: int) -> bool:
        """Load the filter into this process (the child, after ``setsid``); whether it was loaded."""
        for i, k in self._patch:
            self._array[i].k = _neg(pgid) if isinstance(k, tuple) else pgid
        if _LIBC.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            return False
        return _LIBC.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.c_void_p(self._addr), 0, 0) == 0


def probe_child(fn) -> bool:
    """Whether ``fn()`` returns True in a forked child (the parent is left untouched); the probes of this module
    and of :mod:`harness.authors.confine` run their trial confinement this way."""
    pid = os.fork()
    if pid == 0:
        try:
            os._exit(0 if fn() else 1)
        except BaseException:
            os._exit(2)
    _, status = os.waitpid(pid, 0)
    return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


def unavailable() -> str | None:
    """None when the filter can be loaded here and refuses what it should (probed in a child), else why not."""
    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "AMD64"):
        return f"no seccomp filter is written for {platform.system()} {platform.machine()}"
    import socket
    import tempfile

    with tempfile.TemporaryDirectory(prefix="seccomp-probe-") as tmp:
        victim = os.path.join(tmp, "f")
        open(victim, "w").close()
        flt = Filter(metadata=True, signals=True)

        def probe() -> bool:
            if not flt.install(os.getpid()):
                return False
            try:
                socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).close()
                return False
            except PermissionError:
                pass
            try:
                os.chmod(victim, 0o777)
                return False
            except PermissionError:
                pass
            socket.socketpair()  # still allowed
            return True

        if not probe_child(probe) or os.stat(victim).st_mode & 0o777 == 0o777:
            return "the kernel did not load the seccomp filter, or it did not refuse what it should"
    return None
