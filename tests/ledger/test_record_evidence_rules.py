"""The evidence rules of a record by its release (ledger/rules.py: evidence_problems): until 2.3.0 a record holds
only the inputs its derivation needs; from 2.3.0 on, where every input's evidence ships, an input that changes
nothing is the quote that certifies the value the derivation already uses. On the real uid 1."""

from __future__ import annotations

from medcalc_maintained.core.rows import entities_or_empty
from medcalc_maintained.ledger.rules import derivation_problems


def _record(release: str, real_instances) -> tuple[dict, dict]:
    row = real_instances[real_instances["uid"] == 1].iloc[0]
    note = row["Patient Note"]
    quote = "87-year-old man"
    start = note.index(quote)
    age = {"name": "age", "value": 87, "unit": "years", "evidence": {"start": start, "end": start + len(quote), "text": quote},
           "source": "hand"}
    rec = {"release": release, "new_value": str(row["Ground Truth Answer"]), "inputs": [age]}
    ctx = {"calculator_id": 2, "output_type": str(row["Output Type"]), "style": None, "note": note,
           "entities": entities_or_empty(row["entities"])}
    return rec, ctx


def test_an_input_that_changes_nothing_is_refused_before_2_3_0_and_is_evidence_from_it(real_instances):
    rec, ctx = _record("2.2.0", real_instances)
    assert any("changes nothing" in p for _, p in derivation_problems(rec, **ctx))
    for release in ("2.3.0", "unreleased"):
        rec, ctx = _record(release, real_instances)
        assert derivation_problems(rec, **ctx) == []
