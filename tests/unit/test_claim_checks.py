"""What ``validate`` refuses beyond the schema, and how it says it (issue 28: realistic mistakes it let through;
issue 30: what a new user trips on). Each test breaks one claim of ``claims/`` on purpose and requires the
message to name the field, what was expected and what was found, with every other problem of the file."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml
from claimset import PATHS

from harness import cli
from harness.authors.checkout import load_pins
from harness.claimfiles.claim_checks import (
    MIN_TAIL_RESAMPLES,
    TRAINING_COMPUTE_DECADES,
    foreign_protocols,
    named_budgets,
    near_miss,
)
from harness.claimfiles.registry import PROTOCOLS
from harness.claimfiles.spec import load_claim
from harness.core.datalock import load_lock
from harness.core.errors import SpecError
from harness.core.schema import Label, Strict, format_validation_error, validate_plain

LOCK = load_lock()
PINS = load_pins()  # the pins data/upstream.yaml declares
RAW = {p: yaml.safe_load(p.read_text(encoding="utf-8")) for p in PATHS}
PROTOCOL = {p: RAW[p]["protocol"] for p in PATHS}
LEADERBOARD = [p for p in PATHS if isinstance(RAW[p].get("params", {}).get("tasks"), dict)]


def _raw(path: Path) -> dict:
    raw = copy.deepcopy(RAW[path])
    raw.pop("multiverse", None)  # a multiverse holds the claim's own values: left out where they change
    return raw


def _problems(tmp_path, path: Path, raw: dict, **kw) -> list[str]:
    out = tmp_path / path.name
    out.write_text(yaml.safe_dump(raw, sort_keys=False, allow_unicode=True), encoding="utf-8")
    with pytest.raises(SpecError) as info:
        load_claim(out, lock=LOCK, pins=PINS, **kw)
    return info.value.problems


def _load(tmp_path, path: Path, raw: dict, **kw):
    out = tmp_path / path.name
    out.write_text(yaml.safe_dump(raw, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return load_claim(out, lock=LOCK, pins=PINS, **kw)


def _leaderboard(prefix_protocol: str = "boundary_at_budget") -> Path:
    found = [p for p in LEADERBOARD if PROTOCOL[p] == prefix_protocol] or LEADERBOARD
    if not found:
        pytest.skip("no claim in claims/ on a leaderboard protocol")
    return found[0]


# -- the schema's words ------------------------------------------------------------------------------------------


def test_every_length_limit_speaks_of_characters_or_entries():
    from pydantic import Field

    class Limits(Strict):
        name: Label = Field(min_length=1, max_length=5)
        plain: str = Field(max_length=3)
        entries: list[int] = Field(min_length=2, max_length=3)

    cases = {
        "name": ({"name": "abcdefgh", "plain": "a", "entries": [1, 2]}, "must be at most 5 characters long, not 8"),
        "plain": ({"name": "a", "plain": "abcd", "entries": [1, 2]}, "must be at most 3 characters long, not 4"),
        "entries": ({"name": "a", "plain": "a", "entries": [1, 2, 3, 4]}, "must have at most 3 entries, not 4"),
    }
    for key, (data, words) in cases.items():
        with pytest.raises(Exception) as info:
            validate_plain(Limits, data)
        (line,) = format_validation_error(info.value)
        assert line.startswith(f"{key}: {words}") and " item" not in line, line
    with pytest.raises(Exception) as info:
        validate_plain(Limits, {"name": "", "plain": "", "entries": [1]})
    lines = format_validation_error(info.value)
    assert "name: must not be empty, got ''" in lines and "entries: must have at least 2 entries, not 1" in lines


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_a_title_over_80_characters_is_refused_in_characters(tmp_path, path):
    raw = _raw(path)
    raw["title"] = "x" * 95
    (line,) = [p for p in _problems(tmp_path, path, raw) if p.startswith("title:")]
    assert "must be at most 80 characters long, not 95" in line and "items" not in line


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_an_unknown_key_gets_a_suggestion_and_hides_nothing(tmp_path, path):
    """``targts`` for ``targets``: both said, linked, and the file's other problems said with them."""
    raw = _raw(path)
    raw["targts"] = raw.pop("targets")
    raw["seed"] = -1
    raw["inputs"] = [raw["inputs"][0] + "x"]
    found = _problems(tmp_path, path, raw)
    assert "targts: unknown key (did you mean 'targets'?)" in found
    assert "targets: required key is missing (is 'targts' a misspelling of it?)" in found
    assert any(p.startswith("seed:") for p in found)
    assert any(p.startswith("inputs[0]:") and "did you mean" in p for p in found), found


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_a_misspelt_parameter_is_suggested_and_the_names_are_still_checked(tmp_path, path):
    raw = _raw(path)
    key = next(k for k in raw["params"] if len(k) > 3 and isinstance(raw["params"][k], (int, float, str)))
    raw["params"][key + "x"] = raw["params"].pop(key)
    raw["targets"][0]["quantity"] = raw["targets"][0]["quantity"][:-1]
    found = _problems(tmp_path, path, raw)
    assert f"params.{key}x: unknown key (did you mean '{key}'?)" in found
    assert any(p.startswith("targets[0].quantity:") for p in found), found


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_an_unknown_key_in_a_target_is_suggested_and_the_other_targets_checked(tmp_path, path):
    raw = _raw(path)
    raw["targets"][0]["reasn"] = raw["targets"][0].pop("reason")
    raw["targets"][-1]["quantity"] += "x"
    found = _problems(tmp_path, path, raw)
    assert "targets[0].reasn: unknown key (did you mean 'reason'?)" in found
    assert any(p.startswith(f"targets[{len(raw['targets']) - 1}].quantity:") for p in found), found


