"""Registered protocols. Importing this package registers every protocol."""

from . import boundary_at_budget, estimator_comparison, hyperparameters, shift_test, temporal_coverage  # noqa: F401 (registers)
from .base import PROTOCOLS, Context, Measurement, Protocol, ProtocolParams, finding, register

__all__ = ["PROTOCOLS", "Context", "Measurement", "Protocol", "ProtocolParams", "finding", "register"]
