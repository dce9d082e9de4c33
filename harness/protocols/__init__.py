"""The protocols, one folder each (see :mod:`harness.protocols.card`); :mod:`harness.claimfiles.registry` lists them."""
