"""Figures of ``shift_test``: the permutation null, the sensitivity to the clip and the power curve."""

from __future__ import annotations

import numpy as np

from ...core.quantities import number_text
from ...core.record import Figure, Record
from ...rendering.figures import REIMPL, UPSTREAM, done, fmt, new_figure, upstream_missing


def _shift_null(record: Record, P: dict) -> list[tuple[Figure, bytes]]:
    if not P:  # the redrawn null is plot data: none without it
        return []
    null, p, v = P["null"], record.claim.params, record.arms.reimpl.values
    uv = record.arms.upstream.values if record.arms.upstream.ok else {}
    ran = record.arms.reimpl.controls  # each control that ran: its parameters, values and details
    controls = [
        {"kind": c.control, **c.params, **ran[c.id].values, **ran[c.id].details}
        for c in record.controls
        if c.reimpl.ran
    ]
    fig = new_figure(7.2, 4.6)
    ax = fig.add_subplot()
    edges = np.linspace(float(null["edges"][0]), float(null["edges"][1]), int(null["edges"][2]) + 1)
    counts = np.asarray(null["counts"], dtype=float)
    g = v["gamma"]
    centres = (edges[:-1] + edges[1:]) / 2
    tail = centres >= g
    for sel, color, label in (
        (slice(None), "0.78", f"permutation null ({p['n_perm']} label permutations within {p['n_bins']} strata)"),
        (tail, "#9ecae1", f"permuted γ ≥ observed: p = {v['p_value']:.3f}"),
    ):
        ax.bar(centres[sel], counts[sel], width=np.diff(edges)[sel], color=color, edgecolor="none", label=label)
    top = counts.max() if counts.size else 1.0
    ax.axvline(0.0, color="0.3", lw=0.6)
    ax.axvline(g, color=REIMPL["color"], lw=2.0, label=f"observed γ = {g:.3f} (re-implementation)")
    centre = v["null_mean"]
    ax.axvline(centre, color="black", lw=1.2, ls="--", label=f"null centre (mean permuted γ) {centre:.3f}")
    missing, theirs, their_centre = [], uv.get("gamma"), uv.get("null_mean")
    if theirs is not None:
        label = f"authors' code: γ = {theirs:.3f}, p = {fmt(uv.get('p_value'))}"
        ax.axvline(theirs, color=UPSTREAM["color"], lw=1.4, ls=(0, (4, 2)), label=label)
        if their_centre is not None:
            label = f"authors' null centre {their_centre:.3f}"
            ax.plot([their_centre], [top * 1.02], "v", color=UPSTREAM["color"], ms=6, label=label)
    else:
        missing += upstream_missing(record, "the authors' γ and null centre")
    for c in controls:
        if c["kind"] == "inflate_post":
            label = f"planted-shift control (+{c['shift']:g}): γ = {c['gamma']:.3f}, p = {c['p_value']:.4f}"
            ax.axvline(c["gamma"], color="#2ca02c", lw=1.4, ls="-.", label=label)
        elif c["kind"] == "relabel_groups":
            label = f"relabelling control: mean γ ± sd over {c['n_draws']} random labellings"
            kw = {"fmt": "s", "color": "#9467bd", "ms": 5, "capsize": 3, "label": label}
            ax.errorbar([c["gamma_mean"]], [top * 1.12], xerr=[c["gamma_sd"]], **kw)
    ax.set_ylim(0, top * 1.2)
    ax.set_xlabel("γ, post-release shift of logit(AIME-2025) at fixed logit(MATH-500) (logits)")
    ax.set_ylabel("permutations (count)")
    fig.legend(loc="outside lower center", ncol=2, frameon=False, fontsize=7.5)
    inflate = next((c for c in controls if c["kind"] == "inflate_post"), None)
    caption = (
        "The observed γ against its stratified permutation null: look at how far the null's centre sits "
        "from zero and how much of the null lies beyond the observed γ (the p-value)"
        + (
            f"; the planted-shift control's γ is tested against its own null (centre "
            f"{inflate['null_mean']:.2f}), not this one"
            if inflate
            else ""
        )
        + "."
    )
    return [done(record, "null", fig, caption=caption, section="result", missing=missing)]


