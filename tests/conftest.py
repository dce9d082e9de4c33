"""Shared fixtures: the real input tables (skipped with the reason when absent)."""

from __future__ import annotations

import pytest
import scipy.optimize  # noqa: F401  (load every BLAS before limiting its threads)
from threadpoolctl import threadpool_limits

from harness.datalock import DataError, Tables, load_lock, resolve_data_root


@pytest.fixture(scope="session")
def tables() -> Tables:
    try:
        root = resolve_data_root()
    except DataError as exc:
        pytest.skip(f"the input tables are not available: {exc}")
    return Tables(load_lock(), root)


@pytest.fixture(scope="session", autouse=True)
def _one_blas_thread():
    """As the CLI does: one BLAS thread (many tiny vector ops; threads only contend)."""
    with threadpool_limits(limits=1, user_api="blas"):
        yield
