"""Checks of a claim file beyond its schema that need its vocabulary, its written numbers or its tables.

Called by :func:`harness.claimfiles.spec.load_claim`; each returns lines ``where: what was expected, what was found``.

* :func:`unknown_quantity`: a quantity name the protocol does not measure. A suggestion is offered only for a
  near miss of this protocol's own names (the part before the first dot and the rest each close to a measured
  name's, :func:`near_miss`), so that ``signed_coverage.MATH Lvl 5`` is never pointed at
  ``coverage.MATH Lvl 5``; a name another protocol measures is said to be that protocol's.
* :func:`label_problems`: two targets printed under one label, or a label that names another task than the
  one its target measures (a row of GPQA printed as "MATH Lvl 5").
* :func:`tolerance_warnings`: a tolerance of 0 on a value the paper prints with decimals. A warning, not an
  error: exact equality is what the file asks for, and a continuous quantity gives it only by chance.
* :func:`target_kind_problems`: a target on a bounded quantity (a fraction, a boundary of scores in [0, 1]) whose
  paper value lies outside its range, or that every value in it meets, so that it cannot fail (a tolerance of 5 on
  a p-value or a boundary); a relation, or an asserted ordering, between
  quantities of different kinds (a gap and a count).
* :func:`resample_problems`: too few resamples for the one-sided level of the bootstrap's decisions.
* :func:`budget_problems`: an evaluation point that is none of the budgets in FLOPs the claim's text names
  (refused where it is the log10 of one, ``eval_x: 3`` for 10^24 FLOPs; else a warning: prose is read).
* :func:`eval_point_problems` and :func:`input_data_problems` (the leaderboard protocols, with the tables at
  hand): a compute axis, or an evaluation point, that cannot be training compute in the unit the claim
  gives (:data:`TRAINING_COMPUTE_DECADES`); a score column with values above 1 unless the claim says its
  scores are percents (``scale: percent``), and a percent column outside [0, 100].
"""

from __future__ import annotations

import difflib
import functools
import inspect
import itertools
import math
import re
import typing
from decimal import Decimal, InvalidOperation

from ..core.quantities import boxed, budget_text
from ..core.schema import shorten

__all__ = [
    "unknown_quantity",
    "near_miss",
    "foreign_protocols",
    "label_problems",
    "tolerance_warnings",
    "eval_point_problems",
    "budget_problems",
    "target_kind_problems",
    "resample_problems",
    "MIN_TAIL_RESAMPLES",
    "input_data_problems",
    "TRAINING_COMPUTE_DECADES",
]

#: Where the training compute of any model lies, in decades of FLOPs: from 10^12 (a model of a million
#: parameters trained on a million tokens is 6e12) to 10^33 (a million times the largest training run
#: reported so far, 5e26 FLOPs in the Epoch AI tables). The two units a compute column may be given in
#: differ by 21 decades, so a column read in the wrong one lands at least 10 decades outside.
TRAINING_COMPUTE_DECADES = (12.0, 33.0)
#: The harness's compute unit, 1e21 FLOPs, in decades.
UNIT_DECADES = 21.0
#: The fewest resamples a one-sided bootstrap bound at level alpha must have beyond it (:func:`resample_problems`).
MIN_TAIL_RESAMPLES = 5
#: How close the part before a name's first dot must be to a measured name's for a suggestion.
FAMILY_CUTOFF = 0.75
#: How close the rest of the name must be.
REST_CUTOFF = 0.5


# -- quantity names ---------------------------------------------------------------------------------------------


def _split(name: str) -> tuple[str, str]:
    family, _, rest = name.partition(".")
    return family, rest


def _ratio(a: str, b: str) -> float:
    return 1.0 if a == b else difflib.SequenceMatcher(None, a, b).ratio()


def near_miss(name: str, known) -> str | None:
    """The measured name ``name`` is most likely a misspelling of, or None: a name whose part before the first dot
    is within :data:`FAMILY_CUTOFF` of ``name``'s and whose rest is within :data:`REST_CUTOFF` (difflib's ratio),
    the closest whole name first."""
    family, rest = _split(name)
    best, score = None, 0.0
    for k in sorted(map(str, known)):
        kf, kr = _split(k)
        if _ratio(family, kf) < FAMILY_CUTOFF or (rest or kr) and _ratio(rest, kr) < REST_CUTOFF:
            continue
        r = _ratio(name, k)
        if r > score:
            best, score = k, r
    return best


