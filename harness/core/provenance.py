"""Where a run came from: this project's git commit (and whether its code had local changes), the Python and
package versions; nothing host-specific. ``dirty`` is measured once, before any report is written, and ignores
``reports/``: a run's own outputs never make it true.
"""

from __future__ import annotations

import platform
from functools import lru_cache
from importlib import metadata

from .paths import PROJECT_ROOT

PACKAGES = ("numpy", "scipy", "numba", "pandas", "jinja2", "GitPython", "PyYAML", "pydantic", "matplotlib")


@lru_cache(maxsize=1)
def project_state() -> dict:
    """``{"commit", "dirty", "error"}`` of the project's work tree; the error spelled out if git fails."""
    try:
        import git

        with git.Repo(PROJECT_ROOT) as repo:
            lines = repo.git.status("--porcelain", "--untracked-files=no").splitlines()
            changed = [ln[3:] for ln in lines if ln.strip() and not ln[3:].startswith("reports/")]
            return {"commit": repo.head.commit.hexsha, "dirty": bool(changed), "error": None}
    except Exception as exc:  # recorded, not hidden: the record says why there is no commit
        return {"commit": None, "dirty": None, "error": f"{type(exc).__name__}: {exc}"}


@lru_cache(maxsize=1)
def package_versions() -> dict:
    out = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out
