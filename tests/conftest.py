"""Shared fixtures: the real input tables (skipped with the reason when absent), a scratch copy of the reports."""

from __future__ import annotations

from pathlib import Path

import pytest
import scipy.optimize  # noqa: F401  (load every BLAS before limiting its threads)
from threadpoolctl import threadpool_limits

from harness.core.datalock import DataError, Tables, load_lock, resolve_data_root


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


CLAIMS = Path(__file__).resolve().parents[1] / "claims"


def claim_path(prefix: str) -> Path:
    """The claim file whose name starts with ``prefix`` (``"002"``)."""
    (path,) = sorted(CLAIMS.glob(f"{prefix}*.yaml"))
    return path


@pytest.fixture(scope="session")
def run_once(tables):
    """``run_once("002", upstream=False)``: the claim's record and plot data, each arm computed once per session.

    With ``upstream=True`` the authors' arm runs from the pinned checkout (from the project's cache when it
    holds the answer); the test is skipped, with the reason, when the checkout cannot be had. The record
    without the authors' arm reuses the same re-implementation arm.
    """
    from types import SimpleNamespace

    from harness.build.runner import _run_reimpl, _run_upstream, assemble_record, plot_data
    from harness.claimfiles.spec import load_claim
    from harness.core.record import Arm
    from harness.resampling.multiverse import run_multiverse
    from harness.resampling.robustness import run_bootstrap
    from harness.verdicts.judging import judge_targets

    arms = {}

    def run(prefix: str, *, upstream: bool = False):
        spec = load_claim(claim_path(prefix), tables=tables)
        if (prefix, "reimpl") not in arms:
            arms[(prefix, "reimpl")] = _run_reimpl(spec, tables, {})
            mine = arms[(prefix, "reimpl")]
            arms[(prefix, "robustness")] = run_bootstrap(spec, tables, mine, judge_targets(spec, mine, mine))
            arms[(prefix, "multiverse")] = run_multiverse(spec, tables) if mine.ok else None
        source = None
        if upstream:
            if (prefix, "upstream") not in arms:
                from harness.authors.checkout import checkout, verified_tree
                from harness.authors.upstream import UpstreamOptions
                from harness.core.errors import UpstreamError

                try:
                    verified_tree("prescriptive-scaling")
                except UpstreamError:
                    try:
                        checkout("prescriptive-scaling")
                    except UpstreamError as exc:
                        pytest.skip(f"the authors' checkout cannot be had: {exc}")
                arms[(prefix, "upstream")] = _run_upstream(spec, tables, UpstreamOptions(), {})
            theirs, source = arms[(prefix, "upstream")]
        else:
            theirs = Arm(status="not run", reason="the authors' arm was switched off for this run by --no-upstream")
        record = assemble_record(
            spec,
            tables,
            arms[(prefix, "reimpl")],
            theirs,
            upstream_source=source,
            robustness=arms[(prefix, "robustness")],
            multiverse=arms[(prefix, "multiverse")],
        )
        return SimpleNamespace(record=record, plots=plot_data(spec, tables, record))

    return run


@pytest.fixture(scope="session")
def checkout_pin():
    """The verified pinned checkout of the authors' repository, cloned if needed; skips with the reason when
    it cannot be had."""
    from harness.authors.checkout import checkout, verified_tree
    from harness.core.errors import UpstreamError

    try:
        return verified_tree("prescriptive-scaling")[0]
    except UpstreamError as not_ready:
        try:
            return checkout("prescriptive-scaling")
        except UpstreamError as exc:
            pytest.skip(f"the authors' checkout cannot be had: {exc} (verified_tree said: {not_ready})")


@pytest.fixture
def sealed_reports(tmp_path):
    """A scratch reports folder holding the committed records, with a lock naming their hashes (as a run writes
    them; what they were made from is left out)."""
    import shutil

    from harness.core.claimslock import file_sha, update
    from harness.core.paths import PROJECT_ROOT

    committed = sorted((PROJECT_ROOT / "reports").glob("*.json"))
    if not committed:
        pytest.skip("no committed records in reports/")
    folder = tmp_path / "reports"
    folder.mkdir()
    for p in committed:
        shutil.copy(p, folder / p.name)
        update(folder, "claims", p.stem, {"outs": {p.name: file_sha(p)}})
    return folder


# -- the order of the test files: the longest first -------------------------------------------------------
#
# `make test` spreads whole files over two processes (pytest-xdist, --dist loadfile), handing each the next
# file in collection order as it frees up; a long file handed out last leaves the other process idle while it
# runs. So the files are collected longest first, by the seconds each took in the last run on this checkout
# (pytest's cache, .pytest_cache, git-ignored; a file never timed counts as long). Only the order changes:
# each file's tests keep theirs, and on a fresh checkout (CI) the order is the usual one.

_SECONDS_KEY = "harness/file-seconds"


def _file_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def pytest_collection_modifyitems(session, config, items):
    cache = getattr(config, "cache", None)
    seconds = (cache.get(_SECONDS_KEY, {}) if cache is not None else {}) or {}
    if not seconds:
        return
    first_seen = {}
    for i, item in enumerate(items):
        first_seen.setdefault(_file_of(item.nodeid), i)
    longest = max(seconds.values())
    items.sort(key=lambda it: (-seconds.get(_file_of(it.nodeid), longest), first_seen[_file_of(it.nodeid)]))


_SECONDS_SEEN: dict[str, float] = {}  # seconds per file in this run (setup, call and teardown of its tests)


def pytest_runtest_logreport(report):
    # counted where it is written: on the controlling process, to which xdist forwards every worker's reports
    f = _file_of(report.nodeid)
    _SECONDS_SEEN[f] = _SECONDS_SEEN.get(f, 0.0) + report.duration


def pytest_sessionfinish(session, exitstatus):
    config = session.config
    if hasattr(config, "workerinput") or getattr(config, "cache", None) is None or not _SECONDS_SEEN:
        return
    merged = {**(config.cache.get(_SECONDS_KEY, {}) or {}), **{f: round(s, 2) for f, s in _SECONDS_SEEN.items()}}
    config.cache.set(_SECONDS_KEY, dict(sorted(merged.items())))
