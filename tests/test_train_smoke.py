"""GRPO training: parameter and dataset checks, and the smoke path (2 real GRPO steps on CPU).

The smoke tests need the optional ``train`` extra (torch, transformers, trl) and are skipped, with
the reason, without it. They build a tiny random model in code and download nothing.
"""

from __future__ import annotations

import importlib.util
import json
import time

import pandas as pd
import pytest
from typer.testing import CliRunner

from medcalc_maintained.project import defaults
from medcalc_maintained.scoring.prompts import SYSTEM_PROMPT
from medcalc_maintained.scoring.train import (
    TrainParams,
    build_arm_dataset,
    check_dataset,
)

# compare.train of the built-in defaults (a project without params.yaml)
TRAIN = defaults()["compare"]["train"]

HAVE_TRAIN = all(importlib.util.find_spec(m) is not None for m in ("torch", "transformers", "trl"))
needs_train = pytest.mark.skipif(not HAVE_TRAIN, reason="torch/transformers/trl not installed: pip install -e '.[train]'")

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


@pytest.mark.slow
@needs_train
def test_smoke_grpo_two_steps(tmp_path):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from medcalc_maintained.scoring.train import run_grpo

    dataset = build_arm_dataset(INSTANCES)
    start = time.perf_counter()
    result = run_grpo(dataset, None, TRAIN, smoke=True, output_dir=tmp_path, progress=False)
    elapsed = time.perf_counter() - start
    assert elapsed < 120, f"smoke training took {elapsed:.0f}s"

    assert result.steps == 2
    steps = [h for h in result.log_history if "reward" in h]
    assert len(steps) == 2
    # each step grades 2 prompts x 4 completions; every reward is 0, 0.1 or 1, so 8 x mean x 10
    # is a whole number
    for h in steps:
        assert "rewards/medcalc_reward/mean" in h
        assert abs(h["reward"] * 80 - round(h["reward"] * 80)) < 1e-4
    # with seed 0 at least one sampled completion of step 1 holds a parsable answer, the group
    # rewards differ and the policy gradient is not zero
    assert steps[0]["reward"] > 0 and steps[0]["grad_norm"] > 0

    init = AutoModelForCausalLM.from_pretrained(tmp_path / "init-model")
    final = AutoModelForCausalLM.from_pretrained(result.model_dir)
    changed = [n for (n, a), (_, b) in zip(init.named_parameters(), final.named_parameters())
               if not torch.equal(a, b)]
    assert changed, "two GRPO steps left every weight unchanged"
    assert init.config.num_hidden_layers == 2

    tok = AutoTokenizer.from_pretrained(result.model_dir)
    text = "<answer>('14 weeks', '1 days')</answer>"
    assert tok.decode(tok(text, add_special_tokens=False)["input_ids"]) == text
    chat = tok.apply_chat_template(dataset["prompt"][0], tokenize=False, add_generation_prompt=True)
    assert chat.endswith("<|im_start|>assistant\n")

    saved = json.loads((tmp_path / "train_result.json").read_text())
    assert saved["steps"] == 2 and saved["params"]["beta"] == 1e-3 and saved["params"]["num_generations"] == 4


