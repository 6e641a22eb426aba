"""Ledger helpers for tests: a valid accepted record (uid 1 of the v1.0 test split: 25.238 -> 30,
any field replaced by keyword), and the smallest project a ledger-writing command runs in."""

from __future__ import annotations

from pathlib import Path

import yaml


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


def minimal_project(root: Path, instances) -> Path:
    """A project at ``root`` with the ingested ``instances``, an empty campaign ledger and an empty
    hand-written ledger directory (params: ``apply.ledger`` and ``apply.out`` only)."""
    (root / "data" / "interim").mkdir(parents=True)
    instances.to_parquet(root / "data" / "interim" / "instances.parquet", index=False)
    (root / "data" / "corrections").mkdir(parents=True)
    (root / "data" / "campaign").mkdir(parents=True)
    (root / "data" / "campaign" / "audit-2025.yaml").write_text("corrections: []\n")
    (root / "params.yaml").write_text(yaml.safe_dump({"apply": {
        "ledger": ["data/campaign/audit-2025.yaml", "data/corrections"], "out": "data/maintained"}}))
    return root
