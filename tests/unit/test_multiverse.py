"""The multiverse (#20, #27): analysis specifications run and read on the claim's substance, counted once per
distinct result, the choices that flip it or do nothing named, other estimands shown apart, how a report words
the finding, and the specification curve drawn byte-identically from the record.

Synthetic protocols (a toy measurement of a parameter or two) give claims with known readings; the report
tests attach a multiverse to a committed-claim record built by this code.
"""

from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from harness.claimfiles import registry
from harness.claimfiles.spec import Claim, ClaimSpec
from harness.core.quantities import Quantity
from harness.core.record import MultiverseRecord, MultiverseSpecification
from harness.core.schema import Count, Number, validate_plain
from harness.parallel import fanout
from harness.protocols.base import Choice, Measurement, Protocol, ProtocolParams
from harness.rendering.render import render_report
from harness.resampling.multiverse import multiverse_finding, run_multiverse
from harness.resampling.multiverse_finding import analysis_choices_label
from harness.verdicts.invariants import problems

ROOT = Path(__file__).resolve().parents[2]


class ToyParams(ProtocolParams):
    a: Number = 1.0
    b: Number = 1.0
    c: Number = 1.0  # an estimand
    flip: bool = False  # the toy's "data": whether the conclusion depends on a
    n_perm: Count = 2000
    diagnostics: bool = True  # what a specification leaves out


class Toy(Protocol):
    """``x = b / 10 + (1 if a == 1 else -1)`` when ``flip``, else ``x = 1 + a + c`` (``b`` changes nothing), plus
    noise from the stream; ``p = a / 20 + b / 1000``: a p-value whose Monte Carlo margin around 0.05 is 0.0195."""

    name = "toy"
    Params = ToyParams
    CHOICES = {
        "a": Choice("the toy's a", "analysis", "a setting"),
        "b": Choice("the toy's b", "analysis", "a setting"),
        "c": Choice("the toy's c", "estimand", "the claim names it"),
    }

    def measure(self, params, tables, rng):
        noise = float(rng.spawn(1)[0].normal(0, 1e-6))  # spawning advances the generator's seed sequence
        if params.flip:
            x = params.b / 10 + (1.0 if params.a == 1.0 else -1.0)
        else:
            x = 1.0 + params.a + params.c
        return Measurement({"x": x + noise, "y": params.a, "p": params.a / 20 + params.b / 1000})

    def multiverse_params(self, params):
        return {"diagnostics": False}

    def decision_margin(self, params, quantity, threshold):
        return 4 * np.sqrt(threshold * (1 - threshold) / params.n_perm) if quantity == "p" else None


def _alts(values):
    return [{"value": v, "reason": "why not"} for v in values]


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.setitem(registry.PROTOCOLS, "toy", SimpleNamespace(protocol=Toy()))

    def spec(flip: bool = False, exclude=(), targets=None, choices=None, estimands=None, params=None):
        raw = {
            "id": "toy",
            "claim": "x is positive",
            "locator": "nowhere",
            "protocol": "toy",
            "params": {"a": 1.0, "b": 1.0, "flip": flip, **(params or {})},
            "inputs": ["t"],
            "seed": 7,
            "targets": targets or [{"quantity": "x", "relation": ">", "value": 0.0, "reason": "the toy's claim"}],
            "multiverse": {
                "max_specifications": 12,
                "choices": choices or {"a": _alts([1.0, 2.0, 3.0]), "b": _alts([1.0, 2.0, 3.0])},
                "estimands": estimands or {},
                "exclude": list(exclude),
            },
        }
        claim = validate_plain(Claim, raw)
        return ClaimSpec(
            path=Path("claims/toy.yaml"),
            claim=claim,
            protocol=Toy(),
            params=validate_plain(ToyParams, raw["params"]),
            control_params={},
            vocabulary={"x": Quantity("x"), "y": Quantity("y"), "p": Quantity("p")},
            control_vocabularies={},
        )

    return spec


def _run(spec):
    with fanout.using(fanout.SERIAL):
        return run_multiverse(spec, None)


def test_a_claim_that_holds_under_every_choice(toy):
    mv = _run(toy(flip=False))
    f = multiverse_finding(mv)
    assert f.state == "holds_across_choices"
    # b changes nothing: nine specifications, three distinct results, b named inert
    assert (f.facts["k"], f.facts["n_distinct"], f.facts["n"]) == (3, 3, 9)
    assert f.facts["inert"] == ["b"] and f.facts["flips"] == []
    assert sum(s.paper for s in mv.specifications) == 1
    assert analysis_choices_label(f) == "holds across choices (3 of 3)"


