"""The Python environment a pin's code runs in, when the pin declares ``packages``: built once with uv into
``.cache/envs/<digest>/`` (docs/authors-arm.md), its :data:`STAMP` written last: a folder without it is never used."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import UpstreamError
from ..core.paths import PROJECT_ROOT, shown
from .checkout import package_name

ENVS_DIR = PROJECT_ROOT / ".cache" / "envs"
STAMP = "harness-env.json"
BUILD_TIMEOUT_S = 1800
UV_ERROR_LINES = 8  # of uv's stderr quoted in a failed build's error


@dataclass(frozen=True)
class Environment:
    """A built environment: its folder, its interpreter, and the prefix that interpreter runs from."""

    folder: Path
    digest: str
    base_prefix: Path  # the interpreter's own installation, which the sandbox shows as well

    @property
    def python(self) -> Path:
        return self.folder / "bin" / "python"


def declaration_digest(packages: list[str]) -> str:
    """sha256 of what an environment is made of: this interpreter's version and the sorted packages."""
    material = {"python": sys.version, "packages": sorted(packages)}
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()


def environment(pin_name: str, packages: list[str], envs_dir: Path = ENVS_DIR) -> Environment:
    """The environment of ``packages`` for pin ``pin_name``, built unless it already is (a failure names the pin,
    the package and uv's last lines)."""
    digest = declaration_digest(packages)
    folder = envs_dir / digest
    if not (folder / STAMP).is_file():
        envs_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(
            prefix=f".build-{digest[:12]}-", dir=envs_dir, ignore_cleanup_errors=True
        ) as build:  # removed however this ends (already gone once renamed into place)
            python = os.path.join(build, "bin", "python")
            _uv(pin_name, packages, "venv", "--relocatable", "--python", sys.executable, build)
            _install(pin_name, packages, python)
            probe = [python, "-c", "import sys; print(sys.base_prefix)"]
            base = subprocess.run(probe, capture_output=True, text=True, check=True).stdout.strip()
            stamp = {"python": sys.version, "packages": sorted(packages), "base_prefix": base}
            Path(build, STAMP).write_text(json.dumps(stamp, indent=1), encoding="utf-8")
            try:
                os.rename(build, folder)
            except OSError:
                if not (folder / STAMP).is_file():  # not another build that finished first
                    raise UpstreamError(
                        f"{shown(folder)} is in the way of the environment of pin '{pin_name}'; remove it"
                    ) from None
    stamp = json.loads((folder / STAMP).read_text(encoding="utf-8"))
    return Environment(folder, digest, Path(stamp["base_prefix"]))


def _install(pin_name: str, packages: list[str], python: str) -> None:
    """The declared packages, exactly, and nothing else; then their requirements checked against each other."""
    flags = ["--python", python, "--no-deps", "--only-binary", ":all:", "--link-mode", "copy"]
    _uv(pin_name, packages, "pip", "install", *flags, *packages)
    _uv(pin_name, packages, "pip", "check", "--python", python)


def _uv(pin_name: str, packages: list[str], *args: str) -> None:
    """Run uv (the ``uv`` dependency's binary) without any configuration file's say; raise on failure."""
    try:
        from uv import find_uv_bin

        uv = find_uv_bin()
    except (ImportError, FileNotFoundError):
        raise UpstreamError(
            f"pin '{pin_name}' declares packages, and building them needs uv: pip install -e . installs it"
        ) from None
    cmd = [uv, args[0], "--quiet", "--no-config", *args[1:]]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise UpstreamError(f"building the environment of pin '{pin_name}' took over {BUILD_TIMEOUT_S} s") from None
    if proc.returncode != 0:
        said = (proc.stderr or proc.stdout).strip()
        names = {package_name(p): p for p in packages}
        words = re.findall(r"[A-Za-z0-9][A-Za-z0-9._-]*", said.lower())
        culprit = next((names[n] for w in words if (n := package_name(w.strip("._-"))) in names), None)
        last = "\n".join(said.splitlines()[-UV_ERROR_LINES:])
        raise UpstreamError(
            f"the environment of pin '{pin_name}' could not be built"
            + (f": {culprit} failed" if culprit else "")
            + f" (uv {args[0]} {args[1] if args[0] == 'pip' else ''}):\n{last}".replace(" )", ")")
        )
