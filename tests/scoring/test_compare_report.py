"""`compare report`: held-out accuracy of each arm per checkpoint under both label versions, with the
noise diagnostics, on a synthetic pair of label versions (hand-computed) and on the smoke outputs."""

from __future__ import annotations

import json

import pandas as pd
import pytest
import yaml

from medcalc_maintained.scoring.report import build_report, wide_curves
from tests.support.paths import ROOT

COLS = ["uid", "Calculator Name", "Ground Truth Answer", "Lower Limit", "Upper Limit", "Output Type"]
OLD = pd.DataFrame([(1, "A", "10", "9.5", "10.5", "decimal"), (2, "A", "20", "19", "21", "decimal"),
                    (3, "B", "4", "4", "4", "integer"), (4, "B", "2", "2", "2", "integer")], columns=COLS)
NEW = pd.DataFrame([(1, "A", "10", "9.5", "10.5", "decimal"), (2, "A", "30", "28.5", "31.5", "decimal"),
                    (3, "B", "5", "5", "5", "integer"), (4, "B", "2", "2", "2", "integer")], columns=COLS)
# rows 2 and 3 changed, 1 and 4 unchanged


def _done(arm, step, answers):
    return [{"arm": arm, "step": step, "uid": u, "completion": f"<answer>{a}</answer>"} for u, a in answers.items()]


COMPLETIONS = pd.DataFrame(
    _done("original", 0, {1: 0, 2: 0, 3: 0, 4: 0})
    + _done("maintained", 0, {1: 0, 2: 0, 3: 0, 4: 0})
    # original arm learnt the old labels: 20 and 4 on the changed rows, right on the unchanged ones
    + _done("original", 5, {1: 10, 2: 20, 3: 4, 4: 2})
    # maintained arm: 30 on row 2, the old 4 on row 3, row 1 right, row 4 wrong
    + _done("maintained", 5, {1: 10, 2: 30, 3: 4, 4: 7}))


def test_hand_computed_curves_and_diagnostics():
    rep = build_report(OLD, NEW, COMPLETIONS, n_boot=500, seed=0)
    c = rep.curves.set_index(["arm", "step"])
    assert c.loc[("original", 0), "accuracy_new"] == 0.0 and c.loc[("maintained", 0), "accuracy_old"] == 0.0
    o, m = c.loc[("original", 5)], c.loc[("maintained", 5)]
    # original: new labels right on 1, 4 (2/4); old labels right on all 4
    assert (o["accuracy_new"], o["accuracy_old"]) == (0.5, 1.0)
    assert (o["accuracy_changed"], o["accuracy_unchanged"], o["old_label_share"]) == (0.0, 1.0, 1.0)
    # maintained: new labels right on 1, 2 (2/4); old labels right on 1, 3 (2/4)
    assert (m["accuracy_new"], m["accuracy_old"]) == (0.5, 0.5)
    assert (m["accuracy_changed"], m["accuracy_unchanged"], m["old_label_share"]) == (0.5, 0.5, 0.5)
    assert m["accuracy_new_ci_low"] <= 0.5 <= m["accuracy_new_ci_high"]
    s = rep.summary
    assert (s["heldout_rows"], s["changed_rows"], s["flip_rate"], s["last_step"]) == (4, 2, 0.5, 5)
    assert s["original.old_label_share"] == 1.0 and s["maintained.accuracy_changed"] == 0.5
    assert all(isinstance(v, (int, float)) for v in s.values())  # a DVC metric: scalars only
    per = rep.per_calculator.set_index("calculator")
    assert per.loc["A", "flip_rate"] == 0.5 and per.loc["B", "flip_rate"] == 0.5
    # at the last step: old-label share of A's changed row 2 (original 20: old; maintained 30: new)
    assert per.loc["A", "old_label_share_original"] == 1.0 and per.loc["A", "old_label_share_maintained"] == 0.0
    assert per.loc["B", "old_label_share_maintained"] == 1.0
    wide = wide_curves(rep.curves)
    assert wide["step"].tolist() == [0, 5] and wide["maintained_accuracy_changed"].tolist() == [0.0, 0.5]
    # the same bootstrap seed for both arms at a step: identical outcomes give identical intervals
    assert (c.loc[("original", 0), "accuracy_new_ci_high"] == c.loc[("maintained", 0), "accuracy_new_ci_high"])


