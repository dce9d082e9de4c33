"""Authors' arm of protocol ``temporal_coverage`` (claim 001: non-stationary boundaries, Figure 2)."""

from __future__ import annotations

import inspect
import os

import numpy as np

from ...authors.adapters import authors_periods as TC
from ...authors.adapters.authors_sigmoid import CLI_FIT_ARGS
from ...authors.adapters.shared import argv, read_rows, scratch, shown, unsupported, write_table
from . import quantities as Q

SCRIPT = "scripts/evaluate/sigmoid_binned_mae.py"
COUNT_TOL = 1e-3  # |n * hat_tau - round(n * hat_tau)| allowed (hat_tau is written with 6 significant digits)


# -- their script and its outputs ---------------------------------------------------------------------------


def _fixed_settings(A, p: dict) -> dict:
    """kappa and lambda: their script passes neither, so the claim's must be their defaults."""
    kappa_default = inspect.signature(A.common.fit_sigmoid_predictor).parameters["kappa_final"].default
    lam_default = A.sig.LAMBDA_B
    if float(p["kappa"]) != float(kappa_default) or float(p["lam"]) != float(lam_default):
        raise ValueError(
            f"{SCRIPT} always fits at kappa={kappa_default:g}, lambda={lam_default:g} (no option); "
            f"the claim asks kappa={p['kappa']:g}, lambda={p['lam']:g}"
        )
    return {"kappa_final": float(kappa_default), "lambda_b": float(lam_default)}


def run_script(p: dict, csv_path: str, out_base: str) -> list[str]:
    from scripts.evaluate import sigmoid_binned_mae as sbm

    args = argv(
        {
            "--csv": csv_path,
            "--split_mode": "period4",
            "--train_mode": "single_k",
            "--oos_bins": "train_overlap",
            "--tau": repr(float(p["tau"])),
            "--bins": str(int(p["n_bins"])),
            "--min_bin_size": str(int(p["min_bin_size"])),
            "--compute_product_cols": [p["tokens_col"], p["params_col"]],
            "--compute_multiplier": repr(float(p["multiplier"])),
            "--out_base": out_base,
            "--tasks": list(p["tasks"].values()),
        }
    )
    sbm.main(args)
    return args


def _read_bins(path: str) -> list[dict]:
    out = []
    for r in read_rows(path):
        n, hat = int(r["n"]), float(r["hat_tau"])
        if n == 0:
            continue
        below = n * hat
        if abs(below - round(below)) > COUNT_TOL:
            raise RuntimeError(f"{path}: bin {r['bin_id']} n={n} hat_tau={hat} is not a whole count")
        out.append({"n": n, "hat_tau": hat, "n_below": int(round(below))})
    return out


def read_outputs(A, p: dict, out_base: str, n_splits: int) -> list[dict]:
    """One row per (task, split) from their per-bin CSVs."""
    tau = float(p["tau"])
    rows = []
    for label, col in p["tasks"].items():
        for t in range(1, n_splits + 1):
            paths = A.RunPaths(os.path.join(out_base, f"k{t}"))
            tr = _read_bins(paths.get_bins_path(col, era="train"))
            va = _read_bins(paths.get_bins_path(col, era="test_overlap"))
            n_tr, n_va = sum(b["n"] for b in tr), sum(b["n"] for b in va)
            below_tr, below_va = sum(b["n_below"] for b in tr), sum(b["n_below"] for b in va)
            rows.append(
                {
                    "task": label,
                    "t": t,
                    "n_train": n_tr,
                    "n_val": n_va,
                    "n_above": n_va - below_va,
                    "signed_coverage": below_va / n_va - tau,
                    "in_sample": below_tr / n_tr - tau,
                    "bin_averaged": float(np.mean([b["hat_tau"] - tau for b in va])),
                }
            )
    return rows


