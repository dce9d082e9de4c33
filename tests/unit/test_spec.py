"""Claim files: every kind of bad file gives a message that names the file, the field, what was expected
and what was found; nothing bad is accepted silently."""

import contextlib
import os
import signal
from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from harness.authors.checkout import load_pins
from harness.claimfiles.spec import load_claim
from harness.core.datalock import load_lock
from harness.core.errors import SpecError

ROOT = Path(__file__).resolve().parents[2]
CLAIMS = sorted((ROOT / "claims").glob("*.yaml"))
CLAIM = ROOT / "claims" / "002_table1_boundary_1e24.yaml"
LOCK = load_lock()
PINS = load_pins()  # the pins data/upstream.yaml declares


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
    raw["targets"][0]["quantity"] = good + good[-1]  # boundary.GPQA -> boundary.GPQAA, fit.E -> fit.EE
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
    # The claim loader refuses every explicit tag, Python objects included.
    with pytest.raises(SpecError, match=r"an explicit tag \(!!python/object/apply:os.system\) is not accepted"):
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
    from harness.claimfiles.spec import Claim

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
    raw["seed"] = "x" * 500_000  # a claim file may be at most 1 MiB
    problems, text = _problems(tmp_path, raw)
    assert len(text) < 5000 and "more characters" in text


# -- hardening: each test failed on the code before it ------------------------------------------------------

CLAIM0 = ROOT / "claims" / "000_aime2025_shift_test.yaml"
CLAIM4 = ROOT / "claims" / "004_hyperparameters.yaml"


@contextlib.contextmanager
def _deadline(seconds: float):
    """A hang fails the test instead of stalling the suite."""

    def expire(*_):
        raise TimeoutError(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _text_problems(tmp_path, text: str, name: str = CLAIM.name, seconds: float = 5, **kw):
    p = tmp_path / name
    p.write_bytes(text.encode("utf-8", "surrogatepass"))
    with _deadline(seconds), pytest.raises(SpecError) as info:
        load_claim(p, lock=LOCK, pins=PINS, **kw)
    return info.value.problems


# item 8: tracebacks


def _line_of(path: Path, text: str) -> int:
    """The line number (from 1) of the first line of ``path`` that starts with ``text``."""
    return next(i for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if line.startswith(text))


def test_a_nul_byte_anywhere_is_a_problem_at_its_key(tmp_path):
    text = CLAIM.read_text(encoding="utf-8").replace("seed: 20260324", "seed: 2026\x000324")
    line = _line_of(CLAIM, "seed: 20260324")
    assert _text_problems(tmp_path, text) == [
        f"seed: holds the control character U+0000 (line {line}, column 11); a claim file is plain text without "
        "control characters but tab and line breaks"
    ]
    problems = _text_problems(tmp_path, "\x1b" + CLAIM.read_text(encoding="utf-8"))
    assert problems[0].startswith("(top level): holds the control character U+001B (line 1, column 1)")


@pytest.mark.parametrize(
    "tail, where",
    [
        ("deep: " + "[" * 1000 + "]" * 1000, "deep[0][0]"),
        ("deep: " + "{a: " * 1000 + "1" + "}" * 1000, "deep.a.a"),
        ("loop: &r [*r]", "loop: an anchor (&r) is not accepted"),
        ("loop: &r {again: *r}", "loop: an anchor (&r) is not accepted"),
    ],
    ids=["list 1000 deep", "map 1000 deep", "self-referencing list", "self-referencing map"],
)
def test_deep_nesting_and_self_reference_are_problems_not_recursion_errors(tmp_path, tail, where):
    problems = _text_problems(tmp_path, CLAIM.read_text(encoding="utf-8") + tail + "\n")
    assert len(problems) == 1 and problems[0].startswith(where), problems
    assert "nested more than 16 levels" in problems[0] or "anchor" in problems[0]


def test_a_seed_of_5000_digits_is_a_problem(tmp_path):
    text = CLAIM.read_text(encoding="utf-8").replace("seed: 20260324", "seed: " + "7" * 5000)
    assert _text_problems(tmp_path, text) == ["seed: must be an integer of at most 20 digits, got one of 5000 digits"]


def test_a_lone_surrogate_in_a_label_is_refused(tmp_path):
    text = CLAIM.read_text(encoding="utf-8").replace("label: IFEval,", 'label: "IF\\ud800Eval",')
    (problem,) = _text_problems(tmp_path, text)
    assert problem.startswith("targets[0].label: must be text without control characters") and "U+D800" in problem


@pytest.mark.parametrize("kind", ["/dev/zero", "/dev/urandom", "fifo", "folder"])
def test_a_claim_path_that_is_not_a_regular_file_is_refused_unread(tmp_path, kind):
    p = tmp_path / CLAIM.name
    if kind == "fifo":
        os.mkfifo(p)
    elif kind == "folder":
        p.mkdir()
    else:
        p.symlink_to(kind)
    with _deadline(5), pytest.raises(SpecError) as info:
        load_claim(p)
    what = {"fifo": "a FIFO (named pipe)", "folder": "a folder"}.get(kind, "a character device")
    assert info.value.problems == [
        f"the claim file is {what}, not a regular file; a claim file is a YAML text file of a few KB"
    ]
    assert str(p) in str(info.value)


# item 9: hangs


def test_billion_laughs_is_refused_at_once(tmp_path):
    lol = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lol += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 12)]
    problems = _text_problems(tmp_path, CLAIM.read_text(encoding="utf-8") + "\n".join(lol) + "\n", seconds=2)
    line = len(CLAIM.read_text(encoding="utf-8").splitlines()) + 1
    assert problems == [f"a0: an anchor (&a0) is not accepted; write the value out (line {line}, column 5)"]


