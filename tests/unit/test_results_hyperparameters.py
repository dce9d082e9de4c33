"""The facts of a ``hyperparameters`` record (its results object), on small synthetic records worked by hand."""

from __future__ import annotations

import pytest

from harness.core.record import Arm, Arms, ClaimInfo, Provenance, Record, Verdict
from harness.protocols.hyperparameters.results import Results

CLAIMED = {"tau": 0.98, "kappa": 50.0, "lam": 0.001}
PARAMS = {
    **CLAIMED,
    "within": 0.001,
    "eval_x": 1000.0,
    "beta_task": "A",
    "tau_grid": [0.5, 0.98],
    "kappa_grid": [10.0, 50.0],
    "lam_grid": [0.0, 0.001],
}
#: largest gap to the reference per setting: the claimed one within reach, and λ = 0 as well (0.0008 <= 0.001)
GAPS = {"tau=0.5": 0.3, "tau=0.98": 0.0005, "kappa=10": 0.2, "kappa=50": 0.0005, "lam=0": 0.0008, "lam=0.001": 0.0005}


def _values(gaps=GAPS, coverage=(0.52, 0.994)) -> dict:
    v = {f"sweep.{k}.max_dev": g for k, g in gaps.items()}
    v |= {f"sweep.{k}.max_shift": 0.0 if g == 0.0005 else g for k, g in gaps.items()}
    v |= {f"sweep.{k}.beta": 0.5 for k in gaps}
    v |= {"sweep.tau=0.5.coverage_mean": coverage[0], "sweep.tau=0.98.coverage_mean": coverage[1]}
    return v | {"claimed.max_dev": 0.0005, "claimed.coverage_mean": coverage[1]}


def _key(**moved) -> str:
    s = {**CLAIMED, **moved}
    return f"tau={s['tau']:g},kappa={s['kappa']:g},lam={s['lam']:g}"


def _mine_details(steep_at_lam0=True) -> dict:
    fit = {"y0": 0.0, "L": 1.0, "a": 0.0, "beta": 0.4}
    settings = {_key(): {**CLAIMED, "fits": {"A": fit, "B": fit}}}
    steep = {**fit, "beta": 999.5 if steep_at_lam0 else 0.4}  # 999.5 >= 0.999 x 1000: a step
    settings[_key(lam=0.0)] = {**CLAIMED, "lam": 0.0, "fits": {"A": fit, "B": steep}}
    return {"claimed": _key(), "settings": settings, "beta_ceiling": 1000.0}


def _their_details() -> dict:
    def setting(final=None, **moved):
        s = {**CLAIMED, **moved}
        fits = {"A": {"bounds_active": []}, "B": {"bounds_active": ["beta=50"] if moved.get("lam") == 0.0 else []}}
        final = final or [s["tau"], s["kappa"]]
        return {**s, "final_stage": final, "final_stage_is_setting": final == [s["tau"], s["kappa"]], "fits": fits}

    entries = [
        {"file": "f.py", "line": 1, "text": "kappa = 50", "constant": "κ = 50", "found": True},
        {"file": "g.py", "line": 2, "text": "k = 50", "constant": "κ = 50", "found": True},
        {"file": "f.py", "line": 3, "text": "tau = 0.98", "constant": "τ = 0.98", "found": True},
        {"file": "h.py", "line": 4, "text": "sum(", "constant": "mean, not sum", "found": False},
    ]
    return {
        "settings": {
            _key(): setting(),
            _key(kappa=10.0): setting([0.98, 25.0], kappa=10.0),
            _key(lam=0.0): setting(lam=0.0),
        },
        "quirks": {
            "final_stage_not_setting": [_key(kappa=10.0)],
            "all_tasks_beta_at_min": [],
            "beta_bound": "beta=0.05",
            "beta_max_bound": "beta=50",
        },
        "audit": {"n": 4, "n_found": 3, "entries": entries},
        "loss": {"sharp_sup_gap": 0.0138, "theory": 0.0138},
    }


def _results(*, upstream=True, evidence=None, gaps=GAPS, params=PARAMS, mine_details=None) -> Results:
    reimpl = Arm(status="ok", values=_values(gaps), details=mine_details or _mine_details())
    theirs = Arm(status="ok", values=_values(gaps), details=_their_details()) if upstream else Arm(status="not run")
    record = Record(
        claim=ClaimInfo(
            id="999_synthetic",
            claim="A synthetic claim.",
            locator="nowhere",
            protocol="hyperparameters",
            path="claims/999_synthetic.yaml",
            spec_sha256="0" * 64,
            params=params,
            seed=1,
            upstream=None,
            inputs=[],
            limitations=[],
        ),
        inputs=[],
        data={"oll_rows_with_compute": 100},
        provenance=Provenance(project_commit=None, project_dirty=None, python="3", packages={}),
        arms=Arms(reimpl=reimpl, upstream=theirs),
        quantities={},
        targets=[],
        controls=[],
        verdict=Verdict(verdict="inconclusive", reasons=[]),
        evidence={"sum": evidence} if evidence else {},
    )
    return Results(record)


