"""The build: one claim's run (``runner``), and ``make claims`` itself (``make``)."""
