"""Reports word their records: sentences follow findings, never the other way round.

Each test takes a committed run record (no data, no upstream needed), changes a finding or an outcome
the way another run could have, renders it, and checks that the sentence that would contradict the
record is absent and the right one is present.
"""

from pathlib import Path

import pytest

from harness.record import Arm, Finding, read_record
from harness.render import render_report as _render


def render_report(record) -> str:
    """The report with its line breaks as spaces: templates wrap prose where they like."""
    return " ".join(_render(record).split())


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


def _without_upstream(record):
    """The record as a run without the authors' arm would word it (the arm's numbers gone)."""
    arms = record.arms.model_copy(update={"upstream": Arm(status="could not run", reason="no route to host")})
    agreement = Finding(
        state="not_compared",
        facts={"upstream_status": "could not run", "upstream_reason": "no route to host", "reimpl_status": "ok"},
    )
    basis = Finding(
        state="counted",
        facts={
            **record.findings["basis"].facts,
            "upstream_status": "could not run",
            "upstream_reason": "no route to host",
        },
    )
    findings = {**record.findings, "agreement": agreement, "basis": basis}
    findings.pop("explanation", None)
    return record.model_copy(update={"arms": arms, "findings": findings})


@pytest.mark.parametrize("prefix", ["000", "001", "002", "003", "004"])
def test_a_missing_authors_arm_is_said_and_not_contradicted(prefix):
    md = render_report(_without_upstream(_record(prefix)))
    assert "did not run (could not run: no route to host)" in md
    assert "The two arms were not compared" in md
    assert "in this run it ran." not in md and "authors' code ran." not in md


def test_evaluation_point_beyond_the_data():
    rec = _record("002")
    md = render_report(_with_finding(rec, "eval_support", state="beyond", z_eval=5.0, n_at_or_above=0))
    assert "lies **beyond** every observed model" in md
    assert "lies inside the observed range" not in md and "thin upper tail" not in md
    assert "extrapolations outside the observed compute range" in md


def test_evaluation_point_well_inside_the_data_is_not_a_thin_tail():
    rec = _record("002")
    md = render_report(
        _with_finding(rec, "eval_support", state="inside", z_eval=2.0, n_at_or_above=2712, share=2712 / 3663)
    )
    assert "thin upper tail" not in md and "thinly populated" not in md
    assert "with 2712 of 3663 models" in md


def test_a_start_dependent_fit_is_not_called_a_property_of_the_objective():
    rec = _record("002")
    md = render_report(_with_finding(rec, "start_robustness", reimpl_within=False, reimpl_shift=0.002))
    assert "property of the objective" not in md
    assert "depend on how its minimiser is started" in md


def test_a_control_that_did_not_break():
    rec = _record("002")
    c = rec.controls[0]
    rows = [r.model_copy(update={"holds": False}) for r in c.reimpl.conditions[0].rows]
    cond = c.reimpl.conditions[0].model_copy(update={"rows": rows, "holds": False})
    arm = c.reimpl.model_copy(update={"broke": False, "conditions": [cond]})
    rec = rec.model_copy(update={"controls": [c.model_copy(update={"reimpl": arm})]})
    md = render_report(rec)
    assert "Control broke as required: **no**" in md and "**not met**" in md


def test_an_unmeasured_target_gives_inconclusive_words():
    rec = _record("002")
    t = rec.targets[3].model_copy(
        update={"outcome": "unmeasured", "reimpl": rec.targets[3].reimpl.model_copy(update={"value": None})}
    )
    verdict = rec.verdict.model_copy(
        update={
            "verdict": "inconclusive",
            "reasons": [
                Finding(state="unmeasured", facts={"titles": [t.title], "quantities": [t.quantity], "arms": ["reimpl"]})
            ],
        }
    )
    md = render_report(rec.model_copy(update={"targets": [*rec.targets[:3], t, *rec.targets[4:]], "verdict": verdict}))
    assert "**Verdict: inconclusive.**" in md and "Not measured, so the claim cannot be judged: GPQA" in md
    assert "| GPQA | headline | within 0.0005 of 0.424 | — |" in md


def test_a_target_outside_its_tolerance_is_marked():
    rec = _record("002")
    t = rec.targets[2].model_copy(update={"outcome": "fails"})
    md = render_report(rec.model_copy(update={"targets": [*rec.targets[:2], t, *rec.targets[3:]]}))
    assert "| MATH Lvl 5 | headline | within 0.0005 of 0.539 |" in md and "**fails**" in md


def test_a_falsified_source_line():
    rec = _record("004")
    entries = [dict(e) for e in rec.findings["audit"].facts.get("entries", [])] or [{"file": "f.py", "line": 1}]
    md = render_report(
        _with_finding(
            rec,
            "audit",
            state="some_failed",
            n=11,
            n_found=10,
            entries=entries,
            failed=["skill_frontier/core/sigmoid.py:63"],
        )
    )
    assert "state the triple" not in md
    assert "only 10 say what the claim file" in md and "skill_frontier/core/sigmoid.py:63 do not" in md


def test_the_count_of_other_settings_within_reach_is_not_assumed():
    rec = _record("004")
    md = render_report(_with_finding(rec, "summary", n_others_within=2, closest_max_dev=0.0004))
    assert "none comes within" not in md and "2 also come within" in md


def test_a_planted_shift_the_test_misses():
    rec = _record("000")
    md = render_report(_with_finding(rec, "planted", state="missed", shift=0.05, p_value=0.31))
    assert "the test **misses** a planted shift" in md
    assert "detects a planted shift" not in md
    assert "not for want of power" not in md


