"""Figures of the reports: drawn when the claim runs, from its record and its protocol's plot data (never
stored), byte-identical, small, linked.

The synthetic tests need no data. The ``e2e`` tests run the five claims once (session fixture; with the slow
tests, as in ``make test-all``, with the authors' arm, which a fresh machine must run first) and check every
figure of every record, and the same records with the authors' arm missing and with no control run.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from harness.core.paths import PROJECT_ROOT
from harness.core.record import (
    Arm,
    Arms,
    ClaimInfo,
    Provenance,
    Record,
    Verdict,
    read_record,
    record_json,
)
from harness.rendering.figures import MAX_SVG_BYTES, draw_figures
from harness.rendering.render import render_report
from harness.stats.plain import plain

CLAIMS = sorted((PROJECT_ROOT / "claims").glob("*.yaml"))

#: Largest acceptable record (its canonical JSON text): evidence, not pictures.
MAX_RECORD_BYTES = 110_000  # 001's is about 102,000 with its clustered tests and per-specification noise
#: What an absolute local path looks like inside an SVG.
ABSOLUTE = re.compile(r"(?:file:|[\"'( ]/(?:home|tmp|work|usr|var|root|Users|private)/|[A-Za-z]:\\\\)")
LINK = re.compile(r"!\[[^\]]*\]\(([^)]+)\)")


def _expected(spec, record) -> set:
    """The figures the protocol's card names, and the specification curve where the record holds a multiverse
    (the card is the one list: the protocol contract checks that its figures.py draws them)."""
    extra = {"specification_curve"} if record.multiverse is not None else set()
    return set(spec.protocol.card.figures) | extra


# -- synthetic records (no data) -------------------------------------------------------------------------


def _sweep_record(
    *, reimpl: str = "ok", upstream: str = "ok", figures: bool = True, cid: str = "999_synthetic"
) -> tuple[Record, dict]:
    """A synthetic ``hyperparameters`` record, each sweep's largest distance least at the claimed setting, and its
    (empty) plot data."""
    grids = {"tau": [0.5, 0.9, 0.98], "kappa": [10.0, 50.0, 200.0], "lam": [0.0, 1e-4, 1e-3, 1e-2]}
    claimed = {"tau": 0.98, "kappa": 50.0, "lam": 1e-3}
    mine, theirs = {}, {}
    for k, xs in grids.items():
        for i, x in enumerate(xs):
            mine[f"sweep.{k}={x:g}.max_dev"] = 0.0004 if x == claimed[k] else 0.01 * (i + 1)
            theirs[f"sweep.{k}={x:g}.max_dev"] = 0.0005 if x == claimed[k] else 0.012 * (i + 1)
    arm = {
        "ok": Arm(status="ok", values=mine),
        "could not run": Arm(status="could not run", reason="synthetic: no run"),
        "not run": Arm(status="not run", reason="synthetic: switched off"),
    }
    params = {**claimed, **{f"{k}_grid": xs for k, xs in grids.items()}, "within": 0.001, "eval_x": 1000.0}
    record = Record(
        claim=ClaimInfo(
            id=cid,
            claim="A synthetic claim.",
            locator="nowhere",
            protocol="hyperparameters",
            path=f"claims/{cid}.yaml",
            spec_sha256="0" * 64,
            params=params,
            seed=1,
            upstream=None,
            inputs=[],
            limitations=[],
            figures=figures,
        ),
        inputs=[],
        data={},
        provenance=Provenance(project_commit=None, project_dirty=None, python="3", packages={}),
        arms=Arms(reimpl=arm[reimpl], upstream=Arm(status="ok", values=theirs) if upstream == "ok" else arm[upstream]),
        quantities={},
        targets=[],
        controls=[],
        verdict=Verdict(verdict="inconclusive" if reimpl == "ok" else "could not run", reasons=[]),
    )
    return record, {}


def test_a_change_of_drawing_reruns_and_one_of_wording_does_not():
    """Figures are drawn when the claim runs, from plot data no record keeps: the drawing code is a dependency
    of the record; the wording code (templates, results objects) only of the report."""
    from harness.core.claimslock import MEASURING, RECORD_CODE, REPORTING, files_of

    record = {f for p in RECORD_CODE for f in files_of(p)}
    assert PROJECT_ROOT / "harness" / "rendering" / "figures.py" in record
    assert "figures.py" in MEASURING and "results.py" in REPORTING
    assert not set(MEASURING) & set(REPORTING)


def test_no_figure_when_turned_off_or_reimpl_missing():
    assert draw_figures(*_sweep_record(figures=False)) == []
    assert draw_figures(*_sweep_record(reimpl="could not run")) == []


@pytest.mark.parametrize("status", ["could not run", "not run"])
def test_synthetic_record_without_the_authors_arm(status):
    figures = draw_figures(*_sweep_record(upstream=status))
    assert [f.name for f, _ in figures] == ["sweeps"]
    fig, svg = figures[0]
    assert fig.missing and "authors'" in fig.missing[0]
    assert svg.startswith(b"<?xml") and len(svg) < MAX_SVG_BYTES
    full = draw_figures(*_sweep_record())
    assert full[0][0].missing == []


def test_synthetic_rerender_is_byte_identical():
    record, plots = _sweep_record()
    again = Record.model_validate(json.loads(record_json(record)))
    assert [b for _, b in draw_figures(record, plots)] == [
        b for _, b in draw_figures(again, json.loads(json.dumps(plots)))
    ]


# -- the five claims -------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def runs(tables, run_once, request):
    """``{claim id: (spec, record, plots)}`` for every claim, each arm computed once per session, figures drawn
    as the CLI draws them. Without the slow tests (``make test``) the heavy claims and the authors' arm are left
    out (tests/claimset.py); ``make test-all`` has them all, both arms where the checkout can be had."""
    from claimset import heavy, slow_selected

    from harness.claimfiles.spec import load_claim

    out = {}
    for path in CLAIMS:
        if heavy(path.stem[:3]) and not slow_selected(request.config):
            continue
        spec = load_claim(path, tables=tables)
        if not spec.protocol.card.figures:
            continue  # its protocol draws none (a multiverse's curve is drawn, and checked, for the others)
        try:
            result = run_once(path.stem[:3], upstream=slow_selected(request.config))
        except pytest.skip.Exception:
            result = run_once(path.stem[:3])
        figures = draw_figures(result.record, result.plots)
        out[spec.id] = (spec, result.record.model_copy(update={"figures": [f for f, _ in figures]}), result.plots)
    return out


def _variant(spec, record: Record, tables, *, upstream: Arm | None = None, no_controls: bool = False):
    """``(record, plots)``: the record and its plot data as if the authors' arm had not run, or no control had."""
    from harness.protocols.base import Context

    up = upstream or record.arms.upstream
    controls = [] if no_controls else record.controls
    ctx = Context(
        spec=spec,
        params=spec.params,
        data=record.data,
        reimpl=record.arms.reimpl,
        upstream=up,
        targets=record.targets,
        tables=tables,
    )
    arms = Arms(reimpl=record.arms.reimpl, upstream=up)
    return record.model_copy(update={"arms": arms, "controls": controls}), plain(spec.protocol.plots(ctx))


