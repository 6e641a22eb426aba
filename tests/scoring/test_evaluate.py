"""Evaluation of predictions against two label sets, checked against counts worked out by hand."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from medcalc_maintained.cli import app
from medcalc_maintained.core.errors import DataError
from medcalc_maintained.grading.grade import bootstrap_accuracy_ci, mcnemar_exact
from medcalc_maintained.scoring.evaluate import evaluate, read_predictions

runner = CliRunner()

CRCL, HASBLED, DUE, GA, MAP, CURB = ("Creatinine Clearance", "HAS-BLED", "Due Date", "Gestational Age",
                                     "Mean Arterial Pressure", "CURB-65")
GA_LABEL = "('14 weeks', '1 days')"

# uid: (label, lower, upper, output type, calculator) of the "original" label set
ORIGINAL = {
    1: ("25.238", "23.9761", "26.4999", "decimal", CRCL),
    2: ("10.0", "9.5", "10.5", "decimal", CRCL),
    3: ("4", "4", "4", "integer", HASBLED),
    4: ("2", "2", "2", "integer", HASBLED),
    5: ("03/15/2021", "03/15/2021", "03/15/2021", "date", DUE),
    6: (GA_LABEL, GA_LABEL, GA_LABEL, "integer", GA),
    7: ("3", "3", "3", "integer", HASBLED),
    8: ("50", "47.5", "52.5", "decimal", MAP),
    9: ("1", "1", "1", "integer", CURB),
}
# the "maintained" set changes three labels: uid 2 (recomputed), 4 (not answerable), 7 (recomputed)
MAINTAINED = {**ORIGINAL,
              2: ("12.0", "11.4", "12.6", "decimal", CRCL),
              4: ("N/A", "N/A", "N/A", "integer", HASBLED),
              7: ("5", "5", "5", "integer", HASBLED)}

PREDICTIONS = [
    {"uid": 1, "output": "CrCl = ... = 24.1 mL/min.\n<answer>24.1</answer>"},  # in both bands
    {"uid": 2, "output": "<answer>12</answer>"},  # original: 12 > 10.5 wrong; maintained: in [11.4, 12.6]
    {"uid": 3, "output": "<answer>4</answer>"},  # both right
    {"uid": 4, "output": "<answer>N/A</answer>"},  # abstains: wrong for label 2, right for N/A
    {"uid": 5, "output": "03/15/2021"},  # a bare answer, no tags: both right
    {"uid": 6, "output": "<answer>('14 weeks', '2 days')</answer>"},  # one day off: both wrong
    {"uid": 7, "output": "<answer>5</answer> hmm, <answer>3</answer>"},  # last answer 3: original only
    # uid 8 has no prediction: wrong under both
    {"uid": 9, "output": "I am not sure about the score."},  # unparsable: both wrong
]


def frame(labels: dict) -> pd.DataFrame:
    return pd.DataFrame([{"uid": u, "Ground Truth Answer": a, "Lower Limit": lo, "Upper Limit": hi,
                          "Output Type": t, "Calculator Name": c, "Patient Note": "..."}
                         for u, (a, lo, hi, t, c) in labels.items()])


def write_jsonl(path: Path, rows: list) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def preds(tmp_path) -> Path:
    return write_jsonl(tmp_path / "preds.jsonl", PREDICTIONS)


def test_hand_worked_evaluation(preds, tmp_path):
    report = evaluate(preds, {"original": frame(ORIGINAL), "maintained": frame(MAINTAINED)},
                      n_boot=2000, seed=7, out_dir=tmp_path / "out")
    acc = report.accuracy.set_index("label_set")
    # uid 8 has no prediction: skipped, not wrong. 8 scored rows per set.
    # original: correct = uids 1, 3, 5, 7 -> 4/8; maintained: correct = uids 1, 2, 3, 4, 5 -> 5/8
    assert acc.loc["original", "correct"] == 4 and acc.loc["original", "n"] == 8
    assert acc.loc["original", "accuracy"] == pytest.approx(4 / 8)
    assert acc.loc["maintained", "accuracy"] == pytest.approx(5 / 8)
    assert acc.loc["original", "skipped_no_prediction"] == 1 == acc.loc["maintained", "skipped_no_prediction"]
    # statuses, original: wrong 2 and 6, abstained 4, unparsable 9
    assert acc.loc["original", ["wrong", "abstained", "unparsable"]].tolist() == [2, 1, 1]
    # maintained: wrong 6 and 7; the abstention on 4 is correct there
    assert acc.loc["maintained", ["wrong", "abstained", "unparsable"]].tolist() == [2, 0, 1]
    assert acc.loc["maintained", "na_labels"] == 1 and acc.loc["original", "na_labels"] == 0
    for name in ("original", "maintained"):
        assert acc.loc[name, "ci_low"] <= acc.loc[name, "accuracy"] <= acc.loc[name, "ci_high"]

    (comp,) = report.comparisons.to_dict("records")
    # both right: 1, 3, 5; original only: 7; maintained only: 2, 4; neither: 6, 9
    assert (comp["both_correct"], comp["a_only"], comp["b_only"], comp["neither"]) == (3, 1, 2, 2)
    assert comp["difference"] == pytest.approx(-1 / 8)
    # exact McNemar on 1 vs 2 discordant pairs: 2 * P(X <= 1 | n=3, p=1/2) = 2 * 4/8 -> capped at 1
    assert comp["mcnemar_p"] == pytest.approx(1.0)
    assert comp["diff_ci_low"] <= comp["difference"] <= comp["diff_ci_high"]
    assert sorted(report.flips["uid"]) == [2, 4, 7]

    pc = report.per_calculator[report.per_calculator["rows"] == "own"].set_index(["calculator", "label_set"])
    expected = {  # (correct, n)
        (CRCL, "original"): (1, 2), (CRCL, "maintained"): (2, 2),
        (HASBLED, "original"): (2, 3), (HASBLED, "maintained"): (2, 3),
        (DUE, "original"): (1, 1), (DUE, "maintained"): (1, 1),
        (GA, "original"): (0, 1), (CURB, "original"): (0, 1),
    }
    for key, (k, n) in expected.items():
        assert (pc.loc[key, "correct"], pc.loc[key, "n"]) == (k, n), key
    assert len(pc) == 10  # 5 calculators with a scored row x 2 label sets (MAP's only row has no prediction)

    out = tmp_path / "out"
    data = json.loads((out / "evaluation.json").read_text())
    assert [a["correct"] for a in data["accuracy"]] == [4, 5] and data["flips"] == 3
    assert (out / "accuracy.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    graded = pd.read_csv(out / "graded.csv", keep_default_na=False)
    assert 8 not in set(graded["uid"])
    row7 = graded[(graded.label_set == "original") & (graded.uid == 7)].iloc[0]
    assert (str(row7["answer"]), str(row7["parsed"])) == ("3", "3")  # the last tagged answer
    row9 = graded[(graded.label_set == "original") & (graded.uid == 9)].iloc[0]
    assert row9["answer"] == "I am not sure about the score." and row9["parsed"] == "" and row9["status"] == "unparsable"
    skipped = pd.read_csv(out / "skipped.csv")
    assert skipped.to_dict("records") == [{"label_set": "original", "uid": 8, "reason": "no prediction"},
                                          {"label_set": "maintained", "uid": 8, "reason": "no prediction"}]


def test_bootstrap_is_seeded_and_close_to_the_normal_interval(tmp_path):
    labels = {u: ("1", "1", "1", "integer", CURB) for u in range(1, 401)}
    rows = [{"uid": u, "output": "1" if u % 2 else "0"} for u in range(1, 401)]  # 200 of 400 right
    path = write_jsonl(tmp_path / "p.jsonl", rows)
    r1 = evaluate(path, {"x": frame(labels)}, n_boot=20000, seed=3)
    r2 = evaluate(path, {"x": frame(labels)}, n_boot=20000, seed=3)
    a1, a2 = r1.accuracy.iloc[0], r2.accuracy.iloc[0]
    assert (a1.ci_low, a1.ci_high) == (a2.ci_low, a2.ci_high)
    # p = 0.5, n = 400: standard error 0.025, normal 95% interval 0.5 -/+ 0.049
    assert a1.ci_low == pytest.approx(0.451, abs=0.006)
    assert a1.ci_high == pytest.approx(0.549, abs=0.006)
    # all right: every resample is all right
    assert bootstrap_accuracy_ci(10, 10, np.random.default_rng(0), 1000) == (1.0, 1.0)


@pytest.mark.parametrize("a_only, b_only, p", [
    (0, 0, 1.0),
    (0, 5, 2 / 32),  # 2 * (1/2)^5
    (1, 4, 2 * 6 / 32),  # 2 * (C(5,0) + C(5,1)) / 2^5
    (8, 2, 2 * (1 + 10 + 45) / 1024),  # 2 * P(X <= 2 | n=10)
])
def test_mcnemar_exact_hand_worked(a_only, b_only, p):
    assert mcnemar_exact(a_only, b_only) == pytest.approx(p)


def test_only_common_uids_are_paired(preds):
    smaller = {u: v for u, v in MAINTAINED.items() if u != 9}
    report = evaluate(preds, {"original": frame(ORIGINAL), "maintained": frame(smaller)}, n_boot=500, seed=0)
    acc = report.accuracy.set_index("label_set")
    assert acc.loc["maintained", "n"] == 7 and acc.loc["original", "n"] == 8
    assert acc.loc["maintained", "skipped_not_in_this_label_set"] == 1  # the prediction for uid 9
    assert report.comparisons.iloc[0]["n_paired"] == 7 and report.n_common == 7


@pytest.mark.parametrize("lines, message", [
    (['{"uid": 1, "output": "1"}', "{not json"], "line 2: not valid JSON"),
    (['{"uid": "1", "output": "1"}'], "line 1: uid must be a JSON integer"),
    (['{"uid": 1}'], "line 1: missing key 'output'"),
    (['{"output": "1"}'], "line 1: missing key 'uid'"),
    (['{"uid": 1, "output": null}'], "output must be a string"),
    (['{"uid": 1, "output": "1"}', "", '{"uid": 1, "output": "2"}'], "line 3: uid 1 repeats line 1"),
    (["[1, 2]"], "line 1: each line must be a JSON object"),
    ([""], "no predictions"),
])
def test_bad_predictions_name_file_line_and_rule(tmp_path, lines, message):
    path = write_jsonl(tmp_path / "bad.jsonl", lines)
    with pytest.raises(DataError, match=message) as info:
        read_predictions(path)
    assert str(path) in str(info.value)


def test_bad_label_sets_and_predictions_for_another_split(preds):
    with pytest.raises(DataError, match="Calculator Name"):
        evaluate(preds, {"a": frame(ORIGINAL).drop(columns=["Calculator Name"])}, n_boot=500, seed=0)
    broken = {**ORIGINAL, 3: ("four", "4", "4", "integer", HASBLED)}
    with pytest.raises(DataError, match="uid 3.*Ground Truth Answer"):
        evaluate(preds, {"a": frame(broken)}, n_boot=500, seed=0)
    other = {u + 1000: v for u, v in ORIGINAL.items()}
    with pytest.raises(DataError, match="another split"):
        evaluate(preds, {"a": frame(other)}, n_boot=500, seed=0)


def test_cli_evaluate(preds, tmp_path, monkeypatch):
    monkeypatch.setenv("MEDCALC_ROOT", str(tmp_path))  # no params.yaml there: built-in defaults
    a, b = tmp_path / "a.parquet", tmp_path / "v2.parquet"
    frame(ORIGINAL).to_parquet(a)
    frame(MAINTAINED).to_parquet(b)
    out = tmp_path / "eval"
    res = runner.invoke(app, ["evaluate", str(preds), "--against", f"original={a}", "--against", str(b),
                              "--out", str(out), "--n-boot", "500"])
    assert res.exit_code == 0, res.output
    assert "50.0%" in res.output and "62.5%" in res.output  # 4/8 and 5/8
    data = json.loads((out / "evaluation.json").read_text())
    assert [x["label_set"] for x in data["accuracy"]] == ["original", "v2"]
    assert (out / "accuracy.png").is_file()

    bad = write_jsonl(tmp_path / "bad.jsonl", ['{"uid": 1, "output": "1"}', "oops"])
    res = runner.invoke(app, ["evaluate", str(bad), "--against", str(a), "--out", str(tmp_path / "o2")])
    assert res.exit_code == 2
    assert "line 2" in res.output and "not valid JSON" in res.output
    res = runner.invoke(app, ["evaluate", str(preds), "--against", str(tmp_path / "nope.parquet"), "--out", str(tmp_path / "o3")])
    assert res.exit_code == 2 and "label file not found" in res.output
    assert not (tmp_path / "o2").exists() and not (tmp_path / "o3").exists()  # nothing written on refusal
    # an existing non-empty --out is refused unless --force; without --out a new directory under build/
    before = (out / "graded.csv").read_bytes()
    res = runner.invoke(app, ["evaluate", str(preds), "--against", str(a), "--out", str(out), "--n-boot", "500"])
    assert res.exit_code == 2 and "--force" in res.output and (out / "graded.csv").read_bytes() == before
    res = runner.invoke(app, ["evaluate", str(preds), "--against", str(a), "--out", str(out), "--n-boot", "500",
                              "--force"])
    assert res.exit_code == 0 and not (out / "flips.csv").read_text().strip().count("\n")  # one set: no flips
    for _ in range(2):
        res = runner.invoke(app, ["evaluate", str(preds), "--against", str(a), "--n-boot", "500"])
        assert res.exit_code == 0, res.output
    runs = sorted((tmp_path / "build" / "evaluations").iterdir())
    assert len(runs) == 2 and all((r / "evaluation.json").is_file() for r in runs)


def test_tags_resolve_to_releases():
    from medcalc_maintained.core.versions import resolve_tag

    versions = ["1.0.0", "2.0.0", "2.1.0", "2.1.1"]
    assert [resolve_tag(t, versions) for t in ("v1.0", "1.0", "v2.1", "v2.1.1", "2.0.0", "v2.2", "v3.0.0", "x")] \
        == ["1.0.0", "1.0.0", "2.1.0", "2.1.1", "2.0.0", None, None, None]


def test_help_documents_the_answer_rule():
    res = runner.invoke(app, ["evaluate", "--help"], env={"COLUMNS": "200"})
    assert res.exit_code == 0
    for words in ("<answer>", "The answer is 38.", "unparsable", "NaN", "--subset", "build/evaluations"):
        assert words in res.output, words


def test_refusals_are_reported_apart_from_accuracy(tmp_path):
    # four N/A rows and four answerable ones; refusals written three ways ("N/A", "unknown",
    # "Not applicable"), an unparsable answer (no refusal) and a missing prediction (not scored)
    na = ("N/A", "N/A", "N/A", "integer", HASBLED)
    labels = {1: na, 2: na, 3: na, 4: na, **{u: ORIGINAL[u] for u in (5, 7, 8, 9)}, 10: ORIGINAL[3]}
    preds = write_jsonl(tmp_path / "p.jsonl", [
        {"uid": 1, "output": "<answer>N/A</answer>"},  # warranted refusal
        {"uid": 2, "output": "<answer>unknown</answer>"},  # warranted refusal
        {"uid": 3, "output": "<answer>2</answer>"},  # answers an unanswerable row: wrong, no refusal
        {"uid": 4, "output": "cannot say"},  # unparsable: wrong, no refusal
        {"uid": 5, "output": "<answer>Not applicable</answer>"},  # unwarranted refusal
        {"uid": 7, "output": "<answer>3</answer>"},  # right
        {"uid": 8, "output": "<answer>N/A</answer>"},  # unwarranted refusal
        {"uid": 9, "output": "<answer>1</answer>"},  # right
        # uid 10: no prediction, skipped
    ])
    report = evaluate(preds, {"v": frame(labels)}, n_boot=500, seed=1, out_dir=tmp_path / "out",
                      graders=["ours", "upstream"])
    ab = report.abstention.set_index("label_set")
    for name in ("v [ours]", "v [upstream]"):  # a refusal is the model's answer, whatever the grader
        assert ab.loc[name, ["na_rows", "refused_na", "answerable_rows", "refused_answerable"]].tolist() == [4, 2, 4, 2]
        assert ab.loc[name, "refused_na_share"] == 0.5 and ab.loc[name, "refused_answerable_share"] == 0.5
        assert ab.loc[name, "accuracy_answerable"] == 0.5  # 7 and 9 of 5, 7, 8, 9
        assert ab.loc[name, "refused_na_ci_low"] <= 0.5 <= ab.loc[name, "refused_na_ci_high"]
    acc = report.accuracy.set_index("label_set")
    assert acc.loc["v [ours]", "correct"] == 4 and acc.loc["v [upstream]", "correct"] == 2  # upstream never credits N/A
    written = pd.read_csv(tmp_path / "out" / "abstention.csv")
    assert written["refused_answerable"].tolist() == [2, 2]
    data = json.loads((tmp_path / "out" / "evaluation.json").read_text())
    assert [a["refused_na"] for a in data["abstention"]] == [2, 2]


def test_cli_prints_the_refusal_table(preds, tmp_path, monkeypatch):
    monkeypatch.setenv("MEDCALC_ROOT", str(tmp_path))
    b = tmp_path / "v2.parquet"
    frame(MAINTAINED).to_parquet(b)
    res = runner.invoke(app, ["evaluate", str(preds), "--against", str(b), "--out", str(tmp_path / "e"),
                              "--n-boot", "500"], env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.output
    table = res.output[res.output.index("refusals (answer N/A)"):]
    # maintained: uid 4 is the one N/A row and its answer is N/A (1 of 1); no answerable row refused
    # (0 of 7); accuracy on the answerable rows 4 of 7 (1, 2, 3, 5)
    row = next(line for line in table.splitlines() if line.lstrip("│ ").startswith("v2"))
    assert [c.strip() for c in row.strip("│").split("│")][1:] == ["1", "100.0%", "7", "0.0%", "57.1%"]
    assert max(len(line) for line in res.output.splitlines()) <= 80
