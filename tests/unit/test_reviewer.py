"""The reviewer's checks of the kinds of false sentence of issue 28 (``tests/reviewer.py``): each flags the
sentence the issue quotes and lets its corrected form through, so that a check that passes on the corpus
passes because the reports are right, not because it cannot fail."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from reviewer import KINDS, review_kind


def _record(params=None, targets=(), values=None):
    """The few fields of a record the checks read (the claim's text, to take out of the prose, is empty)."""
    claim = SimpleNamespace(claim="", title=None, limitations=[], params=params or {})
    return SimpleNamespace(
        claim=claim,
        targets=list(targets),
        controls=[],
        quantities={},
        robustness=None,
        figures=[],
        arms=SimpleNamespace(reimpl=SimpleNamespace(values=values or {})),
    )


def _target(quantity, title):
    return SimpleNamespace(quantity=quantity, title=title, reason="", quantity_label="", other_label=None)


BOX_OFF = {"box_check": None, "robustness_cold_start": False}
BOX_ON = {"box_check": [0.05, 50.0], "robustness_cold_start": True}

#: kind -> (record, sentences it must flag, sentences it must let through)
CASES = {
    "number_agreement": (
        _record(),
        [
            "All 1 targets hold.",
            "0 of the 1 hold.",
            "The 1 boundary were fitted on the 28 models.",
            "1 models lie above it.",
            "3 target hold.",
        ],
        [
            "All 3 targets hold.",
            "The one target holds.",
            "1 model lies above it.",
            "at β = 0 control level",
            "1 of 3 models",
        ],
    ),
    "raw_exception": (
        _record(),
        ["The authors' code did not run: ValueError: H1 = None..2024-04 is not their <=2024-06."],
        [
            "The authors' code could not take the claim's periods (their scripts hard-code the paper's).",
            "<details>\n<summary>Why</summary>\n\nValueError: H1 = None..2024-04 is not theirs.\n\n</details>",
        ],
    ),
    "negative_zero": (
        _record(),
        ["The shift is -0.0000.", "| IFEval | −0.0000 | 0.8280 |"],
        ["The shift is 0.0000.", "The shift is −0.0004.", "| IFEval | −0.0010 | 0.8280 |"],
    ),
    "count_with_decimals": (
        _record(
            targets=[_target("audit.n_failed", "cited source lines state the constants")], values={"audit.n_failed": 0}
        ),
        ["474.0000 models lie above it.", "| cited source lines state the constants | ≤ 0 | 0.0000 | holds |"],
        ["474 models lie above it.", "| cited source lines state the constants | ≤ 0 | 0 | holds |"],
    ),
    "exponent_plus": (
        _record(),
        ["The budget is 3.16e+24 FLOPs.", "at x = 1e+04, that is z = 4.00"],
        ["The budget is 3.2 × 10²⁴ FLOPs.", "a gap of 1.2e-04 on the objective"],
    ),
    "box_off": (
        _record(BOX_OFF),
        [
            "The authors' optimum lies above; neither their setting nor their box accounts for the difference.",
            "Refitted inside the authors' box, the value moves to 0.71.",
            "each specification narrows or drops what no headline target rests on (parameters `box_check`).",
        ],
        ["At their optimum the slope sits on the lower limit of their box.", "| their limits reached |"],
    ),
    "cold_start_off": (
        _record(BOX_OFF),
        [
            "Fitted again from the other start, the values move by at most 0.0001.",
            "narrows or drops what no headline target rests on (parameters `robustness_cold_start`).",
        ],
        ["Both arms reach the final (τ, κ) through easier warm-up stages."],
    ),
}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_each_kind_flags_the_sentence_and_lets_the_corrected_one_through(kind):
    record, bad, good = CASES[kind]
    for text in bad:
        assert review_kind(kind, text + "\n", record), (kind, text)
    for text in good:
        assert not review_kind(kind, text + "\n", record), (kind, text, review_kind(kind, text + "\n", record))


@pytest.mark.parametrize("kind", ["box_off", "cold_start_off"])
def test_a_knob_the_claim_turned_on_may_be_spoken_of(kind):
    _, bad, _ = CASES[kind]
    for text in bad:
        assert not review_kind(kind, text + "\n", _record(BOX_ON)), text
