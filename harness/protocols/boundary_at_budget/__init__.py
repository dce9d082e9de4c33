"""Protocol ``boundary_at_budget``: each benchmark's sigmoid boundary, fitted on all rows, read off at a budget.

The folder holds all of it (see :mod:`harness.protocols.card`); its report template is
``templates/boundary_at_budget.md.j2``.
"""

from ..card import ProtocolCard

CARD = ProtocolCard(__name__, cost=2, figures=("boundaries",))
