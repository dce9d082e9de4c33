"""The multiverse (#20): specifications run and judged by the one target rule, the findings they give, how a
report words them, and the specification curve drawn byte-identically from the record.

Synthetic protocols (a toy measurement of a parameter or two) give a claim that holds under every choice
and one that a single choice flips; the report tests attach a multiverse to a committed record.
"""

from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from harness import fanout, registry
from harness.invariants import problems
from harness.multiverse import multiverse_finding, run_multiverse
from harness.protocols.base import Choice, Measurement, Protocol, ProtocolParams
from harness.quantities import Quantity
from harness.record import MultiverseRecord, MultiverseSpecification
from harness.render import render_report
from harness.schema import Number, validate_plain
from harness.spec import Claim, ClaimSpec

ROOT = Path(__file__).resolve().parents[2]


class ToyParams(ProtocolParams):
    a: Number = 1.0
    b: Number = 1.0
    flip: bool = False  # the toy's "data": whether the conclusion depends on a


class Toy(Protocol):
    """x = b / 10 + (1 if a == 1 else -1) when ``flip``, else x = 1 + a + b (positive on every alternative)."""

    name = "toy"
    Params = ToyParams
    CHOICES = {"a": Choice("the toy's a"), "b": Choice("the toy's b")}

    def measure(self, params, tables, rng):
        noise = float(rng.normal(0, 1e-6))
        if params.flip:
            x = params.b / 10 + (1.0 if params.a == 1.0 else -1.0)
        else:
            x = 1.0 + params.a + params.b
        return Measurement({"x": x + noise, "y": params.a})


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.setitem(registry.PROTOCOLS, "toy", SimpleNamespace(protocol=Toy()))

    def spec(flip: bool, exclude=()):
        raw = {
            "id": "toy",
            "claim": "x is positive",
            "locator": "nowhere",
            "protocol": "toy",
            "params": {"a": 1.0, "b": 1.0, "flip": flip},
            "inputs": ["t"],
            "seed": 7,
            "targets": [{"quantity": "x", "relation": ">", "value": 0.0, "reason": "the toy's claim"}],
            "multiverse": {
                "max_specifications": 9,
                "choices": {
                    "a": [{"value": v, "reason": "why not"} for v in (1.0, 2.0, 3.0)],
                    "b": [{"value": v, "reason": "why not"} for v in (1.0, 2.0, 3.0)],
                },
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
            vocabulary={"x": Quantity("x"), "y": Quantity("y")},
            control_vocabularies={},
        )

    return spec


def test_a_claim_that_holds_under_every_choice(toy):
    with fanout.using(fanout.SERIAL):
        mv = run_multiverse(toy(flip=False), None)
    f = multiverse_finding(mv)
    assert f.state == "holds_throughout"
    assert (f.facts["k"], f.facts["n"]) == (9, 9) and f.facts["flips"] == []
    assert all(a["k"] == a["n"] == 3 for c in f.facts["choices"] for a in c["alternatives"])
    assert sum(s.paper for s in mv.specifications) == 1


def test_a_single_choice_that_flips_the_claim_is_named(toy):
    with fanout.using(fanout.SERIAL):
        mv = run_multiverse(toy(flip=True), None)
    f = multiverse_finding(mv)
    assert f.state == "depends_on_choices"
    assert (f.facts["k"], f.facts["n"]) == (3, 9)
    assert f.facts["flips"] == ["a"]  # b moves x, but never across 0
    by = {c["name"]: c for c in f.facts["choices"]}
    assert [x["k"] for x in by["a"]["alternatives"]] == [3, 0, 0]
    assert by["a"]["flipped_by"] == ["2", "3"] and by["b"]["flipped_by"] == []
    assert [x["k"] for x in by["b"]["alternatives"]] == [1, 1, 1]


def test_excluded_combinations_are_not_run(toy):
    with fanout.using(fanout.SERIAL):
        mv = run_multiverse(toy(flip=False, exclude=[{"a": 3.0, "b": 3.0}]), None)
    assert len(mv.specifications) == 8 and mv.excluded == 1
    assert {"a": 3.0, "b": 3.0} not in [s.choices for s in mv.specifications]


def test_each_specification_has_a_stream_of_its_own_from_the_claims_seed(toy):
    with fanout.using(fanout.SERIAL):
        one, two = run_multiverse(toy(flip=False), None), run_multiverse(toy(flip=False), None)
    assert one == two
    xs = [s.values["x"] - (1.0 + s.choices["a"] + s.choices["b"]) for s in one.specifications]
    assert len(set(xs)) == len(xs)  # the toy's noise differs between specifications


def test_serial_and_two_local_workers_give_the_same_multiverse(tables):
    """A real claim's multiverse (the shift test's, the cheapest) on one process and on two workers."""
    from harness.spec import load_claim

    path = next(p for p in sorted((ROOT / "claims").glob("*.yaml")) if "multiverse:" in p.read_text())
    spec = load_claim(path, tables=tables)
    small = spec.claim.multiverse.model_copy(update={"choices": dict(list(spec.claim.multiverse.choices.items())[:1])})
    spec = replace(spec, claim=spec.claim.model_copy(update={"multiverse": small}))
    if spec.protocol.name != "shift_test":
        pytest.skip("kept to the cheap shift test")
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


def _multiverse(holds: list[bool | None], status=None) -> MultiverseRecord:
    """Two choices (a: 3 alternatives, b: 2), the paper's first; ``holds`` per specification in grid order."""
    grid = [{"a": a, "b": b} for a in (1, 2, 3) for b in (True, False)]
    specs = []
    for i, (c, h) in enumerate(zip(grid, holds)):
        st = (status or {}).get(i, "ok")
        specs.append(
            MultiverseSpecification(
                choices=c,
                paper=i == 0,
                status=st,
                reason=None if st == "ok" else "too few rows",
                values={"x": float(i)} if st == "ok" else {},
                targets=[h] if st == "ok" else [],
                holds=h if st == "ok" else None,
                curve=float(i) if st == "ok" else None,
            )
        )
    choices = [
        {
            "name": "a",
            "words": "the toy's a",
            "kind": "analysis",
            "paper_text": "1",
            "alternatives": [
                {"value": v, "text": str(v), "reason": f"because {v}", "paper": v == 1} for v in (1, 2, 3)
            ],
        },
        {
            "name": "b",
            "words": "the toy's b",
            "kind": "data",
            "paper_text": "true",
            "alternatives": [
                {"value": v, "text": str(v).lower(), "reason": f"because {v}", "paper": v} for v in (True, False)
            ],
        },
    ]
    targets = [{"title": "x is small", "quantity": "x", "relation": "~", "paper": 0.0, "paper_text": "0"}]
    return MultiverseRecord(
        curve="x", curve_label="x", choices=choices, targets=targets, relations=[], specifications=specs
    )


def _with(record, mv):
    findings = {**record.findings, "multiverse": multiverse_finding(mv)}
    return record.model_copy(update={"multiverse": mv, "findings": findings})


def _md(record) -> str:
    return " ".join(render_report(record).split())


def test_every_specification_holding_is_said_beside_the_verdict(base):
    md = _md(_with(base, _multiverse([True] * 6)))
    assert "**Robust to analysis choices: 6 of 6 specifications.** Every headline target holds" in md
    assert "## Analysis choices" in md and "The authors' code is not run per specification" in md


def test_a_choice_that_flips_the_conclusion_is_named(base):
    rec = _with(base, _multiverse([True, True, False, False, False, False]))
    assert not problems(rec)
    md = _md(rec)
    assert "**Robust to analysis choices: 2 of 6 specifications.**" in md
    assert "changing a alone, from the paper's specification, changes the conclusion" in md
    assert "at the lowest edge of the curve" in md


def test_no_single_choice_flipping_is_said_too(base):
    md = _md(_with(base, _multiverse([True, True, True, False, True, True])))
    assert "5 of 6 specifications" in md and "no choice changed alone" in md


def test_a_claim_that_holds_in_no_specification(base):
    md = _md(_with(base, _multiverse([False] * 6)))
    assert "**Robust to analysis choices: 0 of 6 specifications.** No specification" in md
    assert "the paper's own included" in md


def test_specifications_that_could_not_run_are_counted_and_said(base):
    mv = _multiverse([True, True, True, True, True, True], status={5: "could not run"})
    rec = _with(base, mv)
    assert rec.findings["multiverse"].state == "depends_on_choices"
    md = _md(rec)
    assert "1 specification could not be measured (the first: too few rows) and counts as not holding" in md


def test_without_a_multiverse_nothing_is_said(base):
    rec = base
    rec = rec.model_copy(
        update={"multiverse": None, "findings": {**rec.findings, "multiverse": multiverse_finding(None)}}
    )
    md = _md(rec)
    assert "Robust to analysis choices" not in md and "## Analysis choices" not in md


def test_a_finding_that_contradicts_the_specifications_is_caught(base):
    rec = _with(base, _multiverse([True, True, False, False, False, False]))
    f = rec.findings["multiverse"]
    bad = f.model_copy(update={"facts": {**f.facts, "k": 3}})
    found = problems(rec.model_copy(update={"findings": {**rec.findings, "multiverse": bad}}))
    assert any("multiverse" in p and "k of n" in p for p in found)


def test_the_specification_curve_is_byte_identical_on_redraw(base):
    from harness.figures import draw_figures

    rec = _with(base, _multiverse([True, False, True, False, True, False]))
    one = [svg for f, svg in draw_figures(rec) if f.name == "specification_curve"]
    two = [svg for f, svg in draw_figures(rec) if f.name == "specification_curve"]
    assert len(one) == 1 and one == two
    assert b"paper's specification" in one[0]
    assert np.isfinite(len(one[0]))


def test_a_real_claims_curve_is_drawn_again_byte_for_byte_from_its_record_read_back(base, tmp_path):
    from harness.figures import draw_figures
    from harness.record import read_record, write_record

    if base.multiverse is None:
        pytest.skip("claim 000 declares no multiverse")
    one = dict((f.name, svg) for f, svg in draw_figures(base))
    path = write_record(base, tmp_path / "r.json")
    two = dict((f.name, svg) for f, svg in draw_figures(read_record(path)))
    assert "specification_curve" in one and one["specification_curve"] == two["specification_curve"]
