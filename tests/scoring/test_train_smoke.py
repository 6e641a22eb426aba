"""GRPO training: parameter and dataset checks, and the smoke path (2 real GRPO steps on CPU).

The smoke tests need the optional ``train`` extra (torch, transformers, trl) and are skipped, with
the reason, without it. They build a tiny random model in code and download nothing.
"""

from __future__ import annotations

import pandas as pd
import pytest

from medcalc_maintained.grading.prompts import SYSTEM_PROMPT
from medcalc_maintained.project import defaults
from medcalc_maintained.scoring.train import (
    TrainParams,
    build_arm_dataset,
    check_dataset,
)

# compare.train of the built-in defaults (a project without params.yaml)
TRAIN = defaults()["compare"]["train"]


INSTANCES = pd.DataFrame([
    {"uid": 11, "split": "train", "Patient Note": "A 60-year-old man, weight 80 kg, creatinine 1.0 mg/dL.",
     "Question": "What is the creatinine clearance (Cockcroft-Gault) in mL/min?",
     "Ground Truth Answer": "88.889", "Lower Limit": "84.444", "Upper Limit": "93.333", "Output Type": "decimal"},
    {"uid": 12, "split": "train", "Patient Note": "Heart rate 100, QT 400 ms.",
     "Question": "What is the corrected QT interval (Bazett) in msec?",
     "Ground Truth Answer": "516.398", "Lower Limit": "490.578", "Upper Limit": "542.218", "Output Type": "decimal"},
    {"uid": 13, "split": "train", "Patient Note": "Last menstrual period 01/01/2021, cycle 28 days.",
     "Question": "What is the estimated due date?",
     "Ground Truth Answer": "10/08/2021", "Lower Limit": "10/08/2021", "Upper Limit": "10/08/2021", "Output Type": "date"},
    {"uid": 14, "split": "train", "Patient Note": "Confused, RR 32, BP 85/50, age 70.",
     "Question": "What is the CURB-65 score?",
     "Ground Truth Answer": "4", "Lower Limit": "4", "Upper Limit": "4", "Output Type": "integer"},
    {"uid": 15, "split": "test", "Patient Note": "No labs.", "Question": "What is the anion gap?",
     "Ground Truth Answer": "12", "Lower Limit": "11.4", "Upper Limit": "12.6", "Output Type": "decimal"},
])
# the maintained labels of the same prompts: one recomputed, one not answerable, uid 12 not covered
MAINTAINED = pd.DataFrame([
    {"uid": 11, "Ground Truth Answer": "88.889", "Lower Limit": "84.444", "Upper Limit": "93.333", "Output Type": "decimal"},
    {"uid": 13, "Ground Truth Answer": "10/08/2021", "Lower Limit": "10/08/2021", "Upper Limit": "10/08/2021", "Output Type": "date"},
    {"uid": 14, "Ground Truth Answer": "N/A", "Lower Limit": "N/A", "Upper Limit": "N/A", "Output Type": "integer"},
    {"uid": 15, "Ground Truth Answer": "10", "Lower Limit": "9.5", "Upper Limit": "10.5", "Output Type": "decimal"},
])


def test_arm_datasets_share_prompts_and_differ_in_labels():
    train = INSTANCES[INSTANCES.split == "train"]
    original = build_arm_dataset(train)
    maintained = build_arm_dataset(train, MAINTAINED)
    assert original.column_names == ["prompt", "ground_truth", "lower", "upper", "output_type", "uid"]
    assert original["uid"] == [11, 12, 13, 14]
    assert maintained["uid"] == [11, 13, 14]  # uid 12 has no maintained label
    assert original["ground_truth"][3] == "4" and maintained["ground_truth"][2] == "N/A"
    prompt = original["prompt"][0]
    assert [m["role"] for m in prompt] == ["system", "user"]
    assert prompt[0]["content"] == SYSTEM_PROMPT and "<answer>N/A</answer>" in SYSTEM_PROMPT
    assert "weight 80 kg" in prompt[1]["content"] and "Cockcroft-Gault" in prompt[1]["content"]
    assert maintained["prompt"][0] == prompt
    with pytest.raises(ValueError, match="Question"):
        build_arm_dataset(train.drop(columns=["Question"]))


def test_params_defaults_are_the_papers_and_bad_values_are_refused(tmp_path):
    from medcalc_maintained.project import Project

    assert Project.load(tmp_path).section("compare.train") == TRAIN
    p = TrainParams.from_dict(TRAIN)
    assert (p.learning_rate, p.beta, p.num_generations, p.max_completion_length) == (1e-6, 1e-3, 8, 1600)
    assert (p.temperature, p.top_p, p.format_weight, p.prompts_per_step) == (1.0, 1.0, 0.1, 256)
    assert (p.scale_rewards, p.loss_type) == ("none", "dr_grpo")
    # 256 prompts x 8 completions = 2048 per optimizer step = 8 per pass x 8 devices x 32 accumulation
    assert p.gradient_accumulation(world_size=8) == 32
    assert p.gradient_accumulation(world_size=1) == 256
    with pytest.raises(ValueError, match="unknown key"):
        TrainParams.from_dict({**TRAIN, "lr": 1e-6})
    with pytest.raises(ValueError, match=r"missing key\(s\) \['beta'\]"):
        TrainParams.from_dict({k: v for k, v in TRAIN.items() if k != "beta"})
    with pytest.raises(ValueError, match="num_generations"):
        TrainParams.from_dict({**TRAIN, "num_generations": 1})
    with pytest.raises(ValueError, match="format_weight"):
        TrainParams.from_dict({**TRAIN, "format_weight": 1.5})
    with pytest.raises(ValueError, match="not a multiple"):
        TrainParams.from_dict({**TRAIN, "prompts_per_step": 3, "num_generations": 3}).gradient_accumulation(1)


def test_dataset_check():
    ds = build_arm_dataset(INSTANCES)
    check_dataset(ds)
    with pytest.raises(ValueError, match="lacks column"):
        check_dataset(ds.remove_columns(["lower"]))
    with pytest.raises(ValueError, match="row 0: output_type"):
        check_dataset(ds.map(lambda e: {"output_type": "fraction"}))
