"""Authors' arm of protocol ``shift_test`` (claim 000: the AIME-2025 shift test, Equation 3)."""

from __future__ import annotations

import inspect
import math

import numpy as np

from ...authors.adapters.shared import unsupported

Z95 = 1.6448536269514722  # standard normal 0.95 quantile
SEED = 0  # their CLI's --seed default
RELABEL_N_PERM = 1  # their function needs at least one permutation; gamma does not depend on them
#: The harness's names for the keys of their test's result, in the order of the values.
THEIRS = {
    "n_support": "n_used_in_support",
    "n_pre": "n_pre",
    "n_post": "n_post",
    "slope": "coef_slope_b",
    "gamma": "coef_group_shift_gamma",
    "se": "se_group_shift_gamma",
    "t": "t_group_shift_gamma",
    "p_value": "pvalue_one_sided_gamma_gt_0",
    "r2": "r2_logit_fit",
    "odds_ratio": "odds_ratio_group_shift",
    "null_mean": "gamma_perm_mean",
}
#: The eps sensitivity rows: the same keys (``n`` for ``n_support``), in this order.
EPS_ROW = {
    k: THEIRS["n_support" if k == "n" else k]
    for k in ("gamma", "se", "t", "p_value", "n", "n_pre", "n_post", "slope", "r2", "null_mean")
}


def _merge(aa, p, tables):
    """The merge of ``main()`` (lines 406-421, 440, 512-513)."""
    import pandas as pd

    key, xc, yc, dc = p["key"], p["x_col"], p["y_col"], p["date_col"]
    df_aime = aa._load_required_csv(tables[p["aime_table"]], required_cols=(key, yc, dc))
    df_math = aa._load_required_csv(tables[p["math_table"]], required_cols=(key, "model_name", xc))
    df = df_math[[key, "model_name", xc]].merge(df_aime[[key, yc, dc]], on=key, how="inner")
    df[xc] = pd.to_numeric(df[xc], errors="coerce")
    df[yc] = pd.to_numeric(df[yc], errors="coerce")
    df[dc] = pd.to_datetime(df[dc], errors="coerce")
    df = df.dropna(subset=[xc, yc]).copy()
    if df.empty:
        raise RuntimeError("No rows after merging MATH-500 and AIME 2025 tables.")
    cutoff = pd.Timestamp(str(p["cutoff"]))
    df_test = df[df[dc].notna()].copy()
    post = (df_test[dc] >= cutoff).to_numpy()
    counts = {
        "n_total_merged": int(df.shape[0]),
        "n_with_release_date": int(df_test.shape[0]),
        "n_missing_release_date": int(df.shape[0] - df_test.shape[0]),
        "n_pre_release": int((~post).sum()),
        "n_post_release": int(post.sum()),
        "cutoff": str(cutoff.date()),
    }
    return df_test[xc].to_numpy(), df_test[yc].to_numpy(), post, counts


def _test(aa, x, y, post, p, **kw):
    args = {"n_bins": int(p["n_bins"]), "n_perm": int(p["n_perm"]), "seed": SEED, "eps": float(p["eps"])}
    args.update(kw)
    return aa._contamination_test_logit_to_logit(x_pct=x, y_pct=y, group_post=post, **args)


def _their_logit(aa, pct, eps):
    """Their transform of a percentage: ``_logit(clip(pct/100, eps, 1-eps), eps)``."""
    return aa._logit(np.clip(np.asarray(pct, float) / 100.0, eps, 1.0 - eps), eps=eps)


def _inflate(aa, x, y, post, p, shift):
    from scipy.special import expit

    eps = float(p["eps"])
    y_new = np.asarray(y, float).copy()
    y_new[post] = 100.0 * expit(_their_logit(aa, y[post], eps) + shift)
    realized = _their_logit(aa, y_new[post], eps) - _their_logit(aa, y[post], eps)
    lo, hi = math.log(eps / (1 - eps)), math.log((1 - eps) / eps)
    target = _their_logit(aa, y[post], eps) + shift
    res = _test(aa, x, y_new, post, p)
    values = {k: res[THEIRS[k]] for k in ("gamma", "p_value")}
    details = {
        "test": res,
        "shift": shift,
        "how": "post-release AIME percentages replaced by 100*expit(their_logit+shift)",
        "realized_shift": {
            "max_abs_error": float(np.max(np.abs(realized - shift))),
            "n_post": int(post.sum()),
            "n_clipped": int(np.sum((target < lo) | (target > hi))),
        },
    }
    return values, details


def _relabel(aa, x, y, post, p, base, n_draws, seed):
    eps = float(p["eps"])
    X = _their_logit(aa, x, eps)
    keep = (base["X_support_lo"] <= X) & (base["X_support_hi"] >= X)
    xs, ys, gs = x[keep], y[keep], post[keep]
    rng = np.random.default_rng(seed)
    gammas, n_support = [], []
    for _ in range(int(n_draws)):
        res = _test(aa, xs, ys, rng.permutation(gs), p, n_perm=RELABEL_N_PERM)
        gammas.append(res["coef_group_shift_gamma"])
        n_support.append(res["n_used_in_support"])
    g, n = np.array(gammas), np.array(n_support)
    values = {"gamma_mean": float(g.mean()), "gamma_sd": float(g.std(ddof=1))}
    details = {
        "n_draws": int(n_draws),
        "seed": seed,
        "n_sample": int(keep.sum()),
        "n_post": int(gs.sum()),
        "n_perm_inside": RELABEL_N_PERM,
        "n_support_mean": float(n.mean()),
        "n_support_min": int(n.min()),
        "n_draws_trimmed": int(np.sum(n < keep.sum())),
        "gamma_quantiles": dict(zip(("q05", "q50", "q95"), map(float, np.quantile(g, [0.05, 0.5, 0.95])))),
    }
    return values, details


def run(request: dict) -> dict:
    from scripts.artificial_analysis import plot_math500_vs_aime2025 as aa

    p = request["params"]
    x, y, post, counts = _merge(aa, p, request["tables"])
    res = _test(aa, x, y, post, p)
    values = {"n_merged": counts["n_total_merged"], **{k: res[v] for k, v in THEIRS.items()}}
    values["upper95"] = res["coef_group_shift_gamma"] + Z95 * res["se_group_shift_gamma"]
    eps_default = inspect.signature(aa._contamination_test_logit_to_logit).parameters["eps"].default
    details = {
        "test": res,
        "merge": counts,
        "seed": SEED,
        "eps": float(p["eps"]),
        "eps_default_in_their_code": eps_default,
    }

    rows = [(float(eps), _test(aa, x, y, post, p, eps=float(eps))) for eps in p["eps_grid"]]
    details["eps_sensitivity"] = [{"eps": eps, **{k: r[v] for k, v in EPS_ROW.items()}} for eps, r in rows]

    controls = {}
    for c in request.get("controls", []):
        kind, cp = c["control"], c["params"]
        if kind == "inflate_post":
            v, d = _inflate(aa, x, y, post, p, float(cp["shift"]))
        elif kind == "relabel_groups":
            v, d = _relabel(aa, x, y, post, p, res, int(cp["n_draws"]), request["seed"])
        else:
            raise unsupported(c)
        controls[c["id"]] = {"values": v, "details": d}
    return {"values": {k: float(v) for k, v in values.items()}, "details": details, "controls": controls}
