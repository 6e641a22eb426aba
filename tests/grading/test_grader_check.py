"""The grader check (grading/grader_check.py) on small hand-made sets: reading the readers' files,
the reference grade, false-positive and false-negative counts and their intervals."""

from __future__ import annotations

import csv
import json

import pytest

from medcalc_maintained.core.errors import DataError
from medcalc_maintained.grading import grader_check as gc


def _out(i: int, label: str = "4", output: str = "<answer>4</answer>", kind: str = "integer", calc: int = 45,
         model: str = "m1") -> dict:
    return {"id": f"{model}/{i}", "model": model, "release": "9.9.9", "uid": i, "calculator_id": calc,
            "calculator": "c", "category": "risk", "answer_type": kind, "output_type": "integer",
            "question": "q", "label": label, "lower": label, "upper": label, "output": output}


def _write_outputs(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _write_reading(path, rows, fields=gc.READING_FIELDS):
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(fields)
        w.writerows(rows)
    return path


def test_answer_type_of_each_kind_of_label():
    row = {"Ground Truth Answer": "N/A", "Calculator ID": 69, "Output Type": "integer"}
    assert gc.answer_type(row) == "n_a"
    assert gc.answer_type(row | {"Ground Truth Answer": "('4 weeks', '3 days')"}) == "gestational_age"
    assert gc.answer_type({"Ground Truth Answer": "08/21/2023", "Calculator ID": "13", "Output Type": "date"}) == "date"
    assert gc.answer_type({"Ground Truth Answer": "3", "Calculator ID": 2, "Output Type": "decimal"}) == "decimal"
    with pytest.raises(ValueError, match="Output Type 'text'"):
        gc.answer_type({"Ground Truth Answer": "3", "Calculator ID": 2, "Output Type": "text"})


def test_wilson_interval_against_published_values():
    # Wilson 95% intervals as tabulated by Newcombe (1998), Table I: 0/10 -> 0-0.2775, 81/263 -> 0.2553-0.3662
    lo, hi = gc.wilson(0, 10)
    assert lo == 0 and hi == pytest.approx(0.2775, abs=5e-5)
    lo, hi = gc.wilson(81, 263)
    assert lo == pytest.approx(0.2553, abs=5e-5) and hi == pytest.approx(0.3662, abs=5e-5)
    assert gc.wilson(0, 0) is None


def test_outputs_file_errors_name_line_and_field(tmp_path):
    ok = _out(1)
    p = _write_outputs(tmp_path / "o.jsonl", [ok, _out(1)])
    with pytest.raises(DataError, match="line 2: id 'm1/1' appears twice"):
        gc.read_outputs(p)
    p = _write_outputs(tmp_path / "o.jsonl", [{k: v for k, v in ok.items() if k != "label"}])
    with pytest.raises(DataError, match="line 1: missing field.*label"):
        gc.read_outputs(p)
    p = _write_outputs(tmp_path / "o.jsonl", [_out(1, label="N/A")])  # said integer, the label is N/A
    with pytest.raises(DataError, match="answer_type 'integer' is not its label's type 'n_a'"):
        gc.read_outputs(p)
    p = _write_outputs(tmp_path / "o.jsonl", [ok | {"uid": "1"}])
    with pytest.raises(DataError, match="line 1 \\(m1/1\\): field uid must be an integer, not '1'"):
        gc.read_outputs(p)
    (tmp_path / "o.jsonl").write_text("[1, 2]\n")
    with pytest.raises(DataError, match="line 1: not a JSON object"):
        gc.read_outputs(tmp_path / "o.jsonl")
    assert [r["id"] for r in gc.read_outputs(_write_outputs(tmp_path / "o.jsonl", [ok, _out(2)]))] == ["m1/1", "m1/2"]


def test_a_reading_must_cover_every_output_once_with_known_values(tmp_path):
    ids = ["m1/1", "m1/2"]
    good = [["m1/2", "tagged", "4", "correct", ""], ["m1/1", "none", "", "incorrect", "rambles"]]
    assert set(gc.read_reading(_write_reading(tmp_path / "a.csv", good), ids)) == set(ids)
    cases = [
        ([good[0]], "1 output\\(s\\) not read, first 'm1/1'"),
        ([good[0], good[0], good[1]], "line 3 \\(m1/2\\): id read twice"),
        ([["m1/1", "tagged", "4", "right", ""], good[0]], "grade 'right' is none of correct, incorrect"),
        ([["m1/1", "boxed", "4", "correct", ""], good[0]], "form 'boxed'"),
        ([["m1/1", "none", "", "correct", ""], good[0]], "commits to no answer .* cannot be correct"),
        ([["m1/1", "tagged", "", "correct", ""], good[0]], "answer_read must be empty exactly when form is none"),
        ([["m1/9", "tagged", "4", "correct", ""]], "id is not an output"),
    ]
    for rows, message in cases:
        with pytest.raises(DataError, match=message):
            gc.read_reading(_write_reading(tmp_path / "a.csv", rows), ids)
    with pytest.raises(DataError, match="header id,grade"):
        gc.read_reading(_write_reading(tmp_path / "a.csv", [], fields=("id", "grade")), ids)
    # a note over two lines: the error names the file's line, not the row's number
    rows = [["m1/2", "tagged", "4", "correct", "first line\nsecond line"], ["m1/1", "tagged", "4", "right", ""]]
    with pytest.raises(DataError, match="line 4 \\(m1/1\\): field grade 'right'"):
        gc.read_reading(_write_reading(tmp_path / "a.csv", rows), ids)


def _reading(grade: str, form: str = "tagged") -> dict[str, str]:
    return {"grade": grade, "form": form, "answer_read": "" if form == "none" else "4", "note": ""}


def test_reference_is_the_common_reading_else_the_adjudication(tmp_path):
    ids = ["a", "b", "c"]
    ra = {"a": _reading("correct"), "b": _reading("incorrect"), "c": _reading("incorrect", "stated")}
    rb = {"a": _reading("correct"), "b": _reading("correct"), "c": _reading("incorrect", "none")}
    adj = [{"id": "b", "form": "tagged", "grade": "incorrect", "reason": "the tag says 5"},
           {"id": "c", "form": "none", "grade": "incorrect", "reason": "no conclusion"}]
    refs = gc.reference(ids, ra, rb, adj, tmp_path / "adj.csv")
    assert [(r.id, r.grade, r.form, r.agreed, r.grades_agreed) for r in refs] == [
        ("a", "correct", "tagged", True, True), ("b", "incorrect", "tagged", False, False),
        ("c", "incorrect", "none", False, True)]
    with pytest.raises(DataError, match="id 'c': the readers differ .* no adjudication"):
        gc.reference(ids, ra, rb, adj[:1], tmp_path / "adj.csv")
    with pytest.raises(DataError, match="id 'a': adjudicated, but the readers agree"):
        gc.reference(ids, ra, rb, adj + [{"id": "a", "form": "tagged", "grade": "correct", "reason": "x"}],
                     tmp_path / "adj.csv")
    with pytest.raises(DataError, match="reason is empty"):
        gc.reference(ids, ra, rb, [adj[0] | {"reason": " "}, adj[1]], tmp_path / "adj.csv")


def test_error_rates_count_false_positives_and_negatives_per_stratum():
    outs = [_out(1), _out(2), _out(3, kind="decimal"), _out(4, label="N/A", kind="n_a"), _out(5, model="m2")]
    Ref = gc.Reference
    refs = [Ref("m1/1", "correct", "tagged", True, True), Ref("m1/2", "incorrect", "tagged", True, True),
            Ref("m1/3", "correct", "stated", True, True), Ref("m1/4", "incorrect", "none", True, True),
            Ref("m2/5", "incorrect", "tagged", True, True)]
    # grader g: right on 1, wrongly correct on 2 and 4 (FP), wrongly incorrect on 3 (FN), right on 5
    rows = gc.error_rates(outs, refs, {"g": [True, True, False, True, False]})
    by = {r["stratum"]: r for r in rows}
    assert list(by) == ["all", "n_a", "integer", "decimal", "malformed", "model:m1", "model:m2"]
    a = by["all"]
    assert (a["reference_correct"], a["reference_incorrect"], a["false_positives"], a["false_negatives"]) == (2, 3, 2, 1)
    assert a["fp_rate"] == 2 / 3 and a["fn_rate"] == 0.5
    assert (by["malformed"]["outputs"], by["malformed"]["false_positives"], by["malformed"]["fn_rate"]) == (1, 1, None)
    assert by["model:m2"]["fp_rate"] == 0.0 and by["model:m2"]["fp_high"] == pytest.approx(0.7935, abs=1e-4)
    assert by["decimal"]["fn_rate"] == 1.0 and by["decimal"]["fp_low"] is None


def test_kappa_of_two_readers():
    # 10 grades: 8 agreements; a says correct 5 times, b 5 times -> pe = 0.5, kappa = (0.8-0.5)/0.5
    a = ["correct"] * 5 + ["incorrect"] * 5
    b = ["correct"] * 4 + ["incorrect"] + ["correct"] + ["incorrect"] * 4
    assert gc.kappa(a, b) == 0.6
    assert gc.kappa(["correct"] * 3, ["correct"] * 3) is None
