"""Values as JSON holds them: the one conversion of the harness.

In the floor of the layers, so that the coverage study (:mod:`harness.stats.calibration`) and the records
(:mod:`harness.core.record`) write numbers alike. Standard library only.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["plain"]


def plain(obj: Any) -> Any:
    """JSON types only: numpy scalars and arrays become Python numbers and lists (anything with ``tolist``), dict
    keys strings, tuples lists; NaN and inf become None."""
    if isinstance(obj, dict):
        return {str(k): plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [plain(v) for v in obj]
    if hasattr(obj, "tolist") and not isinstance(obj, (str, bytes)):  # numpy arrays and scalars
        return plain(obj.tolist())
    if isinstance(obj, bool) or obj is None or isinstance(obj, (str, int)):
        return obj
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    return obj