def test_arms_at_different_steps_are_refused():
    bad = COMPLETIONS[~((COMPLETIONS["arm"] == "maintained") & (COMPLETIONS["step"] == 5))]
    with pytest.raises(ValueError, match="different steps"):
        build_report(OLD, NEW, bad, n_boot=200, seed=0)
    with pytest.raises(ValueError, match=r"completions lack column\(s\) \['step'\]"):
        build_report(OLD, NEW, COMPLETIONS.drop(columns=["step"]), n_boot=200, seed=0)


def test_limit_heldout_keeps_a_seeded_draw_of_the_heldout_rows_only():
    from medcalc_maintained.stages.compare_report import Plan, limit_heldout

    held = pd.DataFrame({"uid": [1, 2, 3, 4, 5], "x": list("abcde")})
    train = pd.DataFrame({"uid": [9]})
    pl = Plan(held, held, held, train, {}, "held-out rows: five")
    small = limit_heldout(pl, 2, seed=0)
    kept = small.heldout["uid"].tolist()
    assert len(kept) == 2 and kept == sorted(kept) and set(kept) <= {1, 2, 3, 4, 5}
    assert small.old["uid"].tolist() == small.new["uid"].tolist() == kept
    assert small.train is train and small.note == "held-out rows: five; 2 of the 5 held-out rows evaluated (a seeded draw, seed 0)"
    assert limit_heldout(pl, 2, seed=0).heldout["uid"].tolist() == kept  # the same draw again
    assert limit_heldout(pl, 5, seed=0) is pl


def test_smoke_outputs_of_the_pipeline():
    """The compare-report stage's committed outputs (dvc repro): both arms, every step, the held-out
    rows of 2.0.0's mini config, and a metric file of scalars only."""
    out = ROOT / "data" / "compare" / "report"
    metrics = json.loads((out / "metrics.json").read_text())
    assert all(isinstance(v, (int, float, bool)) for v in metrics.values())
    # 2.0.0's mini config has 519 rows (docs/releases.md); the release tables are not committed (a fresh clone
    # runs `make test` before `make run`), so the count is checked against the report's own rows
    assert metrics["heldout_rows"] == 519
    per = pd.read_csv(out / "per_calculator.csv")
    assert per["rows"].sum() == 519 and per["changed"].sum() == metrics["changed_rows"]
    assert metrics["flip_rate"] == round(metrics["changed_rows"] / 519, 4)
    report = json.loads((out / "report.json").read_text())
    summary = report["summary"]  # every scalar; metrics.json holds the headline ones, the same values
    assert {k: summary[k] for k in metrics} == metrics
    curves = pd.read_csv(out / "curves.csv")
    assert curves["step"].tolist() == [0, 1, 2] and summary["last_step"] == 2
    for arm in ("original", "maintained"):
        assert summary[f"{arm}.steps"] == 2
        assert {f"{arm}_accuracy_changed", f"{arm}_accuracy_unchanged", f"{arm}_old_label_share"} <= set(curves)
    assert "declared held-out split of the test rows" in report["note"]
    stages = yaml.safe_load((ROOT / "dvc.yaml").read_text())
    assert "compare-report" in stages["stages"] and stages["plots"]


def test_without_the_train_extra_the_command_stops_naming_make_train(tmp_path, monkeypatch):
    """`make run` leaves the train extra out; when compare-report must rerun without it, the command stops
    naming every missing package and `make train` (exit 2, as `model` does for a missing package), before it reads
    or writes anything."""
    import importlib.util

    from typer.testing import CliRunner

    from medcalc_maintained.cli import app

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name in ("torch", "trl") else real(name, *a))
    monkeypatch.setenv("MEDCALC_ROOT", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(app, ["compare", "report", "--out", str(tmp_path / "report")], env={"COLUMNS": "400"})
    text = " ".join(res.output.split())
    assert res.exit_code == 2, res.output
    assert "needs torch, trl (the train extra)" in text and "`make train`" in text, text
    assert not (tmp_path / "report").exists() and list(tmp_path.iterdir()) == []
