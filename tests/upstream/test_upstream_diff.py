"""Row identity and the upstream diff: the real 2024-06 and v1.0 test splits, and small made-up files."""

from __future__ import annotations

import csv
import json
import time

import pandas as pd
import pytest

from medcalc_maintained.stages.ingest import UPSTREAM_COLUMNS
from medcalc_maintained.upstream import diff as d
from medcalc_maintained.upstream.identity import instance_keys, match_frames, normalise


def _csv_rows(path):
    with open(path, encoding="utf-8-sig", newline="") as fh:
        return {int(r["Row Number"]): r for r in csv.DictReader(fh)}


@pytest.fixture(scope="module")
def real_diff(old_test_csv, v1_test_csv):
    t0 = time.perf_counter()
    result = d.diff_files(old_test_csv, v1_test_csv)
    return result, time.perf_counter() - t0


def test_real_diff_structure_and_counts(real_diff, old_test_csv, v1_test_csv):
    result, seconds = real_diff
    rm, s = result.row_map, result.summary
    assert list(rm.columns) == d.ROW_MAP_COLUMNS
    assert set(rm["status"]) <= set(d.STATUSES)
    old, new = _csv_rows(old_test_csv), _csv_rows(v1_test_csv)
    # every old row and every new row appears exactly once
    assert sorted(rm["old_uid"].dropna().astype(int)) == sorted(old)
    assert sorted(rm["new_uid"].dropna().astype(int)) == sorted(new)
    assert s["matched"] + s["removed"] + s["ambiguous"] == len(old) == 1047
    assert s["matched"] + s["added"] + s["ambiguous_new"] == len(new) == 1047
    assert s["matched_unchanged"] + s["matched_changed"] == s["matched"]
    # loose counts: most rows are the same rows; 6 template calculators were regenerated (120 rows)
    assert 900 <= s["matched"] <= 950 and s["basis"]["exact"] >= 800
    assert 100 <= s["removed"] == s["added"] <= 140
    assert s["ambiguous"] == 0
    assert s["changed"]["uid"] > 700  # rows were renumbered
    assert s["changed"]["label_beyond_tolerance"] <= s["changed"]["label"]
    assert set(s["changed"]) == set(d.FIELDS)
    # every matched pair is within one calculator and has its similarity recorded
    m = rm[rm["status"] == "matched"]
    assert all(old[int(o)]["Calculator ID"] == new[int(n)]["Calculator ID"] for o, n in zip(m["old_uid"], m["new_uid"]))
    assert m["similarity"].notna().all() and (m["similarity"] >= 0.8).all()
    assert seconds < 10


def _pair(rm, old_uid):
    row = rm[rm["old_uid"] == old_uid].iloc[0]
    return row["status"], (None if pd.isna(row["new_uid"]) else int(row["new_uid"])), row["changed_fields"].split(";")


def test_real_spot_checks(real_diff, old_test_csv, v1_test_csv):
    """Pairs read from the two CSVs by hand."""
    rm = real_diff[0].row_map
    old, new = _csv_rows(old_test_csv), _csv_rows(v1_test_csv)
    # 300 -> 299: same note and question (Note ID pmc-8063940-1), label 3.996 both, renumbered
    assert _pair(rm, 300)[:2] == ("matched", 299)
    assert old[300]["Patient Note"] == new[299]["Patient Note"] and new[299]["Ground Truth Answer"] == "3.996"
    assert {"note", "question", "label"}.isdisjoint(_pair(rm, 300)[2])
    # 2 -> 2: label '38.0' vs '38' is the same value
    assert old[2]["Ground Truth Answer"] == "38.0" and new[2]["Ground Truth Answer"] == "38"
    assert _pair(rm, 2)[0] == "matched" and "label" not in _pair(rm, 2)[2]
    # 849 -> 848: same note, label 9 -> 12 (upstream fixed the calculator)
    status, nu, fields = _pair(rm, 849)
    assert (status, nu) == ("matched", 848) and "label" in fields and "note" not in fields
    assert (old[849]["Ground Truth Answer"], new[848]["Ground Truth Answer"]) == ("9", "12")
    # 121 -> 120: the question differs only by a typographic apostrophe: not a change
    assert old[121]["Question"] != new[120]["Question"] and "question" not in _pair(rm, 121)[2]
    # 182 -> 181: QTc note, heart rate 131 -> 48: lightly edited, matched with note and label changed
    assert "131 bpm" in old[182]["Patient Note"] and "48 bpm" in new[181]["Patient Note"]
    status, nu, fields = _pair(rm, 182)
    assert (status, nu) == ("matched", 181) and {"note", "label"} <= set(fields)
    # 949: steroid conversion, drug and dose replaced: removed; new 948 is added
    assert "Triamcinolone" in old[949]["Patient Note"] and "Dexamethasone" in new[948]["Patient Note"]
    assert _pair(rm, 949)[0] == "removed"
    assert rm.loc[rm["new_uid"] == 948, "status"].item() == "added"


