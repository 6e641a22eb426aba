"""Issue 25 ("every verified label is a derivation"): the derivation records of
``data/corrections/2026-11-derivations.yaml`` applied in a release build of 2.1.0 — every record's
row derives, corrected rows without an explanation stay under 3%, and an ``inputs-corrected``
record (no evidenced reading gave the adjudicated label) ships the declared definition's value and
is listed under "Inputs corrected" with the adjudicated value and the evidence."""

from __future__ import annotations

import json

import pandas as pd

from medcalc_maintained.release.card import change_sections


def _row(rid: str, old: str, new: str, status: str, **extra) -> dict:
    return {"id": rid, "split": "test", "uid": 1, "Calculator Name": "c", "old_value": old, "new_value": new,
            "label_status": status, "source": "contributor", "error_type": None, "reviewer_id": "x",
            "reviewer_role": "maintainer", "reviewer_specialty": None, "decided_at": "2026-11-24", "rationale": "r",
            "change_severity": "L1", "adjudicated_value": None, "inputs": None, "reconstruction": None, **extra}


def test_an_inputs_corrected_record_back_to_upstream_is_listed_as_inputs_corrected():
    inputs = json.dumps([{"name": "Sodium", "value": 134, "unit": "mmol/L",
                          "evidence": {"start": 3, "end": 20, "text": "sodium 134 mmol/L"}}])
    rows = [_row("R1", "1.8", "0", "confirmed", adjudicated_value="1.8", inputs=inputs, reconstruction="inputs-corrected"),
            _row("R2", "25.24", "25.238", "confirmed")]
    text = "\n".join(change_sections(pd.DataFrame(rows), {}))
    part = text.split("### Inputs corrected (1)")[1].split("\n### ")[0]
    assert "| R1 |" in part and "adjudicated 1.8" in part and '"sodium 134 mmol/L", characters 3-20' in part
    assert "| R2 |" in text.split("### Confirmed with a recomputed value (1)")[1]
