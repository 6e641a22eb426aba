"""New processes that start warm: the fork server of multiprocessing, started once per pytest process
with ``tests/forkserver_warm.py`` (the package's command line and tables) and the libraries the
commands use preloaded, so that a test's many short command runs cost their work rather than an
interpreter start-up and the imports each (about 1 s)."""

from __future__ import annotations

import multiprocessing as mp
import multiprocessing.forkserver
import os
from pathlib import Path

PRELOAD = ["forkserver_warm", "pandas", "pyarrow.parquet", "openpyxl"]


def context():
    """The fork-server context, its server running with :data:`PRELOAD` imported.

    Python 3.11's fork server ignores the sys.path it is handed and skips a preload module it cannot
    import without a word: it finds ``tests/forkserver_warm.py`` through PYTHONPATH, set here while
    the server starts; a child checks with :func:`assert_warm`."""
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(PRELOAD)
    saved = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).parent), *([saved] if saved else [])])
    try:
        multiprocessing.forkserver.ensure_running()
    finally:
        if saved is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = saved
    return ctx


def assert_warm() -> None:
    """In a child: the fork server did preload the package (else each run pays the imports)."""
    import sys

    assert "forkserver_warm" in sys.modules, "the fork server did not preload tests/forkserver_warm.py"
