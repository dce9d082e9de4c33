"""The benchmark cases of this checkout and of another, interleaved call by call.

Usage: ``python -m benchmarks.side_by_side --baseline DIR [--only WORD ...] [--rounds N]``.

``DIR`` is another checkout of the project (``git worktree add /tmp/base main``, or a clone). Both
sides run with this interpreter, each in a process of its own that imports the harness and the
cases of :mod:`benchmarks.__main__` from its own tree (working folder and ``PYTHONPATH`` set to
it), with one BLAS thread and the input tables of this checkout's data root. Each case is built on
both sides and called once to warm up; then in each of ``N`` rounds either side calls it once,
the side going first alternating. Printed per case: the median wall and CPU milliseconds of each
side and their ratio (baseline / this), with the load (``os.getloadavg``) before and after. A case
that one side does not have is named and skipped. ``--only`` keeps the cases whose name contains
one of the words (default: the coverage studies' statistics).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

from harness.core.datalock import resolve_data_root
from harness.core.paths import PROJECT_ROOT

#: What each side's process runs: build a case on ``build NAME`` (``ok``, or ``missing``), time one call
#: on ``run NAME`` (wall and CPU seconds).
_WORKER = """
import sys, time
import scipy.optimize  # noqa: F401  (load BLAS before limiting it)
from threadpoolctl import threadpool_limits
from benchmarks.__main__ import CASES
from harness.core.datalock import Tables, load_lock, resolve_data_root

tables, built = Tables(load_lock(), resolve_data_root()), {}
with threadpool_limits(limits=1, user_api="blas"):
    for line in sys.stdin:
        cmd, name = line.rstrip("\\n").split(" ", 1)
        if cmd == "build":
            if name not in CASES:
                print("missing", flush=True)
                continue
            built[name] = CASES[name](tables)
            built[name]()
            print("ok", flush=True)
        else:
            w, c = time.perf_counter(), time.process_time()
            built[name]()
            print(time.perf_counter() - w, time.process_time() - c, flush=True)
"""


class _Side:
    """One side's process."""

    def __init__(self, root: Path, data_root: Path):
        env = {**os.environ, "PYTHONPATH": str(root), "HARNESS_DATA_ROOT": str(data_root)}
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _WORKER], cwd=root, env=env, text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )

    def ask(self, line: str) -> list[str]:
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline().split()
        if not answer:
            raise RuntimeError(f"a benchmark process ended while asked {line!r} (its error is above)")
        return answer

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait()
        self.proc.stdout.close()


def _load() -> str:
    return "load " + " ".join(f"{v:.2f}" for v in os.getloadavg())


def side_by_side(baseline: Path, names: list[str], rounds: int) -> list[str]:
    """The lines printed: per case, both sides' medians and the ratio."""
    sides = {"baseline": _Side(baseline, resolve_data_root()), "this": _Side(PROJECT_ROOT, resolve_data_root())}
    lines = [
        f"side by side: baseline {baseline} | this {PROJECT_ROOT}; median of {rounds} calls each, "
        f"interleaved, one BLAS thread; {_load()}"
    ]
    try:
        for name in names:
            answers = {k: s.ask("build " + name)[0] for k, s in sides.items()}
            if "missing" in answers.values():
                lines.append(f"{name}: not on {' and '.join(k for k, a in answers.items() if a == 'missing')}")
                continue
            times = {k: ([], []) for k in sides}
            for r in range(rounds):
                for k in list(sides)[:: 1 if r % 2 == 0 else -1]:
                    wall, cpu = map(float, sides[k].ask("run " + name))
                    times[k][0].append(wall)
                    times[k][1].append(cpu)
            med = {k: [statistics.median(v) * 1e3 for v in times[k]] for k in sides}
            (bw, bc), (tw, tc) = med["baseline"], med["this"]
            lines.append(
                f"{name}: baseline {bw:.1f} ms wall ({bc:.1f} CPU) | this {tw:.1f} ms wall ({tc:.1f} CPU) | "
                f"baseline / this {bw / tw:.2f}x wall, {bc / tc:.2f}x CPU"
            )
    finally:
        for s in sides.values():
            s.close()
    lines.append(_load())
    return lines


def main(argv=None) -> int:
    from .__main__ import CASES

    ap = argparse.ArgumentParser(prog="python -m benchmarks.side_by_side", description=__doc__.split("\n")[0])
    ap.add_argument("--baseline", type=Path, required=True, help="another checkout of the project")
    ap.add_argument("--only", nargs="*", default=["study statistic"])
    ap.add_argument("--rounds", type=int, default=21)
    args = ap.parse_args(argv)
    if not (args.baseline / "harness").is_dir():
        ap.error(f"--baseline {args.baseline}: expected a checkout of the project (no harness/ folder there)")
    names = [n for n in CASES if any(o in n for o in args.only)]
    print("\n".join(side_by_side(args.baseline.resolve(), names, args.rounds)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
