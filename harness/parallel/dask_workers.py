"""Dask workers that compute what this checkout would: the same code, the same numerics pins, the same packages.

A record's bytes depend on the code that computed it and on the CPU kernels
it ran with (:mod:`harness.core.numerics`). The lock hashes the client's code;
a Dask worker imports the harness from wherever it was started, with whatever
environment its shell had. So before the first task a build asks every worker
for its *identity* (:func:`identity`): the sha256 of every file of its
``harness`` package (:func:`harness.core.claimslock.digest`, over the whole package
a task can load), the pins in its environment and
its package versions; a worker that differs from this process is refused in
one line that names it and what differs (:func:`check_workers`). A worker that
joins later is checked by its first task (:func:`harness.parallel.fanout._call_checked`, which asks
:func:`differences`).

``python -m harness worker tcp://HOST:PORT`` starts workers that pass: from
this checkout's environment, with the pins, one thread each, listening on
127.0.0.1 only (:func:`worker_command`).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from functools import cache

from ..core.errors import HarnessError

__all__ = ["identity", "expected", "check_workers", "differences", "worker_command", "WORKER_WAIT_S"]

#: How long a build waits for a first worker to join the scheduler before it refuses to run.
WORKER_WAIT_S = 10.0
SHOWN = 3


@cache
def identity() -> dict:
    """This process's code digest (every file of its ``harness`` package), numerics pins and package versions."""
    from ..core.claimslock import digest, files_of
    from ..core.numerics import PINNED_ENV
    from ..core.provenance import package_versions

    files = digest(files_of("harness/**"))
    return {
        "code": hashlib.sha256(json.dumps(files, sort_keys=True).encode()).hexdigest(),
        "files": files,
        "pins": {k: os.environ.get(k) for k in sorted(PINNED_ENV)},
        "packages": package_versions(),
    }


def expected() -> dict:
    """What a worker must report, sent with each task: this process's identity without the list of files."""
    return {k: v for k, v in identity().items() if k != "files"}


def differences(mine: dict, theirs: dict) -> list[str]:
    """What differs between two identities, in words (empty when they agree)."""
    out = []
    if theirs.get("code") != mine["code"]:
        a, b = mine.get("files", {}), theirs.get("files", {})
        changed = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
        more = f" and {len(changed) - SHOWN} more" if len(changed) > SHOWN else ""
        which = f"{', '.join(changed[:SHOWN])}{more} differ" if changed else f"digest {str(theirs.get('code'))[:12]}"
        out.append(f"other harness code ({which})")
    for part, what, sep in (("pins", "numerics pins", "="), ("packages", "packages", " ")):
        got = theirs.get(part, {})
        diff = [
            f"{k}{sep}{got.get(k) or 'unset'} (here {v or 'unset'})" for k, v in mine[part].items() if got.get(k) != v
        ]
        if diff:
            out.append(f"other {what}: {', '.join(diff)}")
    return out


def _refusal(address: str, worker: str, what: list[str]) -> str:
    return (
        f"Dask worker {worker} of the scheduler at {address} would not compute what this checkout does: "
        f"{'; '.join(what)}; start workers with `python -m harness worker tcp://{address}`"
    )


def check_workers(client, address: str) -> dict[str, str]:
    """Refuse the run unless every worker of the scheduler has this process's identity; ``{worker: code digest}``.

    Waits up to :data:`WORKER_WAIT_S` for a first worker (a scheduler without one would never run a task).
    """
    try:
        client.wait_for_workers(1, timeout=WORKER_WAIT_S)
    except (TimeoutError, OSError) as exc:
        raise HarnessError(
            f"no Dask worker joined the scheduler at {address} within {WORKER_WAIT_S:g} s ({exc})"
        ) from None
    try:
        found = client.run(identity)
    except (OSError, TimeoutError) as exc:
        raise HarnessError(
            f"the Dask workers of the scheduler at {address} could not be asked who they are: {exc}"
        ) from None
    mine = identity()
    for worker, theirs in sorted(found.items()):
        what = differences(mine, theirs)
        if what:
            raise HarnessError(_refusal(address, worker, what))
    return {worker: theirs["code"] for worker, theirs in sorted(found.items())}


def worker_command(address: str, nworkers: int) -> list[str]:
    """The command that starts ``nworkers`` correct workers for the scheduler at ``address``: this interpreter's
    ``dask worker``, one thread each, listening on 127.0.0.1 only, no dashboard."""
    return [
        sys.executable,
        "-m",
        "distributed.cli.dask_worker",
        address,
        "--nworkers",
        str(nworkers),
        "--nthreads",
        "1",
        "--host",
        "127.0.0.1",
        "--no-dashboard",
    ]
