"""New processes that start warm: the fork server of multiprocessing, started once per pytest process
with ``tests/support/forkserver_warm.py`` (the package's command line and tables) and the libraries the
commands use preloaded, so that a test's many short command runs cost their work rather than an
interpreter start-up and the imports each (about 1 s)."""

from __future__ import annotations

import multiprocessing as mp
import multiprocessing.forkserver
import os
from pathlib import Path

# tests.support.forkserver_warm: the package; tests.support.forking: this module, whose functions the
# children run (a child that imports a test module instead imports pytest and the test's helpers,
# about 50 ms each time)
PRELOAD = ["tests.support.forkserver_warm", "tests.support.forking", "pandas", "pyarrow.parquet", "openpyxl"]


def context():
    """The fork-server context, its server running with :data:`PRELOAD` imported.

    Python 3.11's fork server ignores the sys.path it is handed and skips a preload module it cannot
    import without a word: it finds ``tests/support/forkserver_warm.py`` through PYTHONPATH (the
    checkout root), set here while the server starts; a child checks with :func:`enter`."""
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(PRELOAD)
    saved = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).resolve().parents[2]), *([saved] if saved else [])])
    try:
        multiprocessing.forkserver.ensure_running()
    finally:
        if saved is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = saved
    return ctx


def enter(root: str) -> None:
    """In a child: check that the fork server did preload the package (else each run pays the
    imports), then work in project ``root`` as a command started there would (MEDCALC_ROOT, cwd)."""
    import sys

    assert "tests.support.forkserver_warm" in sys.modules, \
        "the fork server did not preload tests/support/forkserver_warm.py"
    os.environ["MEDCALC_ROOT"] = root
    os.chdir(root)


def cli_in_process(root: str, args: list[str]) -> tuple[int, str]:
    """In a child: the command line run in project ``root`` as ``python -m medcalc_maintained.cli``
    would run it; (exit code, its output)."""
    import contextlib
    import io

    from medcalc_maintained.cli import app

    enter(root)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
        try:
            code = app(args, prog_name="medcalc-maintained", standalone_mode=False)  # click returns the Exit code
            code = code if isinstance(code, int) else 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        except Exception as exc:  # click raises Exit/ClickException objects in non-standalone mode
            code = getattr(exc, "exit_code", None)
            code = 1 if code is None else code
            buf.write(f"{type(exc).__name__}: {exc}")
    return code, buf.getvalue()
