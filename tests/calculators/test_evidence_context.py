"""The evidence verifier on the patterns a keyword search is fooled by, and on values a clinician reads at
once (issue 45): each a small synthetic note, one sentence changed between the case that supports and the
case that does not."""

from __future__ import annotations

import pytest

from medcalc_maintained.calculators.evidence import verify
from medcalc_maintained.core import units as U
from tests.support.evidence_support import judge as _judge

# ------------------------------------------------------------------------------------------------
# units: conversions and multipliers through core/units.py


@pytest.mark.parametrize("printed,value,unit,ok", [
    ("creatinine of 120 µmol/L", 1.4, "mg/dL", True),       # 120 / 88.4 = 1.357: 1.4 at the record's precision
    ("creatinine of 120 µmol/L", 1.2, "mg/dL", False),
    ("creatinine of 1.4 mg per deciliter", 1.4, "mg/dL", True),
])
def test_a_value_printed_in_another_unit_supports_the_converted_value(printed, value, unit, ok):
    note = f"A 60-year-old man was admitted. Labs showed a {printed}."
    assert _judge(2, note, printed, "creatinine", value, unit).supports is ok


@pytest.mark.parametrize("printed,value,ok,rule", [
    ("WBC 15.5 k/mm3", 15500, True, "supports"),
    ("WBC 15.5 k/mm3", 15.5, False, "unit-mismatch"),          # the multiplier dropped
    ("white cell count of 9.44 x 10^9/L", 9440, True, "supports"),
    ("WBC of 830/µL", 830, True, "supports"),                 # "/µL" and "µL" are one unit
])
def test_a_count_per_thousand_is_read_with_its_multiplier(printed, value, ok, rule):
    note = f"Vital signs were stable. Labs: {printed}, hemoglobin 12 g/dL."
    v = _judge(51, note, printed, "White blood cell count", value, "µL")
    assert (v.supports, v.rule) == (ok, rule), v.reason


def test_units_module_reads_multipliers_and_spelled_units():
    assert U.to_canonical("count_per_ul", 7.5, "x 10^9/L") == 7500
    assert U.to_canonical("count_per_ul", 150, "K/mm3") == 150_000
    assert U.normalise_unit("mg per deciliter") == "mg/dl"
    assert U.same_unit("sodium", "mmol/L", "mEq/L") and not U.same_unit("count_per_ul", "K/µL", "/µL")


# ------------------------------------------------------------------------------------------------
# numbers: which quantity, which person, which time


def test_a_length_or_a_mass_alone_names_height_or_weight():
    note = "On examination, the man was 178 cm in height and 69.2 kg in weight."
    assert _judge(6, note, note, "height", 178, "cm").supports
    assert _judge(6, note, note, "weight", 69.2, "kg").supports
    assert not _judge(6, note, note, "weight", 178, "kg").supports


def test_a_relatives_age_and_an_age_at_an_event_are_not_the_patients_age():
    note = "A 47-year-old woman presented with chest pain. Her father had an MI at the age of 50."
    assert _judge(46, note, "Her father had an MI at the age of 50", "age", 50, "years").rule == "family-history"
    assert _judge(46, note, "A 47-year-old woman presented with chest pain", "age", 47, "years").supports
    event = "A woman presented with chest pain. She had her first episode at age 45."
    assert _judge(46, event, "She had her first episode at age 45", "age", 45, "years").rule == "timepoint"


def test_a_bound_a_change_and_a_birth_weight_state_no_value():
    note = "Initial blood work showed sodium of 140 mmol/L and bicarbonate below 10 mmol/L."
    assert _judge(39, note, note, "Bicarbonate", 10, "mmol/L").rule == "reference-bound"
    change = "After 6 months there were improvements including insulin (−26 uIU/ml) and glucose."
    assert _judge(31, change, change, "Insulin", 26, "µIU/mL").rule == "wrong-quantity"
    born = "He had been born at 36 weeks, weighing 2450 g, with no neonatal events."
    assert _judge(60, born, born, "weight", 2450, "g").rule == "timepoint"


