"""The build: one claim's run (``runner``), what is stale and why (``plan``, ``keys``), one pool for every
claim and study of a build (``schedule``), and ``make claims`` itself (``make``)."""
