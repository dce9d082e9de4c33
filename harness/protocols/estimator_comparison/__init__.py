"""Protocol ``estimator_comparison``: the sigmoid boundary against baseline estimators, in and out of period."""

from ..card import ProtocolCard

CARD = ProtocolCard(__name__, cost=4, figures=("estimators", "differences"))
