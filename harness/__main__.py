import os
import sys

from .core.numerics import missing_pins

# The kernels are chosen when the libraries load (glibc's before Python starts): start again with them pinned.
if env := missing_pins(os.environ):
    os.execve(sys.executable, [sys.executable, *sys.orig_argv[1:]], env)

from .cli import main

raise SystemExit(main())
