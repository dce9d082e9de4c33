"""Resampling and analysis choices: the bootstrap and its one-sided decisions, the coverage studies that
measure their error on each claim's design, and the multiverse of analysis choices."""
