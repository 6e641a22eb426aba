"""The root conftest.py imports only the package modules that hold a doctest: collecting the package
still finds a doctest in every module with a ``>>>`` prompt line, and only there."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from paths import ROOT


@pytest.mark.slow  # pytest in a new process
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


def test_longest_first_sorts_files_by_seconds_and_keeps_each_file_s_order():
    from schedule import longest_first

    ids = ["tests/a.py::t1", "tests/b.py::t1", "tests/a.py::t2", "tests/c.py::t1", "tests/b.py::t2"]
    order = [ids[i] for i in longest_first(ids, {"tests/b.py": 30.0, "tests/a.py": 5.0})]
    assert order == ["tests/b.py::t1", "tests/b.py::t2", "tests/a.py::t1", "tests/a.py::t2", "tests/c.py::t1"]


def test_file_seconds_reads_the_json_and_tolerates_a_missing_or_broken_one(tmp_path):
    from schedule import DURATIONS, file_seconds

    assert file_seconds(tmp_path / "absent.json") == {}
    (tmp_path / "bad.json").write_text("{not json", encoding="utf-8")
    assert file_seconds(tmp_path / "bad.json") == {}
    real = file_seconds(DURATIONS)
    assert real and all(k.startswith("tests/") and k.endswith(".py") for k in real)
    both = tmp_path / "both.json"
    both.write_text(json.dumps({"seconds": {"tests/a.py": 30.0}, "fast_seconds": {"tests/a.py": 2.5}}), encoding="utf-8")
    assert file_seconds(both) == {"tests/a.py": 30.0} and file_seconds(both, "fast_seconds") == {"tests/a.py": 2.5}
    assert file_seconds(tmp_path / "bad.json", "fast_seconds") == {} and file_seconds(both, "other") == {}


@pytest.mark.slow  # pytest in a new process
def test_collection_puts_the_longest_listed_file_first():
    from schedule import DURATIONS, file_seconds

    seconds = file_seconds(DURATIONS)
    files = ["tests/test_answers.py", "tests/test_pipeline.py"]
    assert seconds["tests/test_pipeline.py"] > seconds.get("tests/test_answers.py", 0.0)
    env = {**os.environ, "MEDCALC_CHECKOUT_GUARD": "0"}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "--co", "-p", "no:xdist", "-p", "no:cacheprovider",
                           *files], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    collected = [line.split("::")[0] for line in proc.stdout.splitlines() if "::" in line]
    assert collected[0] == "tests/test_pipeline.py" and collected[-1] == "tests/test_answers.py"
    assert collected == sorted(collected, key=lambda f: f != "tests/test_pipeline.py")