def test_real_without_note_id_hint_is_ambiguous_for_identical_old_notes(old_test_csv, v1_test_csv):
    res = d.diff_files(old_test_csv, v1_test_csv, use_note_id=False)
    s = res.summary
    assert s["ambiguous"] > 0 and s["ambiguous"] == s["ambiguous_new"]
    amb = res.row_map[(res.row_map["status"] == "ambiguous") & res.row_map["old_uid"].notna()]
    # each has tied candidates, and those new rows are themselves unresolved (tied with 2+ old rows)
    assert (amb["candidates"] != "").all()
    amb_new = res.row_map[(res.row_map["status"] == "ambiguous") & res.row_map["new_uid"].notna()]
    new_amb = set(amb_new["new_uid"].astype(int))
    assert all(int(c) in new_amb for cands in amb["candidates"] for c in cands.split(";"))
    assert (amb_new["candidates"].str.count(";") >= 1).all()
    assert "fuzzy+note_id" not in s["basis"]


def test_real_reverse_direction(old_test_csv, v1_test_csv, real_diff):
    fwd = real_diff[0]
    rev = d.diff_files(v1_test_csv, old_test_csv)

    def pairs(rm):
        return {(int(o), int(n)) for o, n, st in zip(rm["old_uid"], rm["new_uid"], rm["status"]) if st == "matched"}

    assert {(n, o) for o, n in pairs(fwd.row_map)} == pairs(rev.row_map)
    assert rev.summary["added"] == fwd.summary["removed"] and rev.summary["removed"] == fwd.summary["added"]


def test_write_outputs(real_diff, tmp_path):
    paths = d.write(real_diff[0], tmp_path / "out")
    assert [p.name for p in paths] == ["row_map.csv", "summary.json", "changes_per_calculator.png"]
    back = pd.read_csv(paths[0])
    assert len(back) == len(real_diff[0].row_map)
    assert json.loads(paths[1].read_text())["matched"] == real_diff[0].summary["matched"]
    assert paths[2].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_command_s_diff_matches_two_files_and_writes_the_three_outputs(tmp_path):
    """``upstream diff OLD NEW --out`` (upstream/diff.py: diff_and_write): one row kept, one removed,
    one added; each step reported."""
    from tests.upstream.test_upstream_rebase import _csv

    old = _csv(tmp_path / "old.csv", [(1, 2, "n1", "First note: sodium 140, glucose 90.", "1.5"),
                                      (2, 3, "n2", "A removed row about potassium 5.1.", "2.5")])
    new = _csv(tmp_path / "new.csv", [(1, 9, "n9", "An added row about a new calculator.", "7"),
                                      (2, 2, "n1", "First note: sodium 140, glucose 90.", "1.5")])
    steps: list[str] = []
    result, written = d.diff_and_write(old, new, tmp_path / "out", progress=steps.append)
    assert steps == ["matching rows", "writing the row map, summary and plot"]
    assert [p.relative_to(tmp_path).as_posix() for p in written] == [
        "out/row_map.csv", "out/summary.json", "out/changes_per_calculator.png"]
    s = json.loads(written[1].read_text())
    assert (s["matched_unchanged"], s["removed"], s["added"]) == (1, 1, 1) == (
        result.summary["matched_unchanged"], result.summary["removed"], result.summary["added"])
    assert (s["old"], s["new"]) == (str(old), str(new))


def _frame(rows):
    base = {c: "" for c in UPSTREAM_COLUMNS}
    out = []
    for r in rows:
        rec = dict(base, **{"Calculator Name": "calc", "Category": "lab", "Output Type": "decimal", "Note Type": "Extracted",
                            "Relevant Entities": "{}", "Ground Truth Explanation": "", "Lower Limit": "0", "Upper Limit": "0"})
        rec.update(r)
        out.append(rec)
    return pd.DataFrame(out, columns=UPSTREAM_COLUMNS)


LONG = "A 64 year old man with chronic kidney disease presents with fatigue; creatinine 2.1 mg/dL, weight 80 kg, height 175 cm."


def _row(rn, calc, nid, note, label="1.0", q="What is X?"):
    return {"Row Number": str(rn), "Calculator ID": str(calc), "Note ID": nid, "Patient Note": note, "Question": q,
            "Ground Truth Answer": label}


