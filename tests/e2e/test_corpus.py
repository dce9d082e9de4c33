"""Claims nobody tuned the reports to: a reviewer's reading of every rendered report of the generated corpus
finds nothing to flag (issues 16 and 28).

Each variant of :mod:`corpus` is run on the real tables (the re-implementation once), then assembled with
each of the authors' arms it may meet; the report is rendered, and :func:`reviewer.review` reads it.
Each kind of false sentence of issue 28 (:data:`reviewer.KINDS`) is then checked on the same reports, one
test per variant and kind, so that a kind the templates still get wrong is known by name: those are marked
``xfail(strict=True)`` in :data:`NOT_YET` until the prose round of issue 28 lands (a strict xfail that passes
fails, and says which mark to remove). The slow protocols' variants are marked ``slow``: ``make test`` leaves
them to ``make test-all``.
"""

from __future__ import annotations

import pytest
from corpus import CORPUS, KINDS, Variant, arms, by_kind, write_variant
from reviewer import KINDS as SENTENCE_KINDS
from reviewer import review, review_kind

from harness.build.runner import _run_reimpl, assemble_record, plot_data
from harness.claimfiles.spec import load_claim
from harness.rendering.figures import draw_figures
from harness.rendering.render import render_report
from harness.resampling.multiverse import run_multiverse
from harness.resampling.robustness import run_bootstrap
from harness.verdicts.judging import judge_targets

pytestmark = pytest.mark.e2e

PROSE_ROUND = "fixed by the prose round of #28"
#: Kinds of sentence every variant's reports still hold with today's templates (none since the prose round).
NOT_YET_EVERYWHERE: set[str] = set()
#: (variant, kind) the templates still get wrong besides: each an xfail(strict=True); remove the entry its XPASS
#: names.
NOT_YET: set[tuple[str, str]] = set()
#: Variants whose reports fail the reviewer's other checks.
NOT_YET_READS: set[str] = set()


def _param(v: Variant):
    marks = [pytest.mark.slow] if v.slow else []
    if v.id in NOT_YET_READS:
        marks.append(pytest.mark.xfail(strict=True, reason=PROSE_ROUND))
    return pytest.param(v, id=v.id, marks=marks)


def _kind_param(v: Variant, kind: str):
    marks = [pytest.mark.slow] if v.slow else []
    if kind in NOT_YET_EVERYWHERE or (v.id, kind) in NOT_YET:
        marks.append(pytest.mark.xfail(strict=True, reason=PROSE_ROUND))
    return pytest.param(v, kind, id=f"{v.id}-{kind}", marks=marks)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("corpus")


_RUNS: dict[str, list] = {}


def _reports(variant: Variant, folder, tables) -> list:
    """``[(arm name, report, record)]`` of the variant with each of the authors' arms it meets, made once."""
    if variant.id in _RUNS:
        return _RUNS[variant.id]
    spec = load_claim(write_variant(variant, folder), tables=tables)
    mine = _run_reimpl(spec, tables, {})
    assert mine.ok, mine.reason
    robustness = run_bootstrap(spec, tables, mine, judge_targets(spec, mine, mine))
    theirs = arms(spec, mine)
    if variant.extra_arms is not None:
        theirs.update(variant.extra_arms(spec, tables, mine))
    multiverse = run_multiverse(spec, tables) if variant.multiverse else None
    source = {"url": "https://example.invalid/repo", "commit": "0" * 40}
    out = []
    for name, arm in theirs.items():
        record = assemble_record(
            spec, tables, mine, arm, upstream_source=source, robustness=robustness, multiverse=multiverse
        )
        if name == "agrees":
            figures = draw_figures(record, plot_data(spec, tables, record))
            record = record.model_copy(update={"figures": [f for f, _ in figures]})
        out.append((name, render_report(record), record))
    _RUNS[variant.id] = out
    return out


@pytest.mark.parametrize("variant", [_param(v) for v in CORPUS])
def test_a_claim_at_other_parameters_reads_true(variant, folder, tables):
    problems = {}
    for name, md, record in _reports(variant, folder, tables):
        found = review(md, record)
        if found:
            problems[name] = found
        if name == "crashed":
            assert "ValueError: need at least 5 pre-cutoff models, got 4" in md
            assert record.arms.upstream.reason.endswith(f".cache/runs/{record.claim.id}.json)")
        if variant.expect is not None and name == "agrees":
            variant.expect(record)
        if name in variant.expect_arms:
            assert variant.expect_arms[name](record), name
    assert not problems, "\n".join(f"{name}: {p}" for name, ps in problems.items() for p in ps)


@pytest.mark.parametrize("variant, kind", [_kind_param(v, k) for v in CORPUS for k in SENTENCE_KINDS])
def test_no_sentence_of_a_kind_issue_28_found(variant, kind, folder, tables):
    problems = [
        f"{name}: {p}" for name, md, record in _reports(variant, folder, tables) for p in review_kind(kind, md, record)
    ]
    assert not problems, "\n".join(problems)


def test_the_corpus_spans_every_protocol():
    """Every protocol that claims/ uses has variants in its own file, ``tests/e2e/corpus/<protocol>.py``, each the
    edit of a claim of that protocol, and every claim file a variant edits has at least two (so that no template
    reads true at one setting only)."""
    from claimset import PATHS, PREFIXES
    from corpus import BY_PROTOCOL, by_claim

    from harness.claimfiles.spec import load_claim

    protocol = {prefix: load_claim(path).protocol.name for prefix, path in zip(PREFIXES, PATHS)}
    missing = sorted(set(protocol.values()) - set(BY_PROTOCOL))
    assert not missing, f"protocols of claims/ without variants: add tests/e2e/corpus/<name>.py for {missing}"
    counts = by_claim()
    assert set(counts) <= set(PREFIXES), sorted(set(counts) - set(PREFIXES))  # each variant is of a claim in claims/
    elsewhere = [(v.id, name) for name, vs in BY_PROTOCOL.items() for v in vs if protocol[v.base] != name]
    assert not elsewhere, f"variants in the file of a protocol their claim does not use: {elsewhere}"
    assert all(n >= 2 for n in counts.values()), counts


def test_the_corpus_holds_every_kind_issue_28_lists(tmp_path, tables):
    """Each kind has a variant, and each variant is what its tags say (read from the claim file it writes)."""
    kinds = by_kind()
    assert set(kinds) == set(KINDS) and all(kinds.values()), kinds
    says = {
        "knobs_off": lambda p, n: p.get("box_check", None) is None and p.get("robustness_cold_start") is not True,
        "small_table": lambda p, n: n < 50,
        "flops_column": lambda p, n: (p.get("compute") or {}).get("unit") == "FLOPs",
        "percent_scale": lambda p, n: p.get("scale") == "percent",
        "periods_refused": lambda p, n: "periods" in p,
        "own_settings": lambda p, n: True,
    }
    by_id = {v.id: v for v in CORPUS}
    for kind, ids in kinds.items():
        for vid in ids:
            spec = load_claim(write_variant(by_id[vid], tmp_path), tables=tables)
            p = spec.claim.params
            rows = tables.entry(p.get("table", "oll")).rows
            assert says[kind](p, rows), (kind, vid)
    refused = [by_id[v] for v in kinds["periods_refused"]]
    assert all(v.extra_arms is not None for v in refused)
