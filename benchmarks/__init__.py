"""Benchmarks: ``python -m benchmarks`` (``make bench``). Medians over repeats, not timed tests."""
