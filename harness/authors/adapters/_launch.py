"""Run one adapter against the authors' checkout: ``python -s -P -B _launch.py CHECKOUT HARNESS_DIR MODULE
REQUEST_JSON`` (standard library only). The checkout goes first on ``sys.path``, the package ``harness`` is
loaded from HARNESS_DIR alone; the adapter's ``run(request)`` answer and the harness files the run loaded (its
cache key must cover them) go as strict JSON to the fd in ``$HARNESS_ANSWER_FD`` (the authors' code prints to
stdout). An error is a traceback on stderr and a non-zero exit status."""

import importlib.util
import json
import os
import sys


def main(argv: list[str]) -> int:
    checkout, harness_dir, module, request_file = argv
    answer_fd = int(os.environ.pop("HARNESS_ANSWER_FD"))
    for folder in ("HOME", "MPLCONFIGDIR", "TMPDIR"):
        os.makedirs(os.environ[folder], exist_ok=True)
    if not (module == "harness" or module.startswith("harness.")):
        print(f"not a module of the harness: {module}", file=sys.stderr)
        return 2
    sys.path.insert(0, os.path.abspath(checkout))  # -P left this script's folder off
    package = os.path.abspath(harness_dir)
    spec = importlib.util.spec_from_file_location(
        "harness", os.path.join(package, "__init__.py"), submodule_search_locations=[package]
    )
    sys.modules["harness"] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sys.modules["harness"])
    adapter = importlib.import_module(module)

    with open(request_file, encoding="utf-8") as fh:
        request = json.load(fh)
    answer = adapter.run(request)

    # the harness's files the run loaded, relative to its folder (``protocols/x/adapter.py``)
    root = os.path.realpath(harness_dir)
    ours = [getattr(m, "__file__", None) for n, m in list(sys.modules.items()) if n.split(".")[0] == "harness"]
    loaded = sorted(os.path.relpath(os.path.realpath(path), root).replace(os.sep, "/") for path in ours if path)
    with os.fdopen(answer_fd, "w", encoding="utf-8") as fh:
        json.dump({"answer": answer, "harness_modules": loaded}, fh, allow_nan=False)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
