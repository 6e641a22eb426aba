"""Compare stage: training arms and reward-noise analysis between two releases.

The end-to-end tests of this subject; the fast ones are in tests/scoring/test_compare.py."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from medcalc_maintained.project import Project


def test_compare_stage_on_the_real_releases(tables_root, campaign_records):
    """`compare` on releases 1.0.0 and 2.0.0 of the pipeline: outputs where the project says, and
    an answer equal to the 2.0.0 label is rewarded under v1.0 exactly on the confirmed rows."""
    from medcalc_maintained.stages import compare as stage

    project = Project.load(tables_root)
    analyzed, exported = stage.run(project)
    statuses = pd.Series([r["label_status"] for r in campaign_records]).value_counts()
    n = len(campaign_records)
    summary = json.loads((project.compare_dir / "reward_noise.json").read_text())
    assert (summary["base"], summary["new"], summary["rows"], summary["lambda"]) == ("1.0.0", "2.0.0", n, 0.1)
    assert summary["new_answer_rewarded_under_base"] == pytest.approx(statuses["confirmed"] / n, abs=1e-4)
    assert summary["flip_rate"] == pytest.approx(1 - statuses["confirmed"] / n, abs=1e-4)
    flips = pd.read_parquet(project.compare_dir / "reward_flips.parquet")
    assert len(flips) == n and int(flips["flipped"].sum()) == n - statuses["confirmed"]
    per = pd.read_csv(project.compare_dir / "flip_rates.csv")
    assert list(per.columns) == ["calculator", "flip_rate"] and per["flip_rate"].between(0, 1).all()
    assert (project.compare_dir / "flip_rates.png").read_bytes()[:4] == b"\x89PNG"
    assert exported.n_rows == n
    for fmt in ("verl", "trl"):
        o = pd.read_parquet(project.arms_dir / fmt / "original.parquet")
        m = pd.read_parquet(project.arms_dir / fmt / "maintained.parquet")
        assert len(o) == len(m) == n
    assert set(analyzed.written) | set(exported.written) == {
        project.compare_dir / name for name in ("reward_flips.parquet", "flip_rates.csv", "reward_noise.json",
                                                "metrics.json", "flip_rates.png")} | {
        project.arms_dir / fmt / f"{arm}.parquet" for fmt in ("verl", "trl") for arm in ("original", "maintained")}


def test_cli_compare_options(tables_root, monkeypatch):
    from typer.testing import CliRunner

    from medcalc_maintained.cli import app

    monkeypatch.setenv("MEDCALC_ROOT", str(tables_root))
    out = tables_root / "elsewhere"
    res = CliRunner().invoke(app, ["compare", "analyze", "--base", "1.0.0", "--new", "1.0.0", "--rows", "all",
                                   "--out", str(out)])
    assert res.exit_code == 0, res.output
    summary = json.loads((out / "reward_noise.json").read_text())
    # the same labels on both sides: nothing flips, over every row
    assert summary["flip_rate"] == 0 and summary["row_selection"] == "all" and summary["rows"] == 1047
    res = CliRunner().invoke(app, ["compare", "export", "--new", "9.9.9", "--out", str(out)])
    assert res.exit_code == 2 and "release '9.9.9' is not listed" in res.output
