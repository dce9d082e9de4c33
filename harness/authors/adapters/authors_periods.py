"""The authors' period pipelines (``--split_mode period4``), shared by the adapters of ``temporal_coverage`` and
``estimator_comparison``. Their scripts load the table with their own CSV helpers, hard-code the periods
(``PERIOD4_BOUNDS``) and the rolling pairs, fit on all of the training period and score the validation period on
the overlap of the two z ranges."""

from __future__ import annotations

import math
from collections import Counter
from types import SimpleNamespace

import numpy as np

from .authors_sigmoid import claim_table, described, fit_at, task_arrays
from .shared import OutsideTheirCodeError, require_columns


def authors() -> SimpleNamespace:
    from skill_frontier.core import period_utils, sigmoid
    from skill_frontier.core import sigmoid_quantile_optimizer as sqo
    from skill_frontier.evaluation import binning, common
    from skill_frontier.io import csv_utils
    from skill_frontier.io.output_paths import EvaluationRunPaths

    return SimpleNamespace(
        cu=csv_utils, pu=period_utils, sig=sigmoid, sqo=sqo, common=common, binning=binning, RunPaths=EvaluationRunPaths
    )


def setup(request: dict):
    """Their modules, the claim's table as their code reads it, its arrays (:func:`period_data`) and the claim's
    periods checked against theirs (:func:`check_periods`): ``(A, table, data, periods)``."""
    A, p, table = authors(), request["params"], claim_table(request)
    data = period_data(A, table, p)
    return A, table, data, check_periods(A, p, data)


def _num(v) -> float:
    """A score cell as their scripts read it (empty / 'nan' / unparsable -> nan)."""
    try:
        return float(v) if v not in (None, "", "nan", "NaN") else float("nan")
    except (TypeError, ValueError):
        return float("nan")


def period_data(A, csv_path: str, p: dict) -> dict:
    """The arrays their period4 scripts build: compute proxy ``C`` (NaN, and period -1, for a row without a finite
    positive proxy, a year-month or a period), ``z = math.log10(C)`` as the scripts take it, period, scores."""
    if p.get("compute"):
        raise ValueError(
            "their period scripts take the compute proxy tokens x params (--compute_product_cols), not a column "
            "of compute; the claim names one"
        )
    rows, headers = A.cu.read_csv_rows(csv_path)
    if len(set(headers)) != len(headers):
        raise ValueError(f"{csv_path}: duplicate column names")
    date_col = A.cu.detect_date_col(headers)
    if date_col != p["date_col"]:
        raise ValueError(
            f"their scripts read the period from column {date_col!r} (detect_date_col); "
            f"the claim names {p['date_col']!r}"
        )
    prod = (p["tokens_col"], p["params_col"])
    require_columns(csv_path, headers, [*prod, *p["tasks"].values()])
    C, per, ym_all = [], [], [A.cu.parse_year_month(r.get(date_col, "")) for r in rows]
    for r, ym in zip(rows, ym_all):
        c = A.cu.compute_flops(r, headers, logC_col=None, prod_cols=prod, mult=float(p["multiplier"]))
        pid = A.pu.assign_period_index_period4(*ym) if (ym is not None and np.isfinite(c) and c > 0.0) else -1
        per.append(pid)
        C.append(float(c) if pid >= 0 else float("nan"))
    C = np.asarray(C, float)
    z = np.array([math.log10(c) if np.isfinite(c) else float("nan") for c in C])
    Y = {label: np.array([_num(r.get(col)) for r in rows], float) for label, col in p["tasks"].items()}
    table = {"rows": rows, "headers": headers, "date_col": date_col}
    return {**table, "C": C, "z": z, "per": np.asarray(per, int), "Y": Y, "year_months": ym_all}


def check_periods(A, p: dict, data: dict) -> dict:
    """The claim's periods and rolling pairs must be the ones their code hard-codes."""
    bounds, claimed = A.sig.PERIOD4_BOUNDS, p["periods"]
    dated = [ym for ym in data["year_months"] if ym is not None]
    first, last = min(dated), max(dated)
    problems = []
    if len(claimed) != len(bounds):
        problems.append(f"{len(claimed)} periods claimed, their code has {len(bounds)}")
    for (name, c_lo, c_hi), (theirs, lo, hi) in zip(claimed, bounds):
        ok_lo = tuple(lo) <= first if c_lo is None else tuple(map(int, c_lo.split("-"))) == tuple(lo)
        ok_hi = tuple(hi) >= last if c_hi is None else tuple(map(int, c_hi.split("-"))) == tuple(hi)
        if not (ok_lo and ok_hi):
            problems.append(f"period {name} = {c_lo}..{c_hi} is not their {theirs} = {lo}..{hi}")
    pairs = [tuple(s) for s in A.pu.normalize_period4_splits_single()]
    want = [(i, i + 1) for i in range(len(claimed) - 1)]
    if pairs != want:
        problems.append(f"their single-period splits are {pairs}, the claim's rolling pairs {want}")
    if problems:
        raise OutsideTheirCodeError(
            "the claim's periods are not those of the authors' code (their scripts cannot take others): "
            + "; ".join(problems)
        )
    return {
        "their_bounds": [[b[0], list(b[1]), list(b[2])] for b in bounds],
        "scheme": A.sig._PERIOD4_SCHEME,
        "pairs": [list(x) for x in pairs],
        "labels": {cl[0]: b[0] for cl, b in zip(claimed, bounds)},
        "dated_range": [list(first), list(last)],
    }


def split_sets(data: dict, label: str, pair) -> dict:
    """One task on one pair ``(training period, validation period)``, as their scripts select it: all of the
    training period, overlap validation."""
    (train_pid, val_pid), z, C, per, y = pair, data["z"], data["C"], data["per"], data["Y"][label]
    ok = np.isfinite(z) & np.isfinite(y)
    mtr, mva = ok & (per == train_pid), ok & (per == val_pid)
    z_tr, z_va = z[mtr], z[mva]
    lo, hi = float(max(z_tr.min(), z_va.min())), float(min(z_tr.max(), z_va.max()))
    keep = (z_va >= lo) & (z_va <= hi)
    train = {"z_tr": z_tr, "C_tr": C[mtr], "y_tr": y[mtr]}
    val = {"z_va": z_va[keep], "C_va": C[mva][keep], "y_va": y[mva][keep]}
    return {**train, **val, "n_val_before_overlap": int(mva.sum()), "overlap": [lo, hi]}


def fit_native(A, C_tr, y_tr, *, tau, kappa, lam) -> tuple[np.ndarray, dict]:
    """The sigmoid ``fit_sigmoid_frontier`` fits (same z, order and ``fit_sigmoid_enhanced`` arguments; the
    training set of :func:`split_sets` is finite, so :func:`task_arrays` drops nothing): its parameters in their
    units, and the fit as the record keeps it."""
    z, y = task_arrays(np.asarray(C_tr, float), np.asarray(y_tr, float))
    native, objective, *_ = fit_at(A.sqo, z, y, tau=tau, kappa=kappa, lam=lam, warm=True)
    fit = described(A.sqo, native, z, objective)
    return np.asarray(native, float), {**fit, "z_range": [float(z[0]), float(z[-1])]}


def bound_summary(fits: list[dict]) -> dict:
    """How many fits sit on each limit of their box."""
    return dict(sorted(Counter(name for f in fits for name in f["bounds_active"]).items()))
