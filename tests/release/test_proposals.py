"""Unverified rows of ``full`` (releases from 2.1.0 on) carry a proposal backed by the checks' error
findings, never a label: ``Proposed Answer`` and ``Proposal`` (issue 25 item 6)."""

from __future__ import annotations

import pandas as pd

from medcalc_maintained.calculators import compute
from medcalc_maintained.core.rows import rows_of
from medcalc_maintained.quality.checks import Instance, run
from medcalc_maintained.release.proposals import patch_of, proposal


def test_a_contradicted_criterion_is_proposed_absent_with_the_notes_quote():
    note = ("A 58-year-old man admitted for pneumonia. He presents with an acute pulmonary embolism "
            "confirmed on CT angiography. No surgery.")
    entities = {"age": [58, "years"], "sex": "Male", "Body Mass Index (BMI)": [24.0, "kg/m^2"],
                "Previously Documented Pulmonary Embolism": True}
    inst = Instance(note, "What is the patient's Caprini Score?", entities, "5", "integer", 36)
    found = [f for f in run(inst) if f.check == "boolean_contradicted"]
    assert found, [f.check for f in run(inst)]
    (inp,) = patch_of(inst, found)
    assert inp["name"] == "Previously Documented Pulmonary Embolism" and inp["value"] is False
    ev = inp["evidence"]
    assert note[ev["start"]:ev["end"]] == ev["text"] and "pulmonary embolism" in ev["text"]
    # with the criterion absent Caprini scores 3 points less (a previous DVT/PE is worth 3)
    (row,) = rows_of(pd.DataFrame([{"Calculator ID": "36", "Patient Note": note, "Ground Truth Answer": "5",
                                    "Output Type": "integer", "split": "test", "uid": 1}]))
    answer, doc = proposal(row, entities, found)
    assert int(compute(36, entities).value) - int(answer) == 3 and doc["derivation"]["value"] == answer
    assert doc["findings"][0]["evidence"] == ev