def test_a_50_mb_claim_file_is_refused_before_it_is_parsed(tmp_path):
    p = tmp_path / CLAIM.name
    with open(p, "wb") as fh:
        fh.write(CLAIM.read_bytes())
        fh.write(b"# padding\n" * 5_000_000)
    with pytest.raises(SpecError) as info:
        load_claim(p)
    assert info.value.problems[0].startswith(f"the claim file is {len(CLAIM.read_bytes()) + 50_000_000} bytes")
    assert "more than the 1048576 bytes (1 MiB)" in info.value.problems[0]


def test_counts_within_their_caps_are_held_to_a_budget_of_work(tmp_path):
    text = CLAIM.read_text(encoding="utf-8").replace("n_resamples: 200", "n_resamples: 100000")
    problem, study = _text_problems(tmp_path, text)
    assert problem.startswith(
        "bootstrap.n_resamples: 100,000 resamples × 6 fits each (6 tasks) make 600,000 model fits"
    )
    assert (
        "over the budget of 20,000 model fits a claim may ask for (budgets.FIT_BUDGET); at most 3,321 here" in problem
    )
    # the coverage study resamples each data set as the claim does: its budget is over too
    assert study.startswith(
        "bootstrap.calibration.replicates: 600 simulated data sets × 100,000 calls (the claim's resampling) × 6 fits"
    )
    assert "(budgets.CALIBRATION_BUDGET)" in study
    text = CLAIM0.read_text(encoding="utf-8").replace("n_replicates: 2000", "n_replicates: 100000")
    (problem,) = _text_problems(tmp_path, text, name=CLAIM0.name)
    assert problem.startswith(
        "params.power.n_replicates: 100,000 replicates × 1,000 permutations × 2 mean models (every shift on the same "
        "permutations) make 200,000,000 permuted refits"
    )
    assert "over the budget of 32,000,000 permuted refits" in problem


# item 10: silent coercion


