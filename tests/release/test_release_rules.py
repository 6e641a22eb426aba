"""Release rules: the declared kind is the derived bump (build and publish), releases are
published in order, publishing writes branch `main` whatever the target's HEAD says."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from medcalc_maintained import ledger
from medcalc_maintained.cli import app
from tests.support.paths import ROOT
from tests.support.release_support import entry, make_project, rec, write_releases

runner = CliRunner()


def invoke(root: Path, *args: str):
    return runner.invoke(app, list(args), env={"MEDCALC_ROOT": str(root)})


@pytest.fixture
def project(tmp_path, real_instances) -> Path:
    """1.0.0 (all rows, no record) and 2.0.0 (uid 1 corrected 25.238 -> 30)."""
    root = make_project(tmp_path / "p", real_instances, [rec()])
    shutil.copytree(ROOT / "expectations", root / "expectations")  # publishing validates the release
    plan(root)
    return root


OPEN = {"max_unverified_rate": {"max": 1.0}}  # a synthetic ledger verifies one or two rows only


def plan(root: Path, *extra: dict) -> None:
    write_releases(root / "releases.yaml", [entry("1.0.0", "major", default_rows="all", gates=OPEN),
                                            entry("2.0.0", "major", gates=OPEN), *extra])


def add_next(root: Path, version: str, kind: str) -> None:
    """A release ``version`` declared ``kind`` with one accepted record: uid 2, 38 -> 40."""
    (root / "data" / "corrections" / "next.yaml").write_text(ledger.dump(
        [rec(id="T-0002", uid=2, release=version, old_value="38", new_value="40", rationale="Two points missed.")],
        root), encoding="utf-8")
    plan(root, entry(version, kind, default_rows="verified", gates=OPEN))


def test_patch_that_changes_a_label_is_refused_by_build(project, tmp_path):
    add_next(project, "2.0.1", "patch")
    out = tmp_path / "out"
    r = invoke(project, "release", "build", "--out", str(out))
    text = " ".join(r.output.split())
    assert r.exit_code == 2, r.output
    assert "release 2.0.1 is declared patch but changes the label of test uid 2 (38 -> 40)" in text
    assert "a minor change since 2.0.0" in text and "releases.yaml" in text and "'kind'" in text
    assert not out.exists()
