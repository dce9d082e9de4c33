"""The claims the tests are about: whatever ``claims/`` holds (never a list written down here), so adding a
claim file adds it to every test that goes over all claims (``tests/unit/test_claim_set.py`` checks this on a
scratch copy with a sixth claim)."""

from __future__ import annotations

from pathlib import Path

CLAIMS_DIR = Path(__file__).resolve().parents[1] / "claims"
PATHS = sorted(CLAIMS_DIR.glob("*.yaml"))
#: Each claim's number prefix ("002"), as the tests name claims.
PREFIXES = [p.name.split("_", 1)[0] for p in PATHS]

#: A claim whose protocol's card gives at least this cost (harness/protocols/*/__init__.py) takes minutes for one
#: whole run: its whole-claim checks are marked ``slow`` (left out of ``make test``, run by ``make test-all``,
#: as CI does). ``make test`` still runs its protocol end to end, at cheap parameters, in the corpus.
HEAVY_COST = 4


def _cost(path: Path) -> int:
    import yaml

    from harness.claimfiles.registry import PROTOCOLS

    try:
        card = PROTOCOLS.get(yaml.safe_load(path.read_text(encoding="utf-8")).get("protocol"))
    except (OSError, AttributeError, yaml.YAMLError):
        return 1
    return getattr(card, "cost", 1) if card is not None else 1


COST = {prefix: _cost(path) for prefix, path in zip(PREFIXES, PATHS)}


def heavy(prefix: str) -> bool:
    return COST.get(prefix, 1) >= HEAVY_COST


def slow_marks(prefix: str) -> list:
    """``[pytest.mark.slow]`` for a heavy claim's whole-claim checks, else nothing."""
    import pytest

    return [pytest.mark.slow] if heavy(prefix) else []


def params() -> list:
    """Every claim's prefix as a test parameter, heavy ones marked slow."""
    import pytest

    return [pytest.param(p, id=p, marks=slow_marks(p)) for p in PREFIXES]


def slow_selected(config) -> bool:
    """Whether this session runs the slow tests (``make test`` passes ``-m "not slow"``)."""
    return "not slow" not in (config.getoption("markexpr") or "")
