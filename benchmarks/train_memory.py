"""The GRPO memory model next to the measured peak of the CPU smoke run (numbers printed, not asserted).

    .venv/bin/python benchmarks/train_memory.py

Runs ``compare train --smoke`` in this process on the original arm of the pipeline's instances
(``dvc repro`` first) and prints :func:`medcalc_maintained.scoring.train_memory.grpo_memory` for the
run's configuration next to the peak resident-memory growth of the process during training
(``ru_maxrss`` minus the resident size before). The CPU peak also holds Python, torch and datasets
overheads that the model does not count; on this tiny model they dominate.
"""

from __future__ import annotations

import resource
import tempfile
from dataclasses import asdict

from _common import ROOT  # noqa: F401  (puts the project on the path like the other benchmarks)

from medcalc_maintained.project import Project
from medcalc_maintained.scoring.train import TrainParams, arm_data, run_grpo
from medcalc_maintained.scoring.train_memory import GIB, grpo_memory


def _rss_bytes() -> int:
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def main() -> None:
    project = Project.load()
    params = TrainParams.from_dict(project.section("compare.train"))
    data = arm_data(project, "original", smoke=True)
    out = tempfile.mkdtemp(prefix="grpo-mem-")
    before = _rss_bytes()
    result = run_grpo(data.dataset, None, params, smoke=True, output_dir=out, progress=False)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(f"{out}/init-model")
    tok = AutoTokenizer.from_pretrained(f"{out}/init-model")
    c = model.config
    s = result.params
    smoke_prompts = data.dataset.select(range(min(params.smoke["prompts"], len(data.dataset))))
    prompt_tokens = max(len(tok(tok.apply_chat_template(
        [{"role": m["role"], "content": m["content"][: params.smoke["max_prompt_chars"]]} for m in p],
        tokenize=False, add_generation_prompt=True), add_special_tokens=False)["input_ids"])
        for p in smoke_prompts["prompt"])
    est = grpo_memory(
        params=sum(p.numel() for p in model.parameters()), layers=c.num_hidden_layers, hidden=c.hidden_size,
        kv_dim=c.num_key_value_heads * c.head_dim, vocab=c.vocab_size, prompts=s["prompts_per_step"],
        generations=s["num_generations"], prompt_tokens=prompt_tokens, completion_tokens=s["max_completion_length"],
        micro_batch=s["per_device_train_batch_size"], beta=s["beta"], checkpointing=s["activation_checkpointing"])
    print(f"smoke run: {result.steps} steps, {est.weights // 4:,} parameters, vocabulary {c.vocab_size}, "
          f"{s['prompts_per_step']} prompts x G {s['num_generations']}, prompt <= {prompt_tokens} tokens, "
          f"{s['max_completion_length']} completion tokens")
    print(f"{'term':<12} {'model (MiB)':>12}")
    for k, v in asdict(est).items():
        print(f"{k:<12} {v / 2**20:12.3f}")
    print(f"{'total':<12} {est.total_bytes / 2**20:12.3f}  ({est.gib:.5f} GiB)")
    print(f"measured peak RSS growth during training: {(peak - before) / 2**20:.1f} MiB "
          f"({(peak - before) / GIB:.4f} GiB; RSS before {before / 2**20:.0f} MiB, peak {peak / 2**20:.0f} MiB)")


if __name__ == "__main__":
    main()
