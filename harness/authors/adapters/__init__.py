"""Drivers shared by the protocols' adapters, and the launcher that runs an adapter in the authors' environment."""
