"""`evaluate --grader`: the harnesses' grading rules side by side, and the accuracy change due to
labels separated from the change due to grading (a 2x2 of label version x grader)."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from typer.testing import CliRunner

from medcalc_maintained.cli import app
from medcalc_maintained.scoring.evaluate import evaluate

runner = CliRunner()
COLS = ["uid", "Calculator Name", "Category", "Output Type", "Ground Truth Answer", "Lower Limit", "Upper Limit"]


def _labels(rows):
    return pd.DataFrame(rows, columns=COLS)


# uid 1 (risk): "4.0" is 4 after rounding for us, not the string "4" for HELM; 2.0 relabels it 5
# uid 2 (lab): right for us, always 0 under HELM (its category defect); unchanged in 2.0
# uid 3 (physical): right under both graders in 1.0; 2.0 relabels it 30, so wrong under both
# uid 4 (severity): the answer 3 is wrong under 1.0's label 2 and right under 2.0's label 3 for both
V1 = _labels([(1, "A", "risk", "integer", "4", "4", "4"), (2, "B", "lab", "decimal", "10", "9.5", "10.5"),
              (3, "C", "physical", "decimal", "20", "19", "21"), (4, "D", "severity", "integer", "2", "2", "2")])
V2 = _labels([(1, "A", "risk", "integer", "5", "5", "5"), (2, "B", "lab", "decimal", "10", "9.5", "10.5"),
              (3, "C", "physical", "decimal", "30", "28.5", "31.5"), (4, "D", "severity", "integer", "3", "3", "3")])
PREDS = {1: "<answer>4.0</answer>", 2: "<answer>10</answer>", 3: "<answer>20</answer>", 4: "<answer>3</answer>"}


def test_two_versions_two_graders_hand_computed():
    rep = evaluate(PREDS, {"v1": V1, "v2": V2}, n_boot=200, seed=0, graders=["ours", "helm"])
    acc = dict(zip(rep.common["label_set"], rep.common["correct"]))
    # ours: v1 -> 1, 2, 3 right; v2 -> 2, 4.  helm: v1 -> 3; v2 -> 4
    assert acc == {"v1 [ours]": 3, "v1 [helm]": 1, "v2 [ours]": 2, "v2 [helm]": 1}
    d = {(r["change"], r["held_fixed"]): r for r in rep.decomposition.to_dict("records")}
    assert set(d) == {("labels", "grader ours"), ("labels", "grader helm"), ("grading", "labels v1"),
                      ("grading", "labels v2")}
    assert d[("labels", "grader ours")]["difference"] == pytest.approx(2 / 4 - 3 / 4)
    assert d[("labels", "grader helm")]["difference"] == pytest.approx(0.0)
    assert d[("grading", "labels v1")]["difference"] == pytest.approx(1 / 4 - 3 / 4)
    assert d[("grading", "labels v2")]["difference"] == pytest.approx(1 / 4 - 2 / 4)
    for r in d.values():
        assert r["n_paired"] == 4 and r["diff_ci_low"] <= r["difference"] <= r["diff_ci_high"]
    # the defect is named, with its count: one lab row of four in each version
    helm_notes = [n for n in rep.notes if "HELM category defect" in n]
    assert len(helm_notes) == 2 and all("1 of 4 scored rows (25.0%)" in n for n in helm_notes)
    # the default grader keeps the report as it was: names unchanged, no decomposition
    plain = evaluate(PREDS, {"v1": V1, "v2": V2}, n_boot=200, seed=0)
    assert plain.common["label_set"].tolist() == ["v1", "v2"] and plain.decomposition.empty
    assert "graders" not in plain.to_dict()


def test_unknown_or_repeated_grader_is_refused(tmp_path):
    preds = tmp_path / "p.jsonl"
    preds.write_text(json.dumps({"uid": 1, "output": "<answer>4</answer>"}) + "\n")
    labels = tmp_path / "v1.csv"
    V1.to_csv(labels, index=False)
    out = tmp_path / "ev"
    res = runner.invoke(app, ["evaluate", str(preds), "--against", str(labels), "--grader", "lm-eval", "--out",
                              str(out)])
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert "unknown grader 'lm-eval'; known: ours, upstream, helm, opencompass" in " ".join(res.output.split())
    assert not out.exists()
    res = runner.invoke(app, ["evaluate", str(preds), "--against", str(labels), "--grader", "helm", "--grader",
                              "helm", "--out", str(out)])
    assert res.exit_code == 2 and "given twice" in res.output and not out.exists()


def _gold(path, table: pd.DataFrame) -> None:
    path.write_text("".join(json.dumps({"uid": int(u), "output": f"<answer>{a}</answer>"}) + "\n"
                            for u, a in zip(table["uid"], table["Ground Truth Answer"])))


def _evaluate_gold_v1(tables_root, tmp_path, monkeypatch, out, *args: str):
    """``evaluate`` of v1.0's own labels (gold answers of every row) with ``args``, into ``out``."""
    from medcalc_maintained.project import Project
    from medcalc_maintained.release.tables import load_config

    preds = tmp_path / "gold-v1.jsonl"
    _gold(preds, load_config(Project.load(tables_root), "1.0.0", "full"))
    monkeypatch.setenv("MEDCALC_ROOT", str(tables_root))
    return runner.invoke(app, ["evaluate", str(preds), *args, "--out", str(out), "--n-boot", "200"])


