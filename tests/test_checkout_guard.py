"""The checkout guard (tests/checkout_guard.py) fails a test that writes into the checkout: shown on a
throw-away git checkout in tmp whose tests write into it, run by a real pytest in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from checkout_guard import CheckoutGuard, walk

HERE = Path(__file__).resolve().parent

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
                           "test_polluters.py"], cwd=repo, env={**os.environ, "PYTHONPATH": str(HERE), **env},
                          capture_output=True, text=True, timeout=300, check=False)


@pytest.fixture
def polluted_run(tmp_path) -> str:
    """The report of the polluting tests run under the guard."""
    proc = run_polluters(tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    return proc.stdout


@pytest.mark.slow  # pytest in a new process
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


@pytest.mark.slow  # pytest in a new process
def test_guard_can_be_turned_off_for_a_run(tmp_path):
    proc = run_polluters(tmp_path, MEDCALC_CHECKOUT_GUARD="0")
    assert proc.returncode == 0 and "6 passed" in proc.stdout, proc.stdout + proc.stderr


def test_guard_ignores_caches_and_dvc_scratch(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("a")
    guard = CheckoutGuard(tmp_path)
    for d in ("__pycache__", ".pytest_cache", os.path.join(".dvc", "tmp"), ".git"):
        (tmp_path / d).mkdir(parents=True, exist_ok=True)
        (tmp_path / d / "x").write_text("x")
    assert guard.check() == []
    (tmp_path / ".dvc" / "config").write_text("x")
    assert guard.check() == ["created .dvc/config"]
    assert guard.check() == []  # the new state is the reference


def test_guard_walk_covers_the_project_and_skips_virtualenvs(tmp_path):
    """The walk sees data/ and src/ of this checkout but no virtualenv (``.venv``, ``.venv-helm``):
    thousands of installed files would make the per-test walk slow (benchmarks/checkout_guard.py
    prints its cost)."""
    files = walk(str(HERE.parent))
    assert any(p.startswith("data" + os.sep) for p in files) and any(p.startswith("src" + os.sep) for p in files)
    assert not any(p.split(os.sep)[0].startswith(".venv") for p in files)
    for d in (".venv", ".venv-helm"):
        (tmp_path / d / "lib").mkdir(parents=True)
        (tmp_path / d / "lib" / "x.py").write_text("x")
    (tmp_path / "venvish").mkdir()
    (tmp_path / "venvish" / "y").write_text("y")
    assert sorted(walk(str(tmp_path))) == [os.path.join("venvish", "y")]
