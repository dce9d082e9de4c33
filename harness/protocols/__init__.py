"""Registered protocols. Importing this package registers every protocol."""

from .base import PROTOCOLS, Context, Measurement, Protocol, ProtocolParams, finding, register
from . import (boundary_at_budget, estimator_comparison, hyperparameters, shift_test,  # noqa: F401 (registers)
               temporal_coverage)

__all__ = ["PROTOCOLS", "Context", "Measurement", "Protocol", "ProtocolParams", "finding", "register"]
