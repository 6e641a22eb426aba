"""The evidence verifier on readings a clinician makes at once that it used to miss (recall, group g1: HEART, Wells PE,
RCRI, PERC and the Glasgow-Blatchford score's rows): each rule a small synthetic note, read both ways (the rule reads
the value / near cases it must not read: negated, another time, another person, another quantity)."""

from __future__ import annotations

import pytest

from medcalc_maintained.calculators import note_text as T
from medcalc_maintained.calculators.evidence import verify
from tests.support.evidence_support import judge as _judge

HEART, WELLS_PE, RCRI, GBS, PERC = 18, 8, 17, 27, 48
ABOVE_3 = "greater than three times normal limit"
ONE_TO_3 = "1-3 times normal limit"
NORMAL = "less than or equal to normal limit"


def _silent(cid: int, note: str, name: str, value) -> bool:
    """Whether the note's silence supports ``name = value`` (an absent input quoting nothing)."""
    inp = {"name": name, "value": value, "unit": None, "evidence": {"start": None, "end": None, "text": ""}}
    return verify(cid, inp, note).supports


# ------------------------------------------------------------------------------------------------
# the HEART troponin read against the reference limit printed with it


@pytest.mark.parametrize("sentence,value,ok", [
    ("First cardiac hs-TroponinT result was 911 ng/L (cut off <24ng/L).", ABOVE_3, True),
    ("First cardiac hs-TroponinT result was 911 ng/L (cut off <24ng/L).", ONE_TO_3, False),
    ("First cardiac hs-TroponinT result was 911 ng/L (cut off <24ng/L).", NORMAL, False),
    ("Her troponin I was 0.09 ng/mL (normal less than 0.05 ng/mL).", ONE_TO_3, True),
    ("Her troponin I was 0.09 ng/mL (normal less than 0.05 ng/mL).", ABOVE_3, False),
    ("The cardiac troponin I (cTnI) was 0.3 ng/ml (0.0-0.4).", NORMAL, True),
    ("The cardiac troponin I (cTnI) was 0.3 ng/ml (0.0-0.4).", ONE_TO_3, False),
    # units that differ are not compared (no conversion)
    ("Troponin T was 911 ng/L (normal <0.03 ng/mL).", ABOVE_3, False),
    # another quantity's value and reference, named between the troponin and the number
    ("Troponin and CK-MB were drawn: CK-MB 40 ng/mL (normal <5 ng/mL).", ABOVE_3, False),
    # negated, at a later time, a relative's
    ("No troponin was measured, 911 ng/L (cut off <24 ng/L) was the CK.", ABOVE_3, False),
    ("Troponin-I later increased to 11.17 (normal less than 0.05 ng/ml).", ABOVE_3, False),
    ("His brother's troponin was 911 ng/L (cut off <24 ng/L) last year.", ABOVE_3, False),
    # a number with no reference beside it states no multiple
    ("First cardiac hs-TroponinT result was 911 ng/L.", ABOVE_3, False),
])
def test_heart_troponin_is_read_as_a_multiple_of_the_printed_reference_limit(sentence, value, ok):
    note = f"A 54-year-old man presented with chest pain. {sentence} He was admitted."
    v = _judge(HEART, note, sentence, "Initial troponin", value)
    assert v.supports is ok, v.reason


# ------------------------------------------------------------------------------------------------
# a diagnosis given as one of two alternatives is no diagnosis of either


def test_either_or_diagnosis_is_not_asserted():
    s = "He was admitted with diagnosis of non ST elevation MI (NSTEMI) or myocarditis."
    note = f"A 24-year-old man presented with chest pain. {s} Coronary CT showed normal coronary arteries."
    assert not _judge(HEART, note, s, "atherosclerotic disease", True).supports
    assert _silent(HEART, note, "atherosclerotic disease", False)


@pytest.mark.parametrize("sentence,term,planned", [
    ("He was admitted with diagnosis of NSTEMI or myocarditis.", "NSTEMI", True),
    ("He was admitted with diagnosis of myocarditis or NSTEMI.", "NSTEMI", True),
    ("He was admitted with diagnosis of NSTEMI and treated with heparin.", "NSTEMI", False),
    ("A final diagnosis of NSTEMI was made, or so the team wrote.", "NSTEMI", False),
    ("He carries a diagnosis of NSTEMI, hypertension or diabetes.", "diabetes", False),
    ("He had NSTEMI or unstable angina in 2010.", "NSTEMI", False),  # no "diagnosis of": not this rule
])
def test_either_or_reads_only_two_alternatives_of_one_diagnosis(sentence, term, planned):
    s = sentence.index(term)
    assert T.planned(sentence, s, s + len(term)) is planned


