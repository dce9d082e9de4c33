"""The quantity names a claim file writes, checked against what its protocol and controls measure.

Every target, control condition and bootstrap comparison names quantities
(``boundary.MATH``); a name no measurement makes is refused with "did you
mean". A task label mistyped in ``params.tasks`` (every name built from it then
misses) is blamed on ``params.tasks``, not on each name. When the parameters
themselves do not validate, the names are still checked against the vocabulary
of the parameters as far as they go (:func:`partial_vocabularies`), so that
every kind of problem is said at once.

``claim`` is a validated :class:`harness.claimfiles.spec.Claim` throughout (not imported:
:mod:`harness.claimfiles.spec` imports this module).
"""

from __future__ import annotations

from ..core.schema import did_you_mean, shorten
from .claim_checks import unknown_quantity

__all__ = ["vocabulary_checks", "partial_vocabularies"]


def partial_vocabularies(card, protocol, raw_params, claim, cparams: dict):
    """The vocabularies of parameters that did not validate, from the keys they do give and the schema's defaults
    (``None`` when the protocol cannot build names from them)."""
    if not isinstance(raw_params, dict):
        return None
    defaults = {
        k: f.get_default(call_default_factory=True)
        for k, f in protocol.Params.model_fields.items()
        if not f.is_required()
    }
    plain_params = {**{k: v for k, v in defaults.items() if not hasattr(v, "model_dump")}, **raw_params}
    fields = protocol.Params.model_fields
    for key in [k for k in raw_params if k not in fields]:  # a misspelt key stands in for the one it misspells
        meant = did_you_mean(key, [f for f in fields if f not in raw_params])
        if meant:
            plain_params.setdefault(meant.split("'")[1], raw_params[key])
    try:
        vocab = card.quantities.vocabulary(plain_params)
        cvocabs = {
            i: card.quantities.control_vocabulary(claim.controls[i].control, plain_params, m.model_dump(mode="json"))
            for i, m in cparams.items()
        }
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, ArithmeticError):
        return None
    return vocab, cvocabs


def _claim_names(claim) -> list[tuple[str, str]]:
    """``(where, quantity name)`` of every quantity the claim file names."""
    out = []
    for i, t in enumerate(claim.targets):
        out += [(f"targets[{i}].{k}", getattr(t, k)) for k in ("quantity", "other") if getattr(t, k) is not None]
    for i, ctl in enumerate(claim.controls):
        for j, cond in enumerate(ctl.must):
            out += [(f"controls[{i}].must[{j}].quantities[{k}]", q) for k, q in enumerate(cond.quantities)]
    if claim.bootstrap is not None:
        out += [(f"bootstrap.quantities[{k}]", q) for k, q in enumerate(claim.bootstrap.quantities)]
        for k, c in enumerate(claim.bootstrap.comparisons):
            out += [(f"bootstrap.comparisons[{k}].{side}", getattr(c, side)) for side in ("left", "right")]
    return [(w, n) for w, n in out if isinstance(n, str)]


def _mistyped_labels(claim, vocab: dict) -> dict[str, str]:
    """``{label the claim writes: label of params.tasks}`` where a task label looks mistyped *in params.tasks*:
    quantity names the claim writes differ from measured ones only in that label, and no name the claim writes
    uses the params.tasks spelling. (Where another name does use it, the typo is in the claim's name, and the
    ordinary suggestion, which points at the measured name, is the right one.)"""
    tasks = (claim.params or {}).get("tasks") if isinstance(claim.params, dict) else None
    tasks = list(tasks) if isinstance(tasks, dict) else []  # tasks of another shape: its own problem, said apart
    names = [n for _, n in _claim_names(claim)]
    found: dict[str, str] = {}
    for label in tasks:
        for known in vocab:
            at = known.find(label)
            if at < 0:
                continue
            pre, post = known[:at], known[at + len(label) :]
            for name in names:
                if name in vocab or not (name.startswith(pre) and name.endswith(post)):
                    continue
                written = name[len(pre) : len(name) - len(post)]
                if written and written not in tasks and did_you_mean(written, [label]):
                    found.setdefault(written, label)
    used = {lab for lab in found.values() if any(lab in n for n in names if n in vocab)}
    return {w: lab for w, lab in found.items() if lab not in used and _blames_tasks(claim, w, lab, names, vocab)}