def test_synthetic_added_removed_edited_and_ambiguous():
    old = _frame([_row(1, 2, "a", LONG), _row(2, 2, "b", "Totally different note about sepsis and lactate 4."),
                  _row(3, 5, "c", "Heart rate 80, QT 400."), _row(4, 5, "d", "Heart rate 80, QT 400.")])
    new = _frame([_row(7, 2, "a", LONG.replace("fatigue", "tiredness"), "2.0"),  # one word edited, label changed
                  _row(8, 2, "z", "Brand new row: a child with asthma, peak flow 200."),
                  _row(9, 5, "x", "Heart rate 80, QT 400."), _row(10, 5, "y", "Heart rate 80, QT 400.")])
    res = d.diff_frames(old, new)
    st = {(m.status, m.old_uid, m.new_uid) for m in res.matches}
    assert ("matched", 1, 7) in st and ("removed", 2, None) in st and ("added", None, 8) in st
    m17 = res.row_map[res.row_map["old_uid"] == 1].iloc[0]
    assert m17["basis"] == "fuzzy" and 0.8 <= m17["similarity"] < 1.0
    assert {"note", "label", "uid"} <= set(m17["changed_fields"].split(";"))
    # two identical old rows and two identical new rows, Note IDs differ: ambiguous both ways
    amb = res.row_map[res.row_map["status"] == "ambiguous"]
    assert sorted(amb["old_uid"].dropna().astype(int)) == [3, 4]
    assert sorted(amb["new_uid"].dropna().astype(int)) == [9, 10]
    assert set(amb.loc[amb["old_uid"] == 3, "candidates"]) == {"9;10"}
    assert res.summary["ambiguous"] == 2 and res.summary["ambiguous_new"] == 2


def test_note_id_breaks_ties_but_never_creates_a_match():
    old = _frame([_row(1, 5, "p", "Heart rate 80, QT 400."), _row(2, 5, "q", "Heart rate 80, QT 400."),
                  _row(3, 6, "r", "An entirely unrelated old note about gout.")])
    new = _frame([_row(1, 5, "q", "Heart rate 80, QT 400."), _row(2, 5, "p", "Heart rate 80, QT 400."),
                  _row(3, 6, "r", "A new note on pneumonia with fever and cough.")])
    got = {(m.status, m.old_uid, m.new_uid, m.basis) for m in match_frames(old, new)}
    assert ("matched", 1, 2, "exact+note_id") in got and ("matched", 2, 1, "exact+note_id") in got
    assert ("removed", 3, None, "") in got and ("added", None, 3, "") in got


def test_calculator_is_a_hard_constraint_and_question_change_is_reported():
    old = _frame([_row(1, 2, "a", LONG, q="What is the CrCl?")])
    new = _frame([_row(1, 3, "a", LONG, q="What is the CrCl?"), _row(2, 2, "a", LONG, q="What is the creatinine clearance?")])
    res = d.diff_frames(old, new)
    row = res.row_map[res.row_map["old_uid"] == 1].iloc[0]
    assert (row["status"], int(row["new_uid"]), row["basis"]) == ("matched", 2, "note")
    assert "question" in row["changed_fields"].split(";")
    assert res.summary["added"] == 1


def test_instance_keys_are_unique_and_survive_renumbering(old_test_csv, v1_test_csv):
    from medcalc_maintained.stages.ingest import read_upstream_csv

    old, new = read_upstream_csv(old_test_csv), read_upstream_csv(v1_test_csv)
    ko, kn = instance_keys(old), instance_keys(new)
    assert ko.is_unique and kn.is_unique and ko.str.startswith("k-").all()
    # rows 300 (2024-06) and 299 (v1.0) are the same content: same key
    assert ko[old["Row Number"] == "300"].item() == kn[new["Row Number"] == "299"].item()
    renumbered = new.assign(**{"Row Number": (new["Row Number"].astype(int) + 5000).astype(str)})
    assert instance_keys(renumbered).tolist() == kn.tolist()
    assert normalise("  What is the patient\u2019s  SCORE ") == "what is the patient's score"


def test_version_names_resolve_under_upstream_dir(tmp_path):
    from medcalc_maintained.project import Project

    p = Project.load(tmp_path)
    assert p.upstream_file("v1.0") == tmp_path / "data" / "upstream" / "medcalc-bench" / "v1.0" / "test_data.csv"
    assert p.upstream_file("2024-06", "train") == tmp_path / "data" / "upstream" / "medcalc-bench" / "2024-06" / "train_data.csv"
    given = tmp_path / "x.csv"
    assert p.upstream_file(str(given)) == given
