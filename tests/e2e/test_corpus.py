"""Claims nobody tuned the reports to: every record of the generated corpus passes its invariants, and a
reviewer's reading of every rendered report finds nothing to flag (issue 16).

Each variant of :mod:`corpus` is run on the real tables (the re-implementation once), then assembled with
each of the authors' arms it may meet; :func:`harness.runner.assemble_record` checks the invariants of every
record it builds (a contradiction raises), the report is rendered, and :func:`reviewer.review` reads it.
The slow protocols' variants are marked ``slow``: ``make test`` leaves them to ``make test-all``.
"""

from __future__ import annotations

import pytest
from corpus import CORPUS, Variant, arms, write_variant
from reviewer import review

from harness.figures import draw_figures
from harness.render import render_report
from harness.robustness import run_bootstrap
from harness.runner import _run_reimpl, assemble_record
from harness.spec import load_claim
from harness.verdict import judge_targets

pytestmark = pytest.mark.e2e


def _param(v: Variant):
    return pytest.param(v, id=v.id, marks=[pytest.mark.slow] if v.slow else [])


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("corpus")


@pytest.mark.parametrize("variant", [_param(v) for v in CORPUS])
def test_a_claim_at_other_parameters_reads_true(variant, folder, tables):
    spec = load_claim(write_variant(variant, folder), tables=tables)
    mine = _run_reimpl(spec, tables, {})
    assert mine.ok, mine.reason
    robustness = run_bootstrap(spec, tables, mine, judge_targets(spec, mine, mine))
    theirs = arms(spec, mine)
    if variant.extra_arms is not None:
        theirs.update(variant.extra_arms(spec, tables, mine))
    source = {"url": "https://example.invalid/repo", "commit": "0" * 40}
    problems = {}
    for name, arm in theirs.items():
        record = assemble_record(spec, tables, mine, arm, upstream_source=source, robustness=robustness)
        if name == "agrees":
            figures = draw_figures(record)
            record = record.model_copy(update={"figures": [f for f, _ in figures]})
        md = render_report(record)
        found = review(md, record)
        if found:
            problems[name] = found
        if name == "crashed":
            assert "ValueError: need at least 5 pre-cutoff models, got 4" in md
            assert record.arms.upstream.reason.endswith(f".cache/runs/{spec.id}.json)")
        if variant.expect is not None and name == "agrees":
            variant.expect(record)
        if name in variant.expect_arms:
            assert variant.expect_arms[name](record), name
    assert not problems, "\n".join(f"{name}: {p}" for name, ps in problems.items() for p in ps)


def test_the_corpus_spans_every_protocol():
    from claimset import PATHS, PREFIXES
    from corpus import by_protocol

    from harness.spec import load_claim

    counts = by_protocol()
    assert set(counts) <= set(PREFIXES)  # each variant is of a claim in claims/
    protocol = {prefix: load_claim(path).protocol.name for prefix, path in zip(PREFIXES, PATHS)}
    covered = {protocol[base] for base in counts}
    assert set(protocol.values()) <= covered, "a protocol of claims/ has no variant in the corpus"
    assert all(n >= 2 for n in counts.values()), counts
