"""tests/support/timeline.py: with ``MEDCALC_TIMELINE`` set, each xdist worker writes when each of its
tests ran (what ``benchmarks/suite_durations.py`` prints as the workers' loads); the controller writes
nothing, and without the variable no worker does.

pytest with two xdist workers in a new process, over a small suite written to the test's folder, with
the plugin loaded by name as the benchmark loads it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.support.pytest_run import XDIST, run_pytest, write_suite

SUITE = '''
import time


def test_{n}_a():
    time.sleep(0.2)


def test_{n}_b():
    pass
'''


def run(suite: Path, timeline: Path | None) -> subprocess.CompletedProcess:
    return run_pytest(suite, ["-q", *XDIST, "-p", "tests.support.timeline"],
                      {"MEDCALC_TIMELINE": str(timeline)} if timeline is not None else None, drop=["MEDCALC_TIMELINE"])


# pytest in a new process
def test_each_worker_records_its_tests_and_the_controller_nothing(tmp_path):
    suite = write_suite(tmp_path / "suite", SUITE)
    timeline = tmp_path / "timeline"
    timeline.mkdir()
    proc = run(suite, timeline)
    assert proc.returncode == 0 and "4 passed" in proc.stdout, proc.stdout + proc.stderr
    assert sorted(p.name for p in timeline.iterdir()) == ["gw0.json", "gw1.json"]
    seen = []
    for name in ("gw0", "gw1"):
        doc = json.loads((timeline / f"{name}.json").read_text(encoding="utf-8"))
        assert doc["worker"] == name
        tests = {test: (start, end) for test, start, end in doc["tests"]}
        assert len(tests) == 2 and all(start <= end for start, end in tests.values())
        slept = [end - start for test, (start, end) in tests.items() if test.endswith("_a")]
        assert len(slept) == 1 and slept[0] >= 0.2  # the test's own time is inside its span
        seen += tests
    assert sorted(seen) == [f"test_s{n}.py::test_{n}_{x}" for n in (1, 2) for x in "ab"]
    # without the variable: no file written, neither the old ones again nor any where pytest runs
    before = {p.name: p.stat().st_mtime_ns for p in timeline.iterdir()}
    assert run(suite, None).returncode == 0
    assert {p.name: p.stat().st_mtime_ns for p in timeline.iterdir()} == before
    assert sorted(p.name for p in suite.rglob("*.json")) == []
