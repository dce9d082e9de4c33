"""Quantities of ``temporal_coverage``: signed coverage errors of earlier boundaries on later models."""

from __future__ import annotations

from ...core.quantities import Quantity, boxed

#: Stable minus drift group mean of the signed coverage errors.
SEPARATION = "separation"
#: The same contrast of each benchmark's drop from in-sample to out-of-period coverage: the smoothing (kappa)
#: moves both coverages alike, so this zero point stays where it is.
DROP_SEPARATION = "drop_separation"
GROUPS = ("drift", "stable")


def _per_task(group: str):
    """The name of a benchmark's quantity of ``group``: ``<group>.<label>``."""

    def name(label: str) -> str:
        return f"{group}.{label}"

    return name


#: Each benchmark's quantities of the exceedance analysis, by the result's key (in the record's order): the signed
#: coverage error out of period and in sample, the share of later models above the earlier boundary, the binomial
#: and cluster-robust p-values of those exceedances, and the base models' design effect on that share.
PER_TASK = {
    k: _per_task(k) for k in ("signed_coverage", "in_sample", "share_above", "binomial_p", "cluster_p", "design_effect")
}
signed_coverage, in_sample, share_above, binomial_p, cluster_p, design_effect = PER_TASK.values()


def split(t: int, label: str) -> str:
    return f"split{t}.{label}"


def group(name: str) -> str:
    """``group.drift`` or ``group.stable``: a group's mean signed coverage error."""
    return f"group.{name}"


def bin_averaged(name: str) -> str:
    """The bin-averaged (paper-figure) counterpart of a signed-coverage quantity:
    ``bin_averaged.<label>`` for ``signed_coverage.<label>``, else ``bin_averaged.<name>``."""
    return f"bin_averaged.{name.removeprefix('signed_coverage.')}"


def bin_averaged_counterpart(name: str) -> str | None:
    """The bin-averaged counterpart of a signed-coverage quantity (None when it has none: a count, a p-value)."""
    if name.startswith(("signed_coverage.", "split", "group.")) or name == SEPARATION:
        return bin_averaged(name)
    return None


def n_validation(t: int) -> str:
    return f"n_validation.split{t}"


def _core(p: dict, *, counts: bool) -> dict[str, Quantity]:
    out = {}
    ts = range(1, len(p["periods"]))  # the rolling splits: fit on period t, score period t + 1
    for label in p["tasks"]:
        out[signed_coverage(label)] = Quantity(f"{label} signed coverage error out of period")
        out[in_sample(label)] = Quantity(f"{label} signed coverage error in sample")
        out[share_above(label)] = Quantity(f"share of later {label} models above the earlier boundary", kind="fraction")
        out[binomial_p(label)] = Quantity(f"binomial p-value of {label}'s exceedances", kind="fraction")
        out[cluster_p(label)] = Quantity(
            f"cluster-robust p-value of {label}'s exceedances (clusters: base models)", "reimpl", "fraction"
        )
        out[design_effect(label)] = Quantity(f"design effect of the base models on {label}'s share above", "reimpl")
        out[bin_averaged(signed_coverage(label))] = Quantity(f"{label} signed coverage error, averaged over bins")
        for t in ts:
            out[split(t, label)] = Quantity(f"{label} signed coverage error on split {t}")
            out[bin_averaged(split(t, label))] = Quantity(
                f"{label} signed coverage error on split {t}, averaged over bins", "reimpl"
            )
    for g in GROUPS:
        out[group(g)] = Quantity(f"mean signed coverage error of the {g} group")
        out[bin_averaged(group(g))] = Quantity(
            f"mean signed coverage error of the {g} group, averaged over bins", "reimpl"
        )
    out[SEPARATION] = Quantity("stable minus drift signed coverage error")
    out[DROP_SEPARATION] = Quantity("stable minus drift drop in coverage (out of period minus in sample)")
    out[bin_averaged(SEPARATION)] = Quantity("stable minus drift, averaged over bins", "reimpl")
    if counts:
        for t in ts:
            out[n_validation(t)] = Quantity(f"later models scored on split {t}", kind="count")
    return out


def vocabulary(p: dict) -> dict[str, Quantity]:
    out = _core(p, counts=True)
    if p.get("box_check"):
        for name, q in _core(p, counts=False).items():
            out[boxed(name)] = Quantity(f"{q.label}, inside the authors' box", "reimpl", q.kind)
    return out


def control_vocabulary(kind: str, p: dict, c: dict) -> dict[str, Quantity]:
    out = {SEPARATION: Quantity("stable minus drift signed coverage error, mean over relabellings")}
    for label in p["tasks"]:
        out[signed_coverage(label)] = Quantity(f"{label} signed coverage error out of period, mean over relabellings")
    return out