def test_a_typo_of_a_task_in_one_target_is_the_targets_not_params_tasks(tmp_path):
    """``boundary.BHH`` beside ``params.tasks: {BBH: BBH Raw}``: the target spells it wrong (issue 30)."""
    path = _leaderboard()
    raw = _raw(path)
    label = next(iter(raw["params"]["tasks"]))
    i = next(i for i, t in enumerate(raw["targets"]) if t["quantity"].endswith("." + label))
    mistyped = label[0] + label[2] + label[1] + label[3:] if len(label) > 2 else label + label[-1]
    raw["targets"][i]["quantity"] = raw["targets"][i]["quantity"].replace(label, mistyped)
    found = _problems(tmp_path, path, raw)
    assert not any(p.startswith("params.tasks:") for p in found), found
    (line,) = [p for p in found if p.startswith(f"targets[{i}].quantity:")]
    assert f"did you mean '{raw['targets'][i]['quantity'].replace(mistyped, label)}'" in line


# -- quantity names ----------------------------------------------------------------------------------------------


def test_a_near_miss_is_a_near_miss_in_both_parts():
    known = ["coverage.MATH Lvl 5", "boundary.MATH Lvl 5", "boundary.MUSR", "gamma"]
    assert near_miss("boundry.MATH Lvl 5", known) == "boundary.MATH Lvl 5"
    assert near_miss("gama", known) == "gamma"
    assert near_miss("signed_coverage.MATH Lvl 5", known) is None  # another quantity, not a misspelling
    assert near_miss("boundary.GPQA", known) is None  # another task, not a misspelling of MUSR


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_a_quantity_of_another_protocol_is_said_to_be_its(tmp_path, path):
    """For every pair of claims on two protocols: a quantity of the other claim's that this one's protocol does
    not measure is named as the other protocol's, and never answered with an unrelated name of this one."""
    spec = load_claim(path, lock=LOCK, pins=PINS)
    tried = 0
    for other in PATHS:
        if PROTOCOL[other] == PROTOCOL[path]:
            continue
        names = [q for q in load_claim(other, lock=LOCK, pins=PINS).vocabulary if q not in spec.vocabulary]
        for name in names[:3] + names[-3:]:
            raw = _raw(path)
            raw["targets"][0]["quantity"] = name
            (line,) = [p for p in _problems(tmp_path, path, raw) if p.startswith("targets[0].quantity:")]
            assert f"'{PROTOCOL[other]}'" in line.split("; known:")[0], line
            said = near_miss(name, spec.vocabulary)
            assert ("did you mean" in line) == (said is not None), line
            tried += 1
    assert tried or len(set(PROTOCOL.values())) == 1


def test_a_name_of_this_protocols_shape_is_not_called_another_protocols():
    for name in PROTOCOLS:
        claims = [p for p in PATHS if PROTOCOL[p] == name]
        if not claims:
            continue
        spec = load_claim(claims[0], lock=LOCK, pins=PINS)
        for q in list(spec.vocabulary)[:5]:
            assert foreign_protocols(q + "x", name, RAW[claims[0]]["params"]) == [], q


