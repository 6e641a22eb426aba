"""Stage ``compare-report`` (``compare report``): the two GRPO arms evaluated on held-out rows.

* **Held-out rows**: the rows of the new release's ``compare.report.heldout`` config (``mini``)
  that both releases label. **Training prompts**: the ``compare.train.split`` split when the
  instances have it; otherwise (this checkout: only the test split) the test rows *outside* the
  held-out rows, a declared held-out split of the test rows. The report says which.
* Both arms train on the same prompts in the same order with the same seed; the original arm's
  reward uses the base release's labels, the maintained arm's the new release's.
* :func:`smoke` (the DVC stage, run by ``make run``): both arms with ``compare train --smoke``
  settings (a tiny random model on CPU, one checkpoint per step), then the report.
* :func:`report_runs` (``compare report --run ARM=DIR``): the report of real training runs.

Writes to ``compare.report.out``: ``metrics.json`` (the DVC metric, scalars only: held-out and
changed rows, flip rate, per arm the last checkpoint's accuracy under the new labels),
``report.json`` (everything, with lists; its ``summary`` holds every scalar), ``curves.csv`` (one
row per checkpoint step: the DVC plot of changed vs unchanged accuracy of both arms), ``per_calculator.csv`` (flip rate and old-label share per
calculator, a DVC plot) and ``curves.png``.
"""

from __future__ import annotations

import hashlib
import json
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from medcalc_maintained.core.atomic import write_atomic, write_json
from medcalc_maintained.project import Project
from medcalc_maintained.scoring.labels import release_labels
from medcalc_maintained.scoring.report import Report, build_report, greedy_generate, wide_curves
from medcalc_maintained.stages._metrics import METRICS

ARMS = ("original", "maintained")


@dataclass
class Plan:
    old: pd.DataFrame  # base labels of the held-out rows
    new: pd.DataFrame  # new labels of the held-out rows
    heldout: pd.DataFrame  # instances of the held-out rows, in uid order
    train: pd.DataFrame  # instances to train on
    labels: dict[str, pd.DataFrame]  # reward labels per arm (rows labelled by both versions)
    note: str


def plan(project: Project) -> Plan:
    """Held-out rows, training prompts and the labels of both arms (see the module doc)."""
    from medcalc_maintained.core.readers import read_parquet

    p = project.section("compare.report")
    base, new, config = str(p["base"]), str(p["new"]), str(p["heldout"])
    old_all, new_all = release_labels(project, base, "full"), release_labels(project, new, "default")
    both = set(old_all["uid"].astype(int)) & set(new_all["uid"].astype(int))
    held = sorted(set(release_labels(project, new, config)["uid"].astype(int)) & both)
    if not held:
        raise ValueError(f"compare.report: config {config!r} of release {new} has no row labelled by {base} too")
    inst = read_parquet(project.instances, "instances", "ingest").sort_values("uid", kind="stable")
    split = project.param("compare.train.split")
    if (inst["split"] == split).any():
        train = inst[(inst["split"] == split) & inst["uid"].isin(both)]
        note = (f"held-out rows: the {len(held)} rows of {new}'s {config!r} config; training prompts: "
                f"split {split!r}")
    else:
        train = inst[~inst["uid"].isin(held) & inst["uid"].isin(both)]
        note = (f"held-out rows: the {len(held)} rows of {new}'s {config!r} config; no {split!r} split in "
                f"{project.instances.relative_to(project.root).as_posix() if project.instances.is_relative_to(project.root) else project.instances.name}, so the arms train on the other {len(train)} test rows labelled by both "
                "versions (a declared held-out split of the test rows)")
    heldout = inst[inst["uid"].isin(held)]

    def rows(df: pd.DataFrame) -> pd.DataFrame:
        return df[df["uid"].astype(int).isin(held)].reset_index(drop=True)

    return Plan(rows(old_all), rows(new_all), heldout.reset_index(drop=True), train.reset_index(drop=True),
                {"original": old_all, "maintained": new_all}, note)


