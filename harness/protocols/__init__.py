"""Registered protocols. Importing this package registers every protocol."""

from .base import PROTOCOLS, Context, Measurement, Protocol, ProtocolParams, finding, register
from . import boundary_at_budget, estimator_comparison, hyperparameters, temporal_coverage  # noqa: F401  (registers)

__all__ = ["PROTOCOLS", "Context", "Measurement", "Protocol", "ProtocolParams", "finding", "register"]
