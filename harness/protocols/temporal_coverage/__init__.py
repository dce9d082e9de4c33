"""Protocol ``temporal_coverage``: how boundaries fitted on one upload period cover the models of the next."""

from ..card import ProtocolCard

CARD = ProtocolCard(__name__, cost=3, figures=("coverage_by_split",))
