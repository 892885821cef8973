"""The nexus pool runtime for Python.

A pool file registers its functions and hands control to nexus:

    import nexus

    def fighterDamage(ac):
        return 12

    nexus.serve({9: fighterDamage})

nexus starts the file, sends it calls over the nexus pool protocol
(docs/internals.md in the nexus repository) and returns the results to
its clients. This module speaks that protocol; it needs only the standard
library. nexus embeds it and puts it on PYTHONPATH.
"""

import sys

# The runtime directory is nexus's own cache, so the runtime's bytecode is
# cached there even where PYTHONDONTWRITEBYTECODE forbids it: compiling the
# runtime at every start would cost a pool milliseconds and megabytes.
_dont_write_bytecode = sys.dont_write_bytecode
sys.dont_write_bytecode = False
try:
    from ._runtime import (  # noqa: F401
        MAX_FRAME, PROTOCOL, AskError, Cancelled, Content, NexusCancelled, __all__, audio, cancelled, elicit,
        image, log, progress, resource, roots, sample, serve, sleep, text, within_call,
    )
finally:
    sys.dont_write_bytecode = _dont_write_bytecode
    del _dont_write_bytecode
