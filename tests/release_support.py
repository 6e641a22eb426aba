"""Helpers of the tests that build a release in a writable copy of the shared pipeline project."""

from __future__ import annotations

import shutil
from pathlib import Path

from typer.testing import CliRunner

from medcalc_maintained.cli import app

runner = CliRunner()


def cli(root: Path, *args: str):
    """The CLI run in project ``root`` (MEDCALC_ROOT)."""
    return runner.invoke(app, list(args), env={"MEDCALC_ROOT": str(root)})


def built_copy(tmp_path_factory, pipeline_project: Path, version: str, name: str) -> tuple[Path, Path]:
    """(project root, release directory): a copy of ``pipeline_project`` with release ``version``
    built into ``build/v<version>``."""
    root = tmp_path_factory.mktemp(name) / "project"
    shutil.copytree(pipeline_project, root)
    out = root / "build" / f"v{version}"
    r = cli(root, "release", "build", "--out", str(out), "--version", version)
    assert r.exit_code == 0, r.output
    return root, out
