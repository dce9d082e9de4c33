"""Claim files: every kind of bad file gives a message that names the file, the field, what was expected
and what was found; nothing bad is accepted silently."""

from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from harness.datalock import load_lock
from harness.errors import SpecError
from harness.spec import load_claim

ROOT = Path(__file__).resolve().parents[2]
CLAIMS = sorted((ROOT / "claims").glob("*.yaml"))
CLAIM = ROOT / "claims" / "002_table1_boundary_1e24.yaml"
LOCK = load_lock()
PINS = {"prescriptive-scaling": object()}


def _write(tmp_path, raw, name="002_table1_boundary_1e24.yaml"):
    p = tmp_path / name
    p.write_text(
        yaml.safe_dump(raw, sort_keys=False, allow_unicode=True) if not isinstance(raw, str) else raw, encoding="utf-8"
    )
    return p


def _raw(path=CLAIM):
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def _problems(tmp_path, raw, name="002_table1_boundary_1e24.yaml", **kw):
    with pytest.raises(SpecError) as info:
        load_claim(_write(tmp_path, raw, name), lock=LOCK, pins=PINS, **kw)
    return info.value.problems, str(info.value)


@pytest.mark.parametrize("path", CLAIMS, ids=lambda p: p.stem)
def test_every_claim_loads_with_its_vocabulary(path):
    spec = load_claim(path, lock=LOCK, pins=PINS)
    assert spec.id == path.stem
    for t in spec.claim.targets:
        assert t.quantity in spec.vocabulary
    with pytest.raises(ValidationError):
        spec.claim.seed = 1


def test_the_paper_value_keeps_the_precision_the_file_gives_it():
    spec = load_claim(CLAIM, lock=LOCK)
    assert spec.text_of("targets", 1, "paper") == "0.700"  # not 0.7
    assert spec.vocabulary["boundary.BBH"].label == "BBH boundary at 10²⁴ FLOPs"


@pytest.mark.parametrize("path", CLAIMS, ids=lambda p: p.stem)
def test_a_typo_in_any_quantity_is_refused_with_a_suggestion(tmp_path, path):
    raw = _raw(path)
    good = raw["targets"][0]["quantity"]
    raw["targets"][0]["quantity"] = good[:-1]  # boundary.GPQA -> boundary.GPQ, gamma -> gamm
    problems, _ = _problems(tmp_path, raw, path.name)
    assert any(p.startswith("targets[0].quantity:") and f"did you mean '{good}'" in p for p in problems), problems


def test_a_control_condition_on_an_unknown_quantity_is_refused(tmp_path):
    raw = _raw()
    raw["controls"][0]["must"][0]["quantities"][0] = "boundary.IFEval2"
    problems, _ = _problems(tmp_path, raw)
    assert any(
        p.startswith("controls[0].must[0].quantities[0]:") and "did you mean 'boundary.IFEval'" in p for p in problems
    )


def test_relation_other_must_be_a_quantity(tmp_path):
    raw = _raw()
    raw["targets"][0] = {
        "quantity": "boundary.MATH Lvl 5",
        "relation": "<",
        "other": "boundary.MMLU-Pr",
        "reason": "the claim contrasts them",
    }
    problems, _ = _problems(tmp_path, raw)
    assert any(p.startswith("targets[0].other:") and "did you mean 'boundary.MMLU-Pro'" in p for p in problems)


def test_unknown_top_level_key(tmp_path):
    raw = _raw()
    raw["extra_key"] = 1
    problems, text = _problems(tmp_path, raw)
    assert any(p.startswith("extra_key: unknown key") for p in problems)
    assert "002_table1_boundary_1e24.yaml" in text


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
    assert any(p.startswith("protocol:") and "did you mean 'boundary_at_budget'" in p for p in problems)


def test_unknown_control_name(tmp_path):
    raw = _raw()
    raw["controls"][0]["control"] = "tau_overide"
    problems, _ = _problems(tmp_path, raw)
    assert any(
        p.startswith("controls[0].control: unknown control 'tau_overide'") and "tau_override" in p for p in problems
    )


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
    assert any(
        p.startswith("inputs[0]: 'ol' is not a table in the data lock") and "did you mean 'oll'" in p for p in problems
    )


