"""End to end: the DVC pipeline in a fresh copy of the project, reproduced twice.

The copy holds the files git tracks plus untracked, non-ignored ones (so it also runs before a
commit), with the DVC remote pointed at ../shared/dvc-store by absolute path.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, SHARED

pytestmark = pytest.mark.slow


def _project_files() -> list[str]:
    out = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, capture_output=True, check=True,
    ).stdout.decode()
    return [f for f in out.split("\0") if f and (ROOT / f).is_file()]


def dvc(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
               DVC_NO_ANALYTICS="1", MEDCALC_ROOT=str(cwd))
    return subprocess.run([str(Path(sys.executable).parent / "dvc"), *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=3000)


@pytest.fixture(scope="module")
def fresh_project(tmp_path_factory) -> Path:
    store = SHARED / "dvc-store"
    if not store.is_dir():
        pytest.skip("../shared/dvc-store is not available")
    dst = tmp_path_factory.mktemp("clone") / "main"
    for rel in _project_files():
        target = dst / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, target)
    subprocess.run(["git", "init", "-q"], cwd=dst, check=True)
    r = dvc(dst, "remote", "modify", "--local", "shared", "url", str(store))
    assert r.returncode == 0, r.stderr
    r = dvc(dst, "pull", "-q", "data/upstream.dvc")
    assert r.returncode == 0, r.stdout + r.stderr
    r = dvc(dst, "repro")
    assert r.returncode == 0, r.stdout + r.stderr
    return dst


def test_repro_builds_outputs_and_is_then_up_to_date(fresh_project):
    assert (fresh_project / "data" / "interim" / "instances.parquet").is_file()
    status = dvc(fresh_project, "status")
    assert status.returncode == 0
    assert "up to date" in status.stdout, status.stdout
    again = dvc(fresh_project, "repro")
    assert again.returncode == 0
    assert "Running stage" not in again.stdout, again.stdout


def test_changed_param_reruns_its_stage(fresh_project):
    params = fresh_project / "params.yaml"
    original = params.read_text()
    try:
        params.write_text(original.replace("max_quarantine: 0", "max_quarantine: 1"))
        status = dvc(fresh_project, "status")
        assert "ingest" in status.stdout
        r = dvc(fresh_project, "repro")
        assert r.returncode == 0, r.stderr
        assert "Running stage 'ingest'" in r.stdout
    finally:
        params.write_text(original)
        dvc(fresh_project, "repro")