def checkpoints(run_dir: Path, base_model: Path | None = None) -> list[tuple[int, Path]]:
    """``(step, directory)`` of a training run: step 0 (``init-model`` of a smoke run, else
    ``base_model``) and every ``checkpoint-N``."""
    found = [(int(m[1]), d) for d in run_dir.iterdir() if (m := re.fullmatch(r"checkpoint-(\d+)", d.name))]
    start = run_dir / "init-model" if (run_dir / "init-model").is_dir() else base_model
    if not found:
        raise ValueError(f"{run_dir}: no checkpoint-N directory (train with save_steps, or --save-steps)")
    return ([(0, Path(start))] if start else []) + sorted(found)


def _prompts(df: pd.DataFrame, max_chars: int | None) -> list[Any]:
    from medcalc_maintained.grading.prompts import build_prompt

    prompts = [build_prompt(str(n), str(q)) for n, q in zip(df["Patient Note"], df["Question"])]
    if max_chars:
        prompts = [[{"role": m["role"], "content": m["content"][:max_chars]} for m in p] for p in prompts]
    return prompts


# files of a checkpoint that generation does not read (the trainer's state to resume from)
TRAINER_STATE = frozenset({"optimizer.pt", "scheduler.pt", "rng_state.pth", "trainer_state.json", "training_args.bin"})


def model_digest(model_dir: Path) -> str:
    """sha256 over the name and bytes of every file of a checkpoint that generation reads (all but
    :data:`TRAINER_STATE`): two checkpoints with the same digest answer every prompt alike. A name
    that is not a directory (a model id) is its own key."""
    if not Path(model_dir).is_dir():
        return f"name:{model_dir}"
    h = hashlib.sha256()
    for f in sorted(p for p in Path(model_dir).rglob("*") if p.is_file() and p.name not in TRAINER_STATE):
        h.update(f.relative_to(model_dir).as_posix().encode("utf-8") + b"\0")
        h.update(hashlib.sha256(f.read_bytes()).digest())
    return h.hexdigest()


def evaluate_runs(pl: Plan, runs: dict[str, list[tuple[int, Path]]], *, max_new_tokens: int, n_boot: int, seed: int,
                  max_chars: int | None = None, generation_kwargs=None) -> Report:
    """Every checkpoint of every arm answers the held-out prompts; the report of those answers.
    A checkpoint with the same files as one already run (:func:`model_digest`: e.g. both arms' step 0,
    or both arms when no reward differed between them) reuses its completions instead of generating
    them again (greedy decoding of the same model and prompts on one machine)."""
    prompts = _prompts(pl.heldout, max_chars)
    rows = []
    answered: dict[str, list[str]] = {}
    for arm, ckpts in runs.items():
        for step, path in ckpts:
            key = model_digest(path)
            if key not in answered:
                kwargs = generation_kwargs(path) if callable(generation_kwargs) else generation_kwargs
                answered[key] = greedy_generate(path, prompts, max_new_tokens=max_new_tokens, generation_kwargs=kwargs)
            done = answered[key]
            rows += [{"arm": arm, "step": step, "uid": int(u), "completion": c} for u, c in zip(pl.heldout["uid"], done)]
    return build_report(pl.old, pl.new, pd.DataFrame(rows), n_boot=n_boot, seed=seed)


def headline_keys(summary: dict[str, Any]) -> list[str]:
    """The summary's entries in ``metrics.json`` (the DVC metric): held-out and changed rows, flip
    rate, and per arm the accuracy under the new labels at the last checkpoint."""
    keys = ["heldout_rows", "changed_rows", "flip_rate", *(f"{arm}.accuracy_new" for arm in ARMS)]
    return [k for k in keys if k in summary]


def write(project: Project, report: Report, note: str, extra: dict[str, Any], out: Path | None = None) -> Path:
    """The report's files (module doc) into ``out`` (default ``compare.report.out``)."""
    from medcalc_maintained.scoring.report import plot_curves

    out = Path(out or project.param("compare.report.out"))
    summary = {**report.summary, **{k: v for k, v in extra.items() if not isinstance(v, (list, dict, str))}}
    write_json(out / METRICS, {k: summary[k] for k in headline_keys(summary)})
    write_json(out / "report.json", {"note": note, **extra, "summary": summary,
                                     "curves": json.loads(report.curves.to_json(orient="records")),
                                     "per_calculator": json.loads(report.per_calculator.to_json(orient="records"))})
    wide = wide_curves(report.curves)
    write_atomic(out / "curves.csv", lambda p: wide.to_csv(p, index=False, float_format="%.4f"))
    per = report.per_calculator
    write_atomic(out / "per_calculator.csv", lambda p: per.to_csv(p, index=False, float_format="%.4f"))
    write_atomic(out / "curves.png", lambda p: plot_curves(report.curves, p, note))
    return out


