"""The evidence verifier on readings of numeric inputs a clinician makes at once that it used to miss (recall, group g4:
osmolality, anion gap, LDL, ideal body weight, HOMA-IR): each rule a small synthetic note, read both ways (the value it
now reads / near cases it must still reject: another quantity, another unit, another time, a list that does not share)."""

from __future__ import annotations

import pytest

from medcalc_maintained.calculators.note_numbers import numbers
from tests.support.evidence_support import judge

# ------------------------------------------------------------------------------------------------
# "CI-": the chloride ion typed with a capital I, read only as an ion sign right before a concentration


@pytest.mark.parametrize("sentence,value,ok", [
    ("Na+ 140 mEq/L\nK+ 5.5 mEq/L\nCI- 101 mEq/L\nHCO3- 9 mEq/L", 101, True),
    ("Na+ 140 mmol/L, CI- 99 mmol/L, HCO3- 20 mmol/L.", 99, True),
    ("Na+ 140 mEq/L\nK+ 5.5 mEq/L\nCI- 101 mEq/L\nHCO3- 9 mEq/L", 140, False),    # the sodium's
    ("The cardiac index (CI) was 2.1 L/min/m2 and sodium 140 mEq/L.", 2.1, False),  # a cardiac index
    ("The hazard ratio was 1.4 (95% CI 1.1-1.9) and sodium 101 mEq/L.", 101, False),  # no ion sign: a confidence interval
    ("ci- 101 mEq/L", 101, False),                                                   # lower case: no such typing
])
def test_ci_minus_before_a_concentration_is_chloride(sentence, value, ok):
    note = f"A 36-year-old man was brought in confused. Laboratory studies show:\n{sentence}\nHe was admitted."
    v = judge(39, note, sentence, "Chloride", value, "mEq/L" if "mEq" in sentence else "mmol/L")
    assert v.supports is ok, v.reason


# ------------------------------------------------------------------------------------------------
# "euglycemia (6.6 mmol/l)": a glycemia word names the glucose, like hyperglycemia already does


@pytest.mark.parametrize("sentence,value,ok", [
    ("Glycosuria (7 mmol/l) with concomitant euglycemia (6.6 mmol/l, normal range 4.1–11 mmol/l) was noted.", 6.6, True),
    ("He had normoglycemia (5.2 mmol/l) on admission.", 5.2, True),
    ("Glycosuria (7 mmol/l) with concomitant euglycemia (6.6 mmol/l, normal range 4.1–11 mmol/l) was noted.", 7, False),  # urine
    ("Glycosuria (7 mmol/l) with concomitant euglycemia (6.6 mmol/l, normal range 4.1–11 mmol/l) was noted.", 11, False),  # a bound
])
def test_euglycemia_names_the_glucose(sentence, value, ok):
    note = f"A 34-year-old man presented with fever. {sentence} He was treated."
    v = judge(30, note, sentence, "Glucose", value, "mmol/L")
    assert v.supports is ok, v.reason


def test_the_day_another_value_normalised_sets_no_time_for_the_sentences_after_it():
    lab = "Glycosuria (7 mmol/l) with concomitant euglycemia (6.6 mmol/l) was noted."
    ck = "Creatine kinase was 312 U/l on admission, rising to 404 U/l the next day and normalizing on hospital day 4."
    note = f"A 34-year-old man presented with fever. Sodium was 131 mmol/l. {ck} {lab} He was treated."
    assert judge(30, note, lab, "Glucose", 6.6, "mmol/L").supports
    # a day that sets the time of what follows still dates it
    dated = f"A 34-year-old man presented with fever. Sodium was 131 mmol/l. On hospital day 4, labs were repeated. {lab}"
    v = judge(30, dated, lab, "Glucose", 6.6, "mmol/L")
    assert not v.supports and v.rule == "timepoint", v.reason
    # a value of the sentence that normalised is still that day's
    s2 = "Creatine kinase was 312 U/l on admission, and glucose normalizing on hospital day 4 at 6.6 mmol/l."
    note2 = f"A 34-year-old man presented with fever. {s2}"
    assert not judge(30, note2, s2, "Glucose", 6.6, "mmol/L").supports


