"""The GRPO memory model against hand computations (the smoke run's configuration and a fused/unfused case)."""

from __future__ import annotations

import pytest

from medcalc_maintained.scoring.train_memory import grpo_memory

# the smoke run: 2-layer model, hidden 32, 2 KV heads x 16, a 106-token character vocabulary (24,032
# parameters), 2 prompts x G 4, prompts cut to ~360 tokens, 16 completion tokens, 8 completions per
# pass, fp32, beta 1e-3, no checkpointing
SMOKE = dict(params=24032, layers=2, hidden=32, kv_dim=32, vocab=106, prompts=2, generations=4,
             prompt_tokens=360, completion_tokens=16, micro_batch=8, weight_bytes=4, activation_bytes=4,
             beta=1e-3, checkpointing=False, fused=True)


def test_smoke_configuration_by_hand():
    e = grpo_memory(**SMOKE)
    assert (e.weights, e.reference, e.gradients, e.optimizer) == (96128, 96128, 96128, 192256)
    # 8 sequences x 376 tokens x (K and V) x 2 layers x 32 x 4 bytes
    assert e.kv_cache == 1_540_096
    # 2 layers x 16 vectors x 8 x 376 tokens x 32 x 4 bytes
    assert e.activations == 12_320_768
    # 8 x 16 = 128 scored tokens x 106 vocabulary x 4 bytes x 2
    assert e.logits == 108_544
    assert e.total_bytes == 14_450_048
    assert e.gib == pytest.approx(14_450_048 / 2**30)


def test_checkpointing_fused_head_and_reference():
    ck = grpo_memory(**{**SMOKE, "checkpointing": True})
    assert ck.activations == 18 * 8 * 376 * 32 * 4  # (2 layer inputs + 16 vectors of one layer)
    assert grpo_memory(**{**SMOKE, "beta": 0.0}).reference == 0
    big = {**SMOKE, "vocab": 49152, "completion_tokens": 1600}
    assert grpo_memory(**{**big, "fused": False}).logits == 2 * 4 * 12800 * 49152
    assert grpo_memory(**big).logits == 2 * 4 * 4096 * 32768
    with pytest.raises(ValueError, match="micro_batch"):
        grpo_memory(**{**SMOKE, "micro_batch": 0})