def test_power_adequate_and_underpowered_are_worded_from_the_finding():
    rec = _record("000")
    low = render_report(_with_finding(rec, "power", state="underpowered", at_observed=0.31))
    assert "**underpowered**" in low and "informative against a shift of that size" not in low
    high = render_report(_with_finding(rec, "power", state="adequate", at_observed=0.93))
    assert "underpowered" not in high and "informative against a shift of that size" in high


def test_the_significance_reading_follows_the_permutation_p():
    rec = _record("000")
    md = render_report(_with_finding(rec, "summary", significant=True, p_value=0.01))
    assert "positive and significant" in md


def test_a_flipped_calibration_ordering():
    rec = _record("003")
    md = render_report(_with_finding(rec, "ood_reading", state="not_better_calibrated", calibration_word="trails"))
    assert "is not better calibrated OOD than the I-spline" in md
    assert "can only be read as the latter" not in md


def test_a_drift_task_carried_by_one_split_versus_every_split():
    rec = _record("001")
    rows = rec.findings["drift_splits"].facts["rows"]
    every = [{**r, "pattern": "every_split", "carriers": [], "one_carrier": False} for r in rows]
    md = render_report(_with_finding(rec, "drift_splits", rows=every))
    assert "depends on split" not in md and "below zero on every split" in md


def _as_fragile(rec, failing):
    facts = {**rec.robustness.facts, "fragile": failing, "n_fragile": len(failing)}
    return render_report(
        rec.model_copy(update={"robustness": rec.robustness.model_copy(update={"state": "fragile", "facts": facts})})
    )


def test_resampling_fragile_is_named():
    rec = _record("002")  # one asserted ordering
    if rec.robustness is None or rec.robustness.state == "not run":
        pytest.skip("the committed record has no resampling")
    label = rec.robustness.facts["comparisons"][0]["label"]
    md = _as_fragile(rec, [label])
    assert "**fragile**" in md and "**robust**" not in md
    assert "the asserted ordering holds in fewer than" in md.lower() and "1 of the 1" not in md
    assert label in md


def test_resampling_fragile_counts_the_failing_orderings():
    rec = _record("003")  # three asserted orderings
    if rec.robustness is None or len(rec.robustness.facts.get("comparisons", [])) < 2:
        pytest.skip("the committed record has fewer than two orderings")
    n = len(rec.robustness.facts["comparisons"])
    label = rec.robustness.facts["comparisons"][0]["label"]
    md = _as_fragile(rec, [label])
    assert f"1 of the {n} asserted orderings hold in fewer than" in md
    assert label in md


def test_resampling_without_orderings_claims_no_robustness():
    rec = _record("002")
    if rec.robustness is None or rec.robustness.state == "not run":
        pytest.skip("the committed record has no resampling")
    facts = {
        **rec.robustness.facts,
        "comparisons": [],
        "fragile": [],
        "n_fragile": 0,
        "n_comparisons": 0,
        "one_comparison": False,
    }
    md = render_report(
        rec.model_copy(
            update={"robustness": rec.robustness.model_copy(update={"state": "intervals only", "facts": facts})}
        )
    )
    assert "**robust**" not in md and "**fragile**" not in md
    assert "asserts no ordering" in md


def test_estimate_outside_its_interval_is_said():
    rec = _record("002")
    if rec.robustness is None or not rec.robustness.facts.get("intervals"):
        pytest.skip("the committed record has no intervals")
    first = rec.robustness.facts["intervals"][0]
    facts = {**rec.robustness.facts, "estimate_outside": [first["label"]]}
    md = render_report(rec.model_copy(update={"robustness": rec.robustness.model_copy(update={"facts": facts})}))
    assert f"lies outside its own interval for {first['label']}" in md
    none = {**rec.robustness.facts, "estimate_outside": []}
    md = render_report(rec.model_copy(update={"robustness": rec.robustness.model_copy(update={"facts": none})}))
    assert "outside its own interval" not in md


def test_rendering_is_a_pure_function_of_the_record():
    for prefix in ("000", "001", "002", "003", "004"):
        rec = _record(prefix)
        assert _render(rec) == _render(rec)
        assert _render(rec) == (REPORTS / f"{rec.claim.id}.md").read_text(encoding="utf-8")


def test_render_needs_no_protocol_no_scipy_and_no_data(tmp_path):
    """``python -m harness render`` draws reports from their records alone: of the protocols, only their cards
    and their figures are loaded."""
    import shutil
    import subprocess
    import sys

    rec = _record("002")
    shutil.copy(REPORTS / f"{rec.claim.id}.json", tmp_path / f"{rec.claim.id}.json")
    code = (
        "import sys\n"
        "from harness import cli\n"
        f"assert cli.main(['--data-root', '/nonexistent', 'render', '--out', {str(tmp_path)!r}, '002']) == 0\n"
        "def light(m):  # a protocol's card and its drawing, nothing of its measurement\n"
        "    parts = m.split('.')\n"
        "    return len(parts) <= 3 or parts[3:] == ['figures']\n"
        "heavy = [m for m in sys.modules if m.split('.')[0] in ('scipy', 'pandas')\n"
        "         or m.startswith(('harness.stats', 'harness.spec', 'harness.runner', 'harness.protocols.base'))\n"
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


@pytest.mark.parametrize("prefix", ["000", "001", "002", "003", "004"])
def test_claim_text_cannot_break_a_table_or_add_html(prefix):
    from harness.record import Record

    rec = _record(prefix)
    evil = Record.model_validate(_evil(rec.model_dump(mode="json")))
    md = _render(evil)
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
    from harness.render import md

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
