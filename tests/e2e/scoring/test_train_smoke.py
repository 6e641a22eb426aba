"""GRPO training: parameter and dataset checks, and the smoke path (2 real GRPO steps on CPU).

The smoke tests need the optional ``train`` extra (torch, transformers, trl) and are skipped, with
the reason, without it. They build a tiny random model in code and download nothing.

The end-to-end tests of this subject; the fast ones are in tests/scoring/test_train_smoke.py."""

from __future__ import annotations

import importlib.util
import json
import time

import pytest
from typer.testing import CliRunner

from medcalc_maintained.scoring.train import TrainParams, build_arm_dataset
from tests.scoring.test_train_smoke import INSTANCES, MAINTAINED, TRAIN

HAVE_TRAIN = all(importlib.util.find_spec(m) is not None for m in ("torch", "transformers", "trl"))


needs_train = pytest.mark.skipif(not HAVE_TRAIN, reason="torch/transformers/trl not installed: pip install -e '.[train]'")


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


@needs_train
def test_a_non_finite_gradient_is_not_applied(tmp_path):
    """A NaN in one gradient (injected with a torch hook) must not reach the weights."""
    import torch
    from transformers import AutoModelForCausalLM

    from medcalc_maintained.grading.reward import make_trl_reward
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