# ------------------------------------------------------------------------------------------------
# "a height of 1, 65 m": a decimal comma a copy followed by a space, read only for a height in metres


@pytest.mark.parametrize("text,expected", [
    ("cachectic, for a height of 1, 65 m and thin", [1.65]),
    ("a height of 1, 65 cm", [1.0, 65.0]),    # not metres
    ("a height of 1, 6 m", [1.0, 6.0]),        # one digit after: no such spelling
    ("speeds of 1, 65 m/s", [1.0, 65.0]),      # a speed
    ("lesions of 1, 65 mm", [1.0, 65.0]),      # millimetres
    ("cysts of 3, 45 m", [3.0, 45.0]),         # no height
])
def test_a_spaced_decimal_comma_is_one_number_only_before_metres(text, expected):
    assert [v for _, _, v in numbers(text)] == expected


def test_a_height_of_1_comma_space_65_m_is_1_65_m():
    s = "On admission, she was cachectic, weighing 45 kg for a height of 1, 65 m and a BMI 17 kg/ m2."
    note = f"A 50-year-old woman was hospitalized for dyspnea. {s} She was afebrile."
    assert judge(10, note, s, "height", 1.65, "m").supports
    assert not judge(10, note, s, "height", 1, "m").supports
    assert not judge(10, note, s, "height", 65, "cm").supports


# ------------------------------------------------------------------------------------------------
# "250 mg, ... 99 mg, and ... 59 mg per deciliter": the volume the list's last value carries is all its values'

LIPIDS = "The total cholesterol was 250 mg, the triglyceride 99 mg, and the HDL-cholesterol 59 mg per deciliter."


@pytest.mark.parametrize("sentence,name,value,ok", [
    (LIPIDS, "Total cholesterol", 250, True),
    (LIPIDS, "Triglycerides", 99, True),
    (LIPIDS, "high-density lipoprotein cholesterol", 59, True),
    (LIPIDS, "Total cholesterol", 99, False),                              # the triglyceride's
    # the last value in another unit: nothing to share
    ("The total cholesterol was 250 mg, the triglyceride 99 mg, and the HDL-cholesterol 1.5 mmol/L.", "Total cholesterol", 250,
     False),
    # a bare milligram with no list after it: a mass, no concentration
    ("The total cholesterol was 250 mg. Atorvastatin 40 mg per day was started.", "Total cholesterol", 250, False),
    # another quantity between (a dose in mg/kg) breaks the list
    ("The total cholesterol was 250 mg, aspirin 81 mg/kg, and the HDL-cholesterol 59 mg per deciliter.", "Total cholesterol", 250,
     False),
])
def test_a_list_in_milligrams_shares_the_last_values_volume(sentence, name, value, ok):
    note = f"A 50-year-old woman was admitted for angina. {sentence} The VDRL was negative."
    v = judge(44, note, sentence, name, value, "mg/dL")
    assert v.supports is ok, v.reason


# ------------------------------------------------------------------------------------------------
# a load cue after a glucose that names the next glucose value is that value's, not the first one's


@pytest.mark.parametrize("sentence,value,ok", [
    ("Laboratory values showed fasting glucose 210mg/dL, and 2 hour glucose 378mg/dL.", 210, True),
    ("Laboratory values showed fasting glucose 210mg/dL, and 2 hour glucose 378mg/dL.", 378, False),  # the load's
    ("Laboratory values showed glucose 210 mg/dL 2 hours after a meal.", 210, False),              # dated by its own cue
    ("Laboratory values showed glucose 210 mg/dL 2 hours after a 75 g load.", 210, False),
])
def test_a_load_cue_of_the_next_glucose_dates_only_that_one(sentence, value, ok):
    note = f"A 14-year-old girl with obesity was evaluated. {sentence} She was started on metformin."
    v = judge(31, note, sentence, "Glucose", value, "mg/dL")
    assert v.supports is ok, v.reason
