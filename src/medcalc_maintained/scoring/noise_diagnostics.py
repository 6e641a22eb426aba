"""Noise diagnostics of a two-label GRPO comparison: what the label change did, and what the policies learnt.

Inputs: the ``old`` and ``new`` label versions of the same rows (columns ``uid``,
``Calculator Name``, ``Ground Truth Answer``, ``Lower Limit``, ``Upper Limit``, ``Output Type``;
only uids in both are used) and ``rollouts`` of the trained policies on those rows (columns
``arm``, ``uid``, ``completion``). Rewards and correctness are Eq. 2 of
:mod:`medcalc_maintained.grading.reward` (1 = correct).

* **Reward flip** of a row: answering one version's label is not rewarded as correct under the
  other version (either direction). A flipped row is a *changed* row; the others are *unchanged*.
  The flip rate of a calculator is its changed rows / its rows.
* **Active vs inactive noise** (per arm, over its rollouts on changed rows): a rollout that is
  correct under the *old* label reproduces the noise (``old_label_share``, active noise); one correct
  under the *new* label does not (``new_label_share``); the rest are wrong under both
  (``neither_share``). A rollout can count for both only where the two bands overlap.
* **Accuracy on changed vs unchanged rows** (per arm): the share of its rollouts that are correct
  under the *new* labels, the same corrected held-out labels for both arms.
"""

from __future__ import annotations

from typing import Any, cast

import pandas as pd

from medcalc_maintained.core.rows import row_dicts
from medcalc_maintained.grading.reward import score

LABEL_COLUMNS = ("uid", "Calculator Name", "Ground Truth Answer", "Lower Limit", "Upper Limit", "Output Type")


def _check(df: pd.DataFrame, cols: tuple[str, ...], what: str) -> None:
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise ValueError(f"{what} lack column(s) {missing}")
    if what != "rollouts" and df["uid"].duplicated().any():
        raise ValueError(f"{what} repeat uid(s) {sorted(df.loc[df['uid'].duplicated(), 'uid'].tolist())[:10]}")


def _correct(completion: Any, lab: dict[str, Any]) -> bool:
    return score(completion, lab["Ground Truth Answer"], lab["Lower Limit"], lab["Upper Limit"],
                 lab["Output Type"]) == 1.0


def label_flips(old: pd.DataFrame, new: pd.DataFrame) -> pd.DataFrame:
    """One row per shared uid: the calculator, both labels and ``changed`` (the reward flips)."""
    _check(old, LABEL_COLUMNS, "old labels")
    _check(new, LABEL_COLUMNS, "new labels")
    n = new.set_index(new["uid"].astype("int64"))
    recs = []
    for o in row_dicts(old):
        uid = int(o["uid"])
        if uid not in n.index:
            continue
        w = cast("dict[str, Any]", n.loc[uid].to_dict())  # a row keyed by its label columns
        changed = not (_correct(f"<answer>{w['Ground Truth Answer']}</answer>", o)
                       and _correct(f"<answer>{o['Ground Truth Answer']}</answer>", w))
        recs.append({"uid": uid, "calculator": o["Calculator Name"], "old_label": o["Ground Truth Answer"],
                     "new_label": w["Ground Truth Answer"], "changed": changed})
    if not recs:
        raise ValueError("the two label versions share no uid")
    return pd.DataFrame(recs)


def grade_rollouts(old: pd.DataFrame, new: pd.DataFrame, rollouts: pd.DataFrame
                   ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(:func:`label_flips`, the rollouts with ``calculator``, ``changed``, ``old_hit`` and
    ``new_hit`` added: each completion graded under both label versions)."""
    _check(rollouts, ("arm", "uid", "completion"), "rollouts")
    flips = label_flips(old, new)
    o = {int(r["uid"]): r for r in row_dicts(old)}
    w = {int(r["uid"]): r for r in row_dicts(new)}
    changed = dict(zip(flips["uid"], flips["changed"]))
    calc = dict(zip(flips["uid"], flips["calculator"]))
    uids = [int(u) for u in rollouts["uid"]]
    for uid, arm in zip(uids, rollouts["arm"]):
        if uid not in changed:
            raise ValueError(f"rollouts: uid {uid} (arm {arm!r}) is not labelled in both versions")
    g = rollouts.copy()
    g["arm"], g["uid"] = g["arm"].astype(str), uids
    g["calculator"] = [calc[u] for u in uids]
    g["changed"] = [bool(changed[u]) for u in uids]
    g["old_hit"] = [_correct(c, o[u]) for u, c in zip(uids, g["completion"])]
    g["new_hit"] = [_correct(c, w[u]) for u, c in zip(uids, g["completion"])]
    return flips, g


def noise_diagnostics(old: pd.DataFrame, new: pd.DataFrame, rollouts: pd.DataFrame
                      ) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Per-calculator table and summary of the flips, the noise shares and the accuracies (module doc)."""
    return summarize(*grade_rollouts(old, new, rollouts))


def summarize(flips: pd.DataFrame, graded: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, Any]]:
    """:func:`noise_diagnostics` of rollouts already graded by :func:`grade_rollouts`."""
    g = graded[["arm", "uid", "calculator", "changed", "old_hit", "new_hit"]]
    arms = sorted(g["arm"].unique())

    def rate(s: pd.Series) -> float | None:
        return round(float(s.mean()), 4) if len(s) else None

    per = (flips.groupby("calculator").agg(rows=("uid", "size"), changed=("changed", "sum"),
                                           flip_rate=("changed", "mean")).reset_index())
    for arm in arms:
        ga = g[g["arm"] == arm]
        on_changed = ga[ga["changed"]]
        per[f"{arm}_old_label_share"] = per["calculator"].map(on_changed.groupby("calculator")["old_hit"].mean())
    per = per.sort_values(["flip_rate", "calculator"], ascending=[False, True]).reset_index(drop=True)

    summary: dict[str, Any] = {
        "rows": int(len(flips)), "changed_rows": int(flips["changed"].sum()),
        "flip_rate": rate(flips["changed"]), "arms": {},
    }
    for arm in arms:
        ga = g[g["arm"] == arm]
        ch, un = ga[ga["changed"]], ga[~ga["changed"]]
        summary["arms"][arm] = {
            "rollouts": int(len(ga)),
            "rollouts_on_changed_rows": int(len(ch)),
            "old_label_share": rate(ch["old_hit"]),  # active noise
            "new_label_share": rate(ch["new_hit"]),
            "neither_share": rate(~(ch["old_hit"] | ch["new_hit"])),
            "accuracy_changed": rate(ch["new_hit"]),
            "accuracy_unchanged": rate(un["new_hit"]),
            "accuracy_all": rate(ga["new_hit"]),
        }
    return per, summary
