"""Reports word their records: sentences follow findings, never the other way round.

A few golden-prose tests: each takes a committed run record (no data, no upstream needed), puts one finding
in another state the way another run could have, renders it with the invariants switched off (the edited
record contradicts its own numbers on purpose; the invariants' own tests check that they catch that), and
checks that the sentence of the old state is gone and that of the new one is there. Which state a real
claim at other parameters comes to is asserted on the state itself, in ``tests/e2e/test_corpus.py``; that
its report then reads true is the reviewer's check there.
"""

from pathlib import Path

import pytest
from claimset import PREFIXES

from harness.core.record import Arm, Finding, read_record
from harness.rendering.render import render_report as _render


def render_report(record) -> str:
    """The report with its line breaks as spaces (templates wrap prose where they like), unchecked."""
    return " ".join(_render(record, check=False).split())


REPORTS = Path(__file__).resolve().parents[2] / "reports"


def _record(prefix: str):
    paths = sorted(REPORTS.glob(f"{prefix}*.json"))
    if not paths:
        pytest.skip(f"no committed record {prefix}* in {REPORTS}")
    return read_record(paths[0])


def _with_finding(record, name, **changes):
    f = record.findings[name]
    new = Finding(state=changes.pop("state", f.state), facts={**f.facts, **changes})
    return record.model_copy(update={"findings": {**record.findings, name: new}})


def _without_upstream(record, reason="no route to host"):
    """The record as a run without the authors' arm would word it (the arm's numbers gone)."""
    from harness.verdicts.common_findings import authors_arm_finding

    arm = Arm(status="could not run", reason=reason)
    arms = record.arms.model_copy(update={"upstream": arm})
    agreement = Finding(
        state="not_compared",
        facts={"upstream_status": "could not run", "upstream_reason": reason, "reimpl_status": "ok"},
    )
    findings = {**record.findings, "agreement": agreement, "authors_arm": authors_arm_finding(arm)}
    findings.pop("explanation", None)
    findings.pop("own_setting", None)
    return record.model_copy(update={"arms": arms, "findings": findings})


def _outside_details(md: str) -> str:
    """The report as a reader sees it before unfolding anything: every ``<details>`` block left out."""
    import re

    return re.sub(r"<details>.*?</details>", " ", md, flags=re.S)


@pytest.mark.parametrize("prefix", PREFIXES)
def test_a_missing_authors_arm_is_said_in_one_line_and_not_contradicted(prefix):
    md = render_report(_without_upstream(_record(prefix)))
    lead = md.split(" ## ")[0]
    assert (
        "The authors' code did not run: the harness could not run it, for the reason recorded" in lead
    )  # the lead says so
    assert "The two arms were not compared" in md
    assert "no route to host" in md and "no route to host" not in _outside_details(md)  # folded, not in prose
    assert "in this run it ran." not in md and "authors' code ran." not in md
    assert "(not run:" not in md and "(could not run:" not in md  # no "(… (…))"


@pytest.mark.parametrize("prefix", PREFIXES)
def test_an_exceptions_text_never_reaches_the_prose(prefix):
    """The adapter's crash is worded (its exception's type, or the adapter's own reason for a claim their code
    cannot take); the exception's message and the adapter's path go to a folded block only (issue 28)."""
    crash = (
        "the adapter protocols/x/adapter.py exited with status 1; last lines of stderr:\n"
        "Traceback (most recent call last):\n"
        "harness.authors.adapters.errors.OutsideTheirCodeError: the claim's periods are not those of the authors' code "
        "(their scripts cannot take others): period H1 = None..2024-04 is not their <=2024-06 = (1900, 1)..(2024, 6)"
    )
    md = render_report(_without_upstream(_record(prefix), crash))
    shown = _outside_details(md)
    assert "the claim's periods are not those of the authors' code" in shown.split(" ## ")[0]
    assert "H1 = None..2024-04" in md and "H1 = None..2024-04" not in shown
    assert "OutsideTheirCodeError" not in shown and "adapter.py" not in shown


