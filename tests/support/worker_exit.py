"""An xdist worker leaves without tearing its interpreter down, once every exit handler has run.

By the time a worker process exits, it has sent its last report (xdist's ``workerfinished``, the
test results and the session's exit status travel over the channel, never as the process's exit
code). What remains is CPython's finalization: freeing the objects the run left behind, about a
million in each worker of ``make test-fast`` (700-850 MB), which took 2-3 s per worker while the
controller waited on it (``NodeManager.teardown_nodes``), at the end of every run.

This plugin (loaded by the root ``conftest.py``; it does nothing outside a worker) registers an exit
handler when pytest configures the worker. Handlers run last-registered first, so the ones
registered after it (pytest's clean-up of its temporary directories, multiprocessing's of its pools,
``weakref.finalize`` callbacks, anything a test's libraries registered) have all run when it shuts
logging down (whose handler was registered before it, when pytest started), flushes the standard
streams and ends the process with ``os._exit(0)``. The one other handler registered before it,
execnet's, ends gateways a worker never opens.
"""

from __future__ import annotations

import atexit
import logging
import os
import sys


def _leave() -> None:
    try:
        logging.shutdown()
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    finally:
        os._exit(0)


def pytest_configure(config) -> None:
    if hasattr(config, "workerinput"):  # an xdist worker (the controller and a run without xdist keep the default)
        atexit.register(_leave)
