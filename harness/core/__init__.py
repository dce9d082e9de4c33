"""The foundation: folders, typed errors, the typed building blocks of every schema, seals, pinned CPU
kernels, atomic writes, core and lock budgets, the run record, the data lock, the import
graph, and the three leaf rules read from every layer (quantity names, the target rule, the one-sided decision)."""
