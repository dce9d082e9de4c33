"""Claim files: every kind of bad file gives a message that names the field."""

from pathlib import Path

import pytest
import yaml

from harness.errors import SpecError
from harness.spec import load_claim

CLAIM = Path(__file__).resolve().parents[2] / "claims" / "002_table1_boundary_1e24.yaml"
DATA = {"oll", "aa_math500", "aa_aime2025"}


def _write(tmp_path, raw, name="c.yaml"):
    p = tmp_path / name
    p.write_text(yaml.safe_dump(raw, sort_keys=False, allow_unicode=True) if not isinstance(raw, str) else raw,
                 encoding="utf-8")
    return p


def _raw():
    return yaml.safe_load(CLAIM.read_text(encoding="utf-8"))


def _problems(tmp_path, raw):
    with pytest.raises(SpecError) as info:
        load_claim(_write(tmp_path, raw), data_names=DATA)
    return info.value.problems, str(info.value)


def test_the_real_claim_loads_and_is_frozen():
    claim = load_claim(CLAIM, data_names=DATA)
    assert claim.protocol == "boundary_at_budget" and len(claim.targets) == 6
    with pytest.raises(Exception):
        claim.seed = 1


def test_unknown_top_level_key(tmp_path):
    raw = _raw()
    raw["extra_key"] = 1
    problems, text = _problems(tmp_path, raw)
    assert any(p.startswith("extra_key: unknown key") for p in problems)
    assert "c.yaml" in text


def test_missing_required_key(tmp_path):
    raw = _raw()
    del raw["seed"]
    problems, _ = _problems(tmp_path, raw)
    assert "seed: required key is missing" in problems


def test_negative_tolerance_names_its_index(tmp_path):
    raw = _raw()
    raw["targets"][2]["tolerance"] = -0.001
    problems, _ = _problems(tmp_path, raw)
    assert any(p.startswith("targets[2].tolerance:") and "-0.001" in p for p in problems)


def test_wrong_type(tmp_path):
    raw = _raw()
    raw["seed"] = "zero"
    problems, _ = _problems(tmp_path, raw)
    assert any(p.startswith("seed:") and "'zero'" in p for p in problems)


def test_unknown_protocol_suggests_the_close_one(tmp_path):
    raw = _raw()
    raw["protocol"] = "boundary_at_budgett"
    problems, _ = _problems(tmp_path, raw)
    assert any("unknown protocol 'boundary_at_budgett'" in p and "did you mean 'boundary_at_budget'" in p for p in problems)


def test_unknown_control_name(tmp_path):
    raw = _raw()
    raw["controls"][0]["control"] = "tau_overide"
    problems, _ = _problems(tmp_path, raw)
    assert any(p.startswith("controls[0].control: unknown control 'tau_overide'") and "tau_override" in p
               for p in problems)


def test_bad_protocol_parameter(tmp_path):
    raw = _raw()
    raw["params"]["tau"] = 1.5
    raw["params"]["kapa"] = 3
    problems, _ = _problems(tmp_path, raw)
    assert any(p.startswith("params.tau:") for p in problems)
    assert any(p.startswith("params.kapa: unknown key") for p in problems)


def test_bad_control_parameter(tmp_path):
    raw = _raw()
    raw["controls"][0]["params"] = {"tau": -1}
    problems, _ = _problems(tmp_path, raw)
    assert any(p.startswith("controls[0].params.tau:") for p in problems)


def test_input_not_in_the_lock(tmp_path):
    raw = _raw()
    raw["inputs"] = ["ol"]
    problems, _ = _problems(tmp_path, raw)
    assert any(p.startswith("inputs[0]: 'ol' is not a table in the data lock") and "did you mean 'oll'" in p
               for p in problems)


def test_relation_target_needs_a_right_hand_side(tmp_path):
    raw = _raw()
    raw["targets"][0] = {"quantity": "boundary.IFEval", "relation": ">", "reason": "positive"}
    problems, _ = _problems(tmp_path, raw)
    assert any(p.startswith("targets[0]:") and "exactly one of 'value' or 'other'" in p for p in problems)


def test_control_needs_an_expectation(tmp_path):
    raw = _raw()
    raw["controls"][0]["must"] = []
    raw["controls"][0]["must_fail_targets"] = False
    problems, _ = _problems(tmp_path, raw)
    assert any(p.startswith("controls[0]:") and "'must'" in p for p in problems)


def test_every_problem_is_reported_at_once(tmp_path):
    raw = _raw()
    raw["seed"] = -1
    raw["targets"][0]["tolerance"] = "small"
    raw["bogus"] = True
    problems, _ = _problems(tmp_path, raw)
    assert len(problems) >= 3


def test_not_yaml_and_not_a_mapping(tmp_path):
    with pytest.raises(SpecError, match="not valid YAML"):
        load_claim(_write(tmp_path, "a: [1, 2"))
    with pytest.raises(SpecError, match="expected a mapping"):
        load_claim(_write(tmp_path, "- 1\n- 2\n"))
    with pytest.raises(SpecError, match="does not exist"):
        load_claim(tmp_path / "nope.yaml")


def test_yaml_tags_are_not_executed(tmp_path):
    # safe_load refuses arbitrary Python objects.
    with pytest.raises(SpecError, match="not valid YAML"):
        load_claim(_write(tmp_path, "id: !!python/object/apply:os.system ['true']\n"))
