"""The contract every registered protocol keeps: one test per protocol and part, naming what a folder lacks.

As scikit-learn's ``parametrize_with_checks`` runs the same checks over every estimator, these run over every
protocol of the registry (:data:`harness.claimfiles.registry.PROTOCOLS`), so that a new folder, added as
``docs/adding-a-protocol.md`` says, is told here what it still lacks, by name, before any claim uses it. The
other tests derive their lists from the registry and the cards; none keeps a copy of a protocol's figures
or choices.
"""

from __future__ import annotations

import inspect

import pytest

from harness.claimfiles.registry import PROTOCOLS
from harness.core.paths import PROJECT_ROOT
from harness.protocols.base import Choice, Protocol, ProtocolParams

TEMPLATES = PROJECT_ROOT / "templates"


def _protocol_module(card):
    """``protocol.py`` defines ``PROTOCOL``, an instance of a :class:`Protocol` subclass named by its folder."""
    p = card.protocol
    assert isinstance(p, Protocol), f"{card.package}.protocol.PROTOCOL is not a Protocol instance"
    assert p.name == card.name, f"PROTOCOL.card names {p.name!r}, its folder is {card.name!r}"
    assert issubclass(p.Params, ProtocolParams), "Params must subclass harness.protocols.base.ProtocolParams"
    for kind, schema in p.controls.items():
        assert issubclass(schema, ProtocolParams), f"control {kind!r}: its schema must subclass ProtocolParams"
    for method in ("measure",) + (("control",) if p.controls else ()):
        assert getattr(type(p), method) is not getattr(Protocol, method), f"Protocol.{method} is not implemented"


def _quantities_module(card):
    """``quantities.py`` gives ``vocabulary(params)`` and ``control_vocabulary(kind, params, control_params)``."""
    q = card.quantities
    for name, n_args in (("vocabulary", 1), ("control_vocabulary", 3)):
        fn = getattr(q, name, None)
        assert callable(fn), f"quantities.py has no {name}()"
        assert len(inspect.signature(fn).parameters) == n_args, f"quantities.{name} takes {n_args} arguments"


def _template(card):
    """``templates/<name>.md.j2`` extends the skeleton every report shares."""
    path = TEMPLATES / card.template
    assert path.is_file(), f"no report template {path.relative_to(PROJECT_ROOT)}"
    assert '{% extends "base.md.j2" %}' in path.read_text(encoding="utf-8"), f"{card.template} must extend base.md.j2"


def _results(card):
    """``results.py``, where there is one, subclasses the shared results object (what the template reads)."""
    from harness.rendering.results import Results

    if card.module_file("results") is None:
        pytest.skip("no results.py: the template reads the shared results object")
    cls = getattr(card._module("results"), "Results", None)
    assert isinstance(cls, type) and issubclass(cls, Results), (
        "results.py has no Results(harness.rendering.results.Results)"
    )


def _choices_have_roles(card):
    """Each analysis choice a multiverse may vary says whether it is the claim's estimand or an analysis choice,
    and why (``docs/multiverse.md``)."""
    for name, choice in card.protocol.CHOICES.items():
        assert isinstance(choice, Choice), name
        assert choice.role in ("estimand", "analysis") and choice.why, f"choice {name!r}: role and why"
        assert name in card.protocol.Params.model_fields, f"choice {name!r} is not a parameter of the protocol"


def _figures(card):
    """The card names the figures its ``figures.py`` draws, and a folder that names some draws them."""
    has_module = card.module_file("figures") is not None
    assert bool(card.figures) == has_module, "card.figures and figures.py go together"
    if has_module:
        assert callable(getattr(card._module("figures"), "draw", None)), "figures.py has no draw(record)"


def _resampling(card):
    """A protocol with a bootstrap takes what the bootstrap reads (``quantities=``), as :meth:`Protocol.resampling`
    says: the caller always passes it (``tests/e2e/test_resampling_narrowed.py`` checks what the narrowed statistic
    gives)."""
    method = type(card.protocol).resampling
    if method is Protocol.resampling:
        pytest.skip("no resampling: the protocol has no bootstrap")
    params = inspect.signature(method).parameters
    assert "quantities" in params, "resampling() takes no quantities= (the values the bootstrap reads)"
    assert params["quantities"].kind is inspect.Parameter.KEYWORD_ONLY, "quantities must be keyword-only"
    assert params["quantities"].default is None, "quantities must default to None (every value)"


def _adapter(card):
    """An adapter, where there is one, runs a request and puts the requests' answers together."""
    if card.module_file("adapter") is None:
        pytest.skip("no adapter: the protocol has no authors' arm")
    text = card.module_file("adapter").read_text(encoding="utf-8")
    assert "def run(" in text, "adapter.py has no run(request)"


CHECKS = [
    _protocol_module,
    _quantities_module,
    _template,
    _results,
    _choices_have_roles,
    _figures,
    _resampling,
    _adapter,
]


@pytest.mark.parametrize(
    "name, check", [(n, c) for n in sorted(PROTOCOLS) for c in CHECKS], ids=lambda x: getattr(x, "__name__", x)
)
def test_protocol_contract(name, check):
    check(PROTOCOLS[name])


def test_the_contract_can_fail():
    """A folder whose results.py lacks the results object is told so by name (the check is not vacuous)."""

    class Bare:
        def module_file(self, module):
            return PROJECT_ROOT / "harness" / "__init__.py"

        def _module(self, module):
            return object()

    with pytest.raises(AssertionError, match="results.py has no Results"):
        _results(Bare())
