"""Stage ``compare``: what a label change does to rewards (paper section 4), for any two releases.

The labels of a release come from :func:`medcalc_maintained.release.build_tables` (the CLI) or,
for an explicit ledger, from ``apply.build(instances, ledger, upto=version)``.
* :func:`export_arms` - the two GRPO training arms as verl parquet rows and as TRL-ready rows;
  identical prompts in identical order, differing only in ground truth (asserted).
* :func:`reward_noise` - for every row, is a policy that answers the new label rewarded under the
  base labels, and vice versa; flip rates overall and per calculator, and the expected reward gap
  under the reward R = lam*1{parsable} + (1-lam)*1{correct}.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from medcalc_maintained.reward import DEFAULT_LAMBDA, ground_truth_json, score
from medcalc_maintained.train import SYSTEM_PROMPT, build_prompt

DATA_SOURCE = "medcalc-maintained"
ABILITY = "clinical-calculation"
LABEL_COLUMNS = ["split", "uid", "Calculator ID", "Calculator Name", "Output Type", "Ground Truth Answer",
                 "Lower Limit", "Upper Limit", "Label Status"]


def arm_rows(base: pd.DataFrame, new: pd.DataFrame, rows: str = "verified") -> pd.DataFrame:
    """The rows both arms train on: ``verified`` = rows the new release verified (its status is not
    ``unverified``), ``all`` = every row. Ordered by split and uid."""
    key = ["split", "uid"]
    b = base[LABEL_COLUMNS + ["Patient Note", "Question"]].set_index(key)
    n = new[LABEL_COLUMNS].set_index(key)
    joined = b.join(n, rsuffix=" (new)", how="inner")
    if rows == "verified":
        joined = joined[joined["Label Status (new)"] != "unverified"]
    elif rows != "all":
        raise ValueError(f"rows must be 'verified' or 'all', not {rows!r}")
    return joined.reset_index().sort_values(key, kind="stable").reset_index(drop=True)


def _verl_frame(rows: pd.DataFrame, suffix: str) -> pd.DataFrame:
    out = []
    for r in rows.to_dict("records"):
        out.append({
            "data_source": DATA_SOURCE,
            "prompt": build_prompt(str(r["Patient Note"]), str(r["Question"])),
            "ability": ABILITY,
            "reward_model": {"style": "rule", "ground_truth": ground_truth_json(
                r["Ground Truth Answer" + suffix], r["Lower Limit" + suffix], r["Upper Limit" + suffix],
                r["Output Type" + suffix])},
            "extra_info": {"uid": int(r["uid"]), "split": str(r["split"]), "calculator_id": int(r["Calculator ID"])},
        })
    return pd.DataFrame(out)


def _trl_frame(rows: pd.DataFrame, suffix: str) -> pd.DataFrame:
    return pd.DataFrame({
        "prompt": [build_prompt(str(n), str(q)) for n, q in zip(rows["Patient Note"], rows["Question"])],
        "ground_truth": rows["Ground Truth Answer" + suffix].astype(str).tolist(),
        "lower": rows["Lower Limit" + suffix].astype(str).tolist(),
        "upper": rows["Upper Limit" + suffix].astype(str).tolist(),
        "output_type": rows["Output Type" + suffix].astype(str).tolist(),
        "uid": rows["uid"].astype("int64").tolist(),
    })


def export_arms(base: pd.DataFrame, new: pd.DataFrame, rows: str = "verified") -> dict[str, dict[str, pd.DataFrame]]:
    """``{"original": {"verl": df, "trl": df}, "maintained": {...}}`` over the same rows."""
    r = arm_rows(base, new, rows)
    arms = {"original": {"verl": _verl_frame(r, ""), "trl": _trl_frame(r, "")},
            "maintained": {"verl": _verl_frame(r, " (new)"), "trl": _trl_frame(r, " (new)")}}
    a, b = arms["original"]["verl"], arms["maintained"]["verl"]
    assert a["prompt"].tolist() == b["prompt"].tolist(), "arms differ in prompts"
    assert [x["uid"] for x in a["extra_info"]] == [x["uid"] for x in b["extra_info"]], "arms differ in order"
    assert a.drop(columns=["reward_model"]).astype(str).equals(b.drop(columns=["reward_model"]).astype(str)), \
        "arms differ in something other than ground truth"
    return arms


def reward_noise(base: pd.DataFrame, new: pd.DataFrame, rows: str = "verified", lam: float = DEFAULT_LAMBDA
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


def write_jsonl_predictions(labels: pd.DataFrame, path: Path, label_column: str = "label", status_column: str = "status") -> int:
    """A predictions JSONL (uid, output) from a relabel output: labeled rows answer their label."""
    n = 0
    with open(path, "w", encoding="utf-8") as fh:
        for r in labels.to_dict("records"):
            if str(r.get(status_column, "labeled")) != "labeled":
                continue
            fh.write(json.dumps({"uid": int(r["uid"]), "output": f"<answer>{r[label_column]}</answer>"}) + "\n")
            n += 1
    return n


__all__ = ["export_arms", "reward_noise", "plot_flip_rates", "write_jsonl_predictions", "SYSTEM_PROMPT"]