def test_a_single_choice_that_flips_the_claim_is_named(toy):
    f = multiverse_finding(_run(toy(flip=True)))
    assert f.state == "depends_on_choices"
    # a = 2 and a = 3 give the same x: six distinct results of nine specifications
    assert (f.facts["k"], f.facts["n_distinct"], f.facts["n"]) == (3, 6, 9)
    assert f.facts["flips"] == ["a"] and f.facts["depends_on"] == ["a"]  # b moves x, but never across 0
    by = {c["name"]: c for c in f.facts["choices"]}
    assert [x["k"] for x in by["a"]["alternatives"]] == [3, 0, 0]
    assert by["a"]["flipped_by"] == ["2", "3"] and by["b"]["flipped_by"] == []
    assert not by["b"]["inert"]  # it moves x
    assert analysis_choices_label(f) == "depends on a (3 of 6)"


def test_identical_specifications_are_counted_once(toy):
    """Every specification draws the run's own stream, so two that differ only in an inert choice give the same
    values to the last bit and count as one."""
    mv = _run(toy(flip=False))
    xs = [s.values["x"] - (1.0 + s.choices["a"] + 1.0) for s in mv.specifications]
    assert max(xs) - min(xs) < 1e-15  # one noise draw: the same stream for every specification
    f = multiverse_finding(mv)
    alt = {a["text"]: a for a in f.facts["choices"][1]["alternatives"]}
    assert {a["n"] for a in alt.values()} == {3} and {a["n_distinct"] for a in alt.values()} == {3}
    assert [a["n_distinct"] for a in f.facts["choices"][0]["alternatives"]] == [1, 1, 1]


def test_a_flip_within_noise_is_not_a_flip(toy):
    """p = a/20 + b/1000 read against 0.05 with a margin of 0.0195: the paper's p (0.051) is unsettled, a = 2
    (0.101) holds beyond the margin; with the paper at a = 2, a = 1 lands within the margin (not a flip) and
    a = 0.4 (0.021) fails beyond it (a flip)."""
    target = [{"quantity": "p", "relation": ">", "value": 0.05, "reason": "not significant"}]
    mv = _run(toy(targets=target, choices={"a": _alts([2.0, 1.0, 0.4]), "b": _alts([1.0, 2.0])}, params={"a": 2.0}))
    f = multiverse_finding(mv)
    by = {c["name"]: c for c in f.facts["choices"]}
    assert by["a"]["flipped_by"] == ["0.4"] and by["a"]["unsettled_by"] == ["1"]
    readings = {(s.choices["a"], s.choices["b"]): s.reading for s in mv.specifications}
    assert readings[(1.0, 1.0)] == "unsettled" and readings[(0.4, 1.0)] == "fails" and readings[(2.0, 1.0)] == "holds"
    assert f.state == "depends_on_choices" and f.facts["flips"] == ["a"]
    # without the far alternative nothing fails: the move into the band is no flip
    mv = _run(toy(targets=target, choices={"a": _alts([2.0, 1.0]), "b": _alts([1.0, 2.0])}, params={"a": 2.0}))
    f = multiverse_finding(mv)
    assert f.state == "holds_across_choices" and f.facts["flips"] == [] and f.facts["unsettled"] == 2


def test_a_value_target_is_movement_not_holds(toy):
    target = [{"quantity": "x", "paper": 3.0, "tolerance": 0.5, "reason": "a printed value"}]
    f = multiverse_finding(_run(toy(targets=target)))
    assert f.state == "values_only" and f.facts["n_assertions"] == 0
    (t,) = f.facts["targets"]
    assert (t["lo"], t["hi"]) == pytest.approx((3.0, 5.0)) and t["spread_tol"] == pytest.approx(4.0)
    assert t["driver"]["name"] == "a" and t["driver"]["shift"] == pytest.approx(2.0)
    assert f.facts["widest"]["title"] == "x"


def test_other_estimands_are_run_apart_and_not_counted(toy):
    mv = _run(toy(flip=False, estimands={"c": _alts([1.0, -5.0])}))
    f = multiverse_finding(mv)
    others = [s for s in mv.specifications if s.estimand]
    assert [s.choices for s in others] == [{"c": -5.0}]
    assert f.state == "holds_across_choices" and f.facts["n"] == 9  # the estimand is not among the nine
    (e,) = f.facts["estimands"]
    assert e["reading"] == "fails" and e["text"] == "-5" and e["why"] == "the claim names it"


def test_only_what_a_specification_changes_from_the_claim_is_said_to_be_left_out(toy):
    """Issue 28: "each specification narrows or drops box_check" was said of claims that had it off already."""
    assert _run(toy(flip=False)).left_out == ["diagnostics"]
    assert _run(toy(flip=False, params={"diagnostics": False})).left_out == []


def test_excluded_combinations_are_not_run(toy):
    mv = _run(toy(flip=False, exclude=[{"a": 3.0, "b": 3.0}]))
    assert len(mv.specifications) == 8 and mv.excluded == 1
    assert {"a": 3.0, "b": 3.0} not in [s.choices for s in mv.specifications]


