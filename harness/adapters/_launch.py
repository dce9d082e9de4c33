"""Run one adapter against the authors' checkout, in a subprocess of its own.

Usage (by :mod:`harness.upstream`, with the harness's own interpreter)::

    python _launch.py CHECKOUT ADAPTER_FILE REQUEST_JSON ANSWER_JSON

It is run as ``python -s -P -B``: no user site-packages, neither this file's
folder nor the current folder on ``sys.path``, no ``.pyc`` written. The
checkout goes first on ``sys.path``: the authors' ``scripts/`` is a
namespace package and several of their modules expect the repository root on
the path. That is safe because the checkout has been verified to hold the
pinned tree and nothing else (no untracked or ignored file, no
``__pycache__``), so only the authors' own tracked modules come before the
standard library and site-packages. The adapters' folder goes last, so that
one adapter can import another by its module name (``import
boundary_at_budget``) without shadowing anything of the authors'. The adapter
is loaded from its file, its ``run(request) -> dict``
is called, and the answer is written as strict JSON (no NaN) to ANSWER_JSON,
not to stdout, which the authors' code prints to. Any error is a traceback on
stderr and a non-zero exit status.

Three modules of the harness are shared with the adapters, loaded from their
files under fixed names (nothing else of the harness is importable):
``harness_quantities`` (the quantity names, standard library only),
``harness_audit`` (the source-line audit, standard library only) and
``harness_losscheck`` (checks of a loss function, numpy only).

This file uses the standard library only and imports nothing from the harness.
"""

import importlib.util
import json
import os
import sys


# The harness package: named by the caller (harness.upstream sets it), else the folder above this one.
HARNESS_DIR = os.environ.get("HARNESS_SHARED_DIR") or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = {
    "harness_quantities": "quantities.py",
    "harness_audit": "audit.py",
    "harness_losscheck": os.path.join("stats", "losscheck.py"),
}


def load_shared() -> None:
    """Register the shared harness modules under their fixed names."""
    for name, rel in SHARED.items():
        spec = importlib.util.spec_from_file_location(name, os.path.join(HARNESS_DIR, rel))
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)


def main(argv: list[str]) -> int:
    if len(argv) != 4:
        print("usage: _launch.py CHECKOUT ADAPTER_FILE REQUEST_JSON ANSWER_JSON", file=sys.stderr)
        return 2
    checkout, adapter_file, request_file, answer_file = argv
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if p not in ("", ".", here)]  # already so under -P
    sys.path.insert(0, os.path.abspath(checkout))
    sys.path.append(os.path.dirname(os.path.abspath(adapter_file)))
    load_shared()

    spec = importlib.util.spec_from_file_location("harness_upstream_adapter", adapter_file)
    if spec is None or spec.loader is None:
        print(f"cannot load adapter {adapter_file}", file=sys.stderr)
        return 2
    adapter = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(adapter)

    with open(request_file, encoding="utf-8") as fh:
        request = json.load(fh)
    answer = adapter.run(request)

    tmp = answer_file + ".part"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(answer, fh, allow_nan=False)
    os.replace(tmp, answer_file)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
