"""A generated corpus of claims at other parameters, per protocol, and the authors' arms they may meet.

The variants of a protocol live in ``corpus/<protocol>.py`` (its ``VARIANTS``), found through the registry
(:data:`BY_PROTOCOL`): a new protocol adds its own file and edits none. This module holds what they share: the
:class:`Variant`, the authors' arms every variant meets, and the edits and expectations several protocols use.

Each :class:`Variant` is one of the five claim files edited the way a new user would edit it (another budget,
quantile level, κ, cutoff, bin count, period list, reference, relations instead of paper values, a flipped
ordering), written to a scratch folder and run on the real tables. Each is met by several authors' arms made
by hand (:func:`arms`): none (switched off), one that crashed with a Python traceback, one that agrees with the
re-implementation, and one that disagrees with it, since running the authors' code for every variant would
take hours. A variant may add arms of its own (``extra_arms``): the κ-schedule variant's authors' arm is the
re-implementation refitted at the κ the authors' schedule actually reaches, which is what their code does.

The ranges (issue 16): budgets inside the data, at its upper edge, beyond and below it; τ from 0.5 to 0.99;
κ below (10, 20) and above (200) the authors' schedule (10, 25, then κ); cutoffs that leave 7 models before
them, or few after; 3 to 20 bins; two or four periods; references the claimed setting misses; every target a
relation; a resampled ordering that is false on the full sample.

The kinds of issue 28, each variant tagged with the kinds it is (:data:`KINDS`; a test holds the corpus to
every kind): knobs the claim turned off (``box_check: null``, ``robustness_cold_start: false``), tables under
50 rows, an authors' arm that cannot take the claim's periods, a column of FLOPs, scores in percent
(``scale: percent``), and the claim's own settings moved (τ = 0.975, λ = 1e-2, a subset of tasks, swapped
values, tolerances nothing meets, a control that cannot break). A duplicated target label is refused by
``validate`` (``tests/unit/test_mutations.py``), so it has no variant.

``slow`` variants (the protocols whose fits take tens of seconds) are marked so that ``make test`` leaves
them to ``make test-all`` (CI).
"""

from __future__ import annotations

import copy
import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from harness.build.runner import one_line_reason
from harness.core.record import Arm, ArmControl

CLAIMS = Path(__file__).resolve().parents[3] / "claims"

#: The kinds of claim issue 28 asks the corpus to hold, each tagged on the variants of that kind.
KINDS = ("knobs_off", "small_table", "periods_refused", "flops_column", "percent_scale", "own_settings")

#: A crash of the authors' code as their adapter reports it: the first line, then the tail of stderr.
TRACEBACK = (
    "the adapter protocols/{protocol}/adapter.py exited with status 1; last lines of stderr:\n"
    "Traceback (most recent call last):\n"
    '  File "<scratch>/launch.py", line 41, in <module>\n'
    "    answer = module.run(request)\n"
    '  File "skill_frontier/evaluation/shift_test.py", line 212, in relabel\n'
    "    raise ValueError(f'need at least 5 pre-cutoff models, got {{n}}')\n"
    "ValueError: need at least 5 pre-cutoff models, got 4"
)


@dataclass
class Variant:
    """A claim file edited: ``edit(raw)`` changes the parsed YAML in place; ``expect(record)`` asserts the states
    the variant is there to produce (the wording follows from them, which the renderer and reviewer check)."""

    id: str
    base: str  # the claim's number prefix
    edit: Callable[[dict], None]
    expect: Callable | None = None
    slow: bool = False
    bootstrap: bool = False
    multiverse: bool = False  # keep the claim's own multiverse (its alternatives must still hold its values)
    extra_arms: Callable | None = None  # (spec, tables, reimpl) -> {name: Arm}
    expect_arms: dict[str, Callable] = field(default_factory=dict)  # arm name -> expect(record)
    notes: str = ""
    tags: tuple[str, ...] = field(default_factory=tuple)


