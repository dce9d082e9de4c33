"""Judging targets and controls on each arm, and the verdict rule."""
