"""Protocol ``temporal_coverage``: how boundaries fitted on one upload period cover the models of the next.

The folder holds all of it (see :mod:`harness.protocols.card`); its report template is
``templates/temporal_coverage.md.j2``.
"""

from ..card import ProtocolCard

CARD = ProtocolCard(__name__, cost=3, figures=("coverage_by_split",))
