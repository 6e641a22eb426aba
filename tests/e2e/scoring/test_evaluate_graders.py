"""`evaluate --grader`: the harnesses' grading rules side by side, and the accuracy change due to
labels separated from the change due to grading (a 2x2 of label version x grader).

The end-to-end tests of this subject; the fast ones are in tests/scoring/test_evaluate_graders.py."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from medcalc_maintained.cli import app
from tests.scoring.test_evaluate_graders import runner


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
