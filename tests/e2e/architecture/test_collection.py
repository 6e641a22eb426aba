"""The root conftest.py imports only the package modules that hold a doctest: collecting the package
still finds a doctest in every module with a ``>>>`` prompt line, and only there.

The end-to-end tests of this subject; the fast ones are in tests/architecture/test_collection.py."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from tests.support.paths import ROOT


# pytest in a new process
def test_doctest_collection_finds_every_module_with_a_doctest():
    package = ROOT / "src" / "medcalc_maintained"
    with_doctest = {p.relative_to(ROOT).as_posix() for p in package.rglob("*.py")
                    if re.search(r"^\s*>>> ", p.read_text(encoding="utf-8"), flags=re.M)}  # a prompt line
    assert len(with_doctest) >= 5
    env = {**os.environ, "MEDCALC_CHECKOUT_GUARD": "0"}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "--co", "-p", "no:xdist", "-p", "no:cacheprovider",
                           str(package)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    collected = {line.split("::")[0] for line in proc.stdout.splitlines() if "::" in line}
    # inspect_task.py is left out when the inspect extra is missing (and has no doctest today)
    assert collected == with_doctest


# pytest in a new process
def test_collection_puts_the_longest_listed_file_first():
    from tests.support.schedule import DURATIONS, file_seconds

    seconds = file_seconds(DURATIONS)
    files = ["tests/core/test_answers.py", "tests/e2e/pipeline/test_pipeline.py"]
    assert seconds["tests/e2e/pipeline/test_pipeline.py"] > seconds.get("tests/core/test_answers.py", 0.0)
    env = {**os.environ, "MEDCALC_CHECKOUT_GUARD": "0"}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "--co", "-p", "no:xdist", "-p", "no:cacheprovider",
                           *files], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    collected = [line.split("::")[0] for line in proc.stdout.splitlines() if "::" in line]
    assert collected[0] == "tests/e2e/pipeline/test_pipeline.py" and collected[-1] == "tests/core/test_answers.py"
    assert collected == sorted(collected, key=lambda f: f != "tests/e2e/pipeline/test_pipeline.py")