@pytest.mark.slow
@needs_train
def test_cli_compare_train_smoke(tmp_path, monkeypatch):
    from medcalc_maintained.cli import app

    inst = tmp_path / "instances.parquet"
    INSTANCES.to_parquet(inst)
    labels = tmp_path / "maintained.csv"
    MAINTAINED.to_csv(labels, index=False)
    monkeypatch.setenv("MEDCALC_ROOT", str(tmp_path))  # no params.yaml there: built-in defaults
    out = tmp_path / "run"
    res = CliRunner().invoke(app, ["compare", "train", "--arm", "maintained", "--smoke", "--instances", str(inst),
                                   "--labels", str(labels), "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert "3 prompts (1 instance(s) without a label left out)" in res.output
    assert json.loads((out / "train_result.json").read_text())["steps"] == 2

    res = CliRunner().invoke(app, ["compare", "train", "--arm", "original", "--instances", str(inst)])
    assert res.exit_code == 2 and "--model PATH is required" in res.output
    res = CliRunner().invoke(app, ["compare", "train", "--arm", "original", "--model", str(tmp_path),
                                   "--instances", str(inst)])
    assert res.exit_code == 2 and "no config.json" in res.output


@needs_train
@pytest.mark.slow
@pytest.mark.parametrize("checkpointing", [False, True])
def test_training_from_a_local_checkpoint(tmp_path, checkpointing):
    """The non-smoke path: load a checkpoint directory (here a tiny one saved by the test);
    compare.train.activation_checkpointing: true must leave the model reporting it enabled."""
    from medcalc_maintained.scoring.train import build_char_tokenizer, build_tiny_model, run_grpo

    dataset = build_arm_dataset(INSTANCES[INSTANCES.split == "train"], MAINTAINED)  # 3 prompts
    tok = build_char_tokenizer([m["content"] for p in dataset["prompt"] for m in p])
    ckpt = tmp_path / "base"
    build_tiny_model(tok).save_pretrained(ckpt)
    tok.save_pretrained(ckpt)
    params = {**TRAIN, "prompts_per_step": 1, "num_generations": 2, "per_device_train_batch_size": 2,
              "max_completion_length": 8, "max_steps": 1, "bf16": False, "activation_checkpointing": checkpointing}
    result = run_grpo(dataset, ckpt, params, output_dir=tmp_path / "out", progress=False)
    assert result.steps == 1 and (tmp_path / "out" / "final-model" / "config.json").is_file()
    assert result.params["learning_rate"] == 1e-6 and result.params["prompts_per_step"] == 1
    assert result.activation_checkpointing is checkpointing
    assert json.loads((tmp_path / "out" / "train_result.json").read_text())["activation_checkpointing"] is checkpointing


def _same_weights(a, b) -> bool:
    import torch

    return all(torch.equal(x, y) for (_, x), (_, y) in zip(a.named_parameters(), b.named_parameters()))


@pytest.mark.slow
@needs_train
def test_all_zero_reward_batches_are_skipped_and_counted(tmp_path):
    """The H100 failure's first step on CPU: no completion writes an <answer> tag, every reward is 0."""
    import torch
    from transformers import AutoModelForCausalLM

    from medcalc_maintained.scoring.train import run_grpo

    # a strongly negative bias on the <answer> tags and digits: the smoke model never writes an answer
    params = {**TRAIN, "smoke": {**TRAIN["smoke"], "answer_bias": -100.0}}
    result = run_grpo(build_arm_dataset(INSTANCES), None, params, smoke=True, output_dir=tmp_path, progress=False)
    steps = [h for h in result.log_history if "reward" in h]
    assert result.steps == 2 and len(steps) == 2
    assert all(h["reward"] == 0.0 and h["frac_reward_zero_std"] == 1.0 for h in steps)
    assert [h["skipped_steps"] for h in steps] == [1, 2]
    assert [h["skipped/zero_advantage"] for h in steps] == [1, 2]
    assert result.skipped_steps == {"total": 2, "zero_advantage": 2, "nonfinite_grad": 0,
                                    "steps": [{"step": 1, "reason": "zero_advantage"},
                                              {"step": 2, "reason": "zero_advantage"}]}
    saved = json.loads((tmp_path / "train_result.json").read_text())
    assert saved["skipped_steps"]["total"] == 2

    init = AutoModelForCausalLM.from_pretrained(tmp_path / "init-model")
    final = AutoModelForCausalLM.from_pretrained(result.model_dir)
    assert _same_weights(init, final)
    assert all(torch.isfinite(p).all() for p in final.parameters())


@pytest.mark.slow
@needs_train
def test_a_non_finite_gradient_is_not_applied(tmp_path):
    """A NaN in one gradient (injected with a torch hook) must not reach the weights."""
    import torch
    from transformers import AutoModelForCausalLM

    from medcalc_maintained.scoring.reward import make_trl_reward
    from medcalc_maintained.scoring.safe_grpo import SafeGRPOTrainer
    from medcalc_maintained.scoring.train import _grpo_config, _import_training, _smoke_setup

    trl, _ = _import_training()
    p = TrainParams.from_dict({**TRAIN, "smoke": {**TRAIN["smoke"], "max_steps": 1}})
    setup = _smoke_setup(p, build_arm_dataset(INSTANCES), tmp_path)
    model = AutoModelForCausalLM.from_pretrained(setup.model_id)
    model.model.norm.weight.register_hook(lambda g: torch.full_like(g, float("nan")))
    trainer = SafeGRPOTrainer(model=model, reward_funcs=make_trl_reward(p.format_weight),
                              args=_grpo_config(trl, p, setup, smoke=True), train_dataset=setup.dataset,
                              processing_class=setup.tokenizer)
    trainer.train()
    logged = [h for h in trainer.state.log_history if "reward" in h]
    # with the smoke run's answer bias the group rewards differ: there is a policy-gradient signal
    assert logged[0]["reward"] > 0 and logged[0]["frac_reward_zero_std"] < 1
    assert trainer.skips.as_dict()["nonfinite_grad"] == 1 and logged[0]["skipped/nonfinite_grad"] == 1
    init = AutoModelForCausalLM.from_pretrained(tmp_path / "init-model")
    assert _same_weights(init, trainer.model)
    assert all(torch.isfinite(q).all() for q in trainer.model.parameters())
