"""Judging: targets and controls by the one target rule, the arms compared, the verdict rule, the findings every
report states, and the checks of every finding's state against the record's numbers."""