# -- labels, tolerances --------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)
def test_two_targets_under_one_label_are_refused(tmp_path, path):
    raw = _raw(path)
    raw["targets"][0]["label"] = raw["targets"][1]["label"] = "the same row"
    found = _problems(tmp_path, path, raw)
    (line,) = [p for p in found if p.startswith("targets[1].label:")]
    assert "'the same row' is also the label of targets[0]" in line


def test_a_label_naming_another_task_is_refused(tmp_path):
    """A row of GPQA printed as "MATH Lvl 5" (issue 28)."""
    path = _leaderboard()
    raw = _raw(path)
    tasks = list(raw["params"]["tasks"])
    i = next(i for i, t in enumerate(raw["targets"]) if t["quantity"].endswith("." + tasks[1]))
    raw["targets"][i]["label"] = tasks[0]
    found = _problems(tmp_path, path, raw)
    assert any(
        p.startswith(f"targets[{i}].label:") and f"is the name of task '{tasks[0]}'" in p and tasks[1] in p
        for p in found
    ), found


def test_a_tolerance_of_0_on_a_printed_decimal_is_a_warning_and_validate_still_passes(tmp_path, capsys):
    path = next((p for p in PATHS if any(t.get("tolerance") for t in RAW[p]["targets"])), None)
    if path is None:
        pytest.skip("no claim with a tolerance")
    raw = _raw(path)
    i = next(i for i, t in enumerate(raw["targets"]) if t.get("tolerance"))
    raw["targets"][i]["tolerance"] = 0
    raw["targets"][i]["paper"] = 0.539
    out = tmp_path / path.name
    out.write_text(yaml.safe_dump(raw, sort_keys=False, allow_unicode=True), encoding="utf-8")
    spec = load_claim(out, lock=LOCK, pins=PINS)
    (warning,) = spec.warnings
    assert warning.startswith(f"targets[{i}].tolerance: 0 asks") and "0.0005" in warning and "not an error" in warning
    assert cli.main(["validate", str(out)]) == 0
    err = capsys.readouterr().err
    assert f"warning: {out}: targets[{i}].tolerance" in err and "error:" not in err
    raw["targets"][i]["paper"] = 1  # a whole number: exact by nature (a count; here the end of a fraction's range)
    assert _load(tmp_path, path, raw).warnings == ()


# -- targets that cannot fail, relations across kinds, resamples (issue 38) ---------------------------------------

SPECS = {p: load_claim(p, lock=LOCK, pins=PINS) for p in PATHS}


def _of_kind(path: Path, kind: str) -> list[str]:
    return sorted(n for n, q in SPECS[path].vocabulary.items() if q.kind == kind)


def test_a_tolerance_wider_than_a_fractions_range_is_refused(tmp_path):
    found = [
        (p, i)
        for p in PATHS
        for i, t in enumerate(SPECS[p].targets)
        if t.relation == "~" and SPECS[p].vocabulary[t.quantity].kind == "fraction"
    ]
    if not found:
        pytest.skip("no claim with a '~' target on a fraction")
    path, i = found[0]
    raw = _raw(path)
    raw["targets"][i]["tolerance"] = 5  # a p-value or a coverage within 5 of its paper value: anything passes
    (line,) = [p for p in _problems(tmp_path, path, raw) if p.startswith(f"targets[{i}].tolerance:")]
    paper = raw["targets"][i]["paper"]
    assert "is a fraction in [0, 1]" in line and "cannot fail" in line, line
    assert f"expected a tolerance below {max(paper, 1 - paper):g}" in line and line.endswith("found 5"), line
    raw["targets"][i]["tolerance"] = max(paper, 1 - paper) * 0.99  # can still fail at the farther end
    _load(tmp_path, path, raw)


def test_a_relation_every_fraction_meets_is_refused(tmp_path):
    path = next((p for p in PATHS if _of_kind(p, "fraction")), None)
    if path is None:
        pytest.skip("no claim measures a fraction")
    raw = _raw(path)
    q = _of_kind(path, "fraction")[0]
    raw["targets"].append({"quantity": q, "relation": "<", "value": 5, "reason": "percent written for a fraction"})
    i = len(raw["targets"]) - 1
    (line,) = [p for p in _problems(tmp_path, path, raw) if p.startswith(f"targets[{i}].value:")]
    assert "every value in [0, 1] is < 5" in line and line.endswith("found 5"), line
    raw["targets"][i]["value"] = 0.5
    raw["targets"][i]["label"] = "a target that can fail"
    _load(tmp_path, path, raw)


