"""``devtools/dvc_lock.py``: dvc.lock checked as DVC reads it and restored from git after a killed
``dvc repro`` (``repair-lock``; the command on a clone of this checkout, with DVC itself, is
tests/e2e/pipeline/test_repair_lock.py)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from medcalc_maintained.core.errors import DataError
from medcalc_maintained.devtools.dvc_lock import LockRepair, repair
from tests.support.paths import ROOT

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
VALID = (ROOT / "dvc.lock").read_text(encoding="utf-8")  # the committed lock of this checkout


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args], cwd=root, check=True,
                   capture_output=True)


@pytest.fixture
def repo(tmp_path) -> Path:
    git(tmp_path, "init", "--quiet")
    (tmp_path / "dvc.lock").write_text(VALID, encoding="utf-8")
    git(tmp_path, "add", "dvc.lock")
    git(tmp_path, "commit", "--quiet", "-m", "lock")
    return tmp_path


def test_a_missing_or_valid_lock_is_left_as_it_is(tmp_path, repo):
    assert repair(tmp_path / "elsewhere") == LockRepair(tmp_path / "elsewhere" / "dvc.lock", False, None)
    edited = VALID + "# a local edit\n"
    (repo / "dvc.lock").write_text(edited, encoding="utf-8")
    assert repair(repo) == LockRepair(repo / "dvc.lock", True, None)
    assert (repo / "dvc.lock").read_text(encoding="utf-8") == edited


@pytest.mark.parametrize("broken, problem", [("", "is empty"), ("stages:\n  ingest: [1\n", "is not valid YAML"),
                                             ("schema: '2.0'\n", "has no 'stages' mapping")])
def test_a_broken_lock_is_replaced_by_the_committed_one(repo, broken, problem):
    (repo / "dvc.lock").write_text(broken, encoding="utf-8")
    done = repair(repo)
    assert done.exists and done.problem is not None and done.problem.startswith(problem), done
    assert (repo / "dvc.lock").read_text(encoding="utf-8") == VALID


def test_without_a_usable_committed_lock_nothing_is_changed(repo):
    (repo / "dvc.lock").write_text("", encoding="utf-8")
    git(repo, "commit", "--quiet", "-am", "an empty lock committed")
    with pytest.raises(DataError, match=r"dvc\.lock: is empty; is empty, and the committed one is not valid either"):
        repair(repo)
    git(repo, "rm", "--quiet", "--cached", "dvc.lock")
    git(repo, "commit", "--quiet", "-m", "no lock committed")
    with pytest.raises(DataError, match=r"dvc\.lock: is empty; cannot restore it from git"):
        repair(repo)
    assert (repo / "dvc.lock").read_text(encoding="utf-8") == ""
