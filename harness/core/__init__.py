"""The foundation every layer stands on (docs/architecture.md, "Layers", lists its modules)."""
