"""The verdict rule and the comparisons it rests on, on hand-made arms."""

from pathlib import Path

import pytest

from harness.claimfiles.spec import Claim, ClaimSpec
from harness.core.quantities import Quantity
from harness.core.record import Arm, ArmControl
from harness.core.relations import literal_decimals
from harness.protocols.leaderboard import TauOverride
from harness.verdicts.judging import arm_disagreements, judge_controls, judge_targets, requirement_text
from harness.verdicts.verdict import decide_verdict


def _spec(**over) -> ClaimSpec:
    raw = {
        "id": "toy",
        "claim": "x",
        "locator": "T1",
        "protocol": "boundary_at_budget",
        "inputs": ["oll"],
        "seed": 0,
        "targets": [
            {"quantity": "a", "paper": 1.0, "tolerance": 0.1, "reason": "r"},
            {"quantity": "g", "relation": ">", "value": 0.0, "reason": "r"},
            {"quantity": "p", "relation": "<", "other": "q", "reason": "r", "role": "supporting"},
        ],
        "controls": [
            {
                "id": "c",
                "control": "tau_override",
                "params": {"tau": 0.5},
                "changes": "x",
                "must": [{"quantities": ["a"], "measure": "abs_shift", "reference": "paper", "op": ">", "value": 0.5}],
            }
        ],
    }
    raw.update(over)
    claim = Claim.model_validate(raw)
    vocab = {k: Quantity(f"quantity {k}", "upstream" if k == "u" else "both") for k in "agpqu"}
    return ClaimSpec(
        path=Path("toy.yaml"),
        claim=claim,
        protocol=None,
        params=None,
        control_params={c.id: TauOverride(tau=0.5) for c in claim.controls},
        vocabulary=vocab,
        control_vocabularies={c.id: vocab for c in claim.controls},
        texts={("targets", 0, "paper"): "1.00", ("targets", 0, "tolerance"): "0.1"},
    )


def _arm(values, controls=None, status="ok"):
    if values is None:
        return Arm(status="not run", reason="switched off")
    return Arm(status=status, values=values, controls={k: ArmControl(values=v) for k, v in (controls or {}).items()})


def _verdict(values, control_values, upstream=None, spec=None):
    spec = spec or _spec()
    mine = _arm(values, {"c": control_values})
    theirs = _arm(upstream, {"c": control_values} if upstream else None)
    targets = judge_targets(spec, mine, theirs)
    controls = judge_controls(spec, mine, theirs)
    return decide_verdict(mine, theirs, targets, controls, arm_disagreements(targets))


GOOD = {"a": 1.0, "g": 0.5, "p": 1.0, "q": 2.0}


def test_targets_hold_per_arm_with_literal_precision():
    spec = _spec()
    rows = judge_targets(
        spec, _arm({"a": 1.05, "g": 0.3, "p": 1.0, "q": 2.0}), _arm({"a": 1.2, "g": -0.1, "p": 3.0, "q": 2.0})
    )
    assert [r.reimpl.holds for r in rows] == [True, True, True]
    assert [r.upstream.holds for r in rows] == [False, False, False]
    assert rows[0].reimpl.delta == pytest.approx(0.05)
    assert rows[0].upstream.beyond == pytest.approx(0.1)  # |1.2 - 1.0| - 0.1
    # the paper's value as the claim file writes it, and the relation derived from the target
    assert rows[0].paper_text == "1.00" and rows[0].requirement == "within 0.1 of 1.00"
    assert rows[0].decimals == 4  # one more than the paper's, at least 4
    assert rows[2].requirement == "< quantity q" and rows[1].requirement == "> 0"


def test_tolerance_edge_is_inclusive():
    rows = judge_targets(_spec(), _arm({"a": 1.1, "g": 1, "p": 0, "q": 1}), _arm(None))
    assert rows[0].reimpl.holds is True and rows[0].upstream.holds is None


def test_reproduced():
    assert _verdict(GOOD, {"a": 2.0}).verdict == "reproduced"


def test_headline_target_off_by_more_than_tolerance_is_not_reproduced():
    assert _verdict({**GOOD, "a": 1.11}, {"a": 2.0}).verdict == "not reproduced"
    v = _verdict({**GOOD, "g": -0.01}, {"a": 2.0})
    assert v.verdict == "not reproduced" and v.reasons[0].state == "headline_missed"


def test_supporting_target_failing_is_partial():
    v = _verdict({**GOOD, "p": 3.0}, {"a": 2.0})
    assert v.verdict == "partially reproduced" and v.reasons[0].state == "supporting_missed"


def test_control_that_does_not_break_keeps_it_from_reproduced():
    v = _verdict(GOOD, {"a": 1.2})
    assert v.verdict == "partially reproduced"
    assert v.reasons[0].state == "controls_unbroken" and v.reasons[0].titles == ["c"]


def test_arms_disagreeing_beyond_tolerance_is_partial():
    # a: 1.0 vs 1.3 differ by 0.3 > 0.1, and g's relation holds in one arm only.
    v = _verdict(GOOD, {"a": 2.0}, upstream={"a": 1.3, "g": -0.5, "p": 1.0, "q": 2.0})
    assert v.verdict == "partially reproduced"
    assert v.reasons[0].state == "arms_disagree" and v.reasons[0].titles == ["quantity a", "quantity g"]


