"""The CPU kernels both arms compute with, pinned so that a run does not depend on the CPU (standard library
only: :mod:`harness.__main__` reads it before numpy loads).

On x86-64, OpenBLAS (``OPENBLAS_CORETYPE``), numpy's SIMD dispatch (``NPY_DISABLE_CPU_FEATURES``) and glibc's
FMA variants of libm (``GLIBC_TUNABLES``) each pick kernels from the CPU, and tolerance-stopped optimisers turn
the last bits into visible differences (the authors' I-spline fit moves in the sixth significant figure
between AVX-512 and AVX2). The pins are the x86-64-v2 baseline every machine running these wheels has.
Elsewhere nothing is pinned; ``HARNESS_NUMERICS=native`` keeps the machine's own choices.
"""

from __future__ import annotations

import platform
from collections.abc import Mapping

#: Environment variables, read when a process starts, that fix the kernels on x86-64.
PINNED_ENV: dict[str, str] = {
    "OPENBLAS_CORETYPE": "Nehalem",
    "NPY_DISABLE_CPU_FEATURES": "X86_V3 X86_V4 AVX512_ICL AVX512_SPR",
    "GLIBC_TUNABLES": "glibc.cpu.hwcaps=-AVX2,-FMA",
}
OPT_OUT = ("HARNESS_NUMERICS", "native")


def pinned_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The pins that apply to a process started with ``environ`` (none off x86-64 or when opted out)."""
    if environ.get(OPT_OUT[0]) == OPT_OUT[1] or platform.machine().lower() not in ("x86_64", "amd64"):
        return {}
    return dict(PINNED_ENV)


def missing_pins(environ: Mapping[str, str]) -> dict[str, str]:
    """``environ`` with the pins set, if it lacks any of them; else an empty dict."""
    pins = pinned_env(environ)
    if all(environ.get(k) == v for k, v in pins.items()):
        return {}
    return {**environ, **pins}