def summarise(rows: list[dict], p: dict) -> tuple[dict, dict]:
    from scipy.stats import binomtest

    labels, drift = list(p["tasks"]), set(p["drift_tasks"])  # drift_tasks: task labels (checked with the claim)
    values, per_task = {}, {}
    for label in labels:
        r = sorted((x for x in rows if x["task"] == label), key=lambda x: x["t"])
        k, n = sum(x["n_above"] for x in r), sum(x["n_val"] for x in r)
        test = binomtest(k, n, float(p["exceed_rate"]), alternative="greater")
        per_task[label] = {
            "group": "drift" if label in drift else "stable",
            "n_above": k,
            "n": n,
            "signed_coverage": float(np.mean([x["signed_coverage"] for x in r])),
            "in_sample": float(np.mean([x["in_sample"] for x in r])),
            "bin_averaged": float(np.mean([x["bin_averaged"] for x in r])),
            "share_above": k / n,
            "binomial_p": float(test.pvalue),
        }
        names = {
            "signed_coverage": Q.signed_coverage(label),
            "in_sample": Q.in_sample(label),
            "share_above": Q.share_above(label),
            "binomial_p": Q.binomial_p(label),
            "bin_averaged": Q.bin_averaged(Q.signed_coverage(label)),
        }
        values.update({name: per_task[label][key] for key, name in names.items()})
        values.update({Q.split(x["t"], label): x["signed_coverage"] for x in r})

    def mean(key: str, drifting: bool) -> float:
        return float(np.mean([per_task[t][key] for t in labels if (t in drift) == drifting]))

    d, s = mean("signed_coverage", True), mean("signed_coverage", False)
    values.update({Q.group("drift"): d, Q.group("stable"): s, Q.SEPARATION: s - d})
    values[Q.DROP_SEPARATION] = (s - d) - (mean("in_sample", False) - mean("in_sample", True))
    return values, per_task


# -- the run ------------------------------------------------------------------------------------------------


def _relabelled_table(data: dict, perm: np.ndarray, eligible: np.ndarray, path: str) -> None:
    dates = [data["rows"][i][data["date_col"]] for i in eligible]
    new = dict(zip(eligible.tolist(), (dates[j] for j in perm)))
    col = data["date_col"]
    write_table(path, data["headers"], ({**r, col: new[i]} if i in new else r for i, r in enumerate(data["rows"])))


def _relabellings(request: dict) -> list[tuple[str, int]]:
    out = []
    for c in request.get("controls", []):
        if c["control"] != "relabel_periods":
            raise unsupported(c)
        out += [(c["id"], i) for i in range(int(c["params"].get("n_relabellings", 5)))]
    return out


def parts(request: dict) -> list[dict]:
    """One request per benchmark (their script on that task, and its fits refitted for their parameters) and
    one per relabelling of each control (their script on the relabelled table); each answered by :func:`run`
    and cached on its own. Plain dict work, nothing of the authors'."""
    own = [{**request, "part": {"task": label}} for label in request["params"]["tasks"]]
    return own + [{**request, "part": {"control": cid, "relabelling": i}} for cid, i in _relabellings(request)]


def _task_part(request: dict, label: str) -> dict:
    p = request["params"]
    A, table, data, periods = TC.setup(request)
    settings = _fixed_settings(A, p)
    pairs = periods["pairs"]
    fit_at = {"tau": float(p["tau"]), "kappa": settings["kappa_final"], "lam": settings["lambda_b"]}
    one = {**p, "tasks": {label: p["tasks"][label]}}
    out = scratch("main")
    args = run_script(one, table, out)
    rows = read_outputs(A, one, out, len(pairs))
    # the sigmoid of each split, refitted as fit_sigmoid_frontier does, for its parameters
    for x in rows:
        tr_pid, va_pid = pairs[x["t"] - 1]
        sets = TC.split_sets(data, x["task"], (tr_pid, va_pid))
        native, fit = TC.fit_native(A, sets["C_tr"], sets["y_tr"], **fit_at)
        below_exact = int(np.sum(sets["y_va"] <= A.sqo.sigmoid_pred(native, np.log10(sets["C_va"]))))
        x.update(train=p["periods"][tr_pid][0], val=p["periods"][va_pid][0], overlap=sets["overlap"])
        x["n_val_before_overlap"] = sets["n_val_before_overlap"]
        x["fit"] = fit
        x["check"] = {
            "n_train_rebuilt": int(sets["z_tr"].size),
            "n_val_rebuilt": int(sets["z_va"].size),
            "n_below_exact_q": below_exact,
            "n_below_script": x["n_val"] - x["n_above"],
        }
    details = {"rows": rows, "argv": shown(args, table), "settings": settings}
    return {"values": {}, "details": {**details, "periods": periods}, "controls": {}}