@pytest.mark.parametrize(
    "old, new, where",
    [
        ("seed: 20260324", 'seed: "20260324"', "seed: must be a whole number, not text"),
        ("tolerance: 0.0005,", 'tolerance: "0.0005",', "targets[0].tolerance: must be a number, not text"),
        ("paper: 0.828", 'paper: "0.828"', "targets[0].paper: must be a number, not text"),
        ("upstream: prescriptive-scaling", 'upstream: prescriptive-scaling\nfigures: "yes"', "figures: must be true"),
        ("upstream: prescriptive-scaling", "upstream: prescriptive-scaling\nfigures: yes", "figures: must be true"),
        ("must_fail_targets: true", 'must_fail_targets: "false"', "controls[0].must_fail_targets: must be true"),
        ("seed: 20260324", "seed: !!binary MjAyNg==", "seed: an explicit tag (!!binary) is not accepted"),
        ("inputs: [oll]", "inputs: !!set {oll: null}", "inputs: an explicit tag (!!set) is not accepted"),
        ("kappa: 50.0", 'kappa: "50.0"', "params.kappa: must be a number, not text"),
        ("warm_start: true", 'warm_start: "true"', "params.warm_start: must be true or false"),
    ],
)
def test_a_quoted_number_or_a_string_boolean_is_refused(tmp_path, old, new, where):
    text = CLAIM.read_text(encoding="utf-8")
    assert old in text
    problems = _text_problems(tmp_path, text.replace(old, new, 1))
    assert len(problems) == 1 and problems[0].startswith(where), problems


def test_a_quoted_p_value_threshold_no_longer_turns_the_verdict(tmp_path):
    text = CLAIM0.read_text(encoding="utf-8").replace('relation: ">", value: 0.05', 'relation: ">", value: "0.5"')
    (problem,) = _text_problems(tmp_path, text, name=CLAIM0.name)
    assert problem.startswith("targets[1].value: must be a number, not text") and problem.endswith("got '0.5'")


def test_strict_mode_still_takes_an_integer_for_a_float():
    raw = _raw()
    raw["params"]["kappa"] = 50  # YAML 50 where a float is expected
    from harness.core.schema import validate_plain

    assert validate_plain(load_claim(CLAIM).protocol.Params, raw["params"]).kappa == 50.0


# item 11: YAML 1.1 quirks


@pytest.mark.parametrize("literal", ["1:30", "0132", "0.8_28", "0x1F", "0o17", "+.5_0"])
def test_yaml_11_numbers_are_text_and_refused_where_a_number_is_expected(tmp_path, literal):
    text = CLAIM.read_text(encoding="utf-8").replace("paper: 0.828", f"paper: {literal}")
    (problem,) = _text_problems(tmp_path, text)
    assert problem.startswith("targets[0].paper: must be a number, not text") and problem.endswith(f"got '{literal}'")


def test_plain_yaml_12_numbers_still_read_as_written():
    spec = load_claim(CLAIM)
    assert spec.claim.targets[0].paper == 0.828 and spec.text_of("targets", 0, "paper") == "0.828"
    assert spec.params.lam == 0.001 and spec.seed == 20260324


def test_merge_keys_are_refused_and_cannot_bypass_the_duplicate_key_check(tmp_path):
    text = CLAIM.read_text(encoding="utf-8").replace("seed: 20260324", "seed: 20260324\n<<: {seed: 1}")
    line = _line_of(CLAIM, "seed: 20260324") + 1
    assert _text_problems(tmp_path, text) == [
        f"<<: a merge key ('<<', line {line}) is not accepted; write the keys out"
    ]
    text = CLAIM.read_text(encoding="utf-8") + "base: &b {seed: 1}\nmore: {<<: *b}\n"
    assert _text_problems(tmp_path, text)[0].startswith("base: an anchor (&b) is not accepted")


# item 12: text that reached the report raw


@pytest.mark.parametrize("char", ["\x1b", "\x07", "\x9b", "\u202e", "\u2066", "\u200f"])
@pytest.mark.parametrize("field", ["label", "reason"])
def test_control_characters_and_bidi_overrides_are_refused_in_labels_and_prose(tmp_path, field, char):
    raw = _raw()
    raw["targets"][0][field] = f"before{char}after"
    problems, _ = _problems(tmp_path, raw)
    assert len(problems) == 1 and problems[0].startswith(f"targets[0].{field}: must be"), problems
    assert f"U+{ord(char):04X} at character 7" in problems[0]