def write_variant(v: Variant, folder: Path) -> Path:
    (path,) = sorted(CLAIMS.glob(f"{v.base}*.yaml"))
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not v.bootstrap:
        raw.pop("bootstrap", None)
    # a variant changes the parameters the paper chose, so the claim's multiverse around those choices (which
    # must hold the claim's own values) no longer describes it: it is left out, as a claim without one, unless
    # the variant keeps the paper's choices and asks for it
    if not v.multiverse:
        raw.pop("multiverse", None)
    raw["id"] = v.id
    v.edit(raw)
    out = folder / f"{v.id}.yaml"
    out.write_text(yaml.safe_dump(raw, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return out


# -- the authors' arms --------------------------------------------------------------------------------------


def _perturbed(values: dict, shift: float) -> dict:
    """Values moved by ``shift`` times their size (counts kept): an arm that disagrees with the other."""
    out = {}
    for k, x in values.items():
        if x is None or k.startswith(("n_", "n_validation")) or k.endswith(".n_within"):
            out[k] = x
        else:
            out[k] = x + shift * max(abs(x), 1e-3)
    return out


def arms(spec, reimpl: Arm) -> dict[str, Arm]:
    """The authors' arms every variant meets: not run, crashed, agreeing, disagreeing."""
    both = {n for n, q in spec.vocabulary.items() if q.arm == "both"}
    mine = {k: x for k, x in reimpl.values.items() if k in both}
    controls = {c: ArmControl(values=dict(m.values)) for c, m in reimpl.controls.items()}
    out = {
        "not_run": Arm(status="not run", reason="the authors' arm was switched off for this run by --no-upstream"),
        "crashed": Arm(
            status="could not run", reason=one_line_reason(TRACEBACK.format(protocol=spec.protocol.name), spec.id)
        ),
        "agrees": Arm(status="ok", values=mine, controls=controls),
        "disagrees": Arm(
            status="ok",
            values=_perturbed(mine, 0.05),
            controls={c: ArmControl(values=_perturbed(m.values, -0.05)) for c, m in reimpl.controls.items()},
        ),
    }
    return out


# -- edits and expectations the protocols' variants share ---------------------------------------------


def set_params(**params):
    def edit(raw):
        raw["params"].update(params)

    return edit


def chain(*edits):
    def edit(raw):
        for e in edits:
            e(raw)

    return edit


def resampling_is(*labels):
    def expect(rec):
        from harness.rendering.index import summary_rows

        label = summary_rows([rec])[0]["robustness"]
        assert label in labels, (label, labels)

    return expect


def all_of(*checks):
    def expect(rec):
        for c in checks:
            c(rec)

    return expect


def refit_arm(name: str, **update):
    """An authors' arm that is the re-implementation refitted at another setting (``update`` of the claim's
    parameters), with its fits, as the authors' code reports them: what their code does where it fits another
    setting than the claim's."""

    def make(spec, tables, reimpl):
        import numpy as np

        other = spec.params.model_copy(update=update)
        m = spec.protocol.measure(other, tables, np.random.default_rng(0))
        both = {n for n, q in spec.vocabulary.items() if q.arm == "both"}
        fits = {k: {**f, "continuation": True} for k, f in m.details["fits"].items()}
        return {
            name: Arm(
                status="ok",
                values={k: x for k, x in m.values.items() if k in both},
                details={"fits": fits},
                controls={c: ArmControl(values=dict(x.values)) for c, x in reimpl.controls.items()},
            )
        }

    return make


def verdict_is(*verdicts):
    def expect(rec):
        assert rec.verdict.verdict in verdicts, (rec.verdict.verdict, verdicts)

    return expect


def within_paper(rec):
    for t in rec.targets:
        assert t.reimpl.holds, (t.quantity, t.reimpl)


def only_tasks(*labels):
    """Only these tasks (a subset: cheaper, and a setting of its own): targets, conditions and comparisons on the
    others are dropped."""

    def keeps(name) -> bool:
        return not isinstance(name, str) or not any(t in name.split(".") or name.endswith("." + t) for t in dropped)

    dropped: list[str] = []

    def edit(raw):
        dropped[:] = [t for t in raw["params"]["tasks"] if t not in labels]
        raw["params"]["tasks"] = {k: v for k, v in raw["params"]["tasks"].items() if k in labels}
        raw["targets"] = [t for t in raw["targets"] if keeps(t["quantity"]) and keeps(t.get("other"))]
        for c in raw["controls"]:
            for cond in c.get("must", []):
                cond["quantities"] = [q for q in cond["quantities"] if keeps(q)]
            c["must"] = [cond for cond in c.get("must", []) if cond["quantities"]]
        if "drift_tasks" in raw["params"]:
            raw["params"]["drift_tasks"] = [t for t in raw["params"]["drift_tasks"] if t in labels]
        if raw.get("bootstrap"):
            b = raw["bootstrap"]
            b["quantities"] = [q for q in b.get("quantities", []) if keeps(q)]
            b["comparisons"] = [c for c in b.get("comparisons", []) if keeps(c["left"]) and keeps(c["right"])]

    return edit


# -- the corpus ---------------------------------------------------------------------------------------------


def _by_protocol() -> dict[str, list[Variant]]:
    """Each registered protocol's variants (``VARIANTS`` of ``corpus/<protocol>.py``), where it has a file."""
    from harness.claimfiles.registry import PROTOCOLS

    here = Path(__file__).resolve().parent
    return {
        name: importlib.import_module(f"{__name__}.{name}").VARIANTS
        for name in PROTOCOLS
        if (here / f"{name}.py").is_file()
    }


#: The variants of each protocol, by its name.
BY_PROTOCOL: dict[str, list[Variant]] = _by_protocol()
CORPUS: list[Variant] = [v for variants in BY_PROTOCOL.values() for v in variants]


def by_claim() -> dict[str, int]:
    """How many variants edit each claim file, by its number prefix."""
    out: dict[str, int] = {}
    for v in CORPUS:
        out[v.base] = out.get(v.base, 0) + 1
    return out


def by_kind() -> dict[str, list[str]]:
    """The variants of each kind of :data:`KINDS`, by their tags."""
    out: dict[str, list[str]] = {k: [] for k in KINDS}
    for v in CORPUS:
        for tag in v.tags:
            out[tag].append(v.id)
    return out


def copy_raw(raw: dict) -> dict:
    return copy.deepcopy(raw)
