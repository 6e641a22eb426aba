"""Compare stage: training arms and reward-noise analysis between two releases."""

from __future__ import annotations

import json

import pandas as pd
import pytest
import yaml

from medcalc_maintained.ledger import apply as apply_stage
from medcalc_maintained.project import Project
from medcalc_maintained.scoring.arms import export_arms
from medcalc_maintained.scoring.noise import reward_noise
from medcalc_maintained.scoring.reward import compute_score


@pytest.fixture(scope="module")
def instances(real_instances):
    return real_instances


def _ledger(tmp_path, instances):
    def rec(i, uid, new, status, etype):
        old = instances.loc[instances["uid"] == uid, "Ground Truth Answer"].item()
        return {"id": f"X-{i}", "uid": uid, "split": "test", "release": "2.0.0", "old_value": old, "new_value": new,
                "decision": "accepted", "label_status": status, "error_type": etype, "rationale": "r", "evidence": "e",
                "source": "physician", "reviewer": {"id": "md", "role": "physician"}, "blinded": True,
                "decided_at": "2026-01-01"}
    # uid 1: 25.238 -> 25.5 (inside the ±5% band: confirmed); uid 41 (integer 4) -> 6; uid 42 -> N/A
    recs = [rec(1, 1, "25.5", "confirmed", None), rec(2, 41, "6", "corrected", "aggregation"),
            rec(3, 42, "N/A", "abstain", "unanswerable")]
    p = tmp_path / "l.yaml"
    p.write_text(yaml.safe_dump({"corrections": recs}))
    return p


def test_reward_noise_on_hand_made_ledger(instances, tmp_path):
    assert instances.loc[instances["uid"] == 41, "Ground Truth Answer"].item() == "4"
    led = _ledger(tmp_path, instances)
    base = apply_stage.build(instances, [led], upto="1.0.0")
    new = apply_stage.build(instances, [led], upto="2.0.0")
    rows, summary = reward_noise(base, new, rows="verified", lam=0.1)
    assert summary["rows"] == 3  # only the rows 2.0.0 verified
    by = rows.set_index("uid")
    # uid 1: answering 25.5 under the v1.0 label 25.238 (band 23.976..26.500) is correct -> no flip
    assert not by.loc[1, "flipped"] and by.loc[1, "reward_gap"] == pytest.approx(0.0)
    # uid 41: answering 6 under label 4 is parsable but wrong: reward 0.1 instead of 1.0 -> gap 0.9
    assert by.loc[41, "flipped"] and by.loc[41, "reward_gap"] == pytest.approx(0.9)
    # uid 42: answering N/A under a numeric label: parsable, wrong -> 0.1; gap 0.9
    assert by.loc[42, "flipped"] and by.loc[42, "reward_gap"] == pytest.approx(0.9)
    assert summary["flip_rate"] == pytest.approx(2 / 3, abs=1e-4)
    assert summary["expected_reward_gap"] == pytest.approx((0 + 0.9 + 0.9) / 3, abs=1e-4)
    # and the other direction: the v1.0 answer 25.238 is inside the band of 25.5 (24.225..26.775)
    assert by.loc[1, "base_answer_rewarded_under_new"] and not by.loc[42, "base_answer_rewarded_under_new"]


def test_arms_share_prompts_and_differ_only_in_ground_truth(instances, tmp_path):
    led = _ledger(tmp_path, instances)
    arms = export_arms(apply_stage.build(instances, [led], upto="1.0.0"),
                       apply_stage.build(instances, [led], upto="2.0.0"), rows="verified")
    o, m = arms["original"]["verl"], arms["maintained"]["verl"]
    assert len(o) == len(m) == 3
    assert o["prompt"].tolist() == m["prompt"].tolist()
    assert [json.loads(x["ground_truth"])["label"] for x in o["reward_model"]] == ["25.238", "4", "3"]
    assert [json.loads(x["ground_truth"])["label"] for x in m["reward_model"]] == ["25.5", "6", "N/A"]
    sys_msg = o["prompt"][0][0]
    assert sys_msg["role"] == "system" and "N/A" in sys_msg["content"]
    assert o["data_source"][0] == "medcalc-maintained" and o["reward_model"][0]["style"] == "rule"
    # the verl reward function reads the exported ground truth: the maintained label earns 1.0
    gt = m["reward_model"][1]["ground_truth"]
    assert compute_score("medcalc-maintained", "work...<answer>6</answer>", gt) == 1.0
    assert compute_score("medcalc-maintained", "<answer>4</answer>", gt) == pytest.approx(0.1)
    trl = arms["maintained"]["trl"]
    assert list(trl.columns) == ["prompt", "ground_truth", "lower", "upper", "output_type", "uid"]


@pytest.mark.slow
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


@pytest.mark.slow
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