def test_serial_and_two_local_workers_give_the_same_multiverse(tables):
    """A real claim's multiverse (the shift test's, the cheapest) on one process and on two workers."""
    from harness.claimfiles.spec import load_claim

    path = next(p for p in sorted((ROOT / "claims").glob("*.yaml")) if "multiverse:" in p.read_text())
    spec = load_claim(path, tables=tables)
    if spec.protocol.name != "shift_test":
        pytest.skip("kept to the cheap shift test")
    mv = spec.claim.multiverse
    small = mv.model_copy(update={"choices": dict(list(mv.choices.items())[:1]), "joint_null": None})
    spec = replace(spec, claim=spec.claim.model_copy(update={"multiverse": small}))
    with fanout.using(fanout.SERIAL):
        serial = run_multiverse(spec, tables)
    with fanout.using(fanout.executor_from("local:2")):
        local = run_multiverse(spec, tables)
    assert serial.model_dump() == local.model_dump()


# -- findings in a report ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def base(run_once):
    """A record of the cheapest claim as this code writes it (the shift test's, without the authors' arm)."""
    return run_once("000").record


def _multiverse(readings: list, status=None, assertions=True) -> MultiverseRecord:
    """Two choices (a: 3 alternatives, b: 2), the paper's first; ``readings`` per specification in grid order
    (``x`` is the index, so every specification is distinct; the one assertion is ``x >= 0`` read as given)."""
    grid = [{"a": a, "b": b} for a in (1, 2, 3) for b in (True, False)]
    specs = []
    for i, (c, r) in enumerate(zip(grid, readings)):
        st = (status or {}).get(i, "ok")
        x = {"holds": 1.0 + i, "fails": -1.0 - i, "unsettled": 0.0}[r]
        specs.append(
            MultiverseSpecification(
                choices=c,
                paper=i == 0,
                status=st,
                reason=None if st == "ok" else "too few rows",
                values={"x": x, "i": float(i)} if st == "ok" else {},
                readings=[r] if st == "ok" and assertions else [],
                reading=r if st == "ok" and assertions else None,
                curve=x if st == "ok" else None,
            )
        )
    choices = [
        {
            "name": "a",
            "words": "the toy's a",
            "why": "a setting",
            "kind": "analysis",
            "paper_text": "1",
            "alternatives": [
                {"value": v, "text": str(v), "reason": f"because {v}", "paper": v == 1} for v in (1, 2, 3)
            ],
        },
        {
            "name": "b",
            "words": "the toy's b",
            "why": "a setting",
            "kind": "data",
            "paper_text": "true",
            "alternatives": [
                {"value": v, "text": str(v).lower(), "reason": f"because {v}", "paper": v} for v in (True, False)
            ],
        },
    ]
    asserted = [
        {
            "label": "x at least 0",
            "kind": "target",
            "left": "x",
            "relation": ">=",
            "right": 0.0,
            "margin": 0.5,
            "left_label": "x",
            "right_label": None,
        }
    ]
    targets = [
        {
            "title": "x is small",
            "quantity": "x",
            "paper": 0.0,
            "tolerance": 0.5,
            "paper_text": "0",
            "tolerance_text": "0.5",
        }
    ]
    return MultiverseRecord(
        curve="x",
        curve_label="x",
        choices=choices,
        assertions=asserted if assertions else [],
        targets=targets,
        specifications=specs,
    )


def _with(record, mv):
    findings = {**record.findings, "multiverse": multiverse_finding(mv)}
    return record.model_copy(update={"multiverse": mv, "findings": findings})


def _md(record) -> str:
    return " ".join(render_report(record).split())


def test_every_specification_holding_is_said_beside_the_verdict(base):
    rec = _with(base, _multiverse(["holds"] * 6))
    assert not problems(rec)
    md = _md(rec)
    assert "**Analysis choices: holds across choices (6 of 6 distinct specifications).**" in md
    assert "Every distinct specification of 2 analysis choices keeps “x at least 0”" in md
    assert "## Analysis choices" in md and "The authors' code is not run per specification" in md
    assert "Robust" not in md.split("## Setup")[0].replace("Resampling: robust", "")


def test_a_choice_that_flips_the_conclusion_is_named(base):
    rec = _with(base, _multiverse(["holds", "holds", "fails", "fails", "fails", "fails"]))
    assert not problems(rec)
    md = _md(rec)
    assert "**Analysis choices: depends on `a` (2 of 6 distinct specifications).**" in md
    assert "Changing `a` alone, from the paper's specification, makes the claim fail" in md


