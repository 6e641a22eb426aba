"""Detector metrics of the checks: precision and recall of ``error`` findings against the labels the
audit campaign changed (over the adjudicated rows), per check and combined; flags on unverified rows."""

from __future__ import annotations

from typing import Any

import pandas as pd

ADJUDICATED = ("corrected", "abstain", "confirmed")
CHANGED = ("corrected", "abstain")


def _pr(flagged: set, changed: set, adjudicated: set) -> dict[str, Any]:
    f = flagged & adjudicated
    tp = len(f & changed)
    return {"flagged": len(f), "true_positives": tp,
            "precision": round(tp / len(f), 4) if f else None,
            "recall": round(tp / len(changed), 4) if changed else None}


def detector_metrics(findings: pd.DataFrame, maintained: pd.DataFrame) -> dict[str, Any]:
    """Per check and combined (``error`` severity): flagged, true positives, precision, recall over
    the adjudicated rows; and how many unverified rows each flags."""
    status = maintained.set_index(["split", "uid"])["Label Status"].astype(str)
    adjudicated = set(status[status.isin(ADJUDICATED)].index)
    changed = set(status[status.isin(CHANGED)].index)
    unverified = set(status[status == "unverified"].index)
    errors = findings[findings["severity"] == "error"]
    keys = list(zip(errors["split"], errors["uid"].astype(int)))
    by_check: dict[str, set] = {}
    for (k, c) in zip(keys, errors["check"]):
        by_check.setdefault(c, set()).add(k)
    per_check = {c: {**_pr(s, changed, adjudicated), "unverified_flagged": len(s & unverified)}
                 for c, s in sorted(by_check.items())}
    combined = set(keys)
    return {
        "adjudicated_rows": len(adjudicated),
        "changed_rows": len(changed),
        "combined": {**_pr(combined, changed, adjudicated), "unverified_flagged": len(combined & unverified),
                     "unverified_rows": len(unverified)},
        "per_check": per_check,
        "findings_by_severity": {s: int(n) for s, n in findings["severity"].value_counts().items()},
    }
