"""The authors' arm: the pinned checkout, each request run under bubblewrap with limits (``sandbox``) and its
verified answer cached, and the adapters' shared launcher."""
