"""Rows the triage queue sends back to physicians first, whatever their priority.

Three kinds, in this order (:data:`MARKERS`): labels that contradict the declared definition
(:func:`medcalc_maintained.quality.definitions.policy_contradictions`, read back from the stage
``recompute-report``'s report by :func:`requeue`), then verified labels no recorded derivation
reproduces (stage ``triage``), then verified rows an input of which the note contradicts (stage
``certify``: the note's value and its quote). Each is a boolean column of the queue set by :func:`mark_queue`.
"""

from __future__ import annotations

import pandas as pd


def requeue(contradictions: pd.DataFrame) -> dict[tuple[str, int], str]:
    """Rows to re-review, ``(split, uid) -> reason``, for the triage queue."""
    return {(str(s), int(u)): f"policy contradiction: {why}"
            for s, u, why in zip(contradictions["split"], contradictions["uid"], contradictions["reason"])}


# Marker columns of the triage queue, in the order their rows are re-reviewed first: labels that
# contradict the declared definition, then verified labels no recorded derivation reproduces.
MARKERS = ("policy_contradiction", "underived", "contradicted")


def mark_queue(queue: pd.DataFrame, rows: dict[tuple[str, int], str], column: str = "policy_contradiction") -> pd.DataFrame:
    """The triage queue with the marked rows first (boolean ``column``, one of :data:`MARKERS`; the
    reason prepended to ``evidence``; rows of earlier markers stay ahead) and ``rank`` renumbered;
    the priorities are kept."""
    q = queue.copy()
    keys = list(zip(q["split"].astype(str), q["uid"].astype(int)))
    q[column] = [k in rows for k in keys]
    if "evidence" in q.columns:
        q["evidence"] = [f"{rows[k]}; {e}" if k in rows and str(e) else rows.get(k, e)
                         for k, e in zip(keys, q["evidence"].fillna("").astype(str))]
    marks = [m for m in MARKERS if m in q.columns]
    q = q.sort_values([*marks, "priority", "split", "uid"], ascending=[*[False] * len(marks), False, True, True],
                      kind="mergesort").reset_index(drop=True)
    if "rank" in q.columns:
        q["rank"] = range(1, len(q) + 1)
    return q


__all__ = ["MARKERS", "mark_queue", "requeue"]
