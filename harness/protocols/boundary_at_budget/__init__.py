"""Protocol ``boundary_at_budget``: each benchmark's sigmoid boundary, fitted on all rows, read off at a budget."""

from ..card import ProtocolCard

CARD = ProtocolCard(__name__, cost=2, figures=("boundaries",))