def _shift_eps(record: Record) -> list[tuple[Figure, bytes]]:
    p, up = record.claim.params, record.arms.upstream
    mine = record.arms.reimpl.details.get("eps_sensitivity")
    theirs = up.details.get("eps_sensitivity") if up.ok else None
    if not mine:
        return []
    fig = new_figure(7.2, 2.8)
    ax_g, ax_p = fig.subplots(1, 2)
    missing = [] if theirs else upstream_missing(record, "the authors' ε table")
    for rows, kw in (
        (mine, {"color": REIMPL["color"], "ms": 5, "ls": "-", "label": REIMPL["label"]}),
        (theirs or [], {**UPSTREAM, "ms": 8, "mfc": "none", "ls": (0, (4, 2))}),
    ):
        if not rows:
            continue
        e = [r["eps"] for r in rows]
        kw |= {"marker": "o", "lw": 1.2}
        ax_g.plot(e, [r["gamma"] for r in rows], **kw)
        ax_p.plot(e, [r["p_value"] for r in rows], **kw)
    ax_p.axhline(p["alpha"], color="black", lw=0.8, ls="--", label=f"α = {p['alpha']:g}")
    for ax in (ax_g, ax_p):
        ax.set_xscale("log")
        ax.set_xlabel("ε, clip of the scores before the logit")
        ax.axvline(p["eps"], color="0.6", lw=0.7, ls=":")
    ax_g.set_ylabel("γ (logits)")
    ax_p.set_ylabel("one-sided permutation p-value")
    ax_p.set_ylim(0, max(0.3, max(r["p_value"] for r in mine) * 1.2))
    ax_p.legend(frameon=False, loc="best")
    caption = (
        f"How the clip ε of scores at 0 or 100% moves γ (left) and its p-value (right); the claim's "
        f"ε = {number_text(p['eps'])} is the dotted line: look at whether p crosses α = {p['alpha']:g} anywhere."
    )
    return [done(record, "eps_sensitivity", fig, caption=caption, section="result", missing=missing)]


_NOTE = {"textcoords": "offset points", "fontsize": 7.5}


def _shift_power(record: Record) -> list[tuple[Figure, bytes]]:
    p, v = record.claim.params, record.arms.reimpl.values
    pw = record.arms.reimpl.details.get("power")
    if not pw:
        return []
    target = p["power"]["target"]
    fig = new_figure(6.4, 3.2)
    ax = fig.add_subplot()
    for key, style, label in (
        ("linear", {"color": REIMPL["color"], "ls": "-", "marker": "o"}, "residual bootstrap of the fitted Equation 3"),
        (
            "strata",
            {"color": "0.45", "ls": "--", "marker": "s"},
            "sensitivity version: one intercept per stratum (◇ at its own γ)",
        ),
    ):
        cur = pw[key]
        s, pv, se = (np.asarray(cur["curve"][k], dtype=float) for k in ("shifts", "power", "mc_se"))
        ax.errorbar(s, pv, yerr=1.96 * se, capsize=2, ms=4, lw=1.2, label=label, **style)
        at = cur["at_observed"]
        ax.plot([at["shift"]], [at["power"]], marker="D", ms=7, mfc="white", mec=style["color"], mew=1.4, ls="none")
    at = pw["linear"]["at_observed"]
    ax.axhline(target, color="black", lw=0.8, ls="--", label=f"target power {target:.0%}")
    ax.axhline(p["alpha"], color="0.5", lw=0.7, ls=":", label=f"α = {p['alpha']:g} (the rate at no shift)")
    ax.axvline(at["shift"], color=REIMPL["color"], lw=0.8, ls=":")
    text = f"observed γ = {at['shift']:.2f}: power {at['power']:.0%}"
    ax.annotate(text, (at["shift"], at["power"]), xytext=(8, -14), color=REIMPL["color"], **_NOTE)
    if pw["linear"]["minimal_shift"]["shift"] is not None:
        md = pw["linear"]["minimal_shift"]["shift"]
        rng_ = pw["linear"]["minimal_shift_range"]
        span = ""
        if rng_.get("lo") is not None and rng_.get("hi") is not None:
            ax.hlines(target, rng_["lo"], rng_["hi"], color="black", lw=3, alpha=0.35)
            span = f" ({rng_['lo']:.2f}–{rng_['hi']:.2f})"
        ax.annotate(f"{target:.0%} power at c ≈ {md:.2f}{span}", (md, target), xytext=(8, -14), **_NOTE)
    lo, hi = v["gamma_lo"], v["gamma_hi"]
    if lo is not None and hi is not None:
        ax.hlines(0.06, lo, hi, color=REIMPL["color"], lw=4, alpha=0.45)
        text = f"{1.0 - 2.0 * p['alpha']:.0%} interval for γ, the test inverted: [{lo:.2f}, {hi:.2f}]"
        ax.annotate(text, (hi, 0.06), xytext=(6, -3), color=REIMPL["color"], **_NOTE)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("planted shift c (logits)")
    ax.set_ylabel(f"power (share of data sets with p < {p['alpha']:g})")
    ax.legend(frameon=False, loc="lower right", bbox_to_anchor=(1.0, 0.1), fontsize=7.5)
    caption = (
        f"Measured power of the test on its own design ({p['power']['n_replicates']} simulated data sets per planted "
        f"shift, bars ±1.96 Monte Carlo s.e.): look at the power at the observed γ (◇) against the "
        f"{target:.0%} line."
    )
    return [done(record, "power", fig, caption=caption, section="after_controls")]


def draw(record: Record, plots: dict) -> list[tuple[Figure, bytes]]:
    """Every figure of a ``shift_test`` record."""
    return [*_shift_null(record, plots), *_shift_eps(record), *_shift_power(record)]
