"""Where a run came from: this project's git commit, Python and package versions."""

from __future__ import annotations

import platform
from functools import lru_cache
from importlib import metadata

from .datalock import PROJECT_ROOT

__all__ = ["provenance", "project_commit"]

PACKAGES = ("numpy", "scipy", "pandas", "jinja2", "GitPython", "PyYAML", "pydantic", "matplotlib", "statsmodels")


def project_commit() -> dict:
    """The project's HEAD and whether the work tree had changes; the error, spelled out, if git fails."""
    try:
        import git

        repo = git.Repo(PROJECT_ROOT)
        return {"commit": repo.head.commit.hexsha, "dirty": repo.is_dirty(untracked_files=False), "error": None}
    except Exception as exc:  # recorded, not hidden: the record says why there is no commit
        return {"commit": None, "dirty": None, "error": f"{type(exc).__name__}: {exc}"}


@lru_cache(maxsize=1)
def _versions() -> dict:
    out = {}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def provenance() -> dict:
    return {"project": project_commit(), "python": platform.python_version(),
            "platform": platform.platform(), "packages": _versions()}
