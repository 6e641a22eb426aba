"""When each test ran, per xdist worker: the plugin ``benchmarks/suite_durations.py`` loads
(``-p tests.support.timeline``) to show how busy each worker was until the end of the run.

With ``MEDCALC_TIMELINE`` naming a folder, every process of the run that runs tests (each worker, or the
one process without xdist) writes ``<worker>.json`` there when pytest unconfigures: its name and, per test, the wall
clock (``time.time()``) at which the test's setup began and its teardown ended. Without the variable the
plugin records nothing.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

_RUNS: list[tuple[str, float, float]] = []  # (test id, start, end)
_STARTED: dict[str, float] = {}


def pytest_runtest_logstart(nodeid: str, location) -> None:
    _STARTED[nodeid] = time.time()


def pytest_runtest_logfinish(nodeid: str, location) -> None:
    start = _STARTED.pop(nodeid, None)
    if start is not None:
        _RUNS.append((nodeid, start, time.time()))


def pytest_unconfigure(config) -> None:
    folder = os.environ.get("MEDCALC_TIMELINE")
    if not folder:
        return
    worker = getattr(config, "workerinput", {}).get("workerid", "main")
    if worker == "main" and config.pluginmanager.getplugin("dsession") is not None:
        return  # the xdist controller: it hears of the workers' tests but runs none
    Path(folder, f"{worker}.json").write_text(json.dumps({"worker": worker, "tests": _RUNS}), encoding="utf-8")
