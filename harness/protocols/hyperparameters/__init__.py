"""Protocol ``hyperparameters``: one-at-a-time sweeps of the estimator's tau, kappa and lambda against a reference.

The folder holds all of it (see :mod:`harness.protocols.card`); its report template is
``templates/hyperparameters.md.j2``.
"""

from ..card import ProtocolCard

CARD = ProtocolCard(__name__, cost=5, figures=("sweeps",))
