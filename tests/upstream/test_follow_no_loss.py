"""Following an upstream version loses nothing silently (issue 27, item 2): quarantined rows are
counted with their reasons in the changelog and the card, the rebase has ingest's quarantine
ceiling, and a calculator of the previous release that the next one lacks blocks it, by name."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml

from medcalc_maintained.project import Project


def _csv(path: Path, rows) -> None:
    from medcalc_maintained.stages.ingest import UPSTREAM_COLUMNS

    path.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame([{"Row Number": rn, "Calculator ID": calc, "Calculator Name": f"Score {calc}", "Category": "lab",
                   "Output Type": "decimal", "Note ID": f"n{rn}", "Note Type": "Extracted", "Patient Note": note,
                   "Question": f"What is score {calc}?", "Relevant Entities": "{}", "Ground Truth Answer": label,
                   "Lower Limit": label, "Upper Limit": label, "Ground Truth Explanation": ""}
                  for rn, calc, note, label in rows], columns=UPSTREAM_COLUMNS).to_csv(path, index=False)


def _project(root: Path, max_quarantine: int) -> Project:
    """Base upstream ``a`` (calculators 2 and 3); ``b`` drops calculator 3 and has one row whose
    label does not parse."""
    from tests.support.paths import ROOT

    _csv(root / "up" / "a" / "test_data.csv", [(1, 2, "First note: sodium 140.", "1.5"),
                                               (2, 2, "Second note: potassium 5.1.", "2.5"),
                                               (3, 3, "Third note: heart rate 100.", "3")])
    _csv(root / "up" / "b" / "test_data.csv", [(1, 2, "First note: sodium 140.", "1.5"),
                                               (2, 2, "Second note: potassium 5.1.", "two and a half")])
    (root / "ledger").mkdir()
    (root / "params.yaml").write_text(yaml.safe_dump({
        "upstream": {"dir": "up", "version": "b", "base": "a", "splits": {"test": {"path": "up/a/test_data.csv"}}},
        "ingest": {"max_quarantine": max_quarantine}, "apply": {"ledger": ["ledger"]}}), encoding="utf-8")
    (root / "releases.yaml").write_text(yaml.safe_dump({"releases": [
        {"version": "1.0.0", "date": "2026-01-01", "kind": "major", "description": "base", "default_rows": "all"}]}),
        encoding="utf-8")
    shutil.copy(ROOT / "dataset_card.md", root / "dataset_card.md")
    shutil.copytree(ROOT / "expectations", root / "expectations")
    return Project.load(root)


def _base_stages(project: Project) -> None:
    from medcalc_maintained.stages import ingest, upstream_diff

    ingest.run(project)
    upstream_diff.run(project)


def test_rebase_has_the_quarantine_ceiling_of_ingest(tmp_path):
    from medcalc_maintained.core.errors import DataError
    from medcalc_maintained.stages import ledger_rebase

    project = _project(tmp_path, max_quarantine=0)
    _base_stages(project)
    with pytest.raises(DataError) as e:
        ledger_rebase.run(project)
    msg = str(e.value)
    assert "up/b/test_data.csv" in msg and "ingest.max_quarantine=0" in msg and "rows 2" in msg
    assert "two and a half" in msg   # the reason, with the cell
    assert not (project.rebase_dir / "instances.parquet").exists()