def test_a_target_outside_a_boundarys_range_or_covering_it_is_refused(tmp_path):
    path = _leaderboard()
    raw = _raw(path)
    i = next((i for i, t in enumerate(raw["targets"]) if t["quantity"].startswith("boundary.")), None)
    if i is None or SPECS[path].vocabulary[raw["targets"][i]["quantity"]].limits != (0.0, 1.0):
        pytest.skip("no '~' target on a boundary of scores")
    paper = raw["targets"][i]["paper"]
    raw["targets"][i]["tolerance"] = 5
    (line,) = [p for p in _problems(tmp_path, path, raw) if p.startswith(f"targets[{i}].tolerance:")]
    assert "lies in [0, 1]" in line and "cannot fail" in line and line.endswith("found 5"), line
    raw["targets"][i].update(paper=paper * 100, tolerance=0.05)  # the paper's percent copied as printed
    (line,) = [p for p in _problems(tmp_path, path, raw) if p.startswith(f"targets[{i}].paper:")]
    assert f"expected a paper value in [0, 1], found {paper * 100:g} (a percent?" in line, line
    raw["targets"][i].update(paper=paper, tolerance=max(paper, 1 - paper) * 0.99)
    _load(tmp_path, path, raw)


def test_a_relation_between_a_gap_and_a_count_is_refused(tmp_path):
    path = next((p for p in PATHS if _of_kind(p, "count") and _of_kind(p, "value")), None)
    if path is None:
        pytest.skip("no claim measures both a count and a value")
    raw = _raw(path)
    value, count = _of_kind(path, "value")[0], _of_kind(path, "count")[0]
    raw["targets"].append({"quantity": value, "relation": "<", "other": count, "reason": "a gap against a count"})
    i = len(raw["targets"]) - 1
    (line,) = [p for p in _problems(tmp_path, path, raw) if p.startswith(f"targets[{i}].other:")]
    assert f"expected one of {value}'s, a measured value" in line and line.endswith(f"found {count}, a count"), line
    raw["targets"][i]["other"] = _of_kind(path, "value")[1]
    _load(tmp_path, path, raw)


def test_an_ordering_between_quantities_of_two_kinds_is_refused(tmp_path):
    path = next((p for p in PATHS if RAW[p].get("bootstrap", {}).get("comparisons") and _of_kind(p, "count")), None)
    if path is None:
        pytest.skip("no claim with orderings measures a count")
    raw = _raw(path)
    left, count = raw["bootstrap"]["comparisons"][0]["left"], _of_kind(path, "count")[0]
    if SPECS[path].vocabulary[left].kind == "count":
        pytest.skip("the ordering's left side is a count")
    raw["bootstrap"]["comparisons"][0]["right"] = count
    (line,) = [p for p in _problems(tmp_path, path, raw) if p.startswith("bootstrap.comparisons[0].right:")]
    assert f"found {count}, a count" in line, line


def test_too_few_resamples_for_a_one_sided_bound_are_refused(tmp_path):
    path = next((p for p in PATHS if RAW[p].get("bootstrap", {}).get("comparisons")), None)
    if path is None:
        pytest.skip("no claim asserts an ordering")
    raw = _raw(path)
    raw["bootstrap"]["n_resamples"] = 12
    raw["bootstrap"]["alpha"] = 0.05
    raw["bootstrap"].pop("calibration", None)
    (line,) = [p for p in _problems(tmp_path, path, raw) if p.startswith("bootstrap.n_resamples:")]
    # the 0.05-quantile of 12 resamples lies between the two smallest: 0.6 of a resample beyond it
    assert "so 12 leave 0.6 of them beyond it" in line and line.endswith("found 12"), line
    assert f"expected at least {MIN_TAIL_RESAMPLES} / alpha = 100" in line, line
    raw["bootstrap"]["n_resamples"] = 100
    _load(tmp_path, path, raw)
    raw["bootstrap"]["alpha"] = 0.01  # a 1% bound asks for five times as many
    (line,) = [p for p in _problems(tmp_path, path, raw) if p.startswith("bootstrap.n_resamples:")]
    assert "expected at least 5 / alpha = 500" in line and line.endswith("found 100"), line
    raw["bootstrap"]["comparisons"] = []  # no decision, no bound
    raw["bootstrap"]["quantities"] = raw["bootstrap"].get("quantities") or [raw["targets"][0]["quantity"]]
    _load(tmp_path, path, raw)


