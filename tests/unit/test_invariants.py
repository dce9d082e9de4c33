"""Each finding declares what it asserts about the record, and a record whose findings contradict its numbers
is refused (issue 16, item 2): every declaration can fail, every declared state has one, the committed
records pass them, and the renderer refuses a contradiction with the finding and the numbers named."""

from pathlib import Path

import pytest
from claimset import PREFIXES

from harness.core.record import Arm, Finding, read_record
from harness.rendering.render import render_report
from harness.verdicts.invariants import COMMON, InvariantError, check_record, problems

REPORTS = Path(__file__).resolve().parents[2] / "reports"


def _record(prefix: str):
    paths = sorted(REPORTS.glob(f"{prefix}*.json"))
    if not paths:
        pytest.skip(f"no committed record {prefix}*")
    return read_record(paths[0])


def _with(record, name, state=None, **facts):
    f = record.findings[name]
    new = Finding(state=state or f.state, facts={**f.facts, **facts})
    return record.model_copy(update={"findings": {**record.findings, name: new}})


@pytest.mark.parametrize("prefix", PREFIXES)
def test_the_committed_records_keep_their_invariants(prefix):
    assert problems(_record(prefix)) == []


def test_the_common_findings_assert_something():
    names = {name for name, _ in COMMON.declared()}
    for reason in ("headline_missed", "rescued_by_authors", "all_hold", "unmeasured", "arms_disagree"):
        assert f"verdict.{reason}" in names
    assert {"basis", "agreement", "resampling", "target_reasons", "control_conditions"} <= names


def test_underpowered_asserts_that_the_test_did_not_reject():
    rec = _record("000")
    bad = _with(rec, "power", state="underpowered")
    bad = bad.model_copy(
        update={
            "arms": bad.arms.model_copy(
                update={
                    "reimpl": bad.arms.reimpl.model_copy(
                        update={"values": {**bad.arms.reimpl.values, "p_value": 0.013}}
                    )
                }
            )
        }
    )
    found = problems(bad)
    assert any("finding 'power' in state 'underpowered'" in p and "p_value = 0.013" in p for p in found), found


def test_authors_also_fail_asserts_that_their_arm_ran_and_was_judged():
    rec = _record("002")
    t = rec.targets[0]
    from harness.core.record import Verdict
    from harness.verdicts.verdict import HeadlineMissed, TargetRow

    row = TargetRow(
        title=t.title,
        quantity=t.quantity,
        judged_on="reimpl",
        value=t.reimpl.value,
        other_value=None,
        upstream_value=None,
        requirement=t.requirement,
        beyond=0.001,
        decimals=4,
        upstream="fails",
    )
    facts = dict(titles=[t.title], arms=["reimpl"], targets=[row], both_fail=[t.title], upstream_not_run=[])
    facts |= dict(upstream_unmeasured=[], judged_on_upstream=[], groups=[], upstream_status="not run")
    reason = HeadlineMissed(**facts, n_targets=1, n_holding=0, n_other_failing=0).stated("headline_missed")
    arms = rec.arms.model_copy(update={"upstream": Arm(status="not run")})
    bad = rec.model_copy(update={"verdict": Verdict(verdict="not reproduced", reasons=[reason]), "arms": arms})
    found = problems(bad)
    assert any("verdict.headline_missed" in p and "said to fail in the authors' arm" in p for p in found), found


def test_a_finding_whose_facts_do_not_fit_its_model_is_a_problem_named():
    """The facts of a finding its producer declares a model for are read through that model: a fact missing
    or of the wrong type is a problem of the record, named, not a KeyError in a template."""
    from harness.core.record import Verdict

    rec = _record("002")
    row = {"title": rec.targets[0].title, "judged_on": "reimpl", "upstream": "fails", "beyond": 0.001}
    verdict = Verdict(verdict="not reproduced", reasons=[Finding(state="headline_missed", facts={"targets": [row]})])
    found = problems(rec.model_copy(update={"verdict": verdict}))
    assert any(p.startswith("finding 'verdict.headline_missed' (headline_missed): its facts do not fit") for p in found)
    basis = rec.findings["basis"]
    wrong = basis.model_copy(update={"facts": {**basis.facts, "n_targets": "five"}})
    found = problems(rec.model_copy(update={"findings": {**rec.findings, "basis": wrong}}))
    assert any(
        p.startswith("finding 'basis' (counted): its facts do not fit its model") and "n_targets" in p for p in found
    )


