"""Setup done once per pytest run, not once per xdist worker: the first worker to need it does it in the
run's shared temporary directory (the parent of every worker's basetemp) while holding a file lock, and
the other workers reuse what it left there; a run without xdist does it in its own basetemp."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Callable


def shared_dir(tmp_path_factory, name: str, build: Callable[[Path], None]) -> Path:
    """The directory ``build(path)`` fills (``path`` does not exist yet), built once per run. A build that
    another worker left half-done (no ``done`` marker) is started over."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        path = tmp_path_factory.mktemp(name) / "project"
        build(path)
        return path
    from filelock import FileLock

    shared = tmp_path_factory.getbasetemp().parent / f"shared-{name}"
    done = shared / "done"
    with FileLock(f"{shared}.lock"):
        if not done.exists():
            shutil.rmtree(shared, ignore_errors=True)
            shared.mkdir()
            build(shared / "project")
            done.write_text("")
    return shared / "project"
