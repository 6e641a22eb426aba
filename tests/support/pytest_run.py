"""A small suite run by pytest in a new process: how the tests of the suite's own plugins
(``tests/support/worker_exit.py``, ``timeline.py``, ``threads.py``) watch a plugin at work in a real run.

:func:`write_suite` writes two test files (one for each xdist worker under ``--dist loadfile``) and a
``pytest.ini`` of its own, so the project's configuration and conftest plugins stay out of the run;
:func:`run_pytest` runs pytest there with the caller's arguments (the plugin under test loaded with
``-p`` by name, or not at all for a control run) in an environment cleared of the outer run's xdist and
pytest variables.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Iterable

from tests.support.paths import ROOT

XDIST = ["-n", "2", "--dist", "loadfile"]
OUTER = ("PYTEST_XDIST_WORKER", "PYTEST_ADDOPTS")  # the outer run's, never the new one's


def write_suite(folder: Path, source: str) -> Path:
    """``folder`` with ``test_s1.py`` and ``test_s2.py`` (``source`` with ``{n}`` as 1 and 2) and a bare ``pytest.ini``."""
    folder.mkdir(parents=True, exist_ok=True)
    for n in (1, 2):
        (folder / f"test_s{n}.py").write_text(source.replace("{n}", str(n)), encoding="utf-8")
    (folder / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    return folder


def run_pytest(folder: Path, args: list[str], env: dict[str, str] | None = None,
               drop: Iterable[str] = ()) -> subprocess.CompletedProcess:
    """pytest in ``folder`` with ``args``, the package and the tests importable, the checkout guard off;
    ``env`` added to the environment, the variables of ``drop`` (and the outer run's) removed from it."""
    gone = {*OUTER, *drop}
    child = {k: v for k, v in os.environ.items() if k not in gone}
    child.update(PYTHONPATH=str(ROOT), MEDCALC_CHECKOUT_GUARD="0", **(env or {}))
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args], cwd=folder, env=child,
                          capture_output=True, text=True, timeout=300, check=False)
