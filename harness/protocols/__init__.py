"""Registered protocols. Importing this package registers every protocol."""

from .base import PROTOCOLS, Measurement, Protocol, ProtocolParams, register
from . import boundary, estimators, hyper, shift, temporal  # noqa: F401  (registers)

__all__ = ["PROTOCOLS", "Measurement", "Protocol", "ProtocolParams", "register"]
