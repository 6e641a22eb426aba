"""`evaluate --grader`: the harnesses' grading rules side by side, and the accuracy change due to
labels separated from the change due to grading (a 2x2 of label version x grader)."""

from __future__ import annotations

import json
import re

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
    res = runner.invoke(app, ["evaluate", str(preds), "--against", str(labels), "--grader", "lm_eval", "--out",
                              str(out)])
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert "unknown grader 'lm_eval'; known: ours, upstream, helm, opencompass, inspect, lm-eval" in \
        " ".join(res.output.split())
    assert not out.exists()
    res = runner.invoke(app, ["evaluate", str(preds), "--against", str(labels), "--grader", "helm", "--grader",
                              "helm", "--out", str(out)])
    assert res.exit_code == 2 and "given twice" in res.output and not out.exists()


# -- the terminal tables (issue 48, item 5): every row names version and grader, readable at 80 columns

HEADERS = ("label set", "scored", "correct", "accuracy", "95% CI", "wrong", "N/A", "unparsable", "severe",
           "skipped", "A / B", "A only", "B only", "A − B", "labels", "change", "held fixed", "from → to",
           "difference", "N/A rows", "refused", "answerable")


def _rendered(report, compliance=None) -> str:
    """What ``evaluate`` (and ``regrade``, with ``compliance``) prints, on a terminal of 80 columns."""
    import io

    from rich.console import Console

    from medcalc_maintained.cli.evaluate import print_report

    con = Console(width=80, record=True, file=io.StringIO())
    print_report(report, compliance, to=con)
    return con.export_text()


def _readable(text: str, headers) -> None:
    assert "…" not in text, text  # no header or cell cut short
    assert max(len(line) for line in text.splitlines()) <= 80
    for h in headers:
        assert f" {h} " in text, h


def test_tables_name_the_version_and_the_grader_at_80_columns():
    graders = ["ours", "upstream", "helm", "opencompass"]
    rep = evaluate(PREDS, {"v1.0.0": V1, "v2.2.0": V2}, n_boot=200, seed=0, graders=graders)
    text = _rendered(rep)
    _readable(text, HEADERS + tuple(graders))
    names = [f"{v} [{g}]" for v in ("v1.0.0", "v2.2.0") for g in graders]
    pairs = list(zip(rep.comparisons["a"], rep.comparisons["b"]))
    assert len(pairs) == 28
    for name in names:  # a row of the accuracy, errors, refusals and common-rows tables (and as A of its pairs),
        rows = len(re.findall(rf"│ {re.escape(name)} +│ +\d", text))  # and a dim line
        assert rows == 4 + sum(a == name for a, _ in pairs), name
        assert f"{name}: skipped 0 without prediction" in text
    # every McNemar pair names both sides, A above B in one row (the numbers on A's line)
    for a, b in pairs:
        assert re.search(rf"│ {re.escape(a)} +│ +\d+ │[^\n]*\n│ {re.escape(b)} +│ +│", text), (a, b)
    # the decomposition names what it holds fixed, and from what to what
    assert "grader upstream" in text and "labels v2.2.0" in text and "v1.0.0 → v2.2.0" in text


def test_one_grader_keeps_the_plain_names_and_regrade_adds_its_compliance_table():
    rep = evaluate(PREDS, {"v1.0.0": V1, "v2.2.0": V2}, n_boot=200, seed=0)
    compliance = pd.DataFrame([{"scope": "all outputs", "name": "", "outputs": 4, "tagged": 4, "parsable": 4},
                               {"scope": "label set", "name": "v1.0.0", "outputs": 4, "tagged": 3, "parsable": 2}])
    text = _rendered(rep, compliance)
    _readable(text, tuple(h for h in HEADERS if h not in ("labels", "change", "held fixed", "from → to",
                                                          "difference")) + ("outputs", "tagged", "parsable"))
    assert "[ours]" not in text and len(re.findall(r"│ v2\.2\.0 +│ +\d", text)) == 4
    assert re.search(r"│ v1\.0\.0 +│ +4 │ +75\.0% │ +50\.0% │", text)  # regrade: 3 and 2 of 4 outputs
    assert re.search(r"│ v1\.0\.0 +│ +\d+ │[^\n]*\n│ v2\.2\.0 +│ +│", text)  # the one pair
