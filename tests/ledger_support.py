"""A valid accepted ledger record for tests (uid 1 of the v1.0 test split: 25.238 -> 30), with
any field replaced by keyword."""

from __future__ import annotations


def record(**kw) -> dict:
    base = {
        "id": "T-0001", "uid": 1, "split": "test", "old_value": "25.238", "new_value": "30",
        "decision": "accepted", "label_status": "corrected", "error_type": "extraction",
        "rationale": "Weight was read from an earlier admission.", "evidence": ["note, paragraph 2"],
        "source": "contributor", "reviewer": {"id": "md-1", "role": "physician", "specialty": "nephrology"},
        "blinded": True, "decided_at": "2026-01-15",
    }
    base.update(kw)
    return base
