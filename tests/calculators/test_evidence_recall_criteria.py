"""The evidence verifier on readings a clinician makes at once that it used to miss (recall, group g3: FeverPAIN,
Centor, SOFA, GCS, APACHE II): each rule a small synthetic note, in both directions (the rule reads the value / near
cases it must not read: negated, another time, another person, another quantity)."""

from __future__ import annotations

import pytest

from medcalc_maintained.calculators import lexicon as L
from medcalc_maintained.calculators.certify import certify_row
from medcalc_maintained.calculators.evidence import verify
from tests.support.evidence_support import judge as _judge


def _silent(cid: int, note: str, name: str, value):
    return verify(cid, {"name": name, "value": value, "unit": None, "evidence": {}}, note)


# ------------------------------------------------------------------------------------------------
# FeverPAIN: a symptom duration "for the past 2 days" states an onset within three days


@pytest.mark.parametrize("sentence,ok", [
    ("He was brought in with complaints of fever, malaise, and cough for the past 2 days.", True),
    ("She has had a sore throat and fever over the last three days.", True),
    ("He reports a sore throat for the past two days.", True),
    ("He reports a sore throat for the past 2 weeks.", False),            # another duration
    ("He reports a sore throat for the past 12 days.", False),            # "2 days" is no word of "12 days"
    ("His brother has had a sore throat for the past 2 days.", False),    # another person
    ("He has had no sore throat for the past 2 days.", False),            # negated
])
def test_a_duration_of_the_past_days_states_symptom_onset_within_three_days(sentence, ok):
    note = f"A 9-year-old boy was seen in clinic. {sentence} The tonsils were red."
    v = _judge(33, note, sentence, "Symptom onset ≤3 days", True)
    assert v.supports is ok, v.reason


def test_a_duration_names_no_number_printed_after_it():
    """'for the past 2 days, it has been around 38.9°C': 38.9 is the fever's temperature, not the duration's."""
    s = ("He says that the fever was initially low at around 37.8°C (100.0°F), but, for the past 2 days, it has been "
         "around 38.9°C (102.0°F).")
    note = f"A 32-year-old man presents with a fever. {s}"
    assert _judge(20, note, s, "Temperature", 38.9, "degrees celsius").supports
    assert not _judge(20, note, s, "Temperature", 2, "degrees celsius").supports
    assert not any(k == "symptom onset ≤3 days" for _, _, k in L.mentions(s, 0, len(s)))


# ------------------------------------------------------------------------------------------------
# a finding's absence (Cough Absent, Absence of cough or coryza) left out of the entities is scored unmet


def test_a_missing_absence_of_cough_is_read_as_unmet_as_its_calculator_scores_it():
    s = "He was brought in with complaints of fever, malaise, and cough for the past 2 days."
    note = f"A 6-year-old boy was seen. {s}"
    # the note states cough: the criterion "absence of cough" is unmet, as the missing entity scores it
    assert _judge(33, note, s, "Absence of cough or coryza", None).supports
    assert _silent(33, note, "Absence of cough or coryza", None).supports
    assert _silent(20, "He has a dry cough.", "Cough Absent", None).supports
    # silence: unmet too
    assert _silent(33, "He has a sore throat.", "Absence of cough or coryza", None).supports
    # the note denies cough: the criterion is met, which the missing entity does not score
    assert not _silent(33, "He has a sore throat. He has no cough.", "Absence of cough or coryza", None).supports
    assert not _silent(20, "He denies cough or runny nose.", "Cough Absent", None).supports
    # a recorded True still needs the denial
    assert not _silent(33, "He has a sore throat.", "Absence of cough or coryza", True).supports
    assert _judge(33, "He has no cough.", "He has no cough.", "Absence of cough or coryza", True).supports


def test_certify_supports_a_missing_absence_of_cough_where_the_note_states_cough():
    note = "A 6-year-old boy has fever, malaise, and cough for the past 2 days. His tonsils are covered with pus."
    items = {i.name: i for i in certify_row(33, {"Fever in past 24 hours": True}, note)}
    assert items["Absence of cough or coryza"].verdict == "supports"
    denied = "A 6-year-old boy has fever for the past 2 days and no cough. His tonsils are covered with pus."
    items = {i.name: i for i in certify_row(33, {"Fever in past 24 hours": True}, denied)}
    assert items["Absence of cough or coryza"].verdict == "contradicts"


# ------------------------------------------------------------------------------------------------
# GCS: moving the body away from the examiner's hand is withdrawal from pain