def test_the_schema_itself_refuses_controls_in_labels_and_text():
    from harness.claimfiles.spec import Claim

    raw = _raw()
    raw["claim"] = "a claim \u202e"
    raw["targets"][0]["label"] = "x\x1by"
    with pytest.raises(ValidationError) as info:
        Claim.model_validate(raw)
    assert {e["loc"] for e in info.value.errors()} == {("claim",), ("targets", 0, "label")}


# item 13: validation gaps


@pytest.mark.parametrize("cutoff", ['"2025-13-45"', '"2025-02-30"', "'2025-00-10'"])
def test_an_invalid_cutoff_date_is_a_validation_error(tmp_path, cutoff):
    text = CLAIM0.read_text(encoding="utf-8").replace('cutoff: "2025-02-06"', f"cutoff: {cutoff}")
    (problem,) = _text_problems(tmp_path, text, name=CLAIM0.name)
    assert problem.startswith("params.cutoff: must be a calendar date written YYYY-MM-DD")


@pytest.mark.parametrize("cutoff", ["2025-02-06", "2025-13-45", "2025-02-06 10:30:00"])
def test_an_unquoted_date_is_refused_and_the_message_says_to_quote_it(tmp_path, cutoff):
    """Issue #29 item 9: `cutoff: 2025-02-06` was accepted as text, while a YAML 1.1 reader (most tools) reads a
    date there: one file, two meanings. Every plain value but numbers, booleans and null is text here, so a date
    is asked for in quotes, wherever it stands in the file."""
    text = CLAIM0.read_text(encoding="utf-8").replace('cutoff: "2025-02-06"', f"cutoff: {cutoff}", 1)
    (problem,) = _text_problems(tmp_path, text, name=CLAIM0.name)
    assert problem.startswith(f'params.cutoff: the date {cutoff} must be written in quotes ("{cutoff}", line ')
    assert "YAML 1.1" in problem
    nested = CLAIM0.read_text(encoding="utf-8").replace('{value: "2025-01-06"', "{value: 2025-01-06", 1)
    (problem,) = _text_problems(tmp_path, nested, name=CLAIM0.name)
    assert problem.startswith("multiverse.estimands.cutoff[0].value: the date 2025-01-06 must be written in quotes")


def test_a_quoted_date_and_other_text_that_looks_like_a_date_are_read():
    spec = load_claim(CLAIM0)
    assert spec.params.cutoff == "2025-02-06"  # quoted in the file
    from harness.claimfiles.claim_yaml import is_yaml11_date

    assert not any(is_yaml11_date(v) for v in ("2025", "2025-02", "Jan 6 2025", "2025/02/06", "v2025-02-06"))


@pytest.mark.parametrize("bad", ["../../../../etc/passwd", "/etc/passwd", "skill_frontier/../../x.py"])
def test_source_audit_paths_stay_inside_the_checkout(tmp_path, bad):
    raw = _raw(CLAIM4)
    raw["params"]["source_audit"][0]["file"] = bad
    problems, _ = _problems(tmp_path, raw, name=CLAIM4.name)
    assert len(problems) == 1 and problems[0].startswith("params.source_audit[0].file: must be a path"), problems


# -- issue 16: every kind of problem at once; a mistyped task label; exceed_rate and tau --------------------


def _claim_raw(prefix: str) -> dict:
    (path,) = sorted((ROOT / "claims").glob(f"{prefix}*.yaml"))
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def test_a_problem_in_the_parameters_does_not_hide_the_others(tmp_path):
    raw = _claim_raw("000")
    del raw["params"]["alpha"]
    raw["targets"][0]["quantity"] = "gama"
    raw["controls"][0]["must"][0]["quantities"] = ["p_valu"]
    found, _ = _problems(tmp_path, raw, name="000_aime2025_shift_test.yaml")
    assert any(p.startswith("params.alpha:") for p in found)
    assert any(p.startswith("targets[0].quantity: 'gama'") and "did you mean 'gamma'" in p for p in found)
    assert any(p.startswith("controls[0].must[0].quantities[0]: 'p_valu'") for p in found)