def _relabel_part(request: dict, cid: str, i: int) -> dict:
    """Relabelling ``i`` of control ``cid``: the upload dates permuted among the models with a period by the
    ``i``-th permutation of ``numpy.random.default_rng(seed)`` (every period keeps its size), and their script
    run on the table written with the permuted dates."""
    p = request["params"]
    A, _, data, periods = TC.setup(request)
    eligible = np.flatnonzero(data["per"] >= 0)
    rng = np.random.default_rng(request["seed"])
    for _ in range(i):
        rng.permutation(eligible.size)
    perm = rng.permutation(eligible.size)
    folder = scratch(f"relabelled_{i}")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "table.csv")
    _relabelled_table(data, perm, eligible, path)
    check = TC.period_data(A, path, p)  # the written table reads back with the same periods' sizes
    sizes_ok = bool(
        np.array_equal(np.bincount(check["per"][check["per"] >= 0]), np.bincount(data["per"][data["per"] >= 0]))
    )
    out = os.path.join(folder, "out")
    run_script(p, path, out)
    v, _ = summarise(read_outputs(A, p, out, len(periods["pairs"])), p)
    signed = {t: v[Q.signed_coverage(t)] for t in p["tasks"]}
    details = {"separation": v[Q.SEPARATION], "signed_coverage": signed, "n_models_permuted": int(eligible.size)}
    return {"values": {}, "details": {**details, "period_sizes_kept": sizes_ok}, "controls": {}}


def run(request: dict) -> dict:
    """The answer to one part (``request["part"]``) of :func:`parts`."""
    part = request["part"]
    if "task" in part:
        return _task_part(request, part["task"])
    return _relabel_part(request, part["control"], int(part["relabelling"]))


def combine(request: dict, answers: list[dict]) -> dict:
    """The claim's answer from its parts' answers (in :func:`parts` order)."""
    p = request["params"]
    n_tasks = len(p["tasks"])
    tasks, relabelled = answers[:n_tasks], answers[n_tasks:]
    rows = [x for a in tasks for x in a["details"]["rows"]]
    values, per_task = summarise(rows, p)
    first = tasks[0]["details"]
    periods, settings = first["periods"], first["settings"]
    n_val = {}
    for t in range(1, len(periods["pairs"]) + 1):
        counts = {x["task"]: x["n_val"] for x in rows if x["t"] == t}
        n_val[f"split{t}"] = counts
        values[Q.n_validation(t)] = float(min(counts.values()))
    mismatched = [
        f"{x['task']} t={x['t']}"
        for x in rows
        if (x["check"]["n_train_rebuilt"], x["check"]["n_val_rebuilt"]) != (x["n_train"], x["n_val"])
    ]
    controls = {}
    by_control: dict[str, list[dict]] = {}
    for (cid, _), a in zip(_relabellings(request), relabelled):
        by_control.setdefault(cid, []).append(a["details"])
    for c in request.get("controls", []):
        each = by_control.get(c["id"], [])
        seps = [d["separation"] for d in each]
        per = [d["signed_coverage"] for d in each]
        c_values = {Q.SEPARATION: float(np.mean(seps))}
        c_values.update({Q.signed_coverage(t): float(np.mean([x[t] for x in per])) for t in p["tasks"]})
        controls[c["id"]] = {
            "values": c_values,
            "details": {
                "n_relabellings": len(each),
                "seed": request["seed"],
                "n_models_permuted": each[0]["n_models_permuted"] if each else 0,
                "how": "upload dates permuted among the models with a period; their script rerun on the table",
                "period_sizes_kept": all(d["period_sizes_kept"] for d in each),
                "separation_each": seps,
                "signed_coverage_each": per,
            },
        }
    args = first["argv"]
    at = args.index("--tasks")
    details = {
        "script": SCRIPT,
        "argv": [*args[: at + 1], *p["tasks"].values()],
        "fit_settings": {
            "tau": float(p["tau"]),
            **settings,
            **CLI_FIT_ARGS,
            "grid_points": 400,
            "prediction": "their 400-point curve over the training z range, interpolated linearly in x",
        },
        "periods": periods,
        "splits": [{k: v for k, v in x.items() if k not in ("fit", "check")} for x in rows],  # both summarised
        "tasks": per_task,
        "n_validation": n_val,
        "bounds_active_counts": TC.bound_summary([x["fit"] for x in rows]),
        "rebuilt_sets_match_script": not mismatched,
        "rebuilt_sets_mismatched": mismatched,
        "exact_vs_interpolated_count_diffs": sum(
            abs(x["check"]["n_below_exact_q"] - x["check"]["n_below_script"]) for x in rows
        ),
        "not_in_their_code": [
            "pooling over models",
            "share above",
            "binomial test",
            "group means",
            "relabelling control",
        ],
        "bin_averaged_bins": "the training bins clipped to the overlap (their test_overlap CSVs), non-empty bins",
        "ignored_params": sorted(k for k in ("warm_start", "n_random", "box_check") if k in p),
        "requests": {"tasks": n_tasks, "relabellings": len(relabelled)},
    }
    return {"values": values, "details": details, "controls": controls}
