"""A criterion about one side is not stated by a finding of both or of no side (issue 45, precision): PERC's
unilateral leg swelling is not "2+ lower extremity edema" nor "swelling of the legs"; a sided swelling states it."""

from __future__ import annotations

import pytest

from tests.support.evidence_support import judge

PERC = 48
NAME = "Unilateral Leg Swelling"


@pytest.mark.parametrize("sentence,value,ok", [
    ("There is 2+ lower extremity edema.", True, False),
    ("She has swelling of the legs and ankles.", True, False),
    ("Bilateral leg edema was noted.", True, False),
    ("Examination showed lower limb edema to the knees.", True, False),
    ("Examination showed swelling of the left leg.", True, True),
    ("There was right lower extremity edema.", True, True),
    ("He reported unilateral leg swelling for two days.", True, True),
])
def test_a_swelling_of_both_legs_or_no_side_is_no_unilateral_swelling(sentence, value, ok):
    note = f"A 50-year-old man came to the emergency department with dyspnea. {sentence} He was admitted."
    v = judge(PERC, note, sentence, NAME, value)
    assert v.supports is ok, v.reason


def test_a_note_of_both_legs_leaves_unilateral_swelling_absent_by_its_convention():
    from medcalc_maintained.calculators.evidence import verify

    note = "A 50-year-old man came with dyspnea. Bilateral leg edema was noted. He was admitted."
    silent = {"name": NAME, "value": False, "unit": None, "evidence": {"start": None, "end": None, "text": ""}}
    assert verify(PERC, silent, note).supports
    assert not verify(PERC, silent, note.replace("Bilateral leg edema", "Swelling of the right leg")).supports