def test_authors_value_just_outside_while_arms_agree_keeps_reproduced():
    # Paper 1.0 +- 0.1; mine 1.05, theirs 1.101: theirs is out by 0.001 but the
    # arms differ by 0.051 < 0.1, so this is reported, not a change of verdict.
    spec = _spec()
    mine, theirs = _arm({**GOOD, "a": 1.05}, {"c": {"a": 2.0}}), _arm({**GOOD, "a": 1.101}, {"c": {"a": 2.0}})
    targets, controls = judge_targets(spec, mine, theirs), judge_controls(spec, mine, theirs)
    assert decide_verdict(mine, theirs, targets, controls, arm_disagreements(targets)).verdict == "reproduced"
    assert [t.upstream.holds for t in targets if t.quantity == "a"] == [False]  # shown in the targets table


def test_unmeasured_is_inconclusive_and_no_reimpl_could_not_run():
    v = _verdict({"a": 1.0, "p": 1.0, "q": 2.0}, {"a": 2.0})
    assert v.verdict == "inconclusive" and v.reasons[0].titles == ["quantity g"]
    none = Arm(status="could not run", reason="no optimum")
    assert decide_verdict(none, _arm(None), [], [], []).verdict == "could not run"


def test_a_target_on_the_authors_code_is_judged_on_their_arm():
    spec = _spec(targets=[{"quantity": "u", "relation": "<=", "value": 0, "reason": "r"}])
    mine, theirs = _arm({}), _arm({"u": 1.0})
    targets = judge_targets(spec, mine, theirs)
    assert targets[0].judged_on == "upstream" and targets[0].outcome == "fails"
    v = decide_verdict(mine, theirs, targets, [], [])
    assert v.verdict == "not reproduced" and v.reasons[0].titles == ["quantity u"]
    assert decide_verdict(mine, _arm(None), judge_targets(spec, mine, _arm(None)), [], []).verdict == "inconclusive"


def test_must_fail_targets_and_ratio_conditions():
    spec = _spec(
        controls=[
            {
                "id": "c",
                "control": "tau_override",
                "changes": "x",
                "must_fail_targets": True,
                "must": [{"quantities": ["a"], "measure": "ratio", "op": "<", "value": 0.5}],
            }
        ]
    )
    base = {"a": 1.0, "g": 1.0, "p": 0.0, "q": 1.0}
    # a halves (ratio 0.4 < 0.5) but g stays positive, so not every target fails.
    (ev,) = judge_controls(spec, _arm(base, {"c": {"a": 0.4, "g": 1.0, "p": 0.0, "q": 1.0}}), _arm(None))
    assert ev.reimpl.conditions[0].holds and ev.reimpl.targets_failed is False and ev.reimpl.broke is False
    assert ev.reimpl.conditions[0].requirement == "ratio to the unperturbed run < 0.5"
    (ev,) = judge_controls(spec, _arm(base, {"c": {"a": 0.4, "g": -1.0, "p": 2.0, "q": 1.0}}), _arm(None))
    assert ev.reimpl.broke is True and ev.upstream.ran is False


def test_disagreement_beyond_tolerance_is_listed():
    spec = _spec()
    rows = judge_targets(spec, _arm({"a": 1.0, "g": 0.5, "p": 1, "q": 2}), _arm({"a": 1.15, "g": -0.5, "p": 1, "q": 2}))
    found = {d["quantity"]: d for d in arm_disagreements(rows)}
    assert set(found) == {"a", "g"}
    assert found["a"]["difference"] == pytest.approx(-0.15)


def test_headline_met_only_by_the_authors_code_is_partial():
    # Mine misses a (1.2 vs 1.0 +- 0.1); the authors' code hits it (1.05): the published
    # number depends on something the re-implementation of the equations does not do.
    v = _verdict({**GOOD, "a": 1.2}, {"a": 2.0}, upstream={**GOOD, "a": 1.05})
    assert v.verdict == "partially reproduced" and v.reasons[0].state == "rescued_by_authors"


def test_headline_missed_by_both_arms_is_not_reproduced():
    assert _verdict({**GOOD, "a": 1.2}, {"a": 2.0}, upstream={**GOOD, "a": 1.25}).verdict == "not reproduced"


@pytest.mark.parametrize("text, decimals", [("0.700", 3), ("90", 0), ("4.08e-3", 5), ("0.15", 2), ("1.0e-12", 13)])
def test_literal_decimals(text, decimals):
    assert literal_decimals(text) == decimals


def test_requirement_text_for_each_relation():
    assert requirement_text("~", paper_text="0.539", tolerance_text="0.0005") == "within 0.0005 of 0.539"
    assert requirement_text("~", paper_text="90", tolerance_text="0") == "= 90"
    assert requirement_text("abs<", value_text="0.0002") == "magnitude < 0.0002"
    assert requirement_text(">=", other_label="MMLU-Pro boundary") == ">= MMLU-Pro boundary"