def _check_svgs(figures, cid: str) -> None:
    for fig, svg in figures:
        assert fig.path == f"figures/{cid}/{fig.name}.svg"
        assert svg.startswith(b"<?xml") and b"</svg>" in svg
        assert len(svg) < MAX_SVG_BYTES, f"{fig.path}: {len(svg)} bytes"
        text = svg.decode("utf-8")
        assert not ABSOLUTE.search(text), f"{fig.path}: {ABSOLUTE.search(text).group(0)!r}"
        assert str(PROJECT_ROOT) not in text
        assert "<dc:date>" not in text and "Matplotlib v" not in text
        assert fig.caption and "\n" not in fig.caption


@pytest.mark.e2e
def test_each_claim_gets_its_figures(runs):
    for cid, (spec, record, plots) in runs.items():
        figures = draw_figures(record, plots)
        assert {f.name for f, _ in figures} == _expected(spec, record), cid
        assert ("specification_curve" in {f.name for f, _ in figures}) == any(
            f.section == "multiverse" for f, _ in figures
        ), cid
        _check_svgs(figures, cid)
        if record.arms.upstream.ok:  # what is missing is then only what the authors' arm does not report
            assert not [m for f, _ in figures for m in f.missing if "not run" in m or "control" in m], cid


@pytest.mark.e2e
def test_records_are_modest(runs):
    for cid, (_, record, _) in runs.items():
        size = len(record_json(record).encode())
        assert 0 < size < MAX_RECORD_BYTES, f"{cid}: the record takes {size} bytes"