# -- the evaluation point against the budget the claim names (issue 38) ------------------------------------------


def test_the_budgets_a_claims_text_names_are_read_however_written():
    assert named_budgets("At 10²⁴ FLOPs, and 3 × 10²⁴ FLOPs") == pytest.approx([1e24, 3e24])
    assert named_budgets("from 10^23 FLOPs to 1e25 FLOPs, 10^{22.5} FLOP") == pytest.approx([1e23, 1e25, 10**22.5])
    assert named_budgets("1024 FLOPs, 10 FLOPs, at 10²⁴ tokens") == []  # no power of ten, or not compute


def test_an_evaluation_point_written_as_the_log_of_the_named_budget_is_refused(tmp_path):
    path = _leaderboard()
    raw = _raw(path)
    if "eval_x" not in raw["params"]:
        pytest.skip("the claim has no evaluation point")
    raw["claim"] = "At 10²⁴ FLOPs, the estimated 0.98-quantile boundary reaches 0.539."
    raw["title"] = "The boundary at 10²⁴ FLOPs"
    raw["params"]["eval_x"] = 3.0  # z = log10(1e24 / 1e21), written in place of the budget
    (line,) = [p for p in _problems(tmp_path, path, raw) if p.startswith("params.eval_x:")]
    assert "3 is in units of 1e21 FLOPs, so it is 3 × 10²¹ FLOPs" in line, line
    assert "whose log10 in units of 1e21 FLOPs is 3" in line and line.endswith("expected eval_x: 1000, found 3")
    raw["params"]["eval_x"] = 24.0  # log10 of the budget in FLOPs
    (line,) = [p for p in _problems(tmp_path, path, raw) if p.startswith("params.eval_x:")]
    assert "whose log10 in units of FLOPs is 24" in line and line.endswith("found 24"), line
    raw["params"]["eval_x"] = 3000.0  # another budget: said, not refused (the budget is read from prose)
    (warning,) = _load(tmp_path, path, raw).warnings
    assert warning.startswith("params.eval_x: 3000 is in units of 1e21 FLOPs, so it is 3 × 10²⁴ FLOPs, none of")
    assert "10²⁴ FLOPs (eval_x: 1000)" in warning and "a warning, not an error" in warning
    raw["params"]["eval_x"] = 1000.0
    assert _load(tmp_path, path, raw).warnings == ()


# -- the compute axis and the scores ------------------------------------------------------------------------------


def _epoch(raw: dict, unit: str, eval_x: float | None = 1e4) -> dict:
    p = raw["params"]
    for k in ("tokens_col", "params_col", "multiplier"):
        p.pop(k, None)
    p.update(table="epoch_gpqa_diamond", compute={"column": "training_compute_flop", "unit": unit})
    p["tasks"] = {"GPQA diamond": "score"}
    if eval_x is not None:
        p["eval_x"] = eval_x
    raw["inputs"] = ["epoch_gpqa_diamond"]
    raw.pop("title", None)
    raw["claim"] = "A boundary on Epoch AI's GPQA diamond scores."  # names no budget
    raw["targets"] = [{"quantity": "boundary.GPQA diamond", "paper": 0.5, "tolerance": 0.4, "reason": "a stand-in"}]
    raw.pop("bootstrap", None)
    raw["controls"] = []
    return raw


def test_a_compute_unit_that_does_not_fit_the_column_is_refused(tmp_path, tables):
    path = _leaderboard()
    bad = _epoch(_raw(path), "1e21 FLOPs")
    (line,) = [p for p in _problems(tmp_path, path, bad, tables=tables) if p.startswith("params.compute.unit:")]
    lo, hi = TRAINING_COMPUTE_DECADES
    assert "'1e21 FLOPs' does not fit column 'training_compute_flop'" in line
    assert f"outside the 10^{lo:g} to 10^{hi:g} FLOPs" in line and "median 10^45.7 FLOPs" in line
    assert "evaluation point, 10^25 FLOPs, would lie 19.6 decades below them" in line
    assert "read as 'FLOPs' they are 10^23.6 FLOPs to 10^26.7 FLOPs, which fits" in line
    assert _load(tmp_path, path, _epoch(_raw(path), "FLOPs"), tables=tables).warnings == ()


