"""Reward noise between two label sets (paper section 4): what a label change does to rewards.

For every row both arms train on (:func:`medcalc_maintained.scoring.arms.arm_rows`): is a policy
that answers the new label rewarded under the base labels, and vice versa; flip rates overall and
per calculator, and the expected reward gap under R = lam*1{parsable} + (1-lam)*1{correct}.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from medcalc_maintained.grading.reward import score
from medcalc_maintained.scoring.arms import arm_rows


def reward_noise(base: pd.DataFrame, new: pd.DataFrame, *, rows: str, lam: float
                 ) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Per-row reward flips between two label sets, and the summary (overall and per calculator)."""
    r = arm_rows(base, new, rows)
    recs = []
    for x in r.to_dict("records"):
        new_ans, base_ans = f"<answer>{x['Ground Truth Answer (new)']}</answer>", f"<answer>{x['Ground Truth Answer']}</answer>"
        r_new_under_base = score(new_ans, x["Ground Truth Answer"], x["Lower Limit"], x["Upper Limit"], x["Output Type"], lam=lam)
        r_new_under_new = score(new_ans, x["Ground Truth Answer (new)"], x["Lower Limit (new)"], x["Upper Limit (new)"],
                                x["Output Type (new)"], lam=lam)
        r_base_under_new = score(base_ans, x["Ground Truth Answer (new)"], x["Lower Limit (new)"], x["Upper Limit (new)"],
                                 x["Output Type (new)"], lam=lam)
        recs.append({
            "split": x["split"], "uid": int(x["uid"]), "calculator": x["Calculator Name"],
            "base_label": x["Ground Truth Answer"], "new_label": x["Ground Truth Answer (new)"],
            "new_status": x["Label Status (new)"],
            "new_answer_rewarded_under_base": r_new_under_base == 1.0,
            "base_answer_rewarded_under_new": r_base_under_new == 1.0,
            "reward_gap": r_new_under_new - r_new_under_base,
        })
    df = pd.DataFrame(recs)
    flip = ~df["new_answer_rewarded_under_base"]
    df["flipped"] = flip
    per = (df.groupby("calculator")
           .agg(rows=("uid", "size"), flip_rate=("flipped", "mean"), reward_gap=("reward_gap", "mean"))
           .reset_index().sort_values("flip_rate", ascending=False))
    summary = {
        "rows": int(len(df)),
        "row_selection": rows,
        "lambda": lam,
        "flip_rate": round(float(flip.mean()), 4) if len(df) else None,
        "new_answer_rewarded_under_base": round(float(df["new_answer_rewarded_under_base"].mean()), 4) if len(df) else None,
        "base_answer_rewarded_under_new": round(float(df["base_answer_rewarded_under_new"].mean()), 4) if len(df) else None,
        "expected_reward_gap": round(float(df["reward_gap"].mean()), 4) if len(df) else None,
        "flips_by_new_status": {k: int(v) for k, v in df.loc[flip, "new_status"].value_counts().items()},
        "per_calculator": [{k: (round(v, 4) if isinstance(v, float) else v) for k, v in d.items()}
                           for d in per.to_dict("records")],
    }
    return df, summary


def plot_flip_rates(per_calculator: list[dict[str, Any]], path: Path, title: str) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = sorted(per_calculator, key=lambda d: d["flip_rate"])
    fig, ax = plt.subplots(figsize=(8, max(4, 0.22 * len(rows))))
    ax.barh([d["calculator"] for d in rows], [100 * d["flip_rate"] for d in rows], color="#c0504d")
    ax.set_xlabel("rows whose reward flips (%)")
    ax.set_xlim(0, 100)
    ax.set_title(title, fontsize=10)
    ax.tick_params(axis="y", labelsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110, format="png", metadata={"Software": None})
    plt.close(fig)
    return path
