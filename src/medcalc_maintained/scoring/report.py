"""``compare report``: each arm's checkpoints evaluated on held-out rows, under both label versions.

Inputs: the ``old`` (base, e.g. 1.0.0) and ``new`` (maintained, e.g. 2.0.0) labels of the held-out
rows (columns of :data:`medcalc_maintained.scoring.noise_diagnostics.LABEL_COLUMNS`), the held-out
prompts (chat messages, one per uid, the same list in the same order for every checkpoint) and,
per arm, its checkpoints as ``(step, model directory)``. Every checkpoint answers every held-out
prompt by greedy decoding (no sampling: the report of a checkpoint does not depend on a seed);
the bootstrap intervals are seeded (``seed`` plus the checkpoint's position, the same for both arms).

What it reports, per arm and checkpoint step (``curves``):

* ``accuracy_new`` / ``accuracy_old``: share of held-out rows answered correctly (reward 1 of
  Eq. 2) under the new and under the old labels, with percentile bootstrap 95% intervals;
* ``accuracy_changed`` / ``accuracy_unchanged``: accuracy under the new labels on the rows whose
  reward flips between the versions and on the others;
* ``old_label_share``: on the changed rows, the share of answers correct under the *old* label
  (active noise: the policy reproduces the label the maintained release corrected).

``per_calculator``: the flip rate of each calculator on the held-out rows and, at each arm's last
checkpoint, its old-label share (:func:`medcalc_maintained.scoring.noise_diagnostics.noise_diagnostics`).
``summary``: scalars only (the DVC metric); lists go to ``report.json``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from medcalc_maintained.grading.grade import bootstrap_accuracy_ci
from medcalc_maintained.scoring.noise_diagnostics import grade_rollouts, summarize


@dataclass
class Report:
    curves: pd.DataFrame  # one row per (arm, step)
    per_calculator: pd.DataFrame
    summary: dict[str, Any]  # scalars only
    completions: pd.DataFrame  # arm, step, uid, completion


def _rate(correct: np.ndarray, rng: np.random.Generator, n_boot: int) -> tuple[float, float, float]:
    n, k = len(correct), int(correct.sum())
    if n == 0:
        return float("nan"), float("nan"), float("nan")
    lo, hi = bootstrap_accuracy_ci(k, n, rng, n_boot)
    return round(k / n, 4), round(lo, 4), round(hi, 4)


def _share(hits: pd.Series) -> float:
    """The share of ``hits`` that are true, NaN for none (a point estimate: no interval)."""
    return round(int(hits.sum()) / len(hits), 4) if len(hits) else float("nan")


def _curve_row(arm: str, step: int, graded: pd.DataFrame, rng: np.random.Generator, n_boot: int) -> dict[str, Any]:
    ch, un = graded[graded["changed"]], graded[~graded["changed"]]
    new, new_lo, new_hi = _rate(graded["new_hit"].to_numpy(bool), rng, n_boot)
    old, old_lo, old_hi = _rate(graded["old_hit"].to_numpy(bool), rng, n_boot)
    return {"arm": arm, "step": step, "rows": len(graded),
            "accuracy_new": new, "accuracy_new_ci_low": new_lo, "accuracy_new_ci_high": new_hi,
            "accuracy_old": old, "accuracy_old_ci_low": old_lo, "accuracy_old_ci_high": old_hi,
            "accuracy_changed": _share(ch["new_hit"]),
            "accuracy_unchanged": _share(un["new_hit"]),
            "old_label_share": _share(ch["old_hit"])}


def build_report(old: pd.DataFrame, new: pd.DataFrame, completions: pd.DataFrame, *, n_boot: int,
                 seed: int) -> Report:
    """The report from already generated ``completions`` (one per arm, step and held-out uid)."""
    missing = [c for c in ("arm", "step", "uid", "completion") if c not in completions.columns]
    if missing:
        raise ValueError(f"completions lack column(s) {missing}")
    flips, graded = grade_rollouts(old, new, completions)  # every completion graded once
    arms = list(dict.fromkeys(graded["arm"]))
    steps = sorted(set(graded["step"]))
    counts = {a: sorted(set(graded.loc[graded["arm"] == a, "step"])) for a in arms}
    if len({tuple(v) for v in counts.values()}) > 1:
        raise ValueError(f"the arms were evaluated at different steps: {counts}")
    rows = []
    for i, step in enumerate(steps):
        for arm in arms:  # the same seed for both arms at a step
            g = graded[(graded["arm"] == arm) & (graded["step"] == step)]
            rows.append(_curve_row(arm, int(step), g, np.random.default_rng([seed, i]), n_boot))
    curves = pd.DataFrame(rows)
    last = graded[graded["step"] == steps[-1]]
    per, diag = summarize(flips, last)
    per = per.rename(columns={f"{a}_old_label_share": f"old_label_share_{a}" for a in arms})
    summary: dict[str, Any] = {"heldout_rows": diag["rows"], "changed_rows": diag["changed_rows"],
                               "flip_rate": diag["flip_rate"], "last_step": int(steps[-1])}
    for arm in arms:
        end = curves[(curves["arm"] == arm) & (curves["step"] == steps[-1])].iloc[0]
        for key in ("accuracy_new", "accuracy_new_ci_low", "accuracy_new_ci_high", "accuracy_old",
                    "accuracy_old_ci_low", "accuracy_old_ci_high", "accuracy_changed", "accuracy_unchanged",
                    "old_label_share"):
            summary[f"{arm}.{key}"] = None if pd.isna(end[key]) else float(end[key])
    return Report(curves, per, summary, completions)


def wide_curves(curves: pd.DataFrame) -> pd.DataFrame:
    """One row per step, one column per (arm, measure): the file ``dvc plots`` draws."""
    cols = ["accuracy_changed", "accuracy_unchanged", "accuracy_new", "accuracy_old", "old_label_share"]
    wide = curves.pivot(index="step", columns="arm", values=cols)
    measures, arms = wide.columns.get_level_values(0), wide.columns.get_level_values(1)
    wide.columns = [f"{arm}_{measure}" for measure, arm in zip(measures, arms)]
    return wide.reset_index()


def greedy_generate(model_dir: str | Path, prompts: list[Any], *, max_new_tokens: int,
                    generation_kwargs: dict[str, Any] | None = None, batch_size: int = 32) -> list[str]:
    """Greedy completions of a local checkpoint for chat ``prompts`` (needs the ``train`` extra)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(model_dir))
    tok.padding_side = "left"
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    dtype = torch.bfloat16 if torch.cuda.is_available() else torch.float32
    model = AutoModelForCausalLM.from_pretrained(str(model_dir), dtype=dtype)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model.to(device).eval()  # type: ignore[arg-type]  # transformers types .to as @wraps(Module.to): self twice
    texts = [tok.apply_chat_template(p, tokenize=False, add_generation_prompt=True) for p in prompts]
    out: list[str] = []
    with torch.no_grad():
        for i in range(0, len(texts), batch_size):
            enc = tok(texts[i:i + batch_size], return_tensors="pt", padding=True, add_special_tokens=False).to(device)
            gen = model.generate(  # type: ignore[misc]  # @torch.no_grad() on generate hides its self type
                **enc, max_new_tokens=max_new_tokens, do_sample=False, pad_token_id=tok.pad_token_id,
                **(generation_kwargs or {}))
            out += tok.batch_decode(gen[:, enc["input_ids"].shape[1]:], skip_special_tokens=True)
    return out


def plot_curves(curves: pd.DataFrame, path: str | Path, title: str) -> None:
    """Accuracy under the new labels on changed and unchanged rows, per arm, over checkpoint steps."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2))
    for arm, g in curves.groupby("arm", sort=True):
        g = g.sort_values("step")
        ax.plot(g["step"], g["accuracy_changed"], marker="o", label=f"{arm}: changed rows")
        ax.plot(g["step"], g["accuracy_unchanged"], marker="s", linestyle="--", label=f"{arm}: unchanged rows")
    ax.set_xlabel("training step (checkpoint)")
    ax.set_ylabel("accuracy under the maintained labels")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(title if len(title) <= 70 else title[:67] + "...", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100, format="png", metadata={"Software": None})
    plt.close(fig)