def test_numbers_as_a_reader_reads_them():
    from harness.core.quantities import budget_text, power_of_ten
    from harness.rendering.render import cap, every, fmt_auto, fmt_general, fmt_num, fmt_sci, fmt_signed

    assert budget_text(1000.0) == "10²⁴ FLOPs" and budget_text(10**3.5) == "10^24.5 FLOPs"
    assert budget_text(3162.0) == "3.2 × 10²⁴ FLOPs" and budget_text(300.0) == "3 × 10²³ FLOPs"
    assert power_of_ten(1e-6) == "10⁻⁶" and power_of_ten(2.5e-6) == "2.5 × 10⁻⁶"
    assert fmt_general(1e4) == "10⁴" and fmt_general(1e-6) == "10⁻⁶" and fmt_general(0.001) == "0.001"
    assert fmt_general(1e-4) == "10⁻⁴" and fmt_general(0.98) == "0.98" and fmt_general(0.0) == "0"
    assert fmt_general(12345.0) == "1.234 × 10⁴" and fmt_general(50.0) == "50" and fmt_general(-2e-5) == "−2 × 10⁻⁵"
    assert fmt_num(-0.00001) == "0.0000" and fmt_signed(-0.00001) == "0.0000" and fmt_signed(0.0143) == "+0.0143"
    assert fmt_num(-0.5) == "-0.5000" and fmt_signed(-0.02) == "-0.0200"
    assert fmt_auto(0.0) == "0" and fmt_auto(3.0) == "3" and fmt_auto(2.2e-16) == "2.20e-16"  # a count as a count
    assert fmt_sci(0.0) == "0" and fmt_sci(-3.5e-6, 1) == "-3.5e-06"
    assert [every(n, "target") for n in (1, 2, 12)] == ["the one target", "both targets", "all 12 targets"]
    assert cap(every(2, "target")) == "Both targets" and cap("the MATH row") == "The MATH row"


def test_a_falsified_source_line_in_the_singular():
    rec = _record("004")
    entries = [dict(e) for e in rec.findings["audit"].facts.get("entries", [])] or [{"file": "f.py", "line": 1}]
    md = render_report(
        _with_finding(
            rec,
            "audit",
            state="some_failed",
            n=11,
            n_found=10,
            n_failed=1,
            entries=entries,
            failed=["skill_frontier/core/sigmoid.py:63"],
        )
    )
    assert "state the triple" not in md
    assert "only 10 say what the claim file" in md and "skill_frontier/core/sigmoid.py:63 does not" in md


