"""The card's sentence on recorded derivations (release/evidence_changes.py: share_text) counts a label as
accepted only when the verifier accepts every input its record recorded, whatever the row's status."""

from __future__ import annotations

import json

import pandas as pd

from medcalc_maintained.release.evidence_changes import share_text


def _row(uid: int, status: str, verdicts: list[bool] | None) -> dict:
    doc = {"status": status, "inputs": [{"name": f"x{i}", "verdict": {"supports": ok, "rule": "r", "reason": ""}}
                                        for i, ok in enumerate(verdicts or [])]}
    return {"uid": uid, "Label Status": "confirmed", "Derivation Status": status, "Derivation": json.dumps(doc),
            "Evidence Status": "certified"}


def test_recorded_derivations_count_as_accepted_only_with_every_input_accepted():
    full = pd.DataFrame([
        _row(1, "inputs-recorded", [True, True]),
        _row(2, "disputed", [True]),            # disputed, yet its recorded input is accepted
        _row(3, "unexplained", [True, False]),  # one input rejected
        _row(4, "reproduced", None),            # no recorded input: not counted
        {**_row(5, "reproduced", None), "Label Status": "unverified"},
    ])
    text = share_text(full, "2.3.0")
    assert text.startswith("3 of the 4 verified labels derive from inputs a ledger record recorded; for 2 of them (66.7%)"), text