def test_an_evaluation_point_written_in_flops_is_refused(tmp_path):
    path = _leaderboard()
    raw = _raw(path)
    raw["params"]["eval_x"] = 1e24
    (line,) = [p for p in _problems(tmp_path, path, raw) if p.startswith("params.eval_x:")]
    assert "1e24 is in units of 1e21 FLOPs, so it is 10^45 FLOPs" in line and "eval_x: 1000" in line


def test_a_compute_proxy_off_by_a_unit_is_refused(tmp_path, tables):
    path = _leaderboard()
    raw = _raw(path)
    if "multiplier" not in raw["params"]:
        pytest.skip("the claim reads a column of compute")
    raw["params"]["multiplier"] = 6e12  # tokens counted, not in T
    (line,) = [p for p in _problems(tmp_path, path, raw, tables=tables) if p.startswith("params.multiplier:")]
    assert "6e12 × " in line and "only with tokens in T and parameters in B" in line


@pytest.mark.parametrize(
    "protocol", ["boundary_at_budget", "temporal_coverage", "estimator_comparison", "hyperparameters"]
)
def test_percent_scores_need_their_scale_on_every_leaderboard_protocol(tmp_path, tables, protocol):
    found = [p for p in LEADERBOARD if PROTOCOL[p] == protocol]
    if not found:
        pytest.skip(f"no claim in claims/ on {protocol}")
    path = found[0]
    raw = _raw(path)
    label, col = next(iter(raw["params"]["tasks"].items()))
    percent = col.removesuffix(" Raw")
    if percent == col:
        pytest.skip("the claim's columns are not the leaderboard's raw ones")
    raw["params"]["tasks"][label] = percent
    found = _problems(tmp_path, path, raw, tables=tables)
    (line,) = [p for p in found if p.startswith(f"params.tasks.{label}:")]
    assert f"column '{percent}'" in line and "above 1), not fractions in [0, 1]" in line and "scale: percent" in line
    raw["params"]["scale"] = "percent"  # now every other column is a fraction called a percent: refused no more,
    spec = _load(tmp_path, path, raw, tables=tables)  # but each said
    assert spec.params.scale == "percent"
    assert len(spec.warnings) == len(raw["params"]["tasks"]) - 1, spec.warnings


def test_the_re_implementation_divides_percent_scores_by_100(tables):
    from harness.protocols.leaderboard import leaderboard_frame

    path = _leaderboard()
    spec = load_claim(path, tables=tables)
    if "scale" not in type(spec.params).model_fields:
        pytest.skip("no score scale")
    label, col = next(iter(spec.params.tasks.items()))
    percent = col.removesuffix(" Raw")
    p = spec.params.model_copy(update={"scale": "percent", "tasks": {label: percent}})
    shown = leaderboard_frame(tables, p)
    written = tables.frame(spec.params.table)[percent]
    assert len(shown) and (shown[percent] == written[shown.index] / 100.0).all()
    assert written.max() > 1  # the shared table itself is left as it is


def test_the_authors_code_reads_a_copy_with_percent_scores_divided(tmp_path, monkeypatch):
    from harness.authors.adapters.authors_sigmoid import claim_table

    table = tmp_path / "t.csv"
    table.write_text("model,score,other\na,45.5,7\nb,,8\nc,nan,9\nd,100,10\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    request = {"params": {"table": "t", "tasks": {"x": "score"}, "scale": "fraction"}, "tables": {"t": str(table)}}
    assert claim_table(request) == str(table)
    request["params"]["scale"] = "percent"
    copy_ = Path(claim_table(request))
    assert copy_.parent == tmp_path / "scaled"
    assert copy_.read_text(encoding="utf-8").splitlines() == [
        "model,score,other",
        "a,0.455,7",
        "b,,8",
        "c,nan,9",
        "d,1.0,10",
    ]


# -- the command line's suggestion for a claim's number ------------------------------------------------------


def test_a_missing_number_suggests_the_nearest_numbers_first_however_they_are_spelt():
    stems = ["000_a", "001_b", "002_c", "003_d", "004_e", "005_my_claim", "006_scratch_copy"]
    assert cli._suggest("011", stems)[:2] == ["006_scratch_copy", "005_my_claim"]  # not 001_b, spelt alike
    assert cli._suggest("7", stems)[0] == "006_scratch_copy"
    assert cli._suggest("scratch", stems)[0] == "006_scratch_copy"
