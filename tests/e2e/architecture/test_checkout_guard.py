"""The checkout guard (tests/support/checkout_guard.py) fails a test that writes into the checkout: shown on a
throw-away git checkout in tmp whose tests write into it, run by a real pytest in a subprocess.

The end-to-end tests of this subject; the fast ones are in tests/architecture/test_checkout_guard.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import TESTS

SUPPORT = TESTS / "support"


POLLUTERS = '''
import pathlib
import pytest

ROOT = pathlib.Path(__file__).resolve().parent


def test_clean(tmp_path):
    (tmp_path / "out.txt").write_text("fine")


def test_writes_data():
    (ROOT / "data" / "made.parquet").write_bytes(b"x")


def test_edits_tracked_file():
    p = ROOT / "src" / "mod.py"
    p.write_text(p.read_text() + "# edited\\n")


def test_deletes_data():
    (ROOT / "data" / "keep.csv").unlink()


@pytest.fixture(scope="module")
def leaky():
    (ROOT / "build").mkdir(exist_ok=True)
    (ROOT / "build" / "fixture.txt").write_text("x")
    return 1


def test_uses_leaky_module_fixture(leaky):
    assert leaky == 1


def test_after_leaky_is_clean(tmp_path):
    (tmp_path / "y").write_text("y")
'''


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args], cwd=cwd, check=True,
                   capture_output=True)


def run_polluters(tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    """A checkout (git repo with src/, data/, a conftest loading the guard) whose tests write into it,
    run with pytest in a subprocess."""
    repo = tmp_path / "checkout"
    (repo / "src").mkdir(parents=True)
    (repo / "data").mkdir()
    (repo / "src" / "mod.py").write_text("X = 1\n")
    (repo / "data" / "keep.csv").write_text("a\n1\n")
    (repo / ".gitignore").write_text("data/\nbuild/\n__pycache__/\n.pytest_cache/\n")
    (repo / "conftest.py").write_text("pytest_plugins = ['checkout_guard']\n")
    (repo / "test_polluters.py").write_text(POLLUTERS)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "init")
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:xdist", "-p", "no:cacheprovider", "-q", "-rA",
                           "test_polluters.py"], cwd=repo, env={**os.environ, "PYTHONPATH": str(SUPPORT), **env},
                          capture_output=True, text=True, timeout=300, check=False)


@pytest.fixture
def polluted_run(tmp_path) -> str:
    """The report of the polluting tests run under the guard."""
    proc = run_polluters(tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    return proc.stdout


# pytest in a new process
def test_guard_fails_each_polluting_test_and_names_the_path(polluted_run):
    out = polluted_run
    assert "ERROR at teardown of test_writes_data" in out and "created data/made.parquet" in out
    assert "ERROR at teardown of test_edits_tracked_file" in out and "changed src/mod.py" in out
    assert "git status:  M src/mod.py" in out
    assert "ERROR at teardown of test_deletes_data" in out and "deleted data/keep.csv" in out
    # a module fixture's write is charged to the test it was set up for, and only to it
    assert "ERROR at teardown of test_uses_leaky_module_fixture" in out and "created build/fixture.txt" in out
    assert "PASSED test_polluters.py::test_clean" in out
    assert "PASSED test_polluters.py::test_after_leaky_is_clean" in out
    assert "4 errors" in out


# pytest in a new process
def test_guard_can_be_turned_off_for_a_run(tmp_path):
    proc = run_polluters(tmp_path, MEDCALC_CHECKOUT_GUARD="0")
    assert proc.returncode == 0 and "6 passed" in proc.stdout, proc.stdout + proc.stderr