def test_settings_claimed_first_each_other_once_and_within_reach_read_on_the_reimplementation():
    r = _results()
    # the claimed setting (on every grid) is one row, first; the 3 others follow in grid order
    assert [s["setting"] for s in r.settings] == ["the claimed setting", "τ = 0.5", "κ = 10", "λ = 0"]
    assert [s["within"] for s in r.settings] == [True, False, False, True]  # 0.0008 <= 0.001: λ = 0 too
    assert r.within_settings == ["the claimed setting", "λ = 0"]
    assert r.settings[0]["mine"] == 0.0005 and r.settings[0]["shift"] == 0.0 and r.settings[0]["beta"] == 0.5
    assert r.budget == "10²⁴ FLOPs"


def test_a_claimed_setting_on_no_grid_has_its_gap_but_no_sweep_row():
    params = {**PARAMS, "tau_grid": [0.5], "kappa_grid": [10.0], "lam_grid": [0.0]}
    claimed = _results(params=params).settings[0]
    assert claimed["mine"] == 0.0005  # claimed.max_dev
    assert claimed["beta"] is None and claimed["shift"] is None  # no sweep row states them


def test_coverage_states_the_share_above_against_one_minus_tau_and_their_ratio():
    # issue 37, kind 9: mean coverage 0.994 at tau = 0.98 leaves 0.006 above, against 0.02 asked: ratio 0.3
    top = _results().coverage[-1]
    assert top["tau"] == 0.98
    assert top["above"] == pytest.approx(0.006) and top["asked"] == pytest.approx(0.02)
    assert top["ratio"] == pytest.approx(0.3)
    assert top["theirs_above"] == pytest.approx(0.006)
    assert [c["tau"] for c in _results().coverage] == [0.5, 0.98]
    assert _results(upstream=False).coverage[-1]["theirs_above"] is None


def test_audit_counts_each_line_for_what_it_states():
    # issue 37, kind 12: 2 lines state κ = 50, 1 states τ = 0.98, 1 (not found) is cited for the mean convention
    a = _results().audit
    assert a["by_constant"] == [
        {"constant": "κ = 50", "n": 2, "n_found": 2},
        {"constant": "τ = 0.98", "n": 1, "n_found": 1},
        {"constant": "mean, not sum", "n": 1, "n_found": 0},
    ]
    assert (a["n"], a["n_found"]) == (4, 3)


def test_without_the_authors_arm_nothing_of_their_code_is_stated():
    r = _results(upstream=False)
    assert r.audit is None and r.their_details == {}
    assert [s["theirs"] for s in r.settings] == [None] * 4
    # only the re-implementation's own step remains among the departures
    (d,) = r.departures
    assert d["setting"] == "λ = 0" and d["steep"] == ["B"] and d["last_stage"] is None and d["at_upper"] == []


def test_departures_name_each_arms_own_cause_beside_both_gaps():
    r = _results()
    by = {d["setting"]: d for d in r.departures}
    assert set(by) == {"κ = 10", "λ = 0"}  # the claimed setting departs in neither arm
    assert by["κ = 10"]["last_stage"] == [0.98, 25.0] and by["κ = 10"]["steep"] == []
    assert (by["κ = 10"]["mine"], by["κ = 10"]["theirs"]) == (0.2, 0.2)
    assert by["λ = 0"]["at_upper"] == ["B"] and by["λ = 0"]["steep"] == ["B"]
    assert r.bounds == {"lower": "0.05", "upper": "50", "ceiling": 1000.0}
    assert not any(d["steep"] for d in _results(mine_details=_mine_details(steep_at_lam0=False)).departures)


def test_sum_convention_reads_a_refit_without_a_number_as_out_of_reach():
    # the refit at ridge lambda / n stated no gap (a NaN boundary): it reaches nothing
    assert _results(evidence={"n": 100, "ridge": 1e-5, "max_dev": None}).sum_convention["within"] is False
    assert _results(evidence={"n": 100, "ridge": 1e-5, "max_dev": 0.0009}).sum_convention["within"] is True
    assert _results(evidence={"n": 100, "ridge": 1e-5, "max_dev": 0.03}).sum_convention["within"] is False
    assert _results().sum_convention is None  # a record without the evidence states nothing of it