_MARK = "\x00"  # stands in for an argument of a name builder
_NUMBER = 1234.5  # stands in for a numeric argument (``sweep.lam=1234.5.max_dev``)


def _builder_pattern(fn) -> re.Pattern | None:
    """The shape of the names a name builder of a ``quantities.py`` makes (``signed_coverage(label)`` ->
    ``signed_coverage\\..+``), from a call with a placeholder for every argument (text, or a number where text
    will not do); None when it is not a name builder (what it makes has no letters of its own, or spaces)."""
    try:
        n = len(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return None
    for numeric in itertools.product((False, True), repeat=min(n, 3)):
        try:
            made = fn(*[_NUMBER if k < len(numeric) and numeric[k] else _MARK for k in range(n)])
        except (TypeError, ValueError, KeyError, AttributeError, IndexError):
            continue
        if isinstance(made, str):
            made = made.replace(f"{_NUMBER:g}", _MARK)
            literal = made.replace(_MARK, "")
            if _MARK in made and re.search(r"[A-Za-z]", literal) and not re.search(r"\s", literal):
                return re.compile(".+".join(re.escape(part) for part in made.split(_MARK)))
        return None
    return None


def _constant_names(obj) -> list[str]:
    """Quantity names an exported constant of a ``quantities.py`` holds: itself (text), or the dotted names among
    its keys or entries (``AUDIT = {"audit.n": ...}``); a constant of parts (``("drift", "stable")``) holds none."""
    if isinstance(obj, str):
        return [obj]
    if isinstance(obj, (dict, tuple, list, frozenset, set)):
        return [k for k in obj if isinstance(k, str) and "." in k]
    return []


@functools.cache
def _shapes(name: str) -> tuple[re.Pattern, ...]:
    """The shapes of the names protocol ``name`` builds: its quantities module's public builders and the names its
    public constants hold (its own: not what it imports)."""
    from .registry import PROTOCOLS

    module = PROTOCOLS[name].quantities
    out = []
    for attr, obj in vars(module).items():
        if attr.startswith("_") or getattr(obj, "__module__", module.__name__) != module.__name__:
            continue
        if callable(obj) and attr not in ("vocabulary", "control_vocabulary"):
            shape = _builder_pattern(obj)
            out += [shape] if shape is not None else []
        else:
            out += [re.compile(re.escape(k)) for k in _constant_names(obj)]
    return tuple(out)


def _switched_on(schema) -> dict:
    """A protocol's optional parameters, each that is off by default (None, 0, false, empty) switched on with a
    stand-in, so that its vocabulary holds the names only an option adds (``p_value_precise``)."""
    out = {}
    for k, f in schema.model_fields.items():
        if f.is_required():
            continue
        default = f.get_default(call_default_factory=True)
        if default or hasattr(default, "model_dump"):
            out[k] = default
            continue
        tp = typing.get_origin(f.annotation) or f.annotation
        out[k] = True if default is False else 1 if isinstance(default, (int, float)) else {"on": 1}
        if tp in (list, tuple):
            out[k] = []
    return out


def _vocabulary_names(protocol: str, params: dict) -> set[str]:
    """The names protocol ``protocol`` and its controls measure for the claim's parameters over its own defaults,
    and over its options switched on (each set for which its vocabulary can be built from them)."""
    from .registry import PROTOCOLS

    card = PROTOCOLS[protocol]
    schema = card.protocol.Params
    plain = {k: f.get_default(call_default_factory=True) for k, f in schema.model_fields.items() if not f.is_required()}
    names: set[str] = set()
    for base in ({k: v for k, v in plain.items() if not hasattr(v, "model_dump")}, _switched_on(schema)):
        p = {**base, **params}
        try:
            names |= set(card.quantities.vocabulary(p))
            for kind in card.protocol.controls:
                names |= set(card.quantities.control_vocabulary(kind, p, {}))
        except (KeyError, TypeError, ValueError, AttributeError, IndexError):
            continue
    return names


def _measures(protocol: str, name: str, params: dict) -> bool:
    """Whether protocol ``protocol`` measures ``name``: one of its name builders makes names of its shape, or its
    vocabulary holds it (:func:`_vocabulary_names`). A refit inside the authors' box (``boxed.<name>``, a
    builder every protocol shares) is the protocol's whose ``<name>`` it is."""
    name = name.removeprefix(boxed(""))
    return any(s.fullmatch(name) for s in _shapes(protocol)) or name in _vocabulary_names(protocol, params)


def foreign_protocols(name: str, own: str, params: dict) -> list[str]:
    """The other protocols that measure a quantity of this name (none when its shape is one of ``own``'s)."""
    from .registry import PROTOCOLS

    if own in PROTOCOLS and any(s.fullmatch(name.removeprefix(boxed(""))) for s in _shapes(own)):
        return []
    return [p for p in sorted(PROTOCOLS) if p != own and _measures(p, name, params)]


def unknown_quantity(where: str, name: str, known, what: str, protocol: str | None, params: dict) -> str:
    """The problem of a quantity name the protocol does not measure: a near miss of its own names suggested, or
    the protocols that do measure it named, and the names it measures listed."""
    others = foreign_protocols(name, protocol, params if isinstance(params, dict) else {}) if protocol else []
    close = near_miss(name, known)
    out = f"{where}: {shorten(name)} is not {what}"
    if others:
        out += f"; it is a quantity of protocol{'s' if len(others) > 1 else ''} {' and '.join(map(repr, others))}"
    if close is not None:
        out += f" (did you mean {close!r}?)"
    listed = sorted(map(str, known))
    return out + "; known: " + ", ".join(listed[:12]) + (" …" if len(listed) > 12 else "")


# -- labels and tolerances --------------------------------------------------------------------------------------


def _task_of(name: str, tasks) -> str | None:
    """The task label a quantity name is built from (``boundary.MATH Lvl 5`` -> ``MATH Lvl 5``), if one."""
    found = [t for t in tasks if re.search(rf"(?:^|\.){re.escape(str(t))}(?:$|\.)", name)]
    return max(found, key=len) if found else None


def label_problems(claim, vocab: dict) -> list[str]:
    """Every target is one row of the report, under its label: no two targets may share one, and a label that is
    a task's name must be the task its target measures."""
    tasks = list((claim.params or {}).get("tasks") or {}) if isinstance(claim.params, dict) else []
    problems, seen = [], {}
    for i, t in enumerate(claim.targets):
        if not isinstance(t.quantity, str):
            continue
        shown = t.label if t.label is not None else vocab[t.quantity].label if t.quantity in vocab else t.quantity
        key = " ".join(shown.split()).casefold()
        if key in seen:
            j, other = seen[key]
            how = "" if t.label is not None else f" (no label: the quantity's own, as targets[{j}] has)"
            problems.append(
                f"targets[{i}].label: {shown!r}{how} is also the label of targets[{j}] ({other}); each target is "
                f"a row of the report under its own label: give targets[{i}] ({t.quantity}) one of its own"
            )
        else:
            seen[key] = (i, t.quantity)
        named = next((x for x in tasks if t.label is not None and key == " ".join(str(x).split()).casefold()), None)
        measured = _task_of(t.quantity, tasks)
        if named is not None and measured is not None and named != measured:
            problems.append(
                f"targets[{i}].label: {shown!r} is the name of task {named!r}, while the target measures "
                f"{t.quantity} (task {measured!r}); label it after what it measures"
            )
    return problems


def _half_unit(written: str) -> float | None:
    """Half a unit in the last digit a number is written with (``0.539`` -> 0.0005), None if it has no decimals."""
    try:
        d = Decimal(written.strip())
    except InvalidOperation:
        return None
    exponent = d.as_tuple().exponent
    if not isinstance(exponent, int) or ("." not in written and "e" not in written.lower()):
        return None
    return 0.5 * 10.0**exponent


def tolerance_warnings(claim, texts: dict) -> list[str]:
    """A tolerance of 0 on a paper value written with decimals: a measured continuous number equals it only by
    chance. (A whole number, a count, is exact by nature and is not warned about.)"""
    out = []
    for i, t in enumerate(claim.targets):
        if t.relation != "~" or t.tolerance != 0 or t.paper is None:
            continue
        written = texts.get(("targets", i, "paper"), repr(t.paper))
        half = _half_unit(written)
        if half is None:
            continue
        out.append(
            f"targets[{i}].tolerance: 0 asks {t.quantity} to equal {written} exactly, which a continuous quantity "
            f"does only by chance; the paper prints it to {half * 2:g}, so half a unit of its last digit, {half:g}, "
            "is the tolerance of a rounded value (accepted as written: a warning, not an error)"
        )
    return out


#: What a quantity of each kind is, in a message (:class:`~harness.core.quantities.Quantity`).
KIND_WORDS = {
    "value": "a measured value (a score, a loss, a gap)",
    "fraction": "a fraction in [0, 1] (a coverage, a share, a p-value)",
    "count": "a count",
}


def _accepts_whole_range(t, lo: float, hi: float) -> bool:
    """Whether target ``t`` is met by every value in [lo, hi]: ``~`` whose tolerance reaches both ends, or a
    relation with ``value`` that every value in the range satisfies (a target the schema refused, its ``paper`` or
    ``tolerance`` missing or its relation unknown, is left to the schema's message)."""
    if t.relation == "~":
        if t.paper is None or t.tolerance is None:
            return False
        return t.paper - t.tolerance <= lo and t.paper + t.tolerance >= hi
    if t.value is None:
        return False
    v = t.value
    return {"<": v > hi, "<=": v >= hi, ">": v < lo, ">=": v <= lo, "abs<": v > max(-lo, hi)}.get(t.relation, False)


def _range_problem(i: int, t, q) -> str | None:
    """The problem of a target on a bounded quantity (:attr:`Quantity.limits`): a paper value outside its range,
    or a target every value in it meets, so that it cannot fail (a tolerance of 5 on a boundary of scores)."""
    lo, hi = q.limits
    span = f"[{lo:g}, {hi:g}]"
    what = f"is {KIND_WORDS['fraction']}" if q.kind == "fraction" else f"lies in {span}"
    if t.paper is not None and not lo <= t.paper <= hi:
        return (
            f"targets[{i}].paper: {t.quantity} {what}; expected a paper value in {span}, found {_number(t.paper)}"
            + (" (a percent? write it as a fraction)" if hi == 1 and 1 < t.paper <= 100 else "")
        )
    if not _accepts_whole_range(t, lo, hi):
        return None
    if t.relation == "~":
        need = max(t.paper - lo, hi - t.paper)
        return (
            f"targets[{i}].tolerance: {t.quantity} {what}, and {_number(t.paper)} ± {_number(t.tolerance)} covers "
            f"all of {span}, so the target cannot fail; expected a tolerance below {need:g} (the distance from "
            f"{_number(t.paper)} to the farther end), found {_number(t.tolerance)}"
        )
    return (
        f"targets[{i}].value: {t.quantity} {what}, and every value in {span} is {t.relation} {_number(t.value)}, "
        f"so the target cannot fail; expected a value that some value in {span} fails, found {_number(t.value)}"
    )


def target_kind_problems(claim, vocab: dict) -> list[str]:
    """A target on a bounded quantity whose paper value lies outside its range or that every value in it meets
    (:func:`_range_problem`), and a target's ``other`` or an ordering's ``right`` of another kind than the
    quantity it is compared with."""
    problems = []
    for i, t in enumerate(claim.targets):
        q = vocab.get(t.quantity)
        problem = _range_problem(i, t, q) if q is not None and q.limits is not None else None
        problems += [problem] if problem else []
    pairs = [(f"targets[{i}].other", t.quantity, t.other) for i, t in enumerate(claim.targets)]
    comparisons = claim.bootstrap.comparisons if claim.bootstrap is not None else []
    pairs += [(f"bootstrap.comparisons[{k}].right", c.left, c.right) for k, c in enumerate(comparisons)]
    for where, left, right in pairs:
        if not isinstance(right, str) or left not in vocab or right not in vocab:
            continue
        a, b = vocab[left].kind, vocab[right].kind
        if a != b:
            problems.append(
                f"{where}: a relation compares two quantities of one kind: expected one of {left}'s, "
                f"{KIND_WORDS[a]}; found {right}, {KIND_WORDS[b]}"
            )
    return problems


def resample_problems(claim) -> list[str]:
    """Too few resamples for the bootstrap's one-sided decisions: the bound at level ``alpha`` is the
    ``alpha``-quantile of the ``B`` resampled differences (numpy's linear quantile), and with fewer than
    :data:`MIN_TAIL_RESAMPLES` of them beyond it, it is read off one or two extreme resamples (below
    ``B = 1 / alpha`` it lies between the two smallest)."""
    b = claim.bootstrap
    if b is None or not b.comparisons:
        return []
    need = math.ceil(round(MIN_TAIL_RESAMPLES / b.alpha, 6))
    if b.n_resamples >= need:
        return []
    return [
        f"bootstrap.n_resamples: the one-sided bound that decides each of bootstrap.comparisons is the "
        f"{_number(b.alpha)}-quantile of the resamples, so {b.n_resamples} leave {b.n_resamples * b.alpha:.2g} of "
        f"them beyond it; expected at least {MIN_TAIL_RESAMPLES} / alpha = {need} (at least {MIN_TAIL_RESAMPLES} "
        f"beyond the bound, so that it is not read off the one or two most extreme), found {b.n_resamples}"
    ]


# -- the compute axis and the scores (the leaderboard protocols) ---------------------------------------------


def _number(x: float) -> str:
    """``x`` as a claim file would write it: ``1000``, ``1e25``, ``6e12``."""
    return f"{x:g}".replace("e+", "e")


def _flops(decades: float) -> str:
    return f"10^{decades:.1f}".replace(".0", "") + " FLOPs"


def _outside(decades: float) -> bool:
    lo, hi = TRAINING_COMPUTE_DECADES
    return not lo <= decades <= hi


def _window() -> str:
    lo, hi = TRAINING_COMPUTE_DECADES
    return f"the 10^{lo:g} to 10^{hi:g} FLOPs any model's training compute lies in"


def eval_point_problems(params) -> list[str]:
    """An evaluation point (``eval_x``, in units of 1e21 FLOPs) that cannot be an amount of training compute."""
    eval_x = getattr(params, "eval_x", None)
    if not isinstance(eval_x, float) or eval_x <= 0:
        return []
    at = math.log10(eval_x) + UNIT_DECADES
    if not _outside(at):
        return []
    return [
        f"params.eval_x: {_number(eval_x)} is in units of 1e21 FLOPs, so it is {_flops(at)}, outside {_window()}; "
        f"10^24 FLOPs is eval_x: 1000 (was the budget written in FLOPs? then it is eval_x: {_number(eval_x / 1e21)})"
    ]


#: A budget in FLOPs as prose writes it: ``10²⁴ FLOPs``, ``10^24 FLOPs``, ``3 × 10²⁴ FLOPs``, ``1e24 FLOPs``.
_BUDGET = re.compile(
    r"(?:(\d+(?:\.\d+)?)\s*[×x]\s*)?10(?:\^\{?(-?\d+(?:\.\d+)?)\}?|([⁰¹²³⁴⁵⁶⁷⁸⁹]+))\s*FLOP"
    r"|(\d+(?:\.\d+)?)[eE]\+?(\d+)\s*FLOP"
)
_DIGITS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹", "0123456789")


def named_budgets(text: str) -> list[float]:
    """The budgets in FLOPs that ``text`` names (:data:`_BUDGET`), in order."""
    out = []
    for m in _BUDGET.finditer(text):
        mantissa, caret, superscript, e_mantissa, e_exponent = m.groups()
        if e_mantissa is not None:
            out.append(float(e_mantissa) * 10.0 ** int(e_exponent))
        else:
            exponent = float(caret if caret is not None else superscript.translate(_DIGITS))
            out.append(float(mantissa or 1) * 10.0**exponent)
    return out


def budget_problems(claim, params) -> tuple[list[str], list[str]]:
    """``(problems, warnings)`` of an evaluation point (``eval_x``, in units of 1e21 FLOPs) that is none of the
    budgets the claim's title and text name: refused where it is the log10 of one (in either unit), the compute
    axis's z written in place of the budget; else a warning (the budgets are read from prose)."""
    eval_x = getattr(params, "eval_x", None)
    budgets = list(dict.fromkeys(named_budgets(f"{claim.title or ''} {claim.claim}")))
    if not isinstance(eval_x, float) or eval_x <= 0 or not budgets:
        return [], []
    if any(math.isclose(eval_x * 1e21, b, rel_tol=1e-6) for b in budgets):
        return [], []
    named = ", ".join(f"{budget_text(b / 1e21)} (eval_x: {_number(b / 1e21)})" for b in budgets)
    where = f"params.eval_x: {_number(eval_x)} is in units of 1e21 FLOPs, so it is {budget_text(eval_x)}"
    for b, (shift, unit) in itertools.product(budgets, ((UNIT_DECADES, "1e21 FLOPs"), (0.0, "FLOPs"))):
        if math.isclose(eval_x, math.log10(b) - shift, abs_tol=1e-9):
            return [
                f"{where}, while the claim names {budget_text(b / 1e21)}, whose log10 in units of {unit} is "
                f"{_number(eval_x)}: eval_x is the budget, not its log10; expected eval_x: {_number(b / 1e21)}, "
                f"found {_number(eval_x)}"
            ], []
    return [], [
        f"{where}, none of the budgets the claim's text names: {named} (a warning, not an error: the budgets are "
        "read from its prose)"
    ]


def _axis_problem(params, z, eval_x) -> str | None:
    """The problem of a compute axis whose median, in decades of FLOPs, is not training compute."""
    import numpy as np

    med = float(np.median(z)) + UNIT_DECADES
    if not _outside(med):
        return None
    lo, hi = float(np.min(z)) + UNIT_DECADES, float(np.max(z)) + UNIT_DECADES
    read = f"its values are {_flops(lo)} to {_flops(hi)} (median {_flops(med)}), outside {_window()}"
    if eval_x is not None:
        z_eval = math.log10(eval_x) + UNIT_DECADES
        gap = lo - z_eval if z_eval < lo else z_eval - hi
        if gap > 0:
            side = "below" if z_eval < lo else "above"
            read += f"; the claim's evaluation point, {_flops(z_eval)}, would lie {gap:.1f} decades {side} them"
    c = params.compute
    if c is not None:
        other = "FLOPs" if c.unit != "FLOPs" else "1e21 FLOPs"
        shift = UNIT_DECADES if other == "1e21 FLOPs" else -UNIT_DECADES
        fits = ""
        if not _outside(med + shift):
            fits = f"; read as {other!r} they are {_flops(lo + shift)} to {_flops(hi + shift)}, which fits"
        return (
            f"params.compute.unit: {c.unit!r} does not fit column {c.column!r} of table {params.table!r}: read in "
            f"that unit, {read}{fits}"
        )
    return (
        f"params.multiplier: the compute proxy {_number(params.multiplier)} × {params.tokens_col!r} × "
        f"{params.params_col!r} "
        f"is in units of 1e21 FLOPs only with tokens in T and parameters in B (multiplier 6); read so, {read}"
    )


def _score_problems(params, frame) -> tuple[list[str], list[str]]:
    import numpy as np
    import pandas as pd

    problems, warnings = [], []
    for label, col in params.tasks.items():
        if col not in frame.columns:
            continue
        y = pd.to_numeric(frame[col], errors="coerce").to_numpy(float)
        y = y[np.isfinite(y)]
        if not y.size:
            continue
        lo, hi, above = float(y.min()), float(y.max()), int(np.sum(y > 1))
        where = f"params.tasks.{label}: column {col!r} of table {params.table!r}"
        if params.scale == "fraction" and above:
            problems.append(
                f"{where} holds scores up to {hi:g} ({above} of {y.size} above 1), not fractions in [0, 1]; if they "
                "are percents, say so with 'scale: percent' in params, and both arms divide them by 100"
            )
        elif params.scale == "percent" and (lo < 0 or hi > 100):
            problems.append(f"{where}: scale 'percent' needs scores in [0, 100], found {lo:g} to {hi:g}")
        elif params.scale == "percent" and hi <= 1:
            warnings.append(
                f"{where}: every score is at most 1 ({lo:g} to {hi:g}), yet 'scale: percent' divides them by 100; "
                "if they are fractions, drop it (a warning, not an error)"
            )
    return problems, warnings


def input_data_problems(params, tables) -> tuple[list[str], list[str]]:
    """``(problems, warnings)`` of a leaderboard claim's compute axis and score columns, read from its table
    (nothing for other protocols, or when a column the claim names is not in the table: that is said
    elsewhere)."""
    from ..protocols.leaderboard import LeaderboardParams
    from ..stats.leaderboard import with_compute_column, with_log_compute

    if not isinstance(params, LeaderboardParams) or params.table not in tables.lock.tables:
        return [], []
    header = tables.header(params.table)
    if any(c not in header for c in [*params.compute_columns().values(), *params.tasks.values()]):
        return [], []
    frame = tables.frame(params.table)
    if params.compute is not None:
        axis = with_compute_column(frame, params.compute.column, params.compute.scale)
    else:
        axis = with_log_compute(frame, params.tokens_col, params.params_col, params.multiplier)
    problems, warnings = _score_problems(params, frame)
    if len(axis):
        problem = _axis_problem(params, axis["z"].to_numpy(float), getattr(params, "eval_x", None))
        problems += [problem] if problem else []
    return problems, warnings