@pytest.mark.slow
def test_gold_answers_on_the_real_releases(tables_root, tmp_path, monkeypatch):
    """HELM zeroes the 367 lab/dosage rows of v1.0 (327 + 40, 35.1%) and says why; upstream's rule
    agrees with ours on every gold answer of v1.0."""
    out = tmp_path / "ev"
    res = _evaluate_gold_v1(tables_root, tmp_path, monkeypatch, out, "--against", "v1.0", "--grader", "ours",
                            "--grader", "upstream", "--grader", "helm")
    assert res.exit_code == 0, res.output
    data = json.loads((out / "evaluation.json").read_text())
    acc = {a["label_set"]: a for a in data["accuracy"]}
    assert acc["v1.0.0 [ours]"]["correct"] == acc["v1.0.0 [upstream]"]["correct"] == 1047
    assert acc["v1.0.0 [helm]"]["n"] == 1047 and acc["v1.0.0 [helm]"]["correct"] == 1047 - 367
    graded = pd.read_csv(out / "graded.csv", dtype=str, keep_default_na=False)
    ours = graded[graded["label_set"] == "v1.0.0 [ours]"].set_index("uid")["correct"]
    upstream = graded[graded["label_set"] == "v1.0.0 [upstream]"].set_index("uid")["correct"]
    assert (ours == upstream.loc[ours.index]).all()  # row by row, not only in total
    text = " ".join(res.output.split())
    assert "HELM category defect: 367 of 1047 scored rows (35.1%)" in text
    assert "lab and dosage" in text and "medcalc_bench_metrics.py" in text


@pytest.mark.slow
def test_two_by_two_on_the_real_releases(tables_root, tmp_path, monkeypatch):
    """Gold v1.0 answers under v1.0 and v2.0, graded by ours and HELM: the four cells on the 887
    common rows and the changes due to labels and to grading add up around the square."""
    out = tmp_path / "ev"
    res = _evaluate_gold_v1(tables_root, tmp_path, monkeypatch, out, "--against", "v1.0", "--against", "v2.0",
                            "--grader", "ours", "--grader", "helm")
    assert res.exit_code == 0, res.output
    assert "change due to labels and the change due to grading" in " ".join(res.output.split())
    data = json.loads((out / "evaluation.json").read_text())
    assert data["graders"] == ["ours", "helm"] and data["common_rows"]["n"] == 887
    cell = {a["label_set"]: a["accuracy"] for a in data["common_rows"]["accuracy"]}
    assert cell["v1.0.0 [ours]"] == 1.0  # the v1.0 labels answered under v1.0
    d = {(r["change"], r["held_fixed"]): r["difference"] for r in data["decomposition"]}
    assert d[("labels", "grader ours")] == pytest.approx(cell["v2.0.0 [ours]"] - cell["v1.0.0 [ours]"])
    assert d[("grading", "labels v2.0.0")] == pytest.approx(cell["v2.0.0 [helm]"] - cell["v2.0.0 [ours]"])
    # around the square: labels under ours + grading under v2.0 = grading under v1.0 + labels under helm
    assert (d[("labels", "grader ours")] + d[("grading", "labels v2.0.0")]
            == pytest.approx(d[("grading", "labels v1.0.0")] + d[("labels", "grader helm")]))
    assert (out / "decomposition.csv").is_file()