def smoke(project: Project, out: Path | None = None) -> tuple[Report, str, Path]:
    """The DVC stage: train both arms with the smoke settings, then report on the held-out rows."""
    import torch

    from medcalc_maintained.scoring.train import TrainParams, build_arm_dataset, run_grpo, smoke_generation_kwargs

    torch.set_num_threads(1)  # the same reductions on every machine
    pl = plan(project)
    params = TrainParams.from_dict(project.section("compare.train"))
    data = {arm: build_arm_dataset(pl.train, pl.labels[arm]) for arm in ARMS}
    if (list(data["original"]["prompt"]) != list(data["maintained"]["prompt"])
            or list(data["original"]["uid"]) != list(data["maintained"]["uid"])):
        raise ValueError("the two arms do not train on the same prompts in the same order")
    extra: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="compare-report-") as tmp:
        runs = {}
        for arm in ARMS:
            result = run_grpo(data[arm], None, params, smoke=True, output_dir=Path(tmp) / arm, progress=False,
                              save_steps=1)
            extra[f"{arm}.steps"] = result.steps
            extra[f"{arm}.skipped_steps"] = int(result.skipped_steps.get("total", 0))
            runs[arm] = checkpoints(Path(tmp) / arm)
        s = params.smoke

        def bias(path: Path):
            from transformers import AutoTokenizer

            return smoke_generation_kwargs(AutoTokenizer.from_pretrained(str(path)), s["answer_bias"])

        p = project.section("compare.report")
        report = evaluate_runs(pl, runs, max_new_tokens=s["max_completion_length"], n_boot=p["n_boot"],
                               seed=p["seed"], max_chars=s["max_prompt_chars"], generation_kwargs=bias)
    note = f"CPU smoke (a random 2-layer model, {s['max_steps']} GRPO steps per arm); " + pl.note
    return report, note, write(project, report, note, {"smoke": True, **extra}, out)


def limit_heldout(pl: Plan, rows: int, seed: int) -> Plan:
    """``pl`` with ``rows`` of its held-out rows (a seeded draw, kept in uid order); the training
    prompts and labels unchanged. The note says so."""
    import random

    uids = sorted(int(u) for u in pl.heldout["uid"])
    if rows >= len(uids):
        return pl
    keep = set(random.Random(seed).sample(uids, rows))

    def sub(df: pd.DataFrame) -> pd.DataFrame:
        return df[df["uid"].astype(int).isin(keep)].reset_index(drop=True)

    return Plan(sub(pl.old), sub(pl.new), sub(pl.heldout), pl.train, pl.labels,
                pl.note + f"; {rows} of the {len(uids)} held-out rows evaluated (a seeded draw, seed {seed})")


def report_runs(project: Project, runs: dict[str, Path], *, base_model: Path | None = None,
                max_new_tokens: int | None = None, out: Path | None = None, heldout_rows: int | None = None,
                note: str | None = None) -> tuple[Report, str, Path]:
    """``compare report --run ARM=DIR``: the report of real training runs (their ``checkpoint-N``).
    ``heldout_rows`` evaluates a seeded draw of that many held-out rows (:func:`limit_heldout`);
    ``note`` is put before the report's note (e.g. what the arms' starting checkpoint is)."""
    pl = plan(project)
    p = project.section("compare.report")
    if heldout_rows is not None:
        pl = limit_heldout(pl, heldout_rows, p["seed"])
    if note:
        pl.note = f"{note}; {pl.note}"
    ckpts = {arm: checkpoints(Path(d), base_model) for arm, d in runs.items()}
    report = evaluate_runs(pl, ckpts, n_boot=p["n_boot"], seed=p["seed"],
                           max_new_tokens=max_new_tokens or int(project.param("compare.train.max_completion_length")))
    extra: dict[str, Any] = {"smoke": False}
    for arm, d in runs.items():
        result = Path(d) / "train_result.json"
        if result.is_file():
            skipped = json.loads(result.read_text()).get("skipped_steps", {})
            extra[f"{arm}.skipped_steps"] = int(skipped.get("total", 0))
    return report, pl.note, write(project, report, pl.note, extra, out)
