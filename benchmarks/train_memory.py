"""The GRPO memory model next to the measured peak of the CPU smoke run (numbers printed, not asserted).

    .venv/bin/python benchmarks/train_memory.py

Runs ``compare train --smoke`` in this process on the original arm of the pipeline's instances
(``dvc repro`` first) and prints :func:`medcalc_maintained.scoring.train_memory.grpo_memory` for the
run's configuration next to the peak resident-memory growth of the process during training
(``ru_maxrss`` minus the resident size before). The CPU peak also holds Python, torch and datasets
overheads that the model does not count; on this tiny model they dominate.

It then prints the reference row measured on a GPU (``GPU_REFERENCE``): ``make gpu-check``'s
training of SmolLM2-135M-Instruct on one NVIDIA H200 (transformers 5.23.0, TRL 1.16.0, torch 2.11
CUDA; bf16, ``dr_grpo``, 8 prompts x G 8, prompts up to 2,006 tokens, 256 completion tokens,
activation checkpointing), next to the model's figure for that configuration.
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


# SmolLM2-135M-Instruct (config of the converted checkpoint) in make gpu-check's configuration, and
# torch.cuda.max_memory_allocated / max_memory_reserved measured on one H200 (issue 39; before the
# fused LM head and the dense conversion the same run peaked at 66.6 GiB allocated)
GPU_REFERENCE = {
    "model": dict(params=134_515_008, layers=30, hidden=576, kv_dim=3 * 64, vocab=49_152),
    "run": dict(prompts=8, generations=8, prompt_tokens=2006, completion_tokens=256, micro_batch=8, beta=1e-3,
                checkpointing=True),
    "device": "1x NVIDIA H200, transformers 5.23.0, TRL 1.16.0, torch 2.11 CUDA, bf16",
    "allocated_gib": 9.76,
    "reserved_gib": 11.57,
    "before_gib": 66.6,
}


def gpu_reference() -> None:
    ref = GPU_REFERENCE
    est = grpo_memory(**ref["model"], **ref["run"])
    r = ref["run"]
    print(f"\nGPU reference (measured, not rerun here): SmolLM2-135M-Instruct, {r['prompts']} prompts x G "
          f"{r['generations']}, prompt <= {r['prompt_tokens']} tokens, {r['completion_tokens']} completion tokens, "
          f"{ref['device']}")
    print(f"{'':<12} {'model (GiB)':>12} {'allocated':>10} {'reserved':>10}")
    print(f"{'peak':<12} {est.gib:12.2f} {ref['allocated_gib']:10.2f} {ref['reserved_gib']:10.2f}  "
          f"(the same run before the fixes: {ref['before_gib']} GiB allocated)")


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
    gpu_reference()


if __name__ == "__main__":
    main()
