"""Evaluation of predictions against two label sets, checked against counts worked out by hand.

The end-to-end tests of this subject; the fast ones are in tests/scoring/test_evaluate.py."""

from __future__ import annotations

import json

import pandas as pd


def test_evaluate_example_stage(tables_root, real_instances):
    """The worked example: relabel labels -> predictions -> graded under the releases of
    compare.evaluate.against (1.0.0 and the latest)."""
    from medcalc_maintained.project import Project
    from medcalc_maintained.stages import evaluate_example

    first = real_instances.head(5)
    relabel = pd.DataFrame({"split": ["test"] * 5 + ["train"], "uid": first["uid"].tolist() + [1],
                            "status": ["labeled"] * 4 + ["deferred", "labeled"],
                            "label": first["Ground Truth Answer"].tolist() + ["1"]})
    project = Project.load(tables_root)
    project.relabel_labels.parent.mkdir(parents=True, exist_ok=True)
    relabel.to_parquet(project.relabel_labels)
    preds, run = evaluate_example.run(project)
    # 4 labeled test rows; the deferred row and the train row are left out
    assert preds.n == 4 and preds.target == project.example_predictions
    lines = [json.loads(x) for x in preds.target.read_text().splitlines()]
    assert lines[0] == {"uid": int(first["uid"].iloc[0]), "output": f"<answer>{first['Ground Truth Answer'].iloc[0]}</answer>"}
    acc = run.report.accuracy.set_index("label_set")
    assert list(acc.index) == [f"v{v}" for v in project.param("compare.evaluate.against")]
    # 1.0.0's default config is every upstream row; the 4 predictions answer their own v1.0 label,
    # the other rows have no prediction and are skipped
    assert acc.loc["v1.0.0", "n"] == 4 and acc.loc["v1.0.0", "correct"] == 4
    assert acc.loc["v1.0.0", "skipped_no_prediction"] == len(real_instances) - 4
    data = json.loads((project.evaluation_dir / "evaluation.json").read_text())
    assert data["bootstrap"]["resamples"] == project.param("compare.evaluate.n_boot")
    assert (project.evaluation_dir / "accuracy.png").is_file()
