"""The authors' arm of ``parametric_loss`` planned without running it: one notebook run shared by every claim
(the same request, so one cached answer), one run per control the notebook's cells can run under, and answers
narrowed to each claim's vocabulary. The notebook itself runs in ``make claims`` (its pinned environment)."""

from __future__ import annotations

import pytest
import yaml
from claimset import PATHS

from harness.protocols.parametric_loss import adapter
from harness.protocols.parametric_loss.quantities import control_vocabulary, vocabulary

CLAIMS = [p for p in PATHS if yaml.safe_load(p.read_text(encoding="utf-8"))["protocol"] == "parametric_loss"]
if not CLAIMS:
    pytest.skip("no claim of parametric_loss in claims/", allow_module_level=True)


def _request(path):
    from harness.claimfiles.spec import load_claim

    spec = load_claim(path)
    return {
        "params": spec.params.model_dump(mode="json"),
        "controls": [
            {"id": c.id, "control": c.control, "params": spec.control_params[c.id].model_dump(mode="json")}
            for c in spec.claim.controls
        ],
        "seed": spec.claim.seed,
        "checkout": "/checkout",
    }


def test_every_claim_shares_one_notebook_run():
    mains = [adapter.parts(_request(p))[0] for p in CLAIMS]
    assert all(m == mains[0] for m in mains) and mains[0]["part"] == {"notebook": "main"}


def test_a_control_runs_on_its_own_only_where_the_notebook_computes_what_it_changes():
    for path in CLAIMS:
        request = _request(path)
        own = adapter.parts(request)[1:]
        expected = [c["id"] for c in request["controls"] if c["control"] in adapter.DATA_CONTROLS]
        assert [p["part"]["control"] for p in own] == expected


def test_a_claim_at_a_setting_the_notebook_fixes_is_refused():
    request = _request(CLAIMS[0])
    request["params"]["exclude_highest"] = 0
    with pytest.raises(ValueError, match="params.exclude_highest = 0: the notebook fixes it at 5"):
        adapter.parts(request)


def test_the_answer_holds_only_the_claims_quantities():
    for path in CLAIMS:
        request = _request(path)
        vocab = vocabulary(request["params"])
        everything = {"values": {"fit.E": 1.8, "grid.E": 1.8, "se.E": 0.03, "bias.max": 0.1}, "details": {}}
        own = [{"values": {"fit.alpha": -0.1, "ratio.fit": 3.0}, "details": {}} for _ in adapter.parts(request)[1:]]
        answer = adapter.combine(request, [everything, *own])
        assert set(answer["values"]) <= set(vocab) and "fit.E" in answer["values"]
        assert set(answer["controls"]) == {c["id"] for c in request["controls"]}
        for c in request["controls"]:
            got = answer["controls"][c["id"]]["values"]
            assert set(got) <= set(control_vocabulary(c["control"], request["params"], c["params"]))
            if c["control"] not in adapter.DATA_CONTROLS:
                assert got == {}  # not run on this arm: its conditions are not judged there


def test_each_named_cell_is_the_pinned_notebooks():
    """The sha256 of each cell the adapter runs, against the notebook at the pinned commit (when checked out)."""
    from harness.authors.adapters.notebook import cell_sha256
    from harness.authors.checkout import verified_tree

    try:
        checkout, _ = verified_tree("analyzing-chinchilla")
    except Exception as exc:  # any reason the checkout cannot be had is a reason to skip
        pytest.skip(f"the pinned checkout of analyzing-chinchilla cannot be had: {exc}")
    import nbformat

    nb = nbformat.read(checkout / adapter.NOTEBOOK, as_version=4)
    assert {i: cell_sha256(nb.cells[i].source) for i in adapter.CELLS} == adapter.CELLS
