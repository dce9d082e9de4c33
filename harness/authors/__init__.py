"""The authors' arm: the pinned checkout, each request run confined (bubblewrap or seccomp and rlimits) and
cached, the before-and-after check of what their code wrote, and the adapters' shared launcher."""
