"""A killed `dvc repro` can leave an empty or half-written dvc.lock, after which every `dvc repro`
fails: `medcalc-maintained repair-lock` (run by `make repro` before `dvc repro`) finds it and
restores the committed one from git, on a clone of this checkout."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import ROOT

DVC = Path(sys.executable).with_name("dvc")
# dvc and the CLI in new processes
pytestmark = pytest.mark.skipif(shutil.which("git") is None or not DVC.exists(), reason="needs git and dvc")


@pytest.fixture
def clone(tmp_path) -> Path:
    dst = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", str(ROOT), str(dst)], check=True, timeout=300)
    return dst


def run(root: Path, *cmd: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "MEDCALC_ROOT": str(root), "DVC_NO_ANALYTICS": "1"}
    return subprocess.run(list(cmd), cwd=root, env=env, capture_output=True, text=True, timeout=300)


def repair(root: Path) -> subprocess.CompletedProcess:
    return run(root, sys.executable, "-m", "medcalc_maintained.cli", "repair-lock")


def cut_in_hash(committed: bytes) -> bytes:
    """The lock cut inside its first ``hash: md5`` line, after ``hash:``: valid YAML that DVC's
    schema refuses (issue 37: repair-lock said it was valid)."""
    return committed[:committed.index(b"hash: md5") + len(b"hash:")]


@pytest.mark.parametrize("broken", [b"", b"schema: '2.0'\nstages:\n  ingest:\n    cmd: [medcalc-maintained ing",
                                    cut_in_hash], ids=["empty", "truncated", "cut-in-hash"])
def test_a_broken_lock_is_restored_from_git_and_dvc_works_again(clone, broken):
    lock = clone / "dvc.lock"
    committed = lock.read_bytes()
    broken = broken(committed) if callable(broken) else broken
    assert run(clone, str(DVC), "status").returncode == 0
    lock.write_bytes(broken)
    before = run(clone, str(DVC), "status")
    assert before.returncode != 0  # what a killed `dvc repro` leaves: dvc itself is stuck
    r = repair(clone)
    out = " ".join((r.stdout + r.stderr).split())
    assert r.returncode == 0, out
    assert "dvc.lock" in out and "restored from git" in out, out
    assert lock.read_bytes() == committed
    after = run(clone, str(DVC), "status")
    assert after.returncode == 0, after.stdout + after.stderr


def test_a_valid_lock_is_left_alone(clone):
    lock = clone / "dvc.lock"
    edited = lock.read_text() + "# a local edit\n"
    lock.write_text(edited)
    r = repair(clone)
    assert r.returncode == 0 and "dvc.lock is valid" in " ".join(r.stdout.split()), r.stdout + r.stderr
    assert lock.read_text() == edited


def test_without_a_committed_lock_it_says_what_to_do(clone):
    subprocess.run(["git", "rm", "--quiet", "--cached", "dvc.lock"], cwd=clone, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "--quiet", "-m", "x"],
                   cwd=clone, check=True)
    (clone / "dvc.lock").write_bytes(b"")
    r = repair(clone)
    out = " ".join((r.stdout + r.stderr).split())
    assert r.returncode == 1 and "dvc.lock" in out and "Traceback" not in out, out
    assert (clone / "dvc.lock").read_bytes() == b""
