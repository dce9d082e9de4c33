"""The CPU kernels both arms compute with, pinned on x86-64 so that a run does not depend on the CPU (why, and
what the pins are: docs/build.md, "Byte-identical output"). Standard library only: :mod:`harness.__main__`
reads it before numpy loads. ``HARNESS_NUMERICS=native`` keeps the machine's own choices.
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


def pinned_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The pins that apply to a process started with ``environ`` (none off x86-64 or when opted out)."""
    if environ.get("HARNESS_NUMERICS") == "native" or platform.machine().lower() not in ("x86_64", "amd64"):
        return {}
    return dict(PINNED_ENV)


def missing_pins(environ: Mapping[str, str]) -> dict[str, str]:
    """``environ`` with the pins set, if it lacks any of them; else an empty dict."""
    pins = pinned_env(environ)
    return {} if all(environ.get(k) == v for k, v in pins.items()) else {**environ, **pins}
