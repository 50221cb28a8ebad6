"""The ``pti-trace`` console script: runs the pti-trace binary of this package, with this
package's libpti.so and collector (``PTI_TRACE_LIB_DIR``)."""
from __future__ import annotations

import os
import sys


def main() -> None:
    """Replaces this process with ``pti-trace`` and the command line's arguments."""
    here = os.path.dirname(os.path.abspath(__file__))
    binary = os.path.join(here, "bin", "pti-trace")
    env = dict(os.environ, PTI_TRACE_LIB_DIR=here)
    try:
        os.execve(binary, [binary, *sys.argv[1:]], env)
    except OSError as e:
        sys.exit(f"pti-trace: cannot run {binary}: {e}")