def test_unknown_table_and_column_in_params(tmp_path, tables):
    raw = _raw()
    raw["params"]["tasks"]["IFEval"] = "IFEval Rawx"
    problems, _ = _problems(tmp_path, raw, tables=tables)
    assert any(
        p.startswith("params.tasks.IFEval: column 'IFEval Rawx' is not in table 'oll'")
        and "did you mean 'IFEval Raw'" in p
        for p in problems
    )
    raw = _raw()
    raw["params"]["table"] = "olll"
    problems, _ = _problems(tmp_path, raw)
    assert any(p.startswith("params.table: 'olll' is not a table in the data lock") for p in problems)


def test_unknown_pin(tmp_path):
    raw = _raw()
    raw["upstream"] = "prescriptive-scalin"
    problems, _ = _problems(tmp_path, raw)
    assert any(p.startswith("upstream:") and "did you mean 'prescriptive-scaling'" in p for p in problems)


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


# -- issue 11: accepted silently before, refused now --------------------------------------------------------


def test_non_finite_numbers_anywhere_are_refused(tmp_path):
    text = CLAIM.read_text(encoding="utf-8").replace("value: 0.05      # a hundred", "value: .nan      # a hundred")
    text = text.replace("kappa: 50.0", "kappa: .inf")
    problems, _ = _problems(tmp_path, text)
    assert "controls[0].must[0].value: must be a finite number, got nan" in problems
    assert "params.kappa: must be a finite number, got inf" in problems


def test_duplicate_keys_are_refused_with_both_lines(tmp_path):
    text = CLAIM.read_text(encoding="utf-8").replace("tolerance: 0.0005,", "tolerance: 0.0005, tolerance: 5,", 1)
    problems, _ = _problems(tmp_path, text)
    assert any(p.startswith("targets[0].tolerance: duplicate key") for p in problems), problems


def test_booleans_are_not_numbers(tmp_path):
    raw = _raw()
    raw["seed"] = True
    raw["params"]["eval_x"] = True
    problems, _ = _problems(tmp_path, raw)
    assert any(p.startswith("seed: must be a number, not a boolean") for p in problems)
    assert any(p.startswith("params.eval_x: must be a number, not a boolean") for p in problems)


def test_control_characters_in_labels_are_refused(tmp_path):
    raw = _raw()
    raw["targets"][0]["label"] = "IFEval\n# injected heading"
    problems, _ = _problems(tmp_path, raw)
    assert any(p.startswith("targets[0].label: must be one line") for p in problems)


def test_prose_is_folded_to_one_paragraph():
    raw = _raw()
    raw["limitations"] = ["line one\n# not a heading"]
    assert "# not a heading" in raw["limitations"][0]
    from harness.spec import Claim

    assert Claim.model_validate(raw).limitations == ["line one # not a heading"]


def test_the_id_must_be_the_file_name(tmp_path):
    raw = _raw(ROOT / "claims" / "000_aime2025_shift_test.yaml")
    raw["id"] = "002_table1_boundary_1e24"  # another claim's id: it would overwrite that claim's report
    problems, _ = _problems(tmp_path, raw, name="000_aime2025_shift_test.yaml")
    assert any(p.startswith("id: '002_table1_boundary_1e24' must be the file's name") for p in problems)


def test_out_of_range_grids_are_refused(tmp_path):
    path = ROOT / "claims" / "004_hyperparameters.yaml"
    raw = _raw(path)
    raw["params"]["tau_grid"] = [0.5, 1.5]
    problems, _ = _problems(tmp_path, raw, name=path.name)
    assert any(p.startswith("params:") and "tau_grid value 1.5 is not in (0, 1)" in p for p in problems)


def test_non_utf8_file_is_refused_with_the_byte(tmp_path):
    p = tmp_path / "002_table1_boundary_1e24.yaml"
    p.write_bytes(CLAIM.read_bytes().replace(b"Table 1", b"Table \xff"))
    with pytest.raises(SpecError, match=r"not UTF-8 text \(byte 0xff"):
        load_claim(p)


def test_a_long_value_is_shortened_in_the_message(tmp_path):
    raw = _raw()
    raw["seed"] = "x" * 5_000_000
    problems, text = _problems(tmp_path, raw)
    assert len(text) < 5000 and "more characters" in text
