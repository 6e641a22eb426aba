"""Following upstream through the pipeline on the base version: upstream-diff, ledger-rebase and apply
are a no-op.

Following another version (2024-06: the diff, the rebase, apply kept on the base version and the MAJOR
release whose changelog lists upstream's changes apart from ours) is checked on what `dvc exp run -S
upstream.version=2024-06` builds, in tests/e2e/pipeline/test_pipeline.py (the stages ran there once, by
DVC, instead of a second time here in this process); the fast tests are in tests/upstream/test_upstream_follow.py."""

from __future__ import annotations

import time
from pathlib import Path

import pandas as pd

from medcalc_maintained.project import Project


def _link_upstream(root: Path, v1_test_csv: Path) -> None:
    """``data/upstream/medcalc-bench`` of the project: the real snapshots (read-only)."""
    target = root / "data" / "upstream" / "medcalc-bench"
    target.parent.mkdir(parents=True, exist_ok=True)
    if not target.exists():
        target.symlink_to(v1_test_csv.parent.parent)


def test_default_version_is_a_noop(project_root, v1_test_csv):
    from medcalc_maintained.stages import apply, ledger_rebase, upstream_diff

    _link_upstream(project_root, v1_test_csv)
    project = Project.load(project_root)
    before = (project_root / "data" / "maintained" / "instances.parquet").read_bytes()
    t0 = time.perf_counter()
    diffs = upstream_diff.run(project)
    s = diffs["test"].summary
    assert (s["matched"], s["matched_unchanged"], s["added"], s["removed"]) == (1047, 1047, 0, 0)
    summary = ledger_rebase.run(project)
    assert summary["noop"] and not (project.rebase_dir / "ledger").exists()
    assert time.perf_counter() - t0 < 30
    maintained, _ = apply.run(project)
    assert (project_root / "data" / "maintained" / "instances.parquet").read_bytes() == before or \
        maintained.equals(pd.read_parquet(project_root / "data" / "maintained" / "instances.parquet"))
