"""Each finding declares what it asserts about the record, and a record whose findings contradict its numbers
is refused (issue 16, item 2): every declaration can fail, every declared state has one, the committed
records pass them, and the renderer refuses a contradiction with the finding and the numbers named."""

from pathlib import Path

import pytest
from claimset import PREFIXES

from harness.invariants import COMMON, InvariantError, check_record, problems
from harness.record import Arm, Finding, read_record
from harness.render import render_report

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
    row = {"title": t.title, "judged_on": "reimpl", "upstream": "fails", "beyond": 0.001}
    from harness.record import Verdict

    verdict = Verdict(verdict="not reproduced", reasons=[Finding(state="headline_missed", facts={"targets": [row]})])
    bad = rec.model_copy(
        update={"verdict": verdict, "arms": rec.arms.model_copy(update={"upstream": Arm(status="not run")})}
    )
    found = problems(bad)
    assert any("verdict.headline_missed" in p and "said to fail in the authors' arm" in p for p in found), found


def test_a_thin_tail_asserts_the_share_it_rests_on():
    rec = _record("002")
    found = problems(_with(rec, "eval_support", state="inside"))
    assert any("'eval_support' in state 'inside'" in p and "share" in p for p in found), found


def test_a_tie_asserts_the_knot_spread():
    rec = _record("003")
    f = rec.findings["ood_reading"]
    other = "behind" if f.facts["loss_reading"] == "tie" else "tie"
    found = problems(_with(rec, "ood_reading", loss_reading=other))
    assert any("a tie on OOD loss" in p for p in found), found


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
    from harness.record import one_line_reason

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