def test_a_diagnosis_stated_alone_still_asserts_and_blocks_silence():
    s = "He was admitted with a diagnosis of NSTEMI."
    note = f"A 60-year-old man presented with chest pain. {s} He underwent PCI."
    assert _judge(HEART, note, s, "atherosclerotic disease", True).supports
    assert not _silent(HEART, note, "atherosclerotic disease", False)


# ------------------------------------------------------------------------------------------------
# the RCRI's elevated-risk surgery: a lung cancer resection is intrathoracic surgery


def test_lung_cancer_resection_is_elevated_risk_surgery():
    s = "A 69-year-old man presents to the clinic for a pre-operative assessment ahead of lung cancer resection."
    note = f"{s} He had CABG eight years ago."
    assert _judge(RCRI, note, s, "Elevated-risk surgery", True).supports
    neg = "A 69-year-old man presents for a pre-operative assessment; no lung cancer resection is planned, only a skin biopsy."
    assert not _judge(RCRI, neg, neg, "Elevated-risk surgery", True).supports
    old = "He had a lung cancer resection 10 years ago and now presents for cataract surgery."
    assert not _judge(RCRI, old, old, "Elevated-risk surgery", True).supports


# ------------------------------------------------------------------------------------------------
# a place is no surgery: arriving in the operating room


def test_the_operating_room_names_no_surgery():
    s = "When the patient arrived in the operation room, his blood pressure was 166/94 mmHg."
    note = f"A 66-year-old man was scheduled for gastrectomy. {s}"
    assert not _judge(PERC, note, s, "Recent surgery or trauma", True).supports
    assert _silent(PERC, note, "Recent surgery or trauma", False)
    done = "A 66-year-old man had a recent operation on his hip. He arrived in the operating room for a second look."
    assert not _silent(PERC, done, "Recent surgery or trauma", False)  # the operation itself still names surgery
    assert _judge(PERC, done, "A 66-year-old man had a recent operation on his hip.", "Recent surgery or trauma", True).supports


# ------------------------------------------------------------------------------------------------
# a sex stated by pronouns only, in a note that names no sex


def test_sex_by_pronouns_where_the_note_names_no_sex():
    s = "A patient came in for her evaluation today after a recent fainting episode."
    note = f"{s} She was noticeably agitated. Blood tests showed a hemoglobin of 12 g/dL."
    assert _judge(GBS, note, s, "sex", "Female").supports
    assert not _judge(GBS, note, s, "sex", "Male").supports


@pytest.mark.parametrize("note,quote", [
    # the note names a sex word somewhere: the word states it, not the pronoun
    ("A patient came in for her evaluation today. The woman was agitated.", "A patient came in for her evaluation today."),
    # pronouns of both sexes (another person): neither is read
    ("A patient came in for her evaluation today. Her husband said he had found her collapsed.",
     "A patient came in for her evaluation today."),
    # the quote holds no pronoun
    ("A patient came in for an evaluation today. She was agitated.", "A patient came in for an evaluation today."),
])
def test_sex_by_pronouns_near_misses(note, quote):
    assert not _judge(GBS, note, quote, "sex", "Female").supports


# ------------------------------------------------------------------------------------------------
# a surgery dated after the presentation is no surgery of the weeks before it


WEDGE = "On June 23th, inferior lobe wedge resection of the left lung was performed."


def test_surgery_dated_after_the_presentation_is_outside_the_window():
    note = (f"On 29 May 2013, he presented with fever, cough and dyspnea. After 17 days of antibiotics his fever "
            f"persisted. {WEDGE} He improved.")
    assert _silent(WELLS_PE, note, "Surgery in the previous 4 weeks", False)


@pytest.mark.parametrize("note", [
    # dated before the presentation
    f"On 29 July 2013, he presented with fever, cough and dyspnea. {WEDGE} He improved.",
    # a later presentation, dated after the surgery
    f"On 29 May 2013, he presented with fever. {WEDGE} On 2 July 2013, he was admitted again with dyspnea.",
    # the presentation not dated with a year: nothing to compare with
    f"On 29 May, he presented with fever, cough and dyspnea. {WEDGE} He improved.",
    # the surgery undated
    "On 29 May 2013, he presented with fever, cough and dyspnea. An inferior lobe wedge resection was performed. He improved.",
])
def test_surgery_not_dated_after_the_presentation_still_names_surgery(note):
    assert not _silent(WELLS_PE, note, "Surgery in the previous 4 weeks", False)
