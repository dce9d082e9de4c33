"""The error an adapter raises for a claim the authors' code cannot take (standard library only).

Its message starts with a worded reason, up to its first colon ("the claim's periods are not those of the
authors' code"), which the report prints; what follows (the values compared) goes to the report's folded
detail with the rest of the arm's reason (:func:`harness.verdicts.common_findings.authors_arm_finding`).
"""

from __future__ import annotations


class OutsideTheirCodeError(ValueError):
    """The claim asks for something the authors' code does not do (other periods, another compute unit)."""
