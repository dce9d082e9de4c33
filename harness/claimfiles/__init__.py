"""Claim files: the hardened YAML reader, the schema and its cross-checks, the quantity names a claim may
write, the budgets, the multiverse block, and the registry of protocols."""