def test_a_later_value_of_the_same_paragraph_is_not_the_presentations():
    note = ("On admission her bicarbonate was 14 mEq/L and chloride 100 mEq/L. "
            "After fluids, her bicarbonate was 22 mEq/L.")
    assert _judge(39, note, "her bicarbonate was 14 mEq/L and chloride 100 mEq/L", "Bicarbonate", 14, "mEq/L").supports
    assert _judge(39, note, "After fluids, her bicarbonate was 22 mEq/L", "Bicarbonate", 22, "mEq/L").rule == "timepoint"


def test_name_number_pairs_and_slash_lists_pair_in_order():
    note = "Exam notable for BP 128/50 HR 70 RR 16 with sat 100 on RA."
    assert _judge(51, note, note, "Heart Rate or Pulse", 70, "beats per minute").supports
    assert not _judge(51, note, note, "Heart Rate or Pulse", 16, "beats per minute").supports
    labs = "Calcium/phosphorus were 11.2/4.1 mg/dL, blood urea nitrogen/creatinine were 21.9/1.98 mg/dL."
    assert _judge(40, labs, labs, "creatinine", 1.98, "mg/dL").supports
    assert not _judge(40, labs, labs, "creatinine", 21.9, "mg/dL").supports


def test_urea_is_not_blood_urea_nitrogen_and_words_spell_numbers():
    note = "Investigations showed serum creatinine 2.1 mg/dl, blood urea 62 mg/dl and sodium 139 mmol/l."
    assert not _judge(30, note, note, "Blood Urea Nitrogen (BUN)", 62, "mg/dL").supports
    drinks = "As for his lifestyle, he allows himself about four alcoholic drinks each week."
    assert _judge(25, drinks, drinks, "Number of Alcoholic Drinks Per Week", 4).supports


# ------------------------------------------------------------------------------------------------
# criteria: negation before and after the term, experiencer, history


@pytest.mark.parametrize("quote", [
    "Prothrombin 20210A is normal and serum homocysteine within normal range",
    "Factor V Leiden and anticardiolipin antibody testing were negative",
    "Hypertension too seems to be absent from his health portrait",
    "He has been lucky to have escaped any major bleeding episodes",
    "His history is void of any significant incidents like a stroke",
])
def test_negation_after_the_term_and_by_idiom_is_read(quote):
    note = f"A 50-year-old man was seen in clinic. {quote}."
    cid, name = next((c, n) for word, c, n in (
        ("Prothrombin", 36, "Positive prothrombin 20210A"), ("Factor V", 36, "Positive Factor V Leiden"),
        ("Hypertension", 25, "Hypertension history"), ("bleeding", 25, "Prior major bleeding or predisposition to bleeding"),
        ("stroke", 25, "Stroke")) if word in quote)
    assert not _judge(cid, note, quote, name, True).supports
    assert _judge(cid, note, quote, name, False).supports


def test_a_list_of_causes_ruled_out_negates_each():
    note = "Infection, malignancy and stroke were ruled out during the workup."
    assert _judge(25, note, note, "Stroke", False).supports
    assert not _judge(25, note, note, "Stroke", True).supports
    history = "Infection, malignancy and hypertension were ruled out during the workup."
    assert not _judge(25, history, history, "Hypertension history", False).supports  # a workup of now, not the history


def test_a_relative_who_brings_the_patient_is_not_the_experiencer():
    note = "A 6-year-old boy is presented to a clinic by his mother with complaints of fever and sore throat for 2 days."
    assert _judge(33, note, note, "Fever in past 24 hours", True).supports
    relative = "A 6-year-old boy is presented to a clinic. His mother has a fever."
    assert not _judge(33, relative, "His mother has a fever", "Fever in past 24 hours", True).supports


def test_a_history_is_not_negated_by_a_test_of_now_and_needs_a_history():
    note = "A Doppler ultrasound showed femoral vein thrombosis, and so pulmonary embolism was ruled out."
    assert not _judge(8, note, note, "Previously Documented Pulmonary Embolism", False).supports
    current = "The patient has pulmonary embolism on CT angiography today."
    assert not _judge(8, current, current, "Previously Documented Pulmonary Embolism", True).supports
    past = "She has a history of pulmonary embolism two years ago."
    assert _judge(8, past, past, "Previously Documented Pulmonary Embolism", True).supports


