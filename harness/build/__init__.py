"""The build: one claim's run (``runner``), what is stale and why (``plan``, reading the lock of
:mod:`harness.core.claimslock`), and ``make claims`` itself (``make``)."""
