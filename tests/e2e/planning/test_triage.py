"""Triage: hand-worked scoring with weights written here, routing, metrics, the checked config,
the queue of the real v1.0 split, and the `triage` command in a project copy.

The end-to-end tests of this subject; the fast ones are in tests/planning/test_triage.py."""

from __future__ import annotations

import json

import pytest

from medcalc_maintained.core.errors import DataError
from medcalc_maintained.planning import triage as tr
from tests.planning import test_triage as fast_tests

# shared with the fast tests
evidence = fast_tests.evidence


def test_stage_run_writes_its_outputs_under_the_project(project_root, evidence):
    from medcalc_maintained.project import Project
    from medcalc_maintained.stages import triage as stage

    p = Project.load(project_root)
    relabel, flags = evidence
    for path, frame in ((p.relabel_labels, relabel), (p.audit_flags, flags)):
        path.parent.mkdir(parents=True, exist_ok=True)
        frame.to_parquet(path, index=False)
    run = stage.run(p, budget=7)
    assert run.paths == {"queue": p.triage_dir / "queue.csv", "summary": p.triage_dir / "summary.json",
                         "metrics": p.triage_dir / "metrics.json", "curve": p.triage_dir / "errors_found.csv", "plot": p.triage_dir / "errors_found.png"}
    q = tr.read_queue(p.triage_queue)
    from medcalc_maintained.planning.impact import IMPACT_COLUMNS

    assert q.columns.tolist() == tr.QUEUE_COLUMNS + IMPACT_COLUMNS + ["underived"] and len(q) == 1047 and int(q["in_budget"].sum()) == 7
    summary = json.loads((p.triage_dir / "summary.json").read_text())
    assert summary["budget"] == 7 and summary["ranking"] == "harm"
    assert summary["severity_found"]["adjudicated_rows"]["harm"]["reviews"] == 7
    headline = json.loads((p.triage_dir / "metrics.json").read_text())  # the DVC metric: the same values
    assert headline["routed"] == summary["routed"] == 7 and headline["rows"] == 1047
    assert headline["precision_at"] == {k: v["triage"] for k, v in summary["precision_at_k"].items()}
    p.audit_flags.unlink()
    with pytest.raises(DataError, match=r"audit flags not found \(run `dvc repro audit`"):
        stage.run(p)
