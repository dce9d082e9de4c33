"""The fit benchmarks print what they promise, and skip the authors' side with the reason."""

import re

import harness.authors.checkout
from benchmarks.fits import fit_from_optimum, fit_vs_authors
from harness.core.errors import UpstreamError

LABELS = ["IFEval", "BBH", "MATH Lvl 5", "GPQA", "MUSR", "MMLU-Pro"]


def test_without_the_checkout_the_authors_side_is_skipped_with_the_reason(tables, monkeypatch):
    def missing(name, *args, **kwargs):
        raise UpstreamError(f"no checkout of '{name}' (test)")

    monkeypatch.setattr(harness.authors.checkout, "verified_tree", missing)
    lines = fit_vs_authors(tables, repeats=1)
    rows = [ln for ln in lines if ln.split("  ")[0].strip() in LABELS]
    assert [r.split("  ")[0].strip() for r in rows] == LABELS
    assert all(re.search(r"ours +\d+\.\d ms +J 0\.\d{13}$", r) for r in rows)
    assert lines[-1] == "authors' side skipped: no checkout of 'prescriptive-scaling' (test)"


def test_fit_from_optimum_reaches_the_fresh_objective(tables):
    lines = fit_from_optimum(tables, repeats=1)
    rows = lines[1:-1]
    assert len(rows) == 6 and all(r.endswith("x") and "speed-up" in r for r in rows)
    for r in rows:
        gap = float(re.search(r"J init - fresh ([-+0-9.e]+)", r).group(1))
        assert gap <= 1e-12, r
    assert re.fullmatch(r"min speed-up \d+\.\dx", lines[-1])


def test_the_estimator_is_printed_with_each_parameter_once(tables, monkeypatch):
    def missing(name, *args, **kwargs):
        raise UpstreamError(f"no checkout of '{name}' (test)")

    monkeypatch.setattr(harness.authors.checkout, "verified_tree", missing)
    (ours,) = [ln for ln in fit_vs_authors(tables, repeats=1) if ln.lstrip().startswith("ours: ")]
    args = re.search(r"SigmoidQuantileRegressor\(([^)]*)\)", ours).group(1)
    names = [a.split("=")[0].strip() for a in args.split(",")]
    assert len(names) == len(set(names)) and {"tau", "kappa", "lam"} <= set(names), ours
