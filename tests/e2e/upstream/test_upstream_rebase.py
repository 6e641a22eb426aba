"""Rebasing the ledger onto a new upstream: real 2024-06 <-> v1.0 and a made-up upstream.

The end-to-end tests of this subject; the fast ones are in tests/upstream/test_upstream_rebase.py."""

from __future__ import annotations

import pandas as pd
import pytest
from typer.testing import CliRunner

from medcalc_maintained.core.errors import DataError
from medcalc_maintained.ledger.apply import build
from medcalc_maintained.ledger.records import LedgerError, load
from medcalc_maintained.stages.ingest import ingest
from tests.upstream.test_upstream_rebase import classes, rec, run_rebase, write_ledger


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
