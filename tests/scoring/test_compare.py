"""Compare stage: training arms and reward-noise analysis between two releases."""

from __future__ import annotations

import json

import pytest
import yaml

from medcalc_maintained.grading.reward import compute_score
from medcalc_maintained.ledger import apply as apply_stage
from medcalc_maintained.scoring.arms import export_arms
from medcalc_maintained.scoring.noise import reward_noise


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