@pytest.mark.e2e
def test_boundary_density_is_the_data(runs, tables):
    from harness.protocols.leaderboard import leaderboard_frame, task_data

    spec, _, plots = runs["002_table1_boundary_1e24"]
    data = task_data(leaderboard_frame(tables, spec.params), spec.params)
    extent = plots["extent"]
    for label, (z, y) in data.items():
        counts = np.array(plots["densities"][label])
        expected, _, _ = np.histogram2d(z, y, bins=counts.shape[::-1], range=[extent[:2], extent[2:]])
        assert np.array_equal(counts, expected.T), label
        assert z.size == counts.sum(), label
        assert extent[0] <= z.min() and z.max() <= extent[1], label


@pytest.mark.e2e
def test_redrawing_is_byte_identical(runs, tmp_path):
    """Drawn twice, from a record and plot data read back from disk, and in a fresh interpreter with a hostile
    matplotlibrc."""
    hashes = {}
    for cid, (_, record, plots) in runs.items():
        first = draw_figures(record, plots)
        (tmp_path / f"{cid}.json").write_text(record_json(record), encoding="utf-8")
        (tmp_path / f"{cid}.plots.json").write_text(json.dumps(plots), encoding="utf-8")
        again = draw_figures(read_record(tmp_path / f"{cid}.json"), json.loads(json.dumps(plots)))
        assert [(f, b) for f, b in first] == [(f, b) for f, b in again], cid
        hashes[cid] = {f.path: hashlib.sha256(b).hexdigest() for f, b in first}
    rc = tmp_path / "mplconfig"
    rc.mkdir()
    (rc / "matplotlibrc").write_text(
        "font.size: 20\nlines.linewidth: 5\nsvg.fonttype: path\nsvg.hashsalt: other\n"
        "axes.prop_cycle: cycler('color', ['red'])\nfont.family: serif\n"
    )
    script = (
        "import hashlib, json, sys\nfrom harness.core.record import read_record\nfrom harness.rendering.figures import "
        "draw_figures\nout = {}\nfor p in sys.argv[1:]:\n    r = read_record(p + '.json')\n"
        "    plots = json.loads(open(p + '.plots.json').read())\n    out[r.claim.id] = "
        "{f.path: hashlib.sha256(b).hexdigest() for f, b in draw_figures(r, plots)}\nprint(json.dumps(out))\n"
    )
    env = {**os.environ, "MPLCONFIGDIR": str(rc)}
    done = subprocess.run(
        [sys.executable, "-c", script, *(str(tmp_path / cid) for cid in runs)],
        capture_output=True,
        text=True,
        env=env,
        cwd=PROJECT_ROOT,
        check=True,
    )
    assert json.loads(done.stdout) == hashes


@pytest.mark.e2e
def test_report_links_every_figure_and_only_those(runs, tmp_path):
    for cid, (_, record, plots) in runs.items():
        figures = draw_figures(record, plots)
        record = record.model_copy(update={"figures": [f for f, _ in figures]})
        for fig, svg in figures:
            (tmp_path / fig.path).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / fig.path).write_bytes(svg)
        md = render_report(record)
        links = LINK.findall(md)
        assert sorted(links) == sorted(f.path for f, _ in figures), cid
        assert all((tmp_path / link).is_file() for link in links), cid
        for fig, _ in figures:
            assert f"*{fig.caption}*" in md, f"{cid}: caption of {fig.name} not printed"
    on_disk = {p.relative_to(tmp_path).as_posix() for p in (tmp_path / "figures").rglob("*.svg")}
    linked = {f.path for _, record, _ in runs.values() for f in record.figures}
    assert on_disk == linked


@pytest.mark.e2e
@pytest.mark.parametrize("status", ["could not run", "not run"])
def test_figures_without_the_authors_arm(runs, tables, status):
    missing_arm = Arm(status=status, reason="synthetic: the authors' arm is missing")
    for cid, (spec, record, _) in runs.items():
        variant, plots = _variant(spec, record, tables, upstream=missing_arm)
        figures = draw_figures(variant, plots)
        assert {f.name for f, _ in figures} == _expected(spec, variant), cid
        _check_svgs(figures, cid)
        assert any(any("authors'" in m for m in f.missing) for f, _ in figures), cid


@pytest.mark.e2e
def test_figures_without_controls(runs, tables):
    for cid, (spec, record, _) in runs.items():
        figures = draw_figures(*_variant(spec, record, tables, no_controls=True))
        names = {f.name for f, _ in figures}
        assert names, cid
        assert names <= _expected(spec, record), cid
        _check_svgs(figures, cid)
