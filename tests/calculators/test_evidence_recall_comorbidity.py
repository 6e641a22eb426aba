"""The evidence verifier on readings a clinician makes at once that it used to miss (Charlson, Child-Pugh, HAS-BLED,
Caprini rows of the 2.3.0 recall pass, group g2), each in both directions: the sentence it must now read, and the near
cases (negated, another person, another grade, another quantity) it must still reject."""

from __future__ import annotations

import pytest

from medcalc_maintained.calculators import compute
from medcalc_maintained.calculators.evidence import verify
from medcalc_maintained.calculators.evidence_options import BOOLEAN_CHOICES
from tests.support.evidence_support import judge

CCI, CHILD_PUGH, HAS_BLED, CAPRINI = 32, 15, 25, 36


def _say(cid: int, sentence: str, name: str, value, lead: str = "A 70-year-old man came for follow-up.") -> bool:
    note = f"{lead} {sentence} He was well otherwise."
    return judge(cid, note, sentence, name, value).supports


# ------------------------------------------------------------------------------------------------
# a graded choice recorded as true/false: the options the scorer reads it as


_CCI_BASE = {"age": [70.0, "years"], "Liver disease severity": "none", "Diabetes mellitus criteria for CCI rule": "none",
             "Solid tumor": "none", "Moderate to severe Chronic Kidney Disease": "none"}


@pytest.mark.parametrize("name", sorted(BOOLEAN_CHOICES))
def test_the_boolean_readings_of_a_graded_choice_are_the_scorers(name):
    key = next(k for k in _CCI_BASE if k.lower() == name)
    present, absent, higher = BOOLEAN_CHOICES[name]

    def score(v):
        return compute(CCI, {**_CCI_BASE, key: v}).value

    assert all(score(True) == score(o) for o in present)
    assert all(score(False) == score(o) for o in absent)
    assert all(score(o) > score(True) for o in higher)


@pytest.mark.parametrize("sentence,value,ok", [
    ("He was diagnosed with stage III colon cancer, which required surgery and chemotherapy.", True, True),
    ("He carried a diagnosis of prostate cancer, for which he was treated, and is now in remission.", True, True),
    # a malignancy without its extent, a metastatic one, a negated one, a relative's, an extent without a tumor
    ("He has a history of malignant neoplasm for which he received chemotherapy.", True, False),
    ("He has metastatic colon cancer, first found at stage III.", True, False),
    ("He has no history of cancer and is in remission from alcohol use.", True, False),
    ("His brother was diagnosed with stage III colon cancer.", True, False),
    ("He has stage III chronic kidney disease.", True, False),
])
def test_a_solid_tumor_recorded_true_is_a_localized_one(sentence, value, ok):
    assert _say(CCI, sentence, "Solid tumor", value) is ok


@pytest.mark.parametrize("sentence,value,ok", [
    ("He has moderate renal insufficiency, followed by nephrology.", True, True),
    ("His kidney function is within normal limits.", False, True),
    ("Renal function declines are not seen in this patient.", False, True),
    ("He has mild CKD.", False, True),                              # mild is scored as not moderate to severe
    # CKD of no stated grade, a mild one, a negated one, a relative's; a moderate one is no false
    ("He has chronic kidney disease (CKD).", True, False),
    ("He has mild CKD.", True, False),
    ("He has no moderate renal insufficiency.", True, False),
    ("His father has moderate renal insufficiency.", True, False),
    ("He has moderate renal insufficiency, followed by nephrology.", False, False),
])
def test_moderate_to_severe_ckd_recorded_as_a_boolean(sentence, value, ok):
    assert _say(CCI, sentence, "Moderate to severe Chronic Kidney Disease", value) is ok


@pytest.mark.parametrize("sentence,value,ok", [
    ("He has type 2 diabetes, well controlled on metformin.", True, True),
    ("He has type 2 diabetes, well controlled on metformin, with diabetic nephropathy.", True, False),  # a higher grade
    ("His mother has type 2 diabetes, well controlled on metformin.", True, False),
    ("He is on metformin for weight loss.", True, False),            # no term names diabetes
])
def test_diabetes_recorded_true_is_uncomplicated_diabetes(sentence, value, ok):
    assert _say(CCI, sentence, "Diabetes mellitus criteria for CCI rule", value) is ok


