"""Protocol ``hyperparameters``: one-at-a-time sweeps of the estimator's tau, kappa and lambda against a reference."""

from ..card import ProtocolCard

CARD = ProtocolCard(__name__, cost=5, figures=("sweeps",))