def test_a_thin_tail_asserts_the_share_it_rests_on():
    rec = _record("002")
    found = problems(_with(rec, "eval_support", state="inside"))
    assert any("'eval_support' in state 'inside'" in p and "share" in p for p in found), found


def test_a_convention_whose_refit_gave_no_number_reaches_nothing():
    # the summed convention's refit may give a NaN boundary, stated as None: read as not within reach, as the
    # producer reads it (nan <= within is false), not a TypeError in the check
    rec = _record("004")
    mean_ok = rec.findings["mean_or_sum"].facts["mean_max_dev"] <= rec.findings["mean_or_sum"].facts["within"]
    fine = _with(rec, "mean_or_sum", state="mean_only" if mean_ok else "neither", sum_max_dev=None)
    assert not [p for p in problems(fine) if "mean_or_sum" in p]
    wrong = _with(rec, "mean_or_sum", state="both" if mean_ok else "sum_only", sum_max_dev=None)
    assert any("'mean_or_sum' in state" in p for p in problems(wrong)), problems(wrong)


def test_the_renderer_refuses_a_contradiction_and_names_it():
    rec = _with(_record("000"), "upper_bound", state="rejected")
    with pytest.raises(InvariantError) as info:
        render_report(rec)
    msg = str(info.value)
    assert msg.startswith(f"{rec.claim.id}: the record's findings contradict its numbers (a bug in the harness")
    assert "'upper_bound' in state 'rejected'" in msg and "p_value = " in msg and "alpha = 0.05" in msg
    with pytest.raises(InvariantError):
        check_record(rec)


def test_a_failed_arm_keeps_one_line_and_says_where_the_rest_is():
    from harness.core.record import one_line_reason

    text = (
        "the adapter shift_test/adapter.py exited with status 1; last lines of stderr:\n"
        "Traceback (most recent call last):\n"
        '  File "x.py", line 3, in <module>\n'
        "numpy.linalg.LinAlgError: Singular matrix"
    )
    one = one_line_reason(text)
    assert "\n" not in one and "Traceback" not in one and 'File "' not in one
    assert one.startswith("the adapter shift_test/adapter.py exited with status 1: numpy.linalg.LinAlgError: ")
    assert one.endswith("(full text in the run log, .cache/runs/<claim id>.json)")
    assert one_line_reason("no route to host") == "no route to host"
    rec = _record("002")
    arms = rec.arms.model_copy(update={"upstream": Arm(status="could not run", reason=text)})
    again = rec.model_validate(rec.model_copy(update={"arms": arms}).model_dump())
    assert again.arms.upstream.reason.endswith(f".cache/runs/{rec.claim.id}.json)")


@pytest.mark.parametrize("path", sorted(REPORTS.glob("[0-9]*.json")), ids=lambda p: p.name[:3])
def test_every_finding_of_every_report_has_a_facts_model_that_changes_no_byte(path):
    """Every finding of a record (a verdict's reasons, the findings every report states, the protocol's own) has a
    model declared for its state, its recorded facts fit it, and the facts the model gives back are the recorded
    ones, key for key in the same order (so a producer that states a finding through its model writes the same
    bytes as before)."""
    from harness.claimfiles.registry import PROTOCOLS
    from harness.core.record import facts_model, plain
    from harness.verdicts.common_findings import common_findings  # noqa: F401  (declares the models)
    from harness.verdicts.verdict import decide_verdict  # noqa: F401

    rec = read_record(path)
    protocol = rec.claim.protocol
    PROTOCOLS[protocol].findings()
    named = list(rec.findings.items()) + [("verdict", r) for r in rec.verdict.reasons]
    untyped = [(name, f.state) for name, f in named if facts_model(name, f.state, protocol) is None]
    assert not untyped, f"{path.name}: findings without a model: {untyped}"
    for name, f in named:
        back = plain(facts_model(name, f.state, protocol).model_validate(f.facts).model_dump(exclude_unset=True))
        assert list(back.items()) == list(f.facts.items()), (path.name, name, f.state)
