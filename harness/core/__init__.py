"""The foundation: folders, typed errors, the typed building blocks of every schema, pinned CPU
kernels, atomic writes, the run record, the data lock, the build's lock (claims.lock), and the three leaf
rules read from every layer (quantity names, the target rule, the one-sided decision)."""
