"""Protocol ``parametric_loss``: a parametric scaling law L(N, D) = E + A/N^α + B/D^β fitted to training runs, as
Hoffmann et al. (2022, Approach 3) fitted it and as a refit of it estimates it."""

from ..card import ProtocolCard

CARD = ProtocolCard(__name__, cost=4)