# ------------------------------------------------------------------------------------------------
# Charlson phrasings


@pytest.mark.parametrize("sentence,value,ok", [
    ("He had type 2 diabetes which resulted in CKD, hypertension and emphysema.", "End-organ damage", True),
    ("Due to his diabetes causing kidney dysfunction he is on dialysis.", "End-organ damage", True),
    ("He had type 2 diabetes which resulted in CKD, hypertension and emphysema.", "Uncomplicated", False),
    ("His mother's diabetes causing kidney dysfunction led to dialysis.", "End-organ damage", False),
    ("His A1C has never been elevated in the past.", "None or diet-controlled", True),
    ("His A1C has been elevated in the past.", "None or diet-controlled", False),
    ("His A1C has never been elevated in the past.", "Uncomplicated", False),
])
def test_diabetes_grades_stated_in_other_words(sentence, value, ok):
    assert _say(CCI, sentence, "Diabetes mellitus criteria for CCI rule", value) is ok


def test_non_solid_cancers_denied_say_nothing_of_a_solid_tumor():
    assert not _say(CCI, "He does not have any history of non-solid cancers.", "Solid tumor", "none")
    assert _say(CCI, "He does not have any history of cancer.", "Solid tumor", "none")


# ------------------------------------------------------------------------------------------------
# Child-Pugh phrasings


@pytest.mark.parametrize("sentence,value,ok", [
    ("On neurological exam the patient is A&Ox1 (self) with hyperactive reflexes.", "Grade 3-4", True),
    ("He arrived with advanced disorientation and severe confusion.", "Grade 3-4", True),
    ("On neurological exam the patient is A&Ox1 (self) with hyperactive reflexes.", "Grade 1-2", False),
    ("On neurological exam the patient is A&Ox3 with normal reflexes.", "Grade 3-4", False),
    ("He had no severe confusion.", "Grade 3-4", False),
    ("His mother had severe confusion before she died.", "Grade 3-4", False),
])
def test_encephalopathy_grade_3_4_from_the_mental_status(sentence, value, ok):
    assert _say(CHILD_PUGH, sentence, "Encephalopathy", value, "A 62-year-old man with cirrhosis was seen.") is ok


@pytest.mark.parametrize("sentence,value,ok", [
    ("On examination, he appears jaundiced with minimal palpable ascites.", "slight", True),
    ("He is maintained on a low-sodium diet and diuretics for ascitic control.", "slight", True),
    ("Physical exam is notable for a moderately distended abdomen with positive fluid wave.", "moderate", True),
    ("On examination, he appears jaundiced with minimal palpable ascites.", "moderate", False),
    ("On examination, he appears jaundiced with no palpable ascites.", "slight", False),
    ("Physical exam is notable for a moderately distended abdomen.", "moderate", False),
    ("Physical exam is notable for a moderately distended abdomen with positive fluid wave.", "slight", False),
])
def test_ascites_grades_stated_in_other_words(sentence, value, ok):
    assert _say(CHILD_PUGH, sentence, "Ascites", value, "A 62-year-old man with cirrhosis was seen.") is ok


# ------------------------------------------------------------------------------------------------
# HAS-BLED and Caprini


@pytest.mark.parametrize("sentence,ok", [
    ("His list includes an anticoagulant recommended following a major bleeding episode he experienced after surgery.", True),
    ("Endoscopy was recommended following a suspected bleeding episode.", False),
    ("Further tests were recommended after the workup for major bleeding.", False),
    ("A transfusion was recommended for major bleeding.", False),
])
def test_a_past_event_that_a_recommendation_follows_is_no_plan(sentence, ok):
    assert _say(HAS_BLED, sentence, "Prior major bleeding or predisposition to bleeding", True) is ok