def test_a_category_of_absence_is_stated_by_the_finding_negated_and_paraphrases_of_a_grade():
    note = "On examination, no notable ascites was reported. He was disoriented and exhibited asterixis."
    assert _judge(15, note, "On examination, no notable ascites was reported", "Ascites", "absent").supports
    assert _judge(15, note, "He was disoriented and exhibited asterixis", "Encephalopathy", "Grade 1-2").supports
    assert not _judge(15, note, "He was disoriented and exhibited asterixis", "Encephalopathy", "No Encephalopathy").supports


def test_living_at_home_states_no_nursing_home_and_anticoagulants_are_not_hasbleds_drugs():
    note = "He currently lives at home with his son. His medication regimen includes anticoagulants."
    assert _judge(29, note, "He currently lives at home with his son", "Nursing home resident", False).supports
    assert not _judge(29, note, "He currently lives at home with his son", "Nursing home resident", True).supports
    assert not _judge(25, note, "His medication regimen includes anticoagulants", "Medication usage predisposing to bleeding",
                      True).supports


def test_a_weight_lost_a_saturation_on_oxygen_and_a_garbled_power_of_ten_state_no_value():
    loss = "She also presented body weight loss (2 kg per 3 months) and flatulence."
    assert _judge(38, loss, loss, "weight", 2, "kg").rule == "wrong-quantity"
    sat = "Her heart rate was 110 beats per minute and her oxygen saturation was 98% on 5 L nasal cannula."
    assert _judge(48, sat, sat, "O₂ saturation percentage", 98, "%").rule == "wrong-quantity"
    room = "Her heart rate was 110 beats per minute and her oxygen saturation was 98% on room air."
    assert _judge(48, room, room, "O₂ saturation percentage", 98, "%").supports
    wbc = "Laboratory evaluation revealed a white blood cell count of 13.7 × 104/L with 80% neutrophils."
    assert _judge(51, wbc, wbc, "White blood cell count", 13.7, "104/L").rule == "unit-mismatch"


def test_a_hospitalization_day_dates_a_value_and_a_compared_earlier_value_does_not_date_this_one():
    later = "On hospitalization day 28, the patient's weight was 38.1 kg, and her BMI was 16.5 kg/m2."
    assert _judge(22, later, later, "weight", 38.1, "kg").rule == "timepoint"
    compared = "Her creatinine level was elevated at 1.22 mg/dL compared to her previous results of 0.8 mg/dL."
    assert _judge(9, compared, compared, "creatinine", 1.22, "mg/dL").supports


def test_a_test_to_rule_out_states_nothing_absent_and_silence_does_not_state_a_findings_absence():
    note = "He underwent an exercise stress test (to rule out coronary artery disease), which was stopped early."
    assert not _judge(18, note, note, "atherosclerotic disease", False).supports
    silent = "A 30-year-old man presented with sore throat and fever of 38.5 C for 2 days."
    silence = {"name": "Cough Absent", "value": True, "unit": None, "evidence": {"start": None, "end": None, "text": ""}}
    assert verify(20, silence, silent).rule == "absent-by-missing-keyword"
    stated = "A 30-year-old man presented with sore throat and fever. He denies cough."
    assert _judge(20, stated, "He denies cough", "Cough Absent", True).supports


def test_a_thousands_dot_and_a_negation_whose_scope_a_new_subject_ends():
    note = "Laboratory tests revealed leukopenia and thrombocytopenia (127.000/μL), with a prolonged PT."
    assert _judge(43, note, note, "Platelet count", 127000, "µL").supports
    scope = "Although she does not have a central line, her genetic tests revealed a positive Factor V Leiden mutation."
    assert _judge(36, scope, scope, "Positive Factor V Leiden", True).supports
    assert not _judge(36, scope, scope, "Positive Factor V Leiden", False).supports
