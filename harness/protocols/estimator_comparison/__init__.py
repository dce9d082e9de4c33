"""Protocol ``estimator_comparison``: the sigmoid boundary against baseline estimators, in and out of period.

The folder holds all of it (see :mod:`harness.protocols.card`); its report template is
``templates/estimator_comparison.md.j2``.
"""

from ..card import ProtocolCard

CARD = ProtocolCard(__name__, cost=4, figures=("estimators", "differences"))
