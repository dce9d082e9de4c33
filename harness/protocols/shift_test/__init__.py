"""Protocol ``shift_test``: a post-release shift of a later benchmark on an earlier one (a permutation test).

The folder holds all of it (see :mod:`harness.protocols.card`); its report template is
``templates/shift_test.md.j2``.
"""

from ..card import ProtocolCard

CARD = ProtocolCard(__name__, cost=1, figures=("null", "eps_sensitivity", "power"))
