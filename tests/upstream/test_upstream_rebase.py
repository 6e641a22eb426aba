"""Rebasing the ledger onto a new upstream: real 2024-06 <-> v1.0 and a made-up upstream."""

from __future__ import annotations

import pandas as pd

from medcalc_maintained.ledger.records import dump, load
from medcalc_maintained.stages.ingest import UPSTREAM_COLUMNS, ingest, read_upstream_csv
from medcalc_maintained.upstream.diff import diff_frames
from medcalc_maintained.upstream.rebase import rebase


def rec(id_, uid, old, new, decision="accepted", status="corrected"):
    return {"id": id_, "uid": uid, "split": "test", "old_value": old, "new_value": new, "decision": decision,
            "label_status": status, "error_type": "aggregation" if status != "confirmed" else None,
            "rationale": "hand-made for the rebase test", "evidence": ["test"], "source": "contributor",
            "reviewer": {"id": "tester", "role": "contributor"}, "blinded": False, "decided_at": "2026-01-01"}


def write_ledger(path, records):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dump(records, path, batch={"name": "t", "description": "test ledger"}), encoding="utf-8")
    return path


def run_rebase(old_csv, new_csv, ledger, out):
    old, new = read_upstream_csv(old_csv), read_upstream_csv(new_csv)
    inst = ingest([("test", new_csv)]).instances
    return rebase([ledger], diff_frames(old, new), old, new, inst, out, onto=str(new_csv))


def classes(result):
    return {o.record.id: (o.cls, o.new_uid) for o in result.outcomes}


def test_rebase_v1_0_onto_2024_06(old_test_csv, v1_test_csv, tmp_path):
    ledger = write_ledger(tmp_path / "l.yaml", [
        rec("R-carry", 299, "3.996", "4.5"), rec("R-up", 848, "12", "9"),
        rec("R-note", 181, "295.161", "300"), rec("R-orphan", 948, "53.093", "50"),
    ])
    res = run_rebase(v1_test_csv, old_test_csv, ledger, tmp_path / "out")
    assert classes(res) == {"R-carry": ("carried", 300), "R-up": ("upstreamed", 849), "R-note": ("conflict", 182),
                            "R-orphan": ("orphaned", None)}
    assert [r["uid"] for r in load([tmp_path / "out" / "ledger"])] == [300]


def _csv(path, rows):
    full = []
    for rn, calc, nid, note, label in rows:
        full.append({"Row Number": rn, "Calculator ID": calc, "Calculator Name": f"calc {calc}", "Category": "lab",
                     "Output Type": "decimal", "Note ID": nid, "Note Type": "Extracted", "Patient Note": note,
                     "Question": f"What is score {calc}?", "Relevant Entities": "{}", "Ground Truth Answer": label,
                     "Lower Limit": label, "Upper Limit": label, "Ground Truth Explanation": ""})
    pd.DataFrame(full, columns=UPSTREAM_COLUMNS).to_csv(path, index=False)
    return path


def test_synthetic_upstream_with_added_and_removed_rows(tmp_path):
    old = _csv(tmp_path / "old.csv", [(1, 2, "n1", "First note: sodium 140, glucose 90.", "1.5"),
                                      (2, 2, "n2", "Second note: a removed row about potassium 5.1.", "2.5"),
                                      (3, 3, "n3", "Third note: heart rate 100 and age 70.", "3")])
    new = _csv(tmp_path / "new.csv", [(1, 9, "n9", "An added row about a new calculator.", "7"),
                                      (2, 3, "n3", "Third note: heart rate 100 and age 70.", "4"),
                                      (3, 2, "n1", "First note: sodium 140, glucose 90.", "1.5")])
    ledger = write_ledger(tmp_path / "l.yaml", [rec("S-1", 1, "1.5", "1.6"), rec("S-2", 2, "2.5", "2.0"),
                                                rec("S-3", 3, "3", "4")])
    res = run_rebase(old, new, ledger, tmp_path / "out")
    assert classes(res) == {"S-1": ("carried", 3), "S-2": ("orphaned", None), "S-3": ("upstreamed", 2)}
    rm = diff_frames(read_upstream_csv(old), read_upstream_csv(new)).row_map
    assert rm.loc[rm["new_uid"] == 1, "status"].item() == "added"
    assert rm.loc[rm["old_uid"] == 2, "status"].item() == "removed"


def test_the_command_s_rebase_matches_the_two_files_and_carries_the_project_s_ledger(tmp_path):
    """``ledger rebase --onto`` (stages/ledger_rebase.py: rebase_files): the rows of the two files are
    matched here, and without ``--ledger`` the project's ledger is carried; each step is reported."""
    from medcalc_maintained.project import Project
    from medcalc_maintained.stages.ledger_rebase import rebase_files

    old = _csv(tmp_path / "old.csv", [(1, 2, "n1", "First note: sodium 140, glucose 90.", "1.5"),
                                      (2, 3, "n3", "Third note: heart rate 100 and age 70.", "3")])
    new = _csv(tmp_path / "new.csv", [(1, 3, "n3", "Third note: heart rate 100 and age 70.", "3"),
                                      (2, 2, "n1", "First note: sodium 140, glucose 90.", "1.5")])
    root = tmp_path / "p"
    write_ledger(root / "data" / "corrections" / "2026-01-t.yaml", [rec("S-1", 1, "1.5", "1.6")])
    (root / "params.yaml").write_text("apply:\n  ledger: [data/corrections]\n  out: data/maintained\n")
    steps: list[str] = []
    res = rebase_files(Project.load(root), old, new, tmp_path / "out", progress=steps.append)
    assert steps == ["matching rows", "rebasing and checking the rebased ledger"]
    assert classes(res) == {"S-1": ("carried", 2)}  # the sodium row is row 2 of the new file
    assert [(r.id, r["uid"]) for r in load([tmp_path / "out" / "ledger"])] == [("S-1", 2)]