def _blames_tasks(claim, written: str, label: str, names: list[str], vocab: dict) -> bool:
    """Whether the claim's spelling ``written`` has more on its side than params.tasks' ``label``: the task's
    column does not spell ``label`` rather than ``written``, and either it spells ``written`` or at least two
    names of the claim do. (One target that spells a task otherwise than params.tasks and its column is the
    target's typo: ``boundary.BHH`` beside ``BBH: BBH Raw``.)"""
    column = str(claim.params["tasks"].get(label, ""))
    if label in column and written not in column:
        return False
    spelled = sum(1 for n in names if n not in vocab and written in n)
    return spelled >= 2 or (written in column and label not in column)


def vocabulary_checks(claim, vocab: dict, cvocabs: dict, problems: list[str], bad=frozenset()) -> None:
    typos = _mistyped_labels(claim, vocab)
    for written, label in typos.items():
        where = sorted({w for w, n in _claim_names(claim) if written in n and n not in vocab})
        problems.append(
            f"params.tasks: the task label {label!r} is named by no target, control or comparison, while "
            f"{', '.join(where[:4])}{' …' if len(where) > 4 else ''} name {written!r} (did you mean {written!r}? "
            f"correct the label in params.tasks, and every quantity name built from it follows)"
        )

    def unknown(where: str, name: str, known, what: str) -> str:
        written = next((w for w in typos if w in name), None)
        if written is None:
            return unknown_quantity(where, name, known, what, claim.protocol, claim.params)
        return (
            f"{where}: {shorten(name)} is not {what}: params.tasks has no task {written!r} (it has "
            f"{typos[written]!r}, which looks mistyped; see params.tasks)"
        )

    for i, t in enumerate(claim.targets):
        for key in ("quantity", "other"):
            name = getattr(t, key)
            if name is not None and name not in vocab:
                problems.append(
                    unknown(f"targets[{i}].{key}", name, vocab, f"a quantity protocol '{claim.protocol}' measures")
                )
    # what the targets say is known: each validated and named a measured quantity (an unknown one is said above)
    targets_known = not any(b == "targets" or b.startswith("targets[") for b in bad)
    targets_known = targets_known and all(t.quantity in vocab for t in claim.targets)
    paper_names = {t.quantity for t in claim.targets if t.relation == "~"}
    for i, ctl in enumerate(claim.controls):
        cv = cvocabs.get(i)
        if cv is None:
            continue
        for j, cond in enumerate(ctl.must):
            for k, name in enumerate(cond.quantities):
                where = f"controls[{i}].must[{j}].quantities[{k}]"
                if name not in cv:
                    problems.append(unknown(where, name, cv, f"a quantity control '{ctl.control}' measures"))
                elif cond.measure != "value" and cond.reference == "baseline" and name not in vocab:
                    problems.append(
                        f"{where}: {name!r} has no baseline: the unperturbed measurement has no such "
                        "quantity (use measure: value)"
                    )
                elif (
                    cond.measure != "value" and cond.reference == "paper" and targets_known and name not in paper_names
                ):
                    problems.append(f"{where}: reference 'paper' needs a target with a paper value for {name!r}")
        if ctl.must_fail_targets and targets_known:
            missing = [t.quantity for t in claim.targets if t.quantity in vocab and t.quantity not in cv]
            if missing:
                problems.append(
                    f"controls[{i}].must_fail_targets: control '{ctl.control}' does not measure "
                    f"{missing}, so it cannot fail those targets"
                )
    if claim.bootstrap is not None:
        b = claim.bootstrap
        for k, name in enumerate(b.quantities):
            if name not in vocab:
                problems.append(unknown(f"bootstrap.quantities[{k}]", name, vocab, "a measured quantity"))
        for k, c in enumerate(b.comparisons):
            for side in ("left", "right"):
                name = getattr(c, side)
                if isinstance(name, str) and name not in vocab:
                    problems.append(unknown(f"bootstrap.comparisons[{k}].{side}", name, vocab, "a measured quantity"))