@pytest.mark.parametrize("sentence,option,ok", [
    ("She also adjusted her position to move her chest away from the examiner's hand.", "withdrawal from pain", True),
    ("He moved his chest away from the examiner's hand during the sternal rub.", "withdrawal from pain", True),
    ("She also adjusted her position to move her chest away from the examiner's hand.", "localizes pain", False),
    ("She did not move her chest away from the examiner's hand.", "withdrawal from pain", False),   # negated
    ("He pushed the examiner's hand away.", "withdrawal from pain", False),                         # localizing
])
def test_moving_away_from_the_examiners_hand_is_withdrawal(sentence, option, ok):
    note = f"A 32-year-old woman was found unconscious. She opened her eyes to sternal rub. {sentence}"
    v = _judge(21, note, sentence, "Best motor response", option)
    assert v.supports is ok, v.reason


# ------------------------------------------------------------------------------------------------
# APACHE II: an unstated admission type is taken as nonoperative (the declared definition)


def test_an_unstated_admission_type_is_nonoperative_by_the_definitions_convention():
    medical = "A 52-year-old patient with several organ failures presented to the hospital with confusion."
    assert _silent(28, medical, "Surgery Type", "Nonoperative ").supports
    assert _silent(28, medical, "Surgery Type", "nonoperative").supports
    assert _silent(28, "He had no surgery during this admission.", "Surgery Type", "Nonoperative").supports
    # an operation the note names: the admission type is not left unstated
    assert not _silent(28, "He underwent an emergency laparotomy surgery.", "Surgery Type", "Nonoperative").supports
    assert not _silent(28, "Postoperatively he was admitted to the ICU.", "Surgery Type", "Nonoperative").supports
    assert not _silent(28, "He underwent an emergency laparotomy.", "Surgery Type", "Nonoperative").supports
    assert not _silent(28, "A cholecystectomy was done yesterday.", "Surgery Type", "Nonoperative").supports
    assert _silent(28, "He underwent a CT scan of the head.", "Surgery Type", "Nonoperative").supports
    # the other options are never taken from silence
    assert not _silent(28, medical, "Surgery Type", "Emergency postoperative").supports
    assert not _silent(28, medical, "Surgery Type", "Elective postoperative").supports
    # another calculator's surgery input has no such convention
    assert not _silent(15, medical, "Elevated-risk surgery", "nonoperative").supports


def test_certify_supports_nonoperative_by_convention():
    note = "A 52-year-old patient with several organ failures presented to the hospital with confusion."
    items = {i.name: i for i in certify_row(28, {"Surgery Type": "Nonoperative "}, note)}
    st = items["Surgery Type"]
    assert st.verdict == "supports" and st.convention and st.quote is None
    operated = note + " He underwent an emergency laparotomy."
    items = {i.name: i for i in certify_row(28, {"Surgery Type": "Nonoperative "}, operated)}
    assert items["Surgery Type"].verdict != "supports"


# ------------------------------------------------------------------------------------------------
# SOFA: a drug dosed "at the same dosage" takes the dose printed right before it


S_SAME = ("Multiple vasopressor therapies were initiated; DOPamine ran at 4 mcg/kg/min, DOBUTamine at the same dosage, "
          "norEPINEPHrine at the slightly higher rate of 0.08 mcg/kg/min and EPINEPHrine at 0.09 mcg/kg/min.")


@pytest.mark.parametrize("sentence,name,value,ok", [
    (S_SAME, "DOBUTamine", 4, True),
    (S_SAME, "DOPamine", 4, True),
    (S_SAME, "norEPINEPHrine", 0.08, True),
    (S_SAME, "norEPINEPHrine", 4, False),      # the reference is the next drug's only
    (S_SAME, "EPINEPHrine", 0.08, False),
    ("DOPamine ran at 4 mcg/kg/min, DOBUTamine at the same dosage as before.", "DOBUTamine", 4, False),  # another time
    ("DOPamine ran at 4 mcg/kg/min. DOBUTamine at the same dosage.", "DOBUTamine", 4, False),  # another sentence
    ("DOPamine ran at 4 mcg/kg/min, norEPINEPHrine at 0.1 mcg/kg/min, DOBUTamine at the same dosage.", "DOBUTamine", 4,
     False),                                                                # not the dose right before it
    ("DOPamine ran at 4 mcg/kg/min, DOBUTamine at a higher dosage.", "DOBUTamine", 4, False),  # another quantity
    ("DOPamine ran at 4 mcg/kg/min, DOBUTamine at 6 mcg/kg/min.", "DOBUTamine", 4, False),
])
def test_a_drug_at_the_same_dosage_takes_the_dose_just_printed(sentence, name, value, ok):
    note = f"A 71-year-old man was admitted to the ICU. {sentence} His platelets were 170,000/µL."
    v = _judge(43, note, sentence, name, value, "mcg/kg/min")
    assert v.supports is ok, v.reason
