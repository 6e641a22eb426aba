"""Untrusted text stays text: notes and questions whose text starts like a spreadsheet formula are
written as string cells of the review packet (intact), a packet holding a formula is refused naming
sheet and cell, and the CSV files written for people carry no live formula."""

from __future__ import annotations

import csv
import re
import zipfile
from pathlib import Path

import pandas as pd
import pytest
from openpyxl import load_workbook
from typer.testing import CliRunner

from medcalc_maintained.cli import app
from medcalc_maintained.core.csv_for_people import read_csv_for_people, write_csv_for_people
from medcalc_maintained.review import adjudicate
from medcalc_maintained.review import packet as pkt
from medcalc_maintained.review.layout import PacketError
from medcalc_maintained.review.reader import read_packet
from tests.support.triage_support import REVIEWER

runner = CliRunner()
PAYLOADS = ['=HYPERLINK("http://x","y")', "+cmd|' /C calc'!A0", "-2+3", "@SUM(1,2)"]
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


@pytest.fixture(scope="module")
def hostile(v1_test_csv, tmp_path_factory):
    """The real v1.0 CSV with its first four notes and questions prefixed by formula payloads,
    ingested; returns (instances, {uid: (note, question)})."""
    tmp = tmp_path_factory.mktemp("hostile")
    with v1_test_csv.open(encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        columns, rows = reader.fieldnames, list(reader)
    expected = {}
    for row, payload in zip(rows, PAYLOADS):
        row["Patient Note"] = payload + " " + row["Patient Note"]
        row["Question"] = payload + row["Question"]
        expected[int(row["Row Number"])] = (row["Patient Note"], row["Question"])
    src = tmp / "test_data.csv"
    with src.open("w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=columns)
        w.writeheader()
        w.writerows(rows)
    out = tmp / "ingest"
    r = runner.invoke(app, ["ingest", "--input", str(src), "--out", str(out)], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    inst = pd.read_parquet(out / "instances.parquet")
    return inst, expected


def _export(hostile, path: Path) -> Path:
    inst, expected = hostile
    return pkt.export_packet(inst, [("test", u) for u in expected], REVIEWER, path)


def test_exported_packet_has_no_formula_cell_and_keeps_the_text(hostile, tmp_path):
    inst, expected = hostile
    by_uid = inst.set_index("uid")
    for uid, (note, question) in expected.items():  # ingest kept the payloads verbatim
        assert (by_uid.loc[uid, "Patient Note"], by_uid.loc[uid, "Question"]) == (note, question)
    path = _export(hostile, tmp_path / "packet.xlsx")
    wb = load_workbook(path)  # formulas as formulas
    cells = [c for ws in wb.worksheets for row in ws.iter_rows() for c in row if c.value is not None]
    assert cells and not [c.coordinate for c in cells if c.data_type == "f"]
    ws = wb[pkt.REVIEW]
    seen = {}
    for r in range(2, ws.max_row + 1):
        uid = int(ws.cell(row=r, column=pkt.COL["row_id"]).value.split("-")[1])
        note, question = ws.cell(row=r, column=pkt.COL["note"]), ws.cell(row=r, column=pkt.COL["question"])
        assert note.data_type == "s" and question.data_type == "s"
        seen[uid] = (note.value, question.value)
    assert seen == expected
    # the saved XML itself holds no formula element (what a spreadsheet application would run)
    with zipfile.ZipFile(path) as z:
        sheets = [n for n in z.namelist() if n.startswith("xl/worksheets/sheet")]
        assert sheets and not [n for n in sheets if re.search(rb"<(\w+:)?f[ >]", z.read(n))]


def _fill(path: Path, out: Path, answers: dict[str, object]) -> Path:
    wb = load_workbook(path)
    ws = wb[pkt.REVIEW]
    for r in range(2, ws.max_row + 1):
        for key, value in answers.items():
            ws.cell(row=r, column=pkt.COL[key], value=value)
    wb.save(out)
    return out


def test_packet_with_formula_text_notes_imports_when_answers_are_typed(hostile, tmp_path):
    inst, expected = hostile
    packet = _export(hostile, tmp_path / "packet.xlsx")
    filled = _fill(packet, tmp_path / "filled.xlsx", {"answer": "N/A", "comment": "-not in the note"})
    read = read_packet(filled, inst)
    assert sorted(i.uid for i in read.items) == sorted(expected)
    assert {i.comment for i in read.items} == {"-not in the note"}


@pytest.mark.parametrize("column, formula", [("answer", "=1+1"), ("answer", '=HYPERLINK("http://x","4")'),
                                             ("comment", "=A1")])
def test_formula_in_a_filled_packet_is_refused_naming_sheet_and_cell(hostile, campaign_ledger, tmp_path, column,
                                                                     formula):
    inst, _ = hostile
    packet = _export(hostile, tmp_path / "packet.xlsx")
    filled = _fill(packet, tmp_path / "filled.xlsx", {"answer": "4", "comment": "typed"})
    wb = load_workbook(filled)
    cell = wb[pkt.REVIEW].cell(row=3, column=pkt.COL[column])
    cell.value = formula
    wb.save(filled)
    assert load_workbook(filled)[pkt.REVIEW][cell.coordinate].data_type == "f"
    with pytest.raises(PacketError) as info:
        read_packet(filled, inst)
    assert f"sheet Review, cell {cell.coordinate}" in str(info.value) and "formula" in str(info.value)
    out = tmp_path / "corrections" / "review.yaml"
    out.parent.mkdir()
    with pytest.raises(PacketError):
        adjudicate.import_packet(filled, instances=inst, ledger_paths=[campaign_ledger], relabel=None,
                                 recompute=None, reviewers=[REVIEWER],
                                 adjudication=adjudicate.Adjudication(("relabel", "physician"), "review"),
                                 out=out, decided_at="2026-02-01")
    assert list(out.parent.iterdir()) == []


def _formula_cells(path: Path) -> list[str]:
    """Cells of a CSV that a spreadsheet application would run as a formula."""
    num = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")
    with path.open(encoding="utf-8", newline="") as fh:
        return [v for row in csv.reader(fh) for v in row if v.startswith(FORMULA_START) and not num.match(v)]


def test_csv_for_people_is_spreadsheet_safe_and_round_trips(tmp_path):
    df = pd.DataFrame({"text": PAYLOADS + ["'quoted", "\tTAB", "plain", "-3", None],
                       "number": [-1.5, 2.0, -3.0, 4.0, 5.0, 6.0, 7.0, -8.0, 9.0],
                       "count": [-1, 2, 3, 4, 5, 6, 7, 8, 9]})
    path = write_csv_for_people(tmp_path / "people.csv", df)
    assert _formula_cells(path) == []
    back = read_csv_for_people(path, keep_default_na=False, dtype={"text": str})
    assert back["text"].tolist() == PAYLOADS + ["'quoted", "\tTAB", "plain", "-3", ""]
    assert back["number"].tolist() == df["number"].tolist() and back["count"].tolist() == df["count"].tolist()


def test_evaluate_csvs_of_a_hostile_label_set_are_spreadsheet_safe(real_instances, tmp_path):
    import json

    from medcalc_maintained.scoring.evaluate import evaluate

    rows = real_instances.head(3).copy()
    rows.loc[rows.index[0], "Calculator Name"] = '=HYPERLINK("http://x","y")'
    preds = tmp_path / "p.jsonl"
    preds.write_text("".join(json.dumps({"uid": int(u), "output": "1"}) + "\n" for u in rows["uid"]))
    report = evaluate(preds, {"original": rows}, n_boot=100, seed=0)
    paths = report.write(tmp_path / "out")
    for name in ("graded", "per_calculator"):
        text = paths[name].read_text(encoding="utf-8")
        assert "HYPERLINK" in text and _formula_cells(paths[name]) == [], name