def test_a_mistyped_task_label_is_pointed_at_in_params_tasks(tmp_path):
    raw = _claim_raw("002")
    tasks = raw["params"]["tasks"]
    tasks["MATH Lvl5"] = tasks.pop("MATH Lvl 5")  # the typo is in params.tasks; the targets are right
    found, _ = _problems(tmp_path, raw)
    (head,) = [p for p in found if p.startswith("params.tasks:")]
    assert "'MATH Lvl5' is named by no target" in head and "did you mean 'MATH Lvl 5'?" in head
    target = next(p for p in found if p.startswith("targets[2].quantity"))
    assert "did you mean 'boundary.MATH Lvl5'" not in target and "which looks mistyped" in target


def test_a_mistyped_target_still_gets_the_measured_name(tmp_path):
    raw = _claim_raw("002")
    raw["targets"][2]["quantity"] = "boundary.MATH Lvl5"  # the typo is in one target; the others name it right
    found, _ = _problems(tmp_path, raw)
    assert any("did you mean 'boundary.MATH Lvl 5'" in p for p in found)
    assert not any(p.startswith("params.tasks:") for p in found)


def test_exceed_rate_must_follow_from_tau(tmp_path):
    raw = _claim_raw("001")
    raw["params"]["tau"] = 0.9  # exceed_rate left at 0.02
    raw.pop("multiverse", None)  # whose tau alternatives would no longer hold the claim's own value
    found, _ = _problems(tmp_path, raw, name="001_nonstationary_boundaries.yaml")
    assert any("exceed_rate 0.02 does not follow from tau 0.9" in p and "exceed_rate: 0.1" in p for p in found)
    del raw["params"]["exceed_rate"]
    path = _write(tmp_path, raw, name="001_nonstationary_boundaries.yaml")
    assert load_claim(path, lock=LOCK, pins=PINS).params.exceed_rate == pytest.approx(0.1)


def test_a_title_is_short_and_optional(tmp_path):
    raw = _claim_raw("002")
    assert load_claim(_write(tmp_path, raw), lock=LOCK, pins=PINS).claim.title == raw["title"]
    raw.pop("title")
    assert load_claim(_write(tmp_path, raw), lock=LOCK, pins=PINS).claim.title is None
    raw["title"] = "x" * 81
    assert any(p.startswith("title:") for p in _problems(tmp_path, raw)[0])


@pytest.mark.parametrize(
    "where, value, field, expected",
    [
        (("targets", 0, "label"), "", "targets[0].label", "must not be empty"),
        (("targets", 0, "label"), "x" * 10_000, "targets[0].label", "at most 200 characters"),
        (("limitations",), [""], "limitations[0]", "must not be empty"),
        (("inputs",), ["oll", "oll"], "inputs", "lists oll more than once"),
        (("params", "eval_x"), 1e300, "params.eval_x", "in units of 1e21 FLOPs"),
    ],
)
def test_an_empty_or_endless_label_a_blank_limitation_a_table_twice_and_an_absurd_budget_are_refused(
    tmp_path, where, value, field, expected
):
    """Issue 39's probes: each passed `validate` (or, for eval_x, ended in an OverflowError) before."""
    raw = _raw()
    node = raw
    for key in where[:-1]:
        node = node[key]
    node[where[-1]] = value
    problems, text = _problems(tmp_path, raw)
    assert any(p.startswith(f"{field}: ") and expected in p for p in problems), problems


def test_tasks_written_as_a_list_are_problems_not_a_traceback(tmp_path):
    """Issue 39: `params.tasks` as a list of columns ended in an AttributeError of the task-typo check."""
    raw = _raw()
    raw["params"]["tasks"] = list(raw["params"]["tasks"].values())
    problems, _ = _problems(tmp_path, raw)
    assert any("is not a measured quantity" in p or "is not a quantity" in p for p in problems), problems
