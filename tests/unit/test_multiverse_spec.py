"""The ``multiverse:`` block of a claim file (#20, #27): each bad block is refused with one line naming the file's
key, what was expected and what was found, as the rest of the file is. Mutations of every claim that declares a
multiverse; an estimand among the counted choices is refused, as is an analysis choice among the other
estimands; the docs' table of roles is the code's."""

import copy
import re
from pathlib import Path

import pytest
import yaml

from harness.authors.checkout import load_pins
from harness.claimfiles.multiverse_spec import n_specifications
from harness.claimfiles.registry import PROTOCOLS
from harness.claimfiles.spec import MULTIVERSE_BUDGET, load_claim, multiverse_grid
from harness.core.datalock import load_lock
from harness.core.errors import SpecError

ROOT = Path(__file__).resolve().parents[2]
CLAIMS = sorted((ROOT / "claims").glob("*.yaml"))
WITH = [p for p in CLAIMS if "multiverse" in (yaml.safe_load(p.read_text(encoding="utf-8")) or {})]
LOCK = load_lock()
PINS = load_pins()  # the pins data/upstream.yaml declares


def _raw(path):
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def _problems(tmp_path, path, raw):
    p = tmp_path / path.name
    p.write_text(yaml.safe_dump(raw, sort_keys=False, allow_unicode=True), encoding="utf-8")
    with pytest.raises(SpecError) as info:
        load_claim(p, lock=LOCK, pins=PINS)
    assert all(str(line).strip() and "\n" not in line for line in info.value.problems)
    return info.value.problems


def _first(raw):
    name = next(iter(raw["multiverse"]["choices"]))
    return name, raw["multiverse"]["choices"][name]


def _own(path, name):
    """The claim's own value of a choice (written in its params, or the protocol's default)."""
    return load_claim(path, lock=LOCK, pins=PINS).params.model_dump(mode="json")[name]


def _paper_index(raw, name, path):
    own = _own(path, name)
    return next(i for i, a in enumerate(raw["multiverse"]["choices"][name]) if a["value"] == own)


@pytest.mark.parametrize("path", WITH, ids=lambda p: p.stem)
def test_every_declared_multiverse_loads_within_its_budget(path):
    spec = load_claim(path, lock=LOCK, pins=PINS)
    mv = spec.claim.multiverse
    grid = multiverse_grid({k: [a.value for a in v] for k, v in mv.choices.items()}, mv.exclude)
    own = spec.params.model_dump(mode="json")
    assert 2 <= len(grid) <= n_specifications(mv, own) <= mv.max_specifications <= MULTIVERSE_BUDGET
    assert set(mv.choices) <= set(spec.protocol.CHOICES) and set(mv.estimands) <= set(spec.protocol.CHOICES)
    assert sum(all(s[k] == own[k] for k in s) for s in grid) == 1  # the paper's specification, once


@pytest.mark.parametrize("path", WITH, ids=lambda p: p.stem)
def test_an_unknown_choice_is_refused_with_a_suggestion(tmp_path, path):
    raw = _raw(path)
    name, alts = _first(raw)
    raw["multiverse"]["choices"][name + "x"] = raw["multiverse"]["choices"].pop(name)
    problems = _problems(tmp_path, path, raw)
    assert any(
        p.startswith("multiverse.choices: ") and f"'{name}x'" in p and f"did you mean '{name}'" in p for p in problems
    )


@pytest.mark.parametrize("path", WITH, ids=lambda p: p.stem)
def test_an_alternative_the_protocol_cannot_take_is_refused(tmp_path, path):
    raw = _raw(path)
    name, alts = _first(raw)
    alts.append({"value": -1.0, "reason": "out of range"})
    raw["multiverse"]["max_specifications"] = MULTIVERSE_BUDGET
    problems = _problems(tmp_path, path, raw)
    i = len(alts) - 1
    assert any(p.startswith(f"multiverse.choices.{name}[{i}].value: ") and "cannot take" in p for p in problems)


@pytest.mark.parametrize("path", WITH, ids=lambda p: p.stem)
def test_the_papers_own_value_must_be_an_alternative(tmp_path, path):
    raw = _raw(path)
    name, alts = _first(raw)
    del alts[_paper_index(raw, name, path)]
    if len(alts) < 2:
        alts.append(copy.deepcopy(alts[0]))
    problems = _problems(tmp_path, path, raw)
    assert any(p.startswith(f"multiverse.choices.{name}: the claim's own value") for p in problems)