def test_rendering_is_a_pure_function_of_the_record():
    for prefix in PREFIXES:
        if not sorted(REPORTS.glob(f"{prefix}*.json")):
            continue  # a claim not run yet
        rec = _record(prefix)
        assert _render(rec) == _render(rec)
        assert _render(rec) == (REPORTS / f"{rec.claim.id}.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("prefix", PREFIXES)
def test_the_committed_reports_pass_the_reviewer(prefix):
    from reviewer import review

    rec = _record(prefix)
    md = (REPORTS / f"{rec.claim.id}.md").read_text(encoding="utf-8")
    assert review(md, rec) == []


#: (claim, kind of sentence of issue 28) the committed reports still hold: xfail(strict=True) until the prose round
#: of issue 28 lands and the reports are regenerated.
COMMITTED_NOT_YET: set[tuple[str, str]] = set()


def _kind_params():
    from reviewer import KINDS

    out = []
    for prefix in PREFIXES:
        for kind in KINDS:
            marks = [pytest.mark.xfail(strict=True, reason="fixed by the prose round of #28")]
            out.append(
                pytest.param(
                    prefix, kind, id=f"{prefix}-{kind}", marks=marks if (prefix, kind) in COMMITTED_NOT_YET else []
                )
            )
    return out


@pytest.mark.parametrize("prefix, kind", _kind_params())
def test_the_committed_reports_hold_no_sentence_of_a_kind_issue_28_found(prefix, kind):
    from reviewer import review_kind

    rec = _record(prefix)
    md = (REPORTS / f"{rec.claim.id}.md").read_text(encoding="utf-8")
    assert review_kind(kind, md, rec) == []


def test_render_needs_no_protocol_no_scipy_and_no_data(tmp_path):
    """``python -m harness render`` draws reports from their records alone: of the protocols, only their cards
    and their figures are loaded."""
    import subprocess
    import sys

    from harness.core.claimslock import file_sha, update
    from harness.core.record import record_json

    rec = _record("002")
    written = tmp_path / f"{rec.claim.id}.json"
    written.write_text(record_json(rec), encoding="utf-8")
    update(tmp_path, "claims", rec.claim.id, {"outs": {written.name: file_sha(written)}})  # locked, as a run does
    code = (
        "import sys\n"
        "from harness import cli\n"
        f"assert cli.main(['--data-root', '/nonexistent', 'render', '--out', {str(tmp_path)!r}, '002']) == 0\n"
        "def light(m):  # a protocol's card, findings and drawing, nothing of its measurement\n"
        "    parts = m.split('.')\n"
        "    return len(parts) <= 3 or parts[3:] in (['figures'], ['findings'], ['invariants'], ['quantities'])\n"
        "plain = ('harness.stats', 'harness.stats.plain')  # the records' JSON conversion: standard library only\n"
        "heavy = [m for m in sys.modules if m.split('.')[0] in ('scipy', 'pandas')\n"
        "         or (m.startswith(('harness.stats', 'harness.claimfiles.spec', 'harness.build.runner',\n"
        "                           'harness.protocols.base')) and m not in plain)\n"
        "         or (m.startswith('harness.protocols.') and not light(m))]\n"
        "print(heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stdout
    assert (tmp_path / f"{rec.claim.id}.md").read_text(encoding="utf-8") == _render(rec)


# -- claim-supplied text is printed literally (hardening item 12) -------------------------------------------

EVIL = "a | b <script>alert(1)</script> `code` **bold** _em_ [link](javascript:x) &lt; ~~del~~ \\|"
#: Record fields whose strings come from a claim file (or are built from its labels).
CLAIM_TEXT_KEYS = {"claim", "locator", "title", "label", "reason", "changes", "quantity_label", "task", "words"}


def _evil(obj, key=None):
    if isinstance(obj, dict):
        return {k: _evil(v, k) for k, v in obj.items()}
    if isinstance(obj, list):
        if key == "limitations":
            return [EVIL for _ in obj]
        return [_evil(v, key if key in ("titles", "labels", "drift", "stable") else None) for v in obj]
    if isinstance(obj, str) and key in CLAIM_TEXT_KEYS | {"titles", "labels", "drift", "stable"}:
        return EVIL
    return obj


def _cells(line: str) -> int:
    """Cells of a GFM table row: split on every | not escaped by an odd run of backslashes."""
    count, backslashes = 0, 0
    for c in line.strip():
        if c == "|" and backslashes % 2 == 0:
            count += 1
        backslashes = backslashes + 1 if c == "\\" else 0
    return count - 1


def _tables(md: str):
    table: list[str] = []
    for line in md.splitlines() + [""]:
        if line.startswith("|"):
            table.append(line)
        elif table:
            yield table
            table = []


@pytest.mark.parametrize("prefix", PREFIXES)
def test_claim_text_cannot_break_a_table_or_add_html(prefix):
    from harness.core.record import Record

    rec = _record(prefix)
    evil = Record.model_validate(_evil(rec.model_dump(mode="json")))
    md = _render(evil, check=False)  # every title is the same string now, which the invariants would question
    assert "<script" not in md and "</script" not in md
    assert EVIL.split(" | ")[0] in md  # the text is there
    assert "\\*\\*bold\\*\\*" in md and "\\`code\\`" in md and "\\_em\\_" in md and "\\[link\\]" in md
    assert "&amp;lt;" in md and "\\~\\~del\\~\\~" in md
    n_tables = 0
    for table in _tables(md):
        n_tables += 1
        widths = {_cells(line) for line in table}
        assert len(widths) == 1, "\n".join(table)
    assert n_tables >= 3
    assert md.count("a \\| b") >= 1  # a label in a table cell: its pipe escaped


def test_the_md_filter():
    from harness.rendering.render import md

    assert md("MATH Lvl 5") == "MATH Lvl 5" and md("q_τ^sig(z;θ)") == "q_τ^sig(z;θ)"
    assert md("gap < 2e-4") == "gap < 2e-4" and md("|coverage − τ|") == "|coverage − τ|"
    assert md("a | b", cell=True) == "a \\| b"
    assert md("<script>") == "&lt;script>" and md("<!-- x -->") == "&lt;!-- x -->"
    assert md("**x** `y` [z](u) _w_ ~v~ \\") == "\\*\\*x\\*\\* \\`y\\` \\[z\\](u) \\_w\\_ \\~v\\~ \\\\"
    assert md("# heading") == "\\# heading" and md("> quote") == "\\> quote" and md("- item") == "\\- item"
    assert md("1. item") == "1\\. item" and md("- item", cell=True) == "- item"
    assert md("a\nb\tc") == "a b c" and md("x\x1by\u202ez") == "x\\u001by\\u202ez"
    assert md("#Params (B)", code=True) == "`#Params (B)`"
    assert md("a`b", code=True) == "``a`b``" and md("`a", code=True) == "`` `a ``"
    assert md("a|b", code=True, cell=True) == "`a\\|b`"
    assert md(None) == "—"


# -- words for counts and shares, and the Markdown GitHub renders (issues 16 and 17) --------------------------


def test_counts_and_shares_in_words():
    from harness.rendering.render import agree, count_of, fmt_count, fmt_pct, period

    assert count_of(1, "model") == "1 model" and count_of(582, "model") == "582 models"
    assert count_of(1.0, "boundary", "boundaries") == "1 boundary" and fmt_count(474.0) == "474"
    assert agree(1, "sits", "sit") == "sits" and agree(2, "sits", "sit") == "sit"
    assert fmt_pct(1 / 3663, 1) == "< 0.1%" and fmt_pct(0.0, 1) == "0.0%" and fmt_pct(0.159, 1) == "15.9%"
    assert period("ran") == "ran." and period("see the log (x).") == "see the log (x)."


def test_a_line_under_a_table_is_set_apart():
    from harness.rendering.render import _tidy

    out = _tidy("| a | b |\n| --- | --- |\n| 1 | 2 |\nThe next sentence.\n|x| is a magnitude\n")
    assert "| 1 | 2 |\n\nThe next sentence." in out
    assert "sentence.\n|x| is a magnitude" in out  # a line that only starts with | is prose, not a row


def test_the_index_leads_with_a_short_title_and_why():
    from harness.rendering.index import index_markdown, short_title, why

    rec = _record("003")
    assert short_title(rec) == rec.claim.title
    untitled = rec.model_copy(update={"claim": rec.claim.model_copy(update={"title": None})})
    cut = short_title(untitled)
    assert cut.endswith("…") and len(cut) <= 80 and rec.claim.claim.startswith(cut[:-1])
    assert rec.claim.claim[len(cut) - 1] in " ,;:("  # cut at a word's end, not inside one
    assert "met only by the authors' code" in why(rec)
    md = index_markdown([rec, _record("002")])
    assert "| claim | verdict | why | targets holding | resampling | analysis choices | authors' code |" in md
    assert "largest distance" not in md and "## Setup shared by every claim" in md


def test_one_other_setting_within_reach_in_the_singular():
    rec = _record("004")
    md = render_report(
        _with_finding(rec, "summary", state="claimed_and_others", n_others_within=1, within_settings=["λ = 0.01"])
    )
    assert "1 also comes within" in md and "1 also come within" not in md
    assert "### The claimed setting gives the reference, and so does 1 other" in _render(
        _with_finding(rec, "summary", state="claimed_and_others", n_others_within=1, within_settings=["λ = 0.01"]),
        check=False,
    )


def test_no_figure_names_a_table_the_claim_does_not_give():
    """The hyperparameters figure says 'the reference', a boundary figure without paper values no paper ×."""
    from harness.rendering.figures import draw_figures

    rec = _record("004")
    (fig, svg) = draw_figures(rec)[0]
    assert "Table 1" not in fig.caption and b"Table 1" not in svg
    rec = _record("002")
    plots = {**rec.plots, "has_paper": False}
    (fig, svg) = draw_figures(rec.model_copy(update={"plots": plots}))[0]
    assert "paper" not in fig.caption and b"Table 1" not in svg and b"median_fit" not in svg


def _in_state(c: dict, state: str, **extra) -> dict:
    """A comparison of a record as a run in ``state`` would give it, consistent with the record's invariants:
    bounds on the side the state needs, a measured error within its limit (above it for "not assessed")."""
    s = -1 if c["side"] == "below" else 1
    lo, hi = {
        "supported": sorted([s * 0.01, s * 0.05]),
        "contradicted": sorted([-s * 0.01, -s * 0.05]),
        "inconclusive": [-0.02, 0.02],
        "not assessed": sorted([s * 0.01, s * 0.05]),
    }[state]
    decision = {"not assessed": "supported"}.get(state, state)
    margin = 0.01 if decision in ("supported", "contradicted") else None
    row = {
        **c,
        "lower": lo,
        "upper": hi,
        "bound": hi if s < 0 else lo,
        "bound_against": lo if s < 0 else hi,
        "decision": decision,
        "error": 0.2 if state == "not assessed" else 0.04,
        "error_mc_se": 0.02,
        "error_against": 0.03,
        "limit": 0.094,
        "detectable": 0.03,
        "margin": margin,
        "influence": {"top": [], "largest": 0.001, "margin": margin, "beyond_margin": False, "n_beyond": 0},
        "carried_by": [],
        "state": state,
    }
    return {**row, **extra}


def _as_state(rec, state, rows=None, **facts):
    """The record's resampling as a run in ``state`` would word it: every comparison in that state (or ``rows``)."""
    from harness.core.decisions import overall_state
    from harness.verdicts.common_findings import resampling_finding

    f = rec.robustness.facts
    comparisons = rows or [_in_state(c, state) for c in f["comparisons"]]
    new = {**f, "comparisons": comparisons, **facts}
    robustness = rec.robustness.model_copy(
        update={"state": overall_state([c["state"] for c in comparisons]), "facts": new}
    )
    findings = {**rec.findings, "resampling": resampling_finding(robustness)}
    return render_report(rec.model_copy(update={"robustness": robustness, "findings": findings}))


def _with_comparisons(prefix):
    rec = _record(prefix)
    if rec.robustness is None or not rec.robustness.facts.get("comparisons"):
        pytest.skip(f"the committed record {prefix} has no asserted comparison under resampling")
    return rec, [c["label"] for c in rec.robustness.facts["comparisons"]]


def _one_ordering():
    for prefix in PREFIXES:
        rec = _record(prefix)
        if rec.robustness is not None and len(rec.robustness.facts.get("comparisons", [])) == 1:
            return rec, rec.robustness.facts["comparisons"][0]["label"]
    pytest.skip("no committed record asserts exactly one ordering under resampling")


@pytest.mark.parametrize("state", ["supported", "contradicted", "inconclusive", "not assessed"])
def test_each_resampling_state_leads_with_its_own_words_and_no_other(state):
    from harness.rendering.render import fmt_auto

    rec, label = _one_ordering()
    c0 = rec.robustness.facts["comparisons"][0]
    md = _as_state(rec, state)
    assert f"**Resampling: {state}.** For “{label}”," in md
    others = {"supported", "contradicted", "inconclusive", "not assessed"} - {state}
    assert not any(f"**Resampling: {o}.**" in md for o in others)
    assert "Robust" not in md.split("## Setup")[0].replace("Robust to analysis", "")
    words = {
        "supported": f"its one-sided 95% bound, {fmt_auto(_in_state(c0, 'supported')['bound'])}, excludes 0",
        "contradicted": "the data point the other way",
        "inconclusive": "does not exclude 0; a difference of 0.0300 would be detected 80% of the time",
        "not assessed": "above its limit of 9.4%, so the resamples are no evidence either way",
    }[state]
    assert words in md
    if state != "not assessed":  # the decision's own measured error beside it
        assert "(measured error 4.0% ± 2.0%, limit 9.4%)" in md


def test_a_decision_carried_by_one_base_model_is_inconclusive_and_names_it():
    rec, label = _one_ordering()
    c = rec.robustness.facts["comparisons"][0]
    carrier = {"cluster": "qwen-like-7b", "rows": 257, "delta": -0.0237}
    row = _in_state(c, "inconclusive", decision="supported", margin=0.01, carried_by=[carrier])
    row["influence"] = {**row["influence"], "top": [carrier], "largest": 0.0237, "beyond_margin": True}
    row["lower"], row["upper"] = (-0.05, -0.01) if c["side"] == "below" else (0.01, 0.05)
    md = _as_state(rec, "inconclusive", rows=[row])
    assert "**Resampling: inconclusive.**" in md
    assert "qwen-like-7b moves the difference by more than the 0.0100 by which its bound clears 0 (-0.0237)" in md


def test_several_orderings_lead_with_a_count_and_a_short_table():
    records = [_record(p) for p in PREFIXES]
    rec = next((r for r in records if r.robustness and len(r.robustness.facts.get("comparisons", [])) > 1), None)
    if rec is None:
        pytest.skip("no committed record asserts more than one ordering under resampling")
    comps = rec.robustness.facts["comparisons"]
    rows = [_in_state(comps[0], "supported")] + [_in_state(c, "inconclusive") for c in comps[1:]]
    md = _as_state(rec, "mixed", rows=rows)
    n = len(comps)
    assert (
        f"**Resampling: mixed.** Of the {n} orderings the claim asserts, 1 is supported, {n - 1} are inconclusive" in md
    )
    assert "| ordering | resampling | why |" in md
    for c in comps:
        assert " ".join(c["label"].split()) in md


def test_a_missing_or_stale_study_is_not_assessed_and_sends_the_reader_to_make_calibration():
    rec, _ = _with_comparisons("002")
    f = rec.robustness.facts
    for state in ("stale", "absent", "unreadable"):
        rows = [_in_state(c, "not assessed", error=None, error_mc_se=None, limit=None) for c in f["comparisons"]]
        md = _as_state(rec, "not assessed", rows=rows, calibration={**f["calibration"], "state": state})
        assert f"no coverage study of this design is at hand ({state})" in md
        assert "`make calibration`" in md and "How often these decisions err was measured" not in md


def test_an_uncalibrated_interval_is_said_and_a_calibrated_one_is_not_flagged():
    rec, _ = _with_comparisons("002")
    f = rec.robustness.facts
    first = f["intervals"][0]["label"]
    cal = {**f["calibration"], "uncalibrated": [first]}
    md = _as_state(rec, "supported", calibration=cal)
    assert f"The interval of {first} is not calibrated on this design" in md
    md = _as_state(rec, "supported", calibration={**cal, "uncalibrated": []})
    assert "is not calibrated on this design" not in md


def test_a_label_resting_on_an_error_near_its_limit_says_it_is_a_close_call():
    rec, label = _one_ordering()
    c = rec.robustness.facts["comparisons"][0]
    near = _in_state(c, "supported", error=0.08, error_mc_se=0.027)  # 0.094 is within two s.e.
    clear = _in_state(c, "supported", error=0.03, error_mc_se=0.017)
    md = _as_state(rec, "supported", rows=[near])
    assert "; a close call)" in md and f"For “{label}” the measured error lies within two" in md
    md = _as_state(rec, "supported", rows=[clear])
    assert "close call" not in md and "lies within two of its Monte Carlo" not in md


def test_one_target_and_two_in_words():
    """No "All 1 targets", "0 of the 1 hold" or "All 2": the one target, both, none (issue 28)."""
    from harness.core.record import TargetOutcome

    rec = _record("002")
    one = [rec.targets[0]]
    basis = {**rec.findings["basis"].facts, "n_targets": 1, "one": True, "n_headline": 1, "n_supporting": 0}
    md = render_report(_with_finding(rec.model_copy(update={"targets": one}), "basis", **basis))
    assert "The one target holds." in md and "All 1" not in md and "1 targets" not in md
    failed = [TargetOutcome(**{**rec.targets[0].model_dump(), "outcome": "fails"})]
    md = render_report(
        _with_finding(
            rec.model_copy(update={"targets": failed}),
            "basis",
            **{**basis, "all_hold": False, "none_hold": True, "n_holding": 0, "n_not_holding": 1},
        )
    )
    assert "The one target does not hold:" in md and "0 of the 1" not in md


def test_an_ordering_false_in_this_run_says_so_whatever_its_label():
    """No study at hand (not assessed) or no bound excluding 0 (inconclusive): the lead still says that the
    ordering does not hold on all rows, with its difference."""
    rec, label = _one_ordering()
    c = rec.robustness.facts["comparisons"][0]
    wrong = -0.012 if c["side"] == "above" else 0.012
    for state in ("not assessed", "inconclusive"):
        md = _as_state(rec, state, rows=[_in_state(c, state, holds_full=False, difference=wrong)])
        assert f"For “{label}”, it does not hold in this run itself (difference {wrong:.4f}), and" in md, state
