"""Rebasing the ledger onto a new upstream: real 2024-06 <-> v1.0 and a made-up upstream."""

from __future__ import annotations

import pandas as pd
import pytest
from typer.testing import CliRunner

from medcalc_maintained.core.io import DataError
from medcalc_maintained.ledger.apply import build
from medcalc_maintained.ledger.records import LedgerError, dump, load
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


@pytest.mark.slow
def test_rebase_2024_06_onto_v1_0(old_test_csv, v1_test_csv, tmp_path):
    # rows read by hand from the two CSVs (see test_upstream_diff.test_real_spot_checks)
    ledger = write_ledger(tmp_path / "ledger" / "2026-01-test.yaml", [
        rec("T-carry", 300, "3.996", "4.5"),                      # same row 299 in v1.0, label unchanged
        rec("T-deferred", 114, "10.6", "11.5", decision="deferred"),  # same row 113, label unchanged
        rec("T-up", 849, "9", "12"),                              # v1.0 row 848 now says 12
        rec("T-third", 850, "12", "14"),                          # v1.0 row 849 says 16
        rec("T-note", 182, "487.62", "500"),                      # QTc note edited upstream (row 181)
        rec("T-orphan", 949, "27.013", "30"),                     # steroid row regenerated: removed
    ])
    before = ledger.read_bytes()
    res = run_rebase(old_test_csv, v1_test_csv, ledger, tmp_path / "out")
    assert classes(res) == {"T-carry": ("carried", 299), "T-deferred": ("carried", 113), "T-up": ("upstreamed", 848),
                            "T-third": ("conflict", 849), "T-note": ("conflict", 181), "T-orphan": ("orphaned", None)}
    assert ledger.read_bytes() == before  # never in place
    assert res.summary == {"onto": str(v1_test_csv), "records": 6, "carried": 2, "upstreamed": 1, "conflict": 2,
                           "orphaned": 1, "applies": True}
    out = tmp_path / "out"
    carried = load([out / "ledger"])
    assert [(r.id, r["uid"]) for r in carried] == [("T-carry", 299), ("T-deferred", 113)]
    original = {r.id: r.data for r in load([ledger])}
    for r in carried:  # only uid changed
        assert {k: v for k, v in r.data.items() if k != "uid"} == {k: v for k, v in original[r.id].items() if k != "uid"}
    maintained = build(ingest([("test", v1_test_csv)]).instances, [out / "ledger"])
    assert maintained.loc[maintained["uid"] == 299, "Ground Truth Answer"].item() == "4.5"
    held = {cls: [r.id for r in load([out / "held" / f"{cls}.yaml"])] for cls in ("upstreamed", "conflict", "orphaned")}
    assert held == {"upstreamed": ["T-up"], "conflict": ["T-third", "T-note"], "orphaned": ["T-orphan"]}
    assert {r.id: r.data for r in load([out / "held" / "conflict.yaml"])}["T-third"] == original["T-third"]
    report = pd.read_csv(out / "rebase_report.csv", dtype=str)
    third = report[report["id"] == "T-third"].iloc[0]
    assert (third["old_upstream_label"], third["new_upstream_label"], third["new_value"]) == ("12", "16", "14")
    assert "note" in report.loc[report["id"] == "T-note", "reason"].item()


def test_rebase_v1_0_onto_2024_06(old_test_csv, v1_test_csv, tmp_path):
    ledger = write_ledger(tmp_path / "l.yaml", [
        rec("R-carry", 299, "3.996", "4.5"), rec("R-up", 848, "12", "9"),
        rec("R-note", 181, "295.161", "300"), rec("R-orphan", 948, "53.093", "50"),
    ])
    res = run_rebase(v1_test_csv, old_test_csv, ledger, tmp_path / "out")
    assert classes(res) == {"R-carry": ("carried", 300), "R-up": ("upstreamed", 849), "R-note": ("conflict", 182),
                            "R-orphan": ("orphaned", None)}
    assert [r["uid"] for r in load([tmp_path / "out" / "ledger"])] == [300]


@pytest.mark.slow
def test_rebase_refuses_and_writes_nothing(old_test_csv, v1_test_csv, tmp_path):
    # old_value does not match the row's label: carried, but the rebased ledger cannot apply
    ledger = write_ledger(tmp_path / "l.yaml", [rec("B-1", 300, "9.9", "4.5")])
    with pytest.raises(LedgerError) as exc:
        run_rebase(old_test_csv, v1_test_csv, ledger, tmp_path / "out")
    assert "old_value" in str(exc.value) and str(tmp_path / "out") in str(exc.value)
    assert not (tmp_path / "out").exists()
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    with pytest.raises(DataError, match="not empty"):
        run_rebase(old_test_csv, v1_test_csv, write_ledger(tmp_path / "m.yaml", [rec("B-2", 300, "3.996", "4.5")]),
                   tmp_path / "full")


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


@pytest.mark.slow
def test_cli_diff_and_rebase(old_test_csv, v1_test_csv, tmp_path):
    from medcalc_maintained.cli import app

    runner = CliRunner()
    r = runner.invoke(app, ["upstream", "diff", str(old_test_csv), str(v1_test_csv), "--out", str(tmp_path / "d")])
    assert r.exit_code == 0, r.output
    assert "matched unchanged" in r.output and (tmp_path / "d" / "row_map.csv").is_file()
    r = runner.invoke(app, ["upstream", "diff", str(tmp_path / "missing.csv"), str(v1_test_csv), "--out", str(tmp_path / "e")])
    assert r.exit_code == 2 and not (tmp_path / "e").exists()
    ledger = write_ledger(tmp_path / "l.yaml", [rec("C-1", 300, "3.996", "4.5"), rec("C-2", 949, "27.013", "30")])
    r = runner.invoke(app, ["ledger", "rebase", "--onto", str(v1_test_csv), "--from", str(old_test_csv),
                            "--ledger", str(ledger), "--out", str(tmp_path / "rb")])
    assert r.exit_code == 0, r.output
    assert "carried 1" in r.output and "orphaned 1" in r.output
    bad = write_ledger(tmp_path / "bad.yaml", [rec("C-3", 300, "9.9", "4.5")])
    r = runner.invoke(app, ["ledger", "rebase", "--onto", str(v1_test_csv), "--from", str(old_test_csv),
                            "--ledger", str(bad), "--out", str(tmp_path / "rb2")])
    assert r.exit_code == 1 and not (tmp_path / "rb2").exists()
