"""The machine code both arms compute with: pinned, so that a run does not depend on the CPU it runs on.

Standard library only: :mod:`harness.__main__` reads it before anything loads numpy.

On x86-64 three libraries choose their floating-point kernels from the CPU at start-up, and each
choice changes the last bits of sums and transcendental functions:

* OpenBLAS (the copies bundled with the numpy and scipy wheels, ``DYNAMIC_ARCH``) picks a kernel
  family (SkylakeX, Haswell, Sandybridge, Nehalem, ...); ``OPENBLAS_CORETYPE`` forces one;
* numpy dispatches its ufunc loops to the best SIMD level (X86_V4/AVX-512, X86_V3/AVX2, or its
  X86_V2 baseline); ``NPY_DISABLE_CPU_FEATURES`` turns levels off;
* glibc's libm uses FMA variants of ``exp``, ``log``, ``log1p``... where the CPU has FMA (what
  ``np.logaddexp`` and ``scipy.special.expit`` call); ``GLIBC_TUNABLES`` masks it.

Optimisers that stop on a tolerance turn those last bits into visible differences: the authors'
I-spline fit (L-BFGS-B at scipy's default ``gtol=1e-5``, in a flat valley) moves its ID pinball
loss in the sixth significant figure between an AVX-512 and an AVX2 machine, and resampled fits
flip bootstrap comparisons that sit at the edge. The pins below are the lowest level every machine
that runs these numpy wheels has (x86-64-v2, their baseline: Nehalem kernels, numpy's baseline
loops, libm without FMA), so the same wheels and the same libm give the same bits on any such machine. They cost nothing
measurable here (the fits are small). Elsewhere (aarch64...) nothing is pinned.

``HARNESS_NUMERICS=native`` leaves the machine's own choices in place (to measure how much a value
depends on them); the threads are pinned separately (one BLAS thread, see :mod:`harness.authors.upstream`
and the CLI).
"""

from __future__ import annotations

import platform
from collections.abc import Mapping

__all__ = ["PINNED_ENV", "pinned_env", "missing_pins"]

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