@pytest.mark.parametrize("path", WITH, ids=lambda p: p.stem)
def test_a_grid_over_its_declared_budget_is_refused(tmp_path, path):
    raw = _raw(path)
    spec = load_claim(path, lock=LOCK, pins=PINS)
    n = n_specifications(spec.claim.multiverse, spec.params.model_dump(mode="json"))
    raw["multiverse"]["max_specifications"] = n - 1
    if n - 1 < 2:
        pytest.skip("the grid is already the smallest")
    problems = _problems(tmp_path, path, raw)
    assert any(p.startswith(f"multiverse: {n} specifications") and f"max_specifications {n - 1}" in p for p in problems)
    raw["multiverse"]["max_specifications"] = MULTIVERSE_BUDGET + 1
    problems = _problems(tmp_path, path, raw)
    assert any(p.startswith("multiverse.max_specifications") for p in problems)


@pytest.mark.parametrize("path", WITH, ids=lambda p: p.stem)
def test_exclusions_must_name_alternatives_and_keep_the_papers_specification(tmp_path, path):
    raw = _raw(path)
    name, alts = _first(raw)
    own = _own(path, name)
    raw["multiverse"]["exclude"] = [{name + "x": own}, {name: own}]
    problems = _problems(tmp_path, path, raw)
    assert any(p.startswith("multiverse.exclude[0]: ") and "did you mean" in p for p in problems)
    assert any(p == "multiverse.exclude[1]: excludes the paper's own specification" for p in problems)


@pytest.mark.parametrize("path", WITH, ids=lambda p: p.stem)
def test_every_alternative_needs_its_reason(tmp_path, path):
    raw = _raw(path)
    name, alts = _first(raw)
    del alts[0]["reason"]
    problems = _problems(tmp_path, path, raw)
    assert any(p.startswith(f"multiverse.choices.{name}[0].reason") for p in problems)


@pytest.mark.parametrize("path", WITH, ids=lambda p: p.stem)
def test_an_unknown_curve_quantity_and_an_unknown_key_are_refused(tmp_path, path):
    raw = _raw(path)
    raw["multiverse"]["curve"] = "no_such_quantity"
    assert any(p.startswith("multiverse.curve: ") for p in _problems(tmp_path, path, raw))
    raw = _raw(path)
    raw["multiverse"]["choise"] = {}
    assert any(p.startswith("multiverse.choise") for p in _problems(tmp_path, path, raw))


@pytest.mark.parametrize("path", CLAIMS, ids=lambda p: p.stem)
def test_a_protocols_declared_choices_are_parameters_it_takes(path):
    protocol = PROTOCOLS[_raw(path)["protocol"]].protocol
    assert set(protocol.CHOICES) <= set(protocol.Params.model_fields)


@pytest.mark.parametrize("path", CLAIMS, ids=lambda p: p.stem)
def test_a_data_choice_in_a_claims_own_params_is_refused_beside_the_authors_arm(tmp_path, path):
    raw = _raw(path)
    protocol = PROTOCOLS[raw["protocol"]].protocol
    data = [n for n, c in protocol.CHOICES.items() if c.kind == "data"]
    if not data or raw.get("upstream") is None:
        pytest.skip("no data choice, or no authors' arm")
    name = "weighting" if "weighting" in data else data[0]
    field = protocol.Params.model_fields[name]
    default = field.default
    other = [v for v in getattr(field.annotation, "__args__", ()) if v != default]  # a Literal's other values
    raw["params"][name] = other[0] if other else (not default) if isinstance(default, bool) else default + 1
    raw.pop("multiverse", None)
    problems = _problems(tmp_path, path, raw)
    assert any(p.startswith(f"params.{name}: {raw['params'][name]!r} is a data choice") for p in problems), problems


@pytest.mark.parametrize("path", CLAIMS, ids=lambda p: p.stem)
def test_the_committed_multiverses_count_analysis_choices_only(path):
    """No committed claim counts an estimand (#27: the quantile, the score scale, the cutoff), and each shows at
    least one other estimand apart or has none to show."""
    raw = _raw(path)
    if "multiverse" not in raw:
        pytest.skip("no multiverse")
    protocol = PROTOCOLS[raw["protocol"]].protocol
    roles = {n: protocol.CHOICES[n].role for n in raw["multiverse"]["choices"]}
    assert set(roles.values()) == {"analysis"}, roles
    assert {protocol.CHOICES[n].role for n in raw["multiverse"].get("estimands", {})} <= {"estimand"}


