"""Where the test suite's time goes: seconds per test file, and the two workers' loads.

    .venv/bin/python benchmarks/suite_durations.py [--fast] [--write] [-- extra pytest args]

Runs the suite as ``make test`` does (``-n 2 --dist loadfile --no-loadscope-reorder``, or
``-m "not slow" --ignore=tests/e2e`` with ``--fast``, as ``make test-fast``) with a JUnit report, then prints each file's seconds (setup, call
and teardown of its tests, as pytest timed them), then each worker's load: its tests, the seconds it
was busy running them, when its first test began and its last one ended (seconds after pytest started,
from ``tests/support/timeline.py``), and how long it idled while the other still ran; then the wall time
and the seconds after the last test ended (the workers' exit and pytest's summary). ``--write`` stores
the per-file seconds in ``tests/durations.json`` (``seconds``, or ``fast_seconds`` with ``--fast``), the
order in which ``tests/support/schedule.py`` hands files to the workers (longest first). Numbers are
wall seconds on this machine: measure on a quiet one.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

from _common import ROOT


def per_file(junit: Path) -> dict[str, float]:
    """Seconds per test file from a JUnit report (``classname`` is the dotted module path)."""
    seconds: dict[str, float] = defaultdict(float)
    for case in ET.parse(junit).getroot().iter("testcase"):
        file = case.get("file") or case.get("classname", "").replace(".", "/") + ".py"
        seconds[file] += float(case.get("time") or 0.0)
    return dict(seconds)


def worker_loads(folder: Path, t0: float) -> tuple[list[dict], float]:
    """Each worker's load from the timeline files of ``folder`` (``tests/support/timeline.py``), and when
    the last test ended: times in seconds after ``t0`` (when pytest was started)."""
    loads = []
    for path in sorted(folder.glob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        runs = doc["tests"]
        if not runs:
            continue
        loads.append({"worker": doc["worker"], "tests": len(runs), "busy": sum(e - s for _, s, e in runs),
                      "first": min(s for _, s, _ in runs) - t0, "last": max(e for _, _, e in runs) - t0})
    end = max((w["last"] for w in loads), default=0.0)
    for w in loads:
        w["idle_at_end"] = end - w["last"]
    return loads, end


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fast", action="store_true", help="the fast tier only (make test-fast)")
    ap.add_argument("--write", action="store_true",
                    help="store the per-file seconds in tests/durations.json (the tier's own key)")
    ap.add_argument("pytest_args", nargs="*", help="more arguments for pytest (after --)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        junit = Path(tmp) / "junit.xml"
        timeline = Path(tmp) / "timeline"
        timeline.mkdir()
        cmd = [sys.executable, "-m", "pytest", "-q", "-n", "2", "--dist", "loadfile", "--no-loadscope-reorder",
               "-p", "tests.support.timeline", "-o", "junit_family=xunit1", f"--junitxml={junit}",
               *(["-m", "not slow", "--ignore=tests/e2e"] if args.fast else []), *args.pytest_args]
        t0 = time.time()
        proc = subprocess.run(cmd, cwd=ROOT, env={**os.environ, "MEDCALC_TIMELINE": str(timeline)})
        wall = time.time() - t0
        if not junit.is_file():
            raise SystemExit(f"pytest wrote no report (exit {proc.returncode})")
        seconds = per_file(junit)
        loads, end = worker_loads(timeline, t0)
    total = sum(seconds.values())
    print(f"\n{'file':<60} {'seconds':>8}")
    for file, s in sorted(seconds.items(), key=lambda kv: -kv[1])[:40]:
        print(f"{file:<60} {s:8.1f}")
    print(f"\n{'worker':<8} {'tests':>6} {'busy s':>8} {'first test':>11} {'last ended':>11} {'idle at end':>12}")
    for w in loads:
        print(f"{w['worker']:<8} {w['tests']:>6} {w['busy']:8.1f} {w['first']:11.1f} {w['last']:11.1f} "
              f"{w['idle_at_end']:12.1f}")
    print(f"{len(seconds)} files, {total:.1f} s of tests over 2 workers (ideal {total / 2:.1f} s), "
          f"wall {wall:.1f} s ({wall - end:.1f} s after the last test ended), pytest exit {proc.returncode}")
    if args.write and proc.returncode == 0:
        out = ROOT / "tests" / "durations.json"
        try:
            stored = json.loads(out.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            stored = {}
        stored["measured"] = "benchmarks/suite_durations.py (make test and make test-fast, 2 workers)"
        # test files only: the package's doctests take milliseconds and run after the listed files
        stored["fast_seconds" if args.fast else "seconds"] = {k: round(v, 1) for k, v in sorted(seconds.items())
                                                              if k.startswith("tests/")}
        out.write_text(json.dumps(stored, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {out.relative_to(ROOT)}")
    raise SystemExit(proc.returncode)


if __name__ == "__main__":
    main()
