"""The claims the tests are about: whatever ``claims/`` holds (never a list written down here), so adding a
claim file adds it to every test that goes over all claims (``tests/unit/test_claim_set.py`` checks this on a
scratch copy with a sixth claim)."""

from __future__ import annotations

from pathlib import Path

CLAIMS_DIR = Path(__file__).resolve().parents[1] / "claims"
PATHS = sorted(CLAIMS_DIR.glob("*.yaml"))
#: Each claim's number prefix ("002"), as the tests name claims.
PREFIXES = [p.name.split("_", 1)[0] for p in PATHS]