@pytest.mark.parametrize("sentence,ok", [
    ("Most recently, his blood pressure readings have tended to be elevated at above 170 mmHg systolic.", True),
    ("His blood pressure readings have been consistently elevated.", True),
    ("His blood pressure readings have not been elevated.", False),
    ("His father's blood pressure readings have been elevated.", False),
    ("His blood pressure was elevated at 180/100 mmHg in the emergency room.", False),
])
def test_repeatedly_elevated_blood_pressure_readings_are_hypertension(sentence, ok):
    assert _say(HAS_BLED, sentence, "Hypertension history", True) is ok


def test_a_typo_of_lower_extremities_with_swelling_is_swollen_legs():
    assert _say(CAPRINI, "Her lowered extremities show noticeable swelling on examination.", "Current swollen legs", True)
    assert not _say(CAPRINI, "Her lowered extremities show no swelling on examination.", "Current swollen legs", True)


def test_monitoring_her_thrombotic_risk_factors_names_no_other_risk_factor():
    note = ("A 65-year-old woman had bunion surgery. Careful monitoring of her thrombotic risk factors remains implied due "
            "to her age and medical history.")
    silent = {"name": "Other risk factors", "value": None, "evidence": {"start": None, "end": None, "text": ""}}
    assert verify(CAPRINI, silent, note).supports
    other = "A 65-year-old woman had bunion surgery. She has other thrombotic risk factors, among them a long flight."
    assert not verify(CAPRINI, silent, other).supports


# ------------------------------------------------------------------------------------------------
# a grade stated by a serum level: Charlson's moderate CKD is a creatinine above 3 mg/dL


@pytest.mark.parametrize("sentence,value,ok", [
    ("His creatinine is 3.5 mg/dL.", True, True),
    ("His creatinine is 3.5 mg/dL.", "moderate", True),
    ("His creatinine is 2.5 mg/dL.", True, False),                                  # below the level
    ("His creatinine is 3.5 mg/dL from acute kidney injury.", True, False),          # an acute injury's
    ("His baseline creatinine was 3.5 mg/dL two years ago.", True, False),           # another time
    ("His BUN is 35 mg/dL and creatinine 1.2 mg/dL.", True, False),                  # another quantity's number
    ("His mother had a creatinine of 3.5 mg/dL.", True, False),                      # a relative's
    ("His creatinine is 3.5 mg/dL.", False, False),
    ("His creatinine is 3.5 mg/dL.", "mild", False),
])
def test_a_creatinine_above_3_mg_dl_states_moderate_ckd(sentence, value, ok):
    assert _say(CCI, sentence, "Moderate to severe Chronic Kidney Disease", value) is ok


def test_a_creatinine_in_a_note_that_names_an_acute_kidney_injury_states_no_ckd():
    s = "His creatinine is 3.5 mg/dL."
    assert not _say(CCI, s, "Moderate to severe Chronic Kidney Disease", True, "A 70-year-old man was admitted with AKI.")


@pytest.mark.parametrize("sentence,ok", [
    ("Specialists implicated mini bouts of cerebral ischemia in the etiology of his falls.", True),
    ("He has had transient cerebral ischemia twice this year.", True),
    ("He had no mini bouts of cerebral ischemia.", False),
    ("MRI showed cerebral ischemia in the left parietal lobe.", False),               # not transient
    ("His mother had transient cerebral ischemia.", False),
])
def test_transient_cerebral_ischemia_is_a_tia(sentence, ok):
    assert _say(CCI, sentence, "Transient Ischemic Attacks History", True) is ok


def test_certify_proposes_the_sentence_that_prints_the_grading_level():
    from medcalc_maintained.calculators.certify import Note, certify_input
    from medcalc_maintained.calculators.inputs import declared_inputs

    spec = next(s for s in declared_inputs(CCI) if s.name == "Moderate to severe Chronic Kidney Disease")
    note = "A 78-year-old man came for follow-up. He has dementia. His creatinine is 3.5 mg/dL. He is well."
    assert certify_input(CCI, spec, True, None, "upstream", Note(note)).verdict == "supports"
    low = note.replace("3.5", "1.5")
    assert certify_input(CCI, spec, True, None, "upstream", Note(low)).verdict != "supports"