@pytest.mark.parametrize("path", CLAIMS, ids=lambda p: p.stem)
def test_an_estimand_among_the_counted_choices_is_refused(tmp_path, path):
    """A multiverse that varies a claim-fixed parameter (an estimand) among its analysis choices is refused, with
    where it belongs; under ``estimands`` the same alternatives load."""
    raw = _raw(path)
    estimands = raw.get("multiverse", {}).get("estimands", {})
    if not estimands:
        pytest.skip("the claim shows no other estimand to move among its choices")
    name, alts = next(iter(estimands.items()))
    raw["multiverse"]["choices"][name] = estimands.pop(name)
    raw["multiverse"]["max_specifications"] = MULTIVERSE_BUDGET
    problems = _problems(tmp_path, path, raw)
    mine = [p for p in problems if p.startswith(f"multiverse.choices.{name}: ")]
    assert len(mine) == 1, problems
    assert "expected an analysis choice, found" in mine[0] and "declares an estimand" in mine[0]
    assert "move it under multiverse.estimands" in mine[0]


@pytest.mark.parametrize("path", WITH, ids=lambda p: p.stem)
def test_an_analysis_choice_among_the_other_estimands_is_refused(tmp_path, path):
    raw = _raw(path)
    name, alts = _first(raw)
    raw["multiverse"].setdefault("estimands", {})[name] = raw["multiverse"]["choices"].pop(name)
    if not raw["multiverse"]["choices"]:
        raw["multiverse"]["choices"] = {name + "_": alts}
    problems = _problems(tmp_path, path, raw)
    mine = [p for p in problems if p.startswith(f"multiverse.estimands.{name}: ")]
    assert len(mine) == 1 and "expected an estimand choice, found" in mine[0], problems
    assert "move it under multiverse.choices" in mine[0]


@pytest.mark.parametrize("path", WITH, ids=lambda p: p.stem)
def test_a_joint_null_is_refused_where_the_protocol_has_no_test(tmp_path, path):
    raw = _raw(path)
    protocol = PROTOCOLS[raw["protocol"]].protocol
    raw["multiverse"]["joint_null"] = {"n_datasets": 50, "seed": 1}
    if protocol.JOINT_NULL is not None:
        load_claim(_write(tmp_path, path, raw), lock=LOCK, pins=PINS)  # accepted
        raw["multiverse"]["joint_null"] = {"n_datasets": 10**9, "seed": 1}
        assert any(p.startswith("multiverse.joint_null.n_datasets") for p in _problems(tmp_path, path, raw))
        return
    problems = _problems(tmp_path, path, raw)
    assert any(p.startswith("multiverse.joint_null: expected only where the protocol has a test") for p in problems)


def _write(tmp_path, path, raw):
    p = tmp_path / path.name
    p.write_text(yaml.safe_dump(raw, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return p


def _docs_roles() -> dict[tuple[str, str], str]:
    """``{(protocol or "leaderboard protocols", choice): role}`` from the table of docs/multiverse.md."""
    text = (ROOT / "docs" / "multiverse.md").read_text(encoding="utf-8")
    out = {}
    for line in text.splitlines():
        m = re.match(r"^\| (`\w+`|leaderboard protocols) \| ((?:`\w+`(?:, )?)+) \| (estimand|analysis) \|", line)
        if m:
            for name in re.findall(r"`(\w+)`", m.group(2)):
                out[(m.group(1).strip("`"), name)] = m.group(3)
    return out


def test_the_docs_say_which_choice_is_an_estimand_as_the_code_does():
    docs = _docs_roles()
    assert docs, "docs/multiverse.md has no table of roles"
    for name, card in PROTOCOLS.items():
        for choice, c in card.protocol.CHOICES.items():
            said = docs.get((name, choice), docs.get(("leaderboard protocols", choice)))
            assert said == c.role, f"{name}.{choice}: docs say {said}, the code {c.role}"


def test_an_assertion_is_read_within_noise_unless_its_side_holds_as_measured_and_bias_corrected():
    from harness.resampling.multiverse import read_assertion

    a = {"left": "d", "relation": "<", "right": 0.0, "margin": None}
    assert read_assertion(a, {"d": -0.05}, noise=0.01) == "holds"
    assert read_assertion(a, {"d": 0.05}, noise=0.01) == "fails"
    assert read_assertion(a, {"d": -0.005}, noise=0.01) == "unsettled"  # within the margin
    # the resamples sit 0.045 below the value: corrected, -0.05 becomes -0.005, within the margin
    assert read_assertion(a, {"d": -0.05}, noise=0.01, bias=-0.045) == "unsettled"
    assert read_assertion(a, {"d": -0.05}, noise=0.01, bias=-0.1) == "unsettled"  # corrected to the other side
    assert read_assertion(a, {"d": -0.05}, noise=0.01, bias=0.02) == "holds"  # both sides agree, beyond it
    assert read_assertion(a, {"d": -0.05}, bias=0.1) == "holds"  # no noise measured: read by sign
    assert read_assertion(a, {}, noise=0.01) is None
