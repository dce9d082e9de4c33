"""Quantities of ``parametric_loss``: the law's fits, their likelihoods, the bootstrap and what follows from them."""

from __future__ import annotations

import math

from ...core.quantities import Quantity

#: The law's parameters, by the name used in quantity names, with how a reader writes them.
PARAMS = {"A": "A", "B": "B", "E": "E", "alpha": "α", "beta": "β", "a": "a = β/(α+β)"}


#: Batches of the bootstrap's resamples from which the Monte Carlo error of the runs needed is measured.
BATCHES = 20


def name(group: str, key: str) -> str:
    """A quantity's name: ``fit.alpha``, ``se.a``, ``ratio.tex``."""
    return f"{group}.{key}"


def natural(group: str, theta) -> dict[str, float]:
    """The law's parameters by their names in ``group`` from ``θ = (log A, log B, log E, α, β)``: A, B, E, α, β
    and a = β/(α+β) (both arms name a fit this way)."""
    a, b, e, alpha, beta = (float(v) for v in theta)
    values = {"A": math.exp(a), "B": math.exp(b), "E": math.exp(e), "alpha": alpha, "beta": beta}
    return {name(group, k): v for k, v in (values | {"a": beta / (alpha + beta)}).items()}


#: What Hoffmann et al.'s method adds (with ``grid: true``).
_GRID = {
    **{
        name("grid", k): Quantity(f"{w}, Hoffmann's method (summed Huber loss, grid of starts)")
        for k, w in PARAMS.items()
    },
    "grid.objective": Quantity("summed Huber loss at Hoffmann's method's best start"),
    "grid.iterations": Quantity("median L-BFGS-B iterations over the grid, summed loss", "reimpl", "count"),
    "mean.iterations": Quantity("median L-BFGS-B iterations over the grid, mean loss", "reimpl", "count"),
    "mean.excess": Quantity("summed Huber loss at the mean-loss fit minus at the summed-loss fit", "reimpl"),
}


def _fits(p: dict) -> dict[str, Quantity]:
    out = {name("fit", k): Quantity(f"{w}, refit (Huber likelihood)") for k, w in PARAMS.items()}
    out |= _GRID if p.get("grid") else {}
    out |= {
        "fit.loglik": Quantity("log-likelihood of the refit"),
        "profile.B": Quantity("fall of the log-likelihood with B held 10% either side of the refit's", "reimpl"),
        "n_runs": Quantity("training runs fitted", kind="count"),
    }
    for which, words in (("tex", "Hoffmann's TeX values"), ("printed", "Hoffmann's printed values")):
        out[name("loglik", which)] = Quantity(f"log-likelihood of {words}")
        arm = "both" if which == "tex" else "reimpl"  # the notebook tests the TeX values only
        out[name("lr", which)] = Quantity(f"likelihood-ratio statistic, refit against {words}", arm)
        out[name("p", which)] = Quantity(
            f"p-value of the likelihood-ratio test against {words} (χ², 5 df)", arm, "fraction"
        )
        out[name("ratio", which)] = Quantity(f"compute-optimal tokens per parameter under {words}")
    out["ratio.fit"] = Quantity("compute-optimal tokens per parameter under the refit")
    out["ratio.reported"] = Quantity(
        "tokens per parameter under Hoffmann's TeX values with a at the midpoint of their interval"
    )
    out["bias.mean"] = Quantity("mean relative difference of printed-value from TeX-value predicted losses", "reimpl")
    out["bias.max"] = Quantity("largest relative difference of printed-value from TeX-value predicted losses", "reimpl")
    return out


#: What the bootstrap adds (with ``n_boot`` > 0).
BOOTSTRAP = {
    **{name("se", k): Quantity(f"bootstrap standard error of {w}") for k, w in PARAMS.items()},
    "width.a": Quantity("width of the bootstrap interval for a"),
    "required_runs": Quantity("runs an interval for a as narrow as Hoffmann's would need", kind="count"),
    "mc.required_runs": Quantity(f"Monte Carlo standard error of the runs needed ({BATCHES} batches)", "reimpl"),
    "ratio.lo": Quantity("lower end of the bootstrap interval for tokens per parameter", "reimpl"),
    "ratio.hi": Quantity("upper end of the bootstrap interval for tokens per parameter", "reimpl"),
}


def vocabulary(p: dict) -> dict[str, Quantity]:
    out = _fits(p)
    if p.get("n_boot"):
        out |= BOOTSTRAP
    return out


def control_vocabulary(kind: str, p: dict, c: dict) -> dict[str, Quantity]:
    out = {k: q for k, q in _fits(p).items() if k != "profile.B"}
    if kind == "shuffle_losses":  # on shuffled losses the law can degenerate (α or β at 0): no allocation
        out = {k: q for k, q in out.items() if not k.startswith("ratio.")}
    if c.get("n_boot"):
        out |= {k: q for k, q in BOOTSTRAP.items() if kind != "shuffle_losses" or not k.startswith("ratio.")}
    return out