def test_a_failure_only_in_combination_names_the_choices_it_changes(base):
    md = _md(_with(base, _multiverse(["holds", "holds", "holds", "fails", "holds", "holds"])))
    assert "depends on `a` and `b` (5 of 6 distinct specifications)" in md
    assert "No choice changes the reading alone" in md


def test_a_claim_that_holds_in_no_specification(base):
    md = _md(_with(base, _multiverse(["fails"] * 6)))
    assert "**Analysis choices: holds in none (0 of 6 distinct specifications).**" in md
    assert "the paper's own included" in md


def test_readings_within_noise_are_neither_held_nor_failed(base):
    rec = _with(base, _multiverse(["holds", "unsettled", "holds", "holds", "holds", "holds"]))
    assert rec.findings["multiverse"].state == "holds_across_choices" and not problems(rec)
    assert "holds across choices (5 of 6 distinct specifications)" in _md(rec)
    rec = _with(base, _multiverse(["unsettled"] * 6))
    assert rec.findings["multiverse"].state == "within_noise"
    assert "within Monte Carlo error" in _md(rec)


def test_a_claim_of_values_only_reports_movement_without_a_count(base):
    rec = _with(base, _multiverse(["holds"] * 6, assertions=False))
    assert rec.findings["multiverse"].state == "values_only" and not problems(rec)
    md = _md(rec)
    assert "**Analysis choices: values only (6 distinct specifications).**" in md
    assert "x is small moves from" in md


def test_specifications_that_could_not_run_are_counted_and_said(base):
    mv = _multiverse(["holds"] * 6, status={5: "could not run"})
    rec = _with(base, mv)
    assert rec.findings["multiverse"].state == "holds_across_choices"
    md = _md(rec)
    assert "1 specification could not be measured (the first: too few rows) and is left out of the count" in md


def test_without_a_multiverse_nothing_is_said(base):
    rec = base.model_copy(
        update={"multiverse": None, "findings": {**base.findings, "multiverse": multiverse_finding(None)}}
    )
    md = _md(rec)
    assert "Analysis choices:" not in md and "## Analysis choices" not in md


def test_a_finding_that_contradicts_the_specifications_is_caught(base):
    rec = _with(base, _multiverse(["holds", "holds", "fails", "fails", "fails", "fails"]))
    f = rec.findings["multiverse"]
    bad = f.model_copy(update={"facts": {**f.facts, "k": 3}})
    found = problems(rec.model_copy(update={"findings": {**rec.findings, "multiverse": bad}}))
    assert any("multiverse" in p and "k of n" in p for p in found)
    wrong = f.model_copy(update={"state": "holds_across_choices"})
    found = problems(rec.model_copy(update={"findings": {**rec.findings, "multiverse": wrong}}))
    assert any("multiverse" in p and "state" in p for p in found)


def test_the_specification_curve_is_byte_identical_on_redraw(base):
    from harness.rendering.figures import draw_figures

    rec = _with(base, _multiverse(["holds", "fails", "holds", "fails", "holds", "fails"]))
    one = [svg for f, svg in draw_figures(rec) if f.name == "specification_curve"]
    two = [svg for f, svg in draw_figures(rec) if f.name == "specification_curve"]
    assert len(one) == 1 and one == two
    assert b"paper's specification" in one[0]


def test_a_real_claims_curve_is_drawn_again_byte_for_byte_from_its_record_read_back(base, tmp_path):
    from harness.core.record import read_record, write_record
    from harness.rendering.figures import draw_figures

    if base.multiverse is None:
        pytest.skip("claim 000 declares no multiverse")
    one = dict((f.name, svg) for f, svg in draw_figures(base))
    path = write_record(base, tmp_path / "r.json")
    two = dict((f.name, svg) for f, svg in draw_figures(read_record(path)))
    assert "specification_curve" in one and one["specification_curve"] == two["specification_curve"]


def test_the_shift_tests_multiverse_keeps_the_paper_specification_as_the_run_itself(base):
    """Common random numbers: the paper's specification draws the run's own stream, so it reports the run's
    own p-value (not another stream's, as the reviewer found: 0.0060 in the multiverse, 0.0040 in the lead)."""
    if base.multiverse is None:
        pytest.skip("claim 000 declares no multiverse")
    (paper,) = [s for s in base.multiverse.specifications if s.paper]
    for name in ("gamma", "p_value", "gamma_lo", "gamma_hi"):
        assert paper.values[name] == base.arms.reimpl.values[name]


def test_the_index_has_an_analysis_choices_column(base):
    from harness.rendering.index import index_markdown

    md = index_markdown([_with(base, _multiverse(["holds", "holds", "fails", "fails", "fails", "fails"]))])
    header = next(line for line in md.splitlines() if line.startswith("| claim |"))
    assert "| resampling | analysis choices |" in header
    row = next(line for line in md.splitlines() if line.startswith("| [No significant"))
    assert "| depends on a (2 of 6) |" in row
