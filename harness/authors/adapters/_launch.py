"""Run one adapter against the authors' checkout, in a subprocess of its own.

Usage (by :mod:`harness.authors.upstream`, with the harness's own interpreter)::

    python _launch.py CHECKOUT HARNESS_DIR ADAPTER_MODULE REQUEST_JSON

It is run as ``python -s -P -B``: no user site-packages, neither this file's
folder nor the current folder on ``sys.path``, no ``.pyc`` written. The
checkout goes first on ``sys.path``: the authors' ``scripts/`` is a
namespace package and several of their modules expect the repository root on
the path. That is safe because the checkout has been verified to hold the
pinned tree and nothing else (no untracked or ignored file, no
``__pycache__``), so only the authors' own tracked modules come before the
standard library and site-packages.

The harness package is made importable from HARNESS_DIR alone (its
``__path__`` is that folder; nothing else of the project is on the path), so
an adapter imports what it shares the ordinary way (``from . import
quantities``, ``from ...adapters import authors_sigmoid``). The adapter module
(``harness.protocols.<name>.adapter``) is imported, its ``run(request) ->
dict`` is called, and ``{"answer": ..., "harness_modules": [...]}`` is
written as strict JSON (no NaN) to the pipe whose fd is in
``$HARNESS_ANSWER_FD``, not to stdout, which the authors' code prints to:
``harness_modules`` lists the files of the harness the run loaded
(relative to HARNESS_DIR), which the caller checks against what its
cache key hashed. Any error is a traceback on stderr and a non-zero
exit status.

This file uses the standard library only and imports nothing from the harness itself.
"""

import importlib
import importlib.util
import json
import os
import sys


def harness_package(harness_dir: str) -> None:
    """Register the package ``harness`` from ``harness_dir`` only."""
    spec = importlib.util.spec_from_file_location(
        "harness", os.path.join(harness_dir, "__init__.py"), submodule_search_locations=[harness_dir]
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules["harness"] = module
    spec.loader.exec_module(module)


def loaded_files(harness_dir: str) -> list[str]:
    """The harness's files loaded so far, relative to its folder (``protocols/x/adapter.py``)."""
    root = os.path.realpath(harness_dir)
    out = []
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if (name == "harness" or name.startswith("harness.")) and path:
            out.append(os.path.relpath(os.path.realpath(path), root).replace(os.sep, "/"))
    return sorted(out)


def main(argv: list[str]) -> int:
    if len(argv) != 4:
        print("usage: _launch.py CHECKOUT HARNESS_DIR ADAPTER_MODULE REQUEST_JSON", file=sys.stderr)
        return 2
    checkout, harness_dir, module, request_file = argv
    answer_fd = int(os.environ.pop("HARNESS_ANSWER_FD"))
    for folder in ("HOME", "MPLCONFIGDIR", "TMPDIR"):
        os.makedirs(os.environ[folder], exist_ok=True)
    if not (module == "harness" or module.startswith("harness.")):
        print(f"not a module of the harness: {module}", file=sys.stderr)
        return 2
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if p not in ("", ".", here)]  # already so under -P
    sys.path.insert(0, os.path.abspath(checkout))
    harness_package(os.path.abspath(harness_dir))
    adapter = importlib.import_module(module)

    with open(request_file, encoding="utf-8") as fh:
        request = json.load(fh)
    answer = adapter.run(request)

    with os.fdopen(answer_fd, "w", encoding="utf-8") as fh:
        json.dump({"answer": answer, "harness_modules": loaded_files(harness_dir)}, fh, allow_nan=False)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
