"""The two GRPO training arms of the comparison (paper section 4) between two label sets.

Both arms hold the same rows, prompts and order and differ only in ground truth (asserted):
verl parquet rows (``data_source, prompt, ability, reward_model, extra_info``) and TRL-ready rows
(``prompt, ground_truth, lower, upper, output_type, uid``).
"""

from __future__ import annotations

import pandas as pd

from medcalc_maintained.grading.prompts import build_prompt
from medcalc_maintained.grading.reward import ground_truth_json

DATA_SOURCE = "medcalc-maintained"
ABILITY = "clinical-calculation"
LABEL_COLUMNS = ["split", "uid", "Calculator ID", "Calculator Name", "Output Type", "Ground Truth Answer",
                 "Lower Limit", "Upper Limit", "Label Status"]


def arm_rows(base: pd.DataFrame, new: pd.DataFrame, rows: str) -> pd.DataFrame:
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


def export_arms(base: pd.DataFrame, new: pd.DataFrame, rows: str) -> dict[str, dict[str, pd.DataFrame]]:
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
