"""A local Dask cluster for the tests that need one (skipped, with the reason, without dask.distributed)."""

from __future__ import annotations

import contextlib
import warnings

import pytest


@contextlib.contextmanager
def local_cluster(n_workers: int):
    """A ``distributed.LocalCluster`` of ``n_workers`` worker processes on 127.0.0.1 (no dashboard), closed on exit;
    the test is skipped, with the reason, without dask.distributed."""
    distributed = pytest.importorskip(
        "distributed", reason="dask.distributed is not installed (pip install -e '.[dask]')"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a port already in use elsewhere is dask's business, not the test's
        cluster = distributed.LocalCluster(
            n_workers=n_workers, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
        )
    try:
        yield cluster
    finally:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cluster.close()
