"""Protocol ``shift_test``: a post-release shift of a later benchmark on an earlier one (a permutation test)."""

from ..card import ProtocolCard

CARD = ProtocolCard(__name__, cost=1, figures=("null", "eps_sensitivity", "power"))
