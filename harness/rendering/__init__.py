"""Rendering: a report, its figures, the index and a coverage study's files, from records alone."""
