"""The evidence verifier on readings a clinician makes at once that it used to miss (issue 45, recall): each rule a
small synthetic note, in both directions (the rule reads the value / a near case it must not read)."""

from __future__ import annotations

import pytest

from medcalc_maintained.calculators.evidence import verify
from tests.support.evidence_support import judge as _judge

# ------------------------------------------------------------------------------------------------
# lists of names and values paired in order


@pytest.mark.parametrize("sentence,name,value,unit,ok", [
    # a slash pair is one value of the list ("blood pressure ... 120/73 mmHg")
    ("His height, weight, and blood pressure were 165 cm, 66 kg, and 120/73 mmHg, respectively.", "weight", 66, "kg", True),
    ("His height, weight, and blood pressure were 165 cm, 66 kg, and 120/73 mmHg, respectively.", "height", 165, "cm", True),
    ("His height, weight, and blood pressure were 165 cm, 66 kg, and 120/73 mmHg, respectively.", "weight", 165, "kg", False),
    # an item the lexicon does not know still takes its place in the list
    ("His height, body weight, and waist circumference were 187 cm, 90 kg, and 104 cm, respectively.", "weight", 90, "kg", True),
    ("His height, body weight, and waist circumference were 187 cm, 90 kg, and 104 cm, respectively.", "height", 104, "cm",
     False),
])
def test_a_respectively_list_pairs_its_items_in_order(sentence, name, value, unit, ok):
    note = f"A 50-year-old man presented for a check-up. {sentence} He was well."
    v = _judge(6, note, sentence, name, value, unit)
    assert v.supports is ok, v.reason


def test_reference_ranges_in_parentheses_are_no_values_of_the_list():
    s = ("The total cholesterol, triglyceride, high density lipoprotein-cholesterol and low density lipoprotein-cholesterol "
         "results were 162 mg/dL (139-230 mg/dL), 33 mg/dL (48-177 mg/dL), 64 mg/dL (40-81 mg/dL) and 106 mg/dL (64-160 mg/dL), "
         "respectively.")
    note = f"A 40-year-old woman was seen. {s}"
    assert _judge(44, note, s, "Total cholesterol", 162, "mg/dL").supports
    assert _judge(44, note, s, "high-density lipoprotein cholesterol", 64, "mg/dL").supports
    assert _judge(44, note, s, "Triglycerides", 33, "mg/dL").supports
    assert not _judge(44, note, s, "Total cholesterol", 106, "mg/dL").supports  # the LDL's, not the total's
    assert not _judge(44, note, s, "Triglycerides", 48, "mg/dL").supports       # a reference bound


def test_an_abbreviation_in_parentheses_is_the_name_before_it():
    s = "His blood pressure, heart rate, and peripheral oxygen saturation (SpO2) were 166/94 mmHg, 76 beats/min, and 99% respectively."
    note = f"He arrived in the room. {s}"
    assert _judge(48, note, s, "O₂ saturation percentage", 99, "%").supports
    assert not _judge(48, note, s, "O₂ saturation percentage", 76, "%").supports
    s2 = "Urinary levels of sodium/potassium/chloride (Na/K/Cl) were 95/73.2/47mEq/L, respectively."
    note2 = f"He had polyuria. {s2}"
    assert _judge(40, note2, s2, "Urine sodium", 95, "mEq/L").supports
    assert not _judge(40, note2, s2, "Urine sodium", 47, "mEq/L").supports


@pytest.mark.parametrize("sentence,name,value,ok", [
    ("Her blood pressure was stable, with systolic and diastolic pressures of 115 and 72 mm Hg.", "Systolic Blood Pressure", 115, True),
    ("Her blood pressure was stable, with systolic and diastolic pressures of 115 and 72 mm Hg.", "Systolic Blood Pressure", 72, False),
    ("His blood pressure was stable with a systolic of 110 and diastolic of 78 mm Hg.", "Systolic Blood Pressure", 110, True),
    ("His blood pressure was stable with a systolic of 110 and diastolic of 78 mm Hg.", "Diastolic Blood Pressure", 110, False),
])
def test_a_list_without_respectively_pairs_where_its_values_follow_its_names(sentence, name, value, ok):
    note = f"A 70-year-old woman was admitted to the ICU. {sentence}"
    assert _judge(43, note, sentence, name, value, "mm Hg").supports is ok


def test_and_after_a_number_is_no_unit_that_hands_it_to_the_next_name():
    s = "An arterial blood gas analysis reports a pH of 7.40 and PaO2 at 80 mm Hg."
    note = f"A 60-year-old man had a cough. {s}"
    assert _judge(29, note, s, "pH", 7.40).supports
    assert not _judge(29, note, s, "pH", 80).supports


def test_a_dose_given_to_each_drug_of_a_list():
    s = "The patient is receiving norepinephrine and epinephrine infusions at 0.1 mcg/kg/min each."
    note = f"A 60-year-old man is in the ICU. {s}"
    assert _judge(43, note, s, "norEPINEPHrine", 0.1, "mcg/kg/min").supports
    s2 = "The patient is receiving norepinephrine and epinephrine infusions at 0.1 mcg/kg/min."
    note2 = f"A 60-year-old man is in the ICU. {s2}"
    assert not _judge(43, note2, s2, "norEPINEPHrine", 0.1, "mcg/kg/min").supports


# ------------------------------------------------------------------------------------------------
# a criterion that is a finding's absence, recorded unmet by silence


def _silent(cid: int, note: str, name: str, value):
    return verify(cid, {"name": name, "value": value, "unit": None, "evidence": {"start": None, "end": None, "text": ""}}, note)


def test_silence_leaves_a_finding_absence_criterion_unmet():
    quiet = "A 16-year-old boy has a sore throat and fever of 39 C. The tonsils are swollen with exudate."
    assert _silent(20, quiet, "Cough Absent", False).supports            # cough never stated absent: the point not given
    assert not _silent(20, quiet, "Cough Absent", True).supports         # and silence never gives it
    denied = quiet + " He denies cough."
    assert not _silent(20, denied, "Cough Absent", False).supports       # the note states cough absent: the criterion is met


# ------------------------------------------------------------------------------------------------
# urea and blood urea nitrogen


@pytest.mark.parametrize("printed,value,unit,ok", [
    ("a serum urea of 11.4 mmol/L", 11.4, "mmol/L", True),   # urea and BUN are one molar quantity
    ("a serum urea of 11.4 mmol/L", 31.9, "mg/dL", True),    # 11.4 mmol/L of BUN is 31.9 mg/dL
    ("a serum urea of 84 mg/dL", 84, "mg/dL", False),        # urea in mg/dL is BUN x 2.14: another quantity
])
def test_a_urea_in_mmol_per_litre_is_the_blood_urea_nitrogen(printed, value, unit, ok):
    note = f"A 64-year-old man presented with vomiting. Labs showed {printed} on admission and sodium 131 mmol/L."
    assert _judge(30, note, printed, "Blood Urea Nitrogen (BUN)", value, unit).supports is ok


# ------------------------------------------------------------------------------------------------
# a time cue dates its own item of a list


@pytest.mark.parametrize("labs,value,ok", [
    ("creatinine 2.3 mg/dl (baseline 1.1 mg/dl), albumin 1.5 g/dl, glucose 94 mg/dl", 1.5, True),   # another item's aside
    ("creatinine 2.3 mg/dl, albumin 1.5 g/dl (baseline 3.9 g/dl), glucose 94 mg/dl", 1.5, True),    # its comparison value
    ("creatinine 2.3 mg/dl (at baseline), albumin 1.5 g/dl", 1.5, True),                              # the creatinine's
    ("creatinine 2.3 mg/dl, baseline albumin 1.5 g/dl, glucose 94 mg/dl", 1.5, False),                # its own cue
    ("bilirubin 2.4 mg/dl - later on it went up to 5.1 mg/dl, albumin 1.5 g/dl", 1.5, True),          # the bilirubin's
    ("albumin 1.5 g/dl, later 2.1 g/dl", 2.1, False),                                                  # the later value
    ("albumin 1.5 g/dl (June 11)", 1.5, False),                                                        # its own date
    ("creatinine 112 µmol/l on admission and 247 µmol/l on hospital day 3 (baseline 70 µmol/l), albumin 1.5 g/dl", 1.5, True),
    ("creatinine 112 µmol/l, and on hospital day 3 albumin 1.5 g/dl", 1.5, False),                     # its own day
])
def test_a_time_cue_dates_its_own_item_of_a_list(labs, value, ok):
    note = f"A 58-year-old man presented with jaundice. Serum chemistries showed {labs}. He was admitted."
    v = _judge(15, note, labs, "Albumin", value, "g/dL")
    assert v.supports is ok, v.reason


@pytest.mark.parametrize("lead,ok", [
    ("On the third day of the illness, she was admitted to our hospital.", True),   # the illness's day: the admission
    ("On the third day, she was still febrile.", False),                             # a hospital day after admission
])
def test_a_day_of_the_illness_is_no_later_hospital_day(lead, ok):
    note = f"A 9-year-old girl had vomiting for 3 days. {lead} Her axillary temperature was 36.2 °C."
    assert _judge(51, note, "Her axillary temperature was 36.2 °C", "Temperature", 36.2, "°C").supports is ok


@pytest.mark.parametrize("lead,ok", [
    ("On the day of admission to our hospital, the blood tests were as follows:", True),
    ("Two days later, the blood tests were as follows:", False),
])
def test_the_day_of_admission_is_the_presentation(lead, ok):
    note = (f"A 50-year-old man was tested in another hospital, with AST 444 IU/L. {lead} hemoglobin 15.8 g/dL, "
            "platelet count 244,000/µL, and sodium 134 mmol/L.")
    assert _judge(19, note, "platelet count 244,000/µL", "Platelet count", 244000, "/µL").supports is ok


@pytest.mark.parametrize("sentence,ok", [
    ("Despite repeated attempts, the patient remained nonverbal.", True),   # repeated attempts now, not a later time
    ("On repeated examination, the patient remained nonverbal.", False),    # a later examination
])
def test_repeated_attempts_are_no_later_time(sentence, ok):
    note = f"A 40-year-old man was brought in unresponsive. {sentence}"
    assert _judge(21, note, sentence, "Best verbal response", "no verbal response").supports is ok


# ------------------------------------------------------------------------------------------------
# a recent window: a mention dated outside it does not break the silence


@pytest.mark.parametrize("history,ok", [
    ("She had a cholecystectomy in 1959 and an appendectomy 20 years ago.", True),   # dated years back
    ("She had a cholecystectomy two weeks ago.", False),                              # inside the four weeks
    ("She had a cholecystectomy.", False),                                            # undated: named
])
def test_a_window_criterion_is_silent_where_the_note_dates_every_mention_outside_it(history, ok):
    note = f"A 66-year-old woman presented with dyspnea. {history} Her heart rate was 110/min."
    assert _silent(8, note, "Surgery in the previous 4 weeks", False).supports is ok


@pytest.mark.parametrize("sentence,ok", [
    ("The surgeons suggested coronary artery bypass graft (CABG) surgery as a reasonable option.", True),  # proposed
    ("She underwent coronary artery bypass graft (CABG) surgery last week.", False),
])
def test_a_suggested_operation_is_no_operation_done(sentence, ok):
    note = f"A 70-year-old woman presented with leg swelling. {sentence}"
    assert _silent(16, note, "Major surgery within 12 weeks", False).supports is ok


# ------------------------------------------------------------------------------------------------
# a blood pressure given as the finding it shows


@pytest.mark.parametrize("sentence,name,value,ok", [
    ("Vital signs on admission showed hypotension (80/40 mm Hg) and tachycardia.", "Systolic Blood Pressure", 80, True),
    ("Vital signs on admission showed hypotension (80/40 mm Hg) and tachycardia.", "Diastolic Blood Pressure", 40, True),
    ("Vital signs on admission showed hypotension (80/40 mm Hg) and tachycardia.", "Systolic Blood Pressure", 40, False),
    ("He has a history of hypertension for 10 years, treated with 20 mg of lisinopril.", "Systolic Blood Pressure", 20, False),
])
def test_a_hypotension_reading_is_the_blood_pressure(sentence, name, value, ok):
    note = f"A 71-year-old man came in confused. {sentence}"
    assert _judge(45, note, sentence, name, value, "mm Hg").supports is ok


# ------------------------------------------------------------------------------------------------
# negation


@pytest.mark.parametrize("sentence,value,ok", [
    ("His liver function tests have been normal, excluding any ongoing liver disease.", False, True),
    ("Liver function tests returned within normal parameters, alleviating any fear of liver disease.", False, True),
    ("His tests were normal, excluding a history of liver disease from alcohol.", False, False),   # "excluding" = except
    ("His liver function tests have been abnormal, suggesting liver disease.", False, False),
])
def test_a_test_that_excludes_a_disease_negates_it(sentence, value, ok):
    note = f"A 60-year-old man on warfarin was seen in clinic. {sentence}"
    assert _judge(25, note, sentence, "Liver disease criteria for the HAS-BLED rule", value).supports is ok


@pytest.mark.parametrize("sentence,ok", [
    ("A male patient, a non-smoker with no history of hepatic disease, has been under management for heart failure.", True),
    ("A male patient, a non-smoker with no history of hepatic disease or heart failure, was seen.", False),
])
def test_a_negation_ends_at_the_comma_before_the_verb(sentence, ok):
    note = f"{sentence} He came in for a check-up."
    assert _judge(27, note, sentence, "Cardiac failure present", True).supports is ok


@pytest.mark.parametrize("history,ok", [
    ("Her medical history is significant for prior breast cancer.", True),      # a former cancer: none now
    ("Her medical history is significant for breast cancer.", False),           # named, not said to be former
])
def test_a_former_condition_is_no_current_one(history, ok):
    note = f"A 77-year-old woman visits for a check-up. {history} She is alert."
    assert _silent(29, note, "Neoplastic disease", False).supports is ok


# ------------------------------------------------------------------------------------------------
# lexicon phrasings: a clinical synonym of a criterion or a category


@pytest.mark.parametrize("cid,sentence,name,value,ok", [
    (29, "She was brought in due to alterations in her mental status.", "Altered mental status", True, True),
    (29, "Her mental status was unremarkable.", "Altered mental status", True, False),
    (29, "He reports a recent episode of fever and altered mental state.", "Altered mental status", True, True),
    (29, "He has an active neoplastic condition.", "Neoplastic disease", True, True),
    (20, "The exam shows grayish exudates overlying the palatine tonsils.", "Exudate or swelling on tonsils", True, True),
    (20, "The exam shows grayish exudates overlying the buccal mucosa.", "Exudate or swelling on tonsils", True, False),
    (25, "His INR results have fluctuated over the last year.", "Labile international normalized ratio", True, True),
    (25, "His INR results have been reviewed over the last year.", "Labile international normalized ratio", True, False),
    (15, "There was no visible abdominal distension.", "Ascites", "absent", True),
    (15, "There was marked abdominal distension.", "Ascites", "absent", False),
    (15, "He denies any remarkable cognitive impairments.", "Encephalopathy", "none", True),
    (15, "He reports cognitive impairment.", "Encephalopathy", "none", False),
    (32, "His kidney function is within normal limits.", "Moderate to severe Chronic Kidney Disease", "none", True),
    (4, "DH 21-year-old primigravida presented for her booking visit.", "sex", "female", True),
    (4, "DH 21-year-old primigravida presented for her booking visit.", "sex", "male", False),
])
def test_a_clinical_phrasing_names_the_criterion(cid, sentence, name, value, ok):
    note = f"A patient was seen in clinic. {sentence} The visit ended."
    v = _judge(cid, note, sentence, name, value)
    assert v.supports is ok, v.reason


# ------------------------------------------------------------------------------------------------
# numbers spelled as words


@pytest.mark.parametrize("sentence,value,ok", [
    ("A fifty-year-old male was presented with abdominal pain.", 50, True),
    ("A fifty-two-year-old male was presented with abdominal pain.", 52, True),
    ("A fifty-two-year-old male was presented with abdominal pain.", 50, False),   # a part of the compound
    ("A fifty-two-year-old male was presented with abdominal pain.", 2, False),
    ("A seventy three year old woman was presented with abdominal pain.", 73, True),
    ("A one hundred and fifty-year-old tree fell on him.", 50, False),             # a part of a larger number
])
def test_a_spelled_age_is_the_age(sentence, value, ok):
    note = f"{sentence} The symptoms had started two days earlier."
    v = _judge(38, note, sentence, "age", value, "years")
    assert v.supports is ok, v.reason


@pytest.mark.parametrize("text,value,want", [
    ("twenty-one drinks", 21, ["twenty-one"]),
    ("twenty-one drinks", 1, []),                 # "one" is a part of twenty-one
    ("twenty-one drinks", 20, []),
    ("ninety nine", 99, ["ninety nine"]),
    ("two hundred patients", 2, []),              # a multiplier of a larger number
    ("two-thirds of the dose", 2, []),            # a fraction
    ("four drinks", 4, ["four"]),
    ("zero", 0, ["zero"]),
])
def test_spelled_numbers_are_read_whole(text, value, want):
    from medcalc_maintained.calculators.note_numbers import spelled_numbers

    assert [text[a:b] for a, b in spelled_numbers(text, value)] == want


# ------------------------------------------------------------------------------------------------
# the abbreviation T of a vital-sign list


@pytest.mark.parametrize("vitals,value,unit,ok", [
    ("His vital signs are as follows: T 39.1 C, HR 82, BP 122/76, RR 14, and SpO2 99%.", 39.1, "°C", True),
    ("Vitals: T: 101.3 F, P 96, BP 110/70.", 38.5, "°C", True),                  # in °F, converted
    ("Vitals: T 38.2, HR 90, RR 18, BP 130/85.", 38.2, "°C", True),             # no unit, in a vital-sign list
    ("His vital signs are as follows: T 39.1 C, HR 82, BP 122/76.", 82, "°C", False),   # the heart rate's
    ("Staging was T 38 score, HR 82.", 38, "°C", False),                          # a T not followed by a temperature
    ("The T 3 lesion measured 38 mm, HR 82.", 38, "°C", False),
    ("His HR is 82 and his T 4 level is 39, with BP 120/80.", 39, "°C", False),
])
def test_the_abbreviation_t_before_a_temperature_is_the_temperature(vitals, value, unit, ok):
    note = f"A 16-year-old boy presents with a sore throat. {vitals} The tonsils are swollen."
    v = _judge(20, note, vitals, "Temperature", value, unit)
    assert v.supports is ok, v.reason


# ------------------------------------------------------------------------------------------------
# "chlorine", a misspelling of chloride before a concentration


@pytest.mark.parametrize("labs,name,value,ok", [
    ("creatinine 1.1 mg/dL, serum sodium 133 mmol/L, and chlorine 89 mmol/L", "Chloride", 89, True),
    ("creatinine 1.1 mg/dL, serum sodium 133 mmol/L, and chlorine 89 mmol/L", "Sodium", 89, False),  # no longer the sodium's
    ("creatinine 1.1 mg/dL, serum sodium 133 mmol/L, and chlorine of 89 mEq/L", "Chloride", 89, True),
    ("sodium 133 mmol/L after exposure to chlorine 10 ppm for 89 minutes", "Chloride", 89, False),   # the gas
    ("sodium 133 mmol/L after exposure to chlorine gas, 89 mmol/L", "Chloride", 89, False),
    ("serum sodium 133 mmol/L, and urine chlorine 89 mmol/L", "Chloride", 89, False),                # the urine's
])
def test_chlorine_before_a_concentration_is_the_chloride(labs, name, value, ok):
    note = f"A 44-year-old man presented with thirst. Labs showed {labs}. He was admitted."
    v = _judge(67, note, labs, name, value, "mmol/L")
    assert v.supports is ok, v.reason


# ------------------------------------------------------------------------------------------------
# a list whose head names urine: each of its items is a urine quantity


SERUM = "Pertinent labs included BUN 16 mg/dL, creatinine 0.65 mg/dL, sodium 134 mmol/L and potassium 3.6 mmol/L."
URINE = "Urine electrolytes were sodium 179 mmol/L, potassium 14 mmol/L, chloride 25 mmol/L, creatinine 37 mg/dL."
RANDOM = "The urine random studies revealed sodium 32 mEq/L, chloride 54 mEq/L and creatinine 60.3 mg/dL."
BOTH = ("Serum electrolytes were sodium 140 mmol/L and creatinine 0.9 mg/dL, while urine electrolytes were sodium 21 mmol/L "
        "and creatinine 88 mg/dL.")
URINALYSIS = "Urinalysis was normal, sodium 133 mmol/L."
NAMED = "Urine studies showed sodium 45 mmol/L, and serum creatinine 1.2 mg/dL."


@pytest.mark.parametrize("labs,quote,name,value,unit,ok", [
    (SERUM + " " + URINE, "Urine electrolytes were sodium 179 mmol/L", "Urine sodium", 179, "mmol/L", True),
    (URINE, "Urine electrolytes were sodium 179 mmol/L", "Sodium", 179, "mmol/L", False),       # no serum sodium
    (SERUM + " " + URINE, "creatinine 37 mg/dL", "Urine creatinine", 37, "mg/dL", True),
    (URINE, "creatinine 37 mg/dL", "creatinine", 37, "mg/dL", False),
    (RANDOM, RANDOM[:-1], "Urine creatinine", 60.3, "mg/dL", True),
    (RANDOM, "The urine random studies revealed sodium 32 mEq/L", "Urine sodium", 32, "mEq/L", True),
    # a serum list stays serum
    (SERUM + " " + URINE, SERUM[:-1], "Sodium", 134, "mmol/L", True),
    (SERUM + " " + URINE, SERUM[:-1], "Urine creatinine", 0.65, "mg/dL", False),
    (BOTH, BOTH[:-1], "Sodium", 140, "mmol/L", True),
    (BOTH, BOTH[:-1], "Urine sodium", 140, "mmol/L", False),
    (BOTH, BOTH[:-1], "Urine sodium", 21, "mmol/L", True),
    (BOTH, BOTH[:-1], "Urine creatinine", 88, "mg/dL", True),
    (BOTH, BOTH[:-1], "Sodium", 21, "mmol/L", False),
    # a urinalysis that is no list head, and a serum item named as such after a urine list
    (URINALYSIS, URINALYSIS[:-1], "Sodium", 133, "mmol/L", True),
    (URINALYSIS, URINALYSIS[:-1], "Urine sodium", 133, "mmol/L", False),
    (NAMED, NAMED[:-1], "creatinine", 1.2, "mg/dL", True),
    (NAMED, NAMED[:-1], "Urine creatinine", 1.2, "mg/dL", False),
])
def test_a_list_headed_by_urine_holds_urine_quantities(labs, quote, name, value, unit, ok):
    note = f"A 60-year-old woman had polyuria. {labs} She was admitted."
    v = _judge(40, note, quote, name, value, unit)
    assert v.supports is ok, v.reason


def test_a_chloride_of_a_urine_list_is_no_serum_chloride():
    note = f"A 60-year-old woman had polyuria. {RANDOM} She was admitted."
    assert not _judge(67, note, RANDOM[:-1], "Chloride", 54, "mEq/L").supports


# ------------------------------------------------------------------------------------------------
# alcoholic drinks per week: one drink, none, and a count of another period


DRINKS = "Number of Alcoholic Drinks Per Week"


@pytest.mark.parametrize("sentence,value,ok", [
    ("His alcohol consumption is limited to a single drink per week.", 1, True),
    ("His alcohol consumption is limited to a single drink per day.", 1, False),       # seven a week
    ("He drinks one beer a day.", 1, False),
    ("He drinks 3 beers daily.", 3, False),
    ("He drinks 4 glasses of wine a month.", 4, False),
    ("He drinks about four alcoholic drinks each week.", 4, True),
    ("He drinks up to 12 drinks per week.", 12, False),                                  # a bound
    ("She drinks twenty-one drinks per week.", 1, False),                               # a part of twenty-one
    ("He does not regularly take aspirin, and he denies any tobacco or alcohol consumption.", 0, True),
    ("He denies alcohol, tobacco, or illicit drug use.", 0, True),
    ("She does not drink alcohol.", 0, True),
    ("He denies heavy alcohol use.", 0, False),                                          # some drinking is not denied
    ("He denies excessive alcohol consumption.", 0, False),
    ("There is no history of alcohol abuse.", 0, False),
    ("He does not drink alcohol regularly.", 0, False),
    ("She does not drink alcohol, but she smokes.", 2, False),
    ("He reports alcohol consumption.", 0, False),                                       # not negated
    ("He has no complaints and drinks alcohol socially.", 0, False),                     # the negation is another's
    ("He denies tobacco and drinks alcohol on weekends.", 0, False),
    ("He denies tobacco and alcohol use.", 0, True),
    ("No alcohol was detected in his blood.", 0, False),                                # a test, not his drinking
    ("His father does not drink alcohol.", 0, False),                                   # a relative's
])
def test_a_weekly_drink_count_of_one_or_none(sentence, value, ok):
    note = f"A 62-year-old man came for a check-up. He has liver cirrhosis. {sentence} He is free from hypertension."
    v = _judge(25, note, sentence, DRINKS, value)
    assert v.supports is ok, v.reason


# ------------------------------------------------------------------------------------------------
# a line break that wraps a sentence (and a name) is no sentence end


WRAPPED = ("A 14-year-old girl presented to a school-based screening. Her\nscreening lipid panel was within normal limits "
           "(cholesterol 125 mg/dL, high-density\nlipoprotein 49 mg/dL, low-density lipoprotein 63 mg/dL, and triglycerides "
           "68 mg/dL).\nPoint-of-care HbA1c was 8.5%.")


@pytest.mark.parametrize("quote,name,value,ok", [
    ("high-density\nlipoprotein 49 mg/dL", "high-density lipoprotein cholesterol", 49, True),
    ("cholesterol 125 mg/dL, high-density\nlipoprotein 49 mg/dL", "Total cholesterol", 49, False),   # the HDL's
    ("cholesterol 125 mg/dL, high-density\nlipoprotein 49 mg/dL", "Total cholesterol", 125, True),
    ("low-density lipoprotein 63 mg/dL", "high-density lipoprotein cholesterol", 63, False),
])
def test_a_name_wrapped_over_two_lines_is_one_name(quote, name, value, ok):
    v = _judge(44, WRAPPED, quote, name, value, "mg/dL")
    assert v.supports is ok, v.reason


def test_a_line_that_starts_with_a_capital_still_ends_the_sentence_before_it():
    from medcalc_maintained.calculators.note_text import sentence

    text = "Labs were drawn and the high-density lipoprotein was pending\nLDL 49 mg/dL on the panel."
    assert text[slice(*sentence(text, text.index("49")))] == "LDL 49 mg/dL on the panel"
    wrapped = "Labs were drawn, and the high-density\nlipoprotein was 49 mg/dL."
    assert wrapped[slice(*sentence(wrapped, wrapped.index("49")))].startswith("Labs were drawn")


# ------------------------------------------------------------------------------------------------
# a name that follows its number in the same clause


@pytest.mark.parametrize("sentence,name,value,unit,ok", [
    ("Also, at 2.3 mg/dL, his bilirubin level has spiked slightly beyond the usual range.", "Bilirubin", 2.3, "mg/dL", True),
    ("Also, at 2.3 mg/dL, his creatinine level has spiked slightly beyond the usual range.", "Bilirubin", 2.3, "mg/dL", False),
    ("At 2.3 mg/dL, his bilirubin rose to 5.1 mg/dL over the day.", "Bilirubin", 2.3, "mg/dL", False),    # another value's
    ("At 2.3 mg/dL, both bilirubin and creatinine were above the usual range.", "Bilirubin", 2.3, "mg/dL", False),
    ("Within 2 days, his bilirubin level has spiked.", "Bilirubin", 2, "mg/dL", False),           # no unit of a bilirubin
    ("At 2.3 mg/dL above the upper limit, his bilirubin was worrying.", "Bilirubin", 2.3, "mg/dL", False),   # a difference
    ("Also, at 2.3, his bilirubin level has spiked.", "Bilirubin", 2.3, "mg/dL", False),           # no unit at all
    ("An output of 890 mL/day of urine records a reasonable fluid balance.", "Urine Output", 890, "mL/day", True),
    ("An output of 890 mL/day of drain fluid records a reasonable balance.", "Urine Output", 890, "mL/day", False),
])
def test_a_name_after_its_number_in_the_clause(sentence, name, value, unit, ok):
    note = f"A 74-year-old man was admitted to the ICU. {sentence} His platelets were 160,000/µL."
    v = _judge(43, note, sentence, name, value, unit)
    assert v.supports is ok, v.reason


# ------------------------------------------------------------------------------------------------
# "i.e." and "e.g." end no sentence


@pytest.mark.parametrize("name,value,unit,ok", [
    ("creatinine", 0.7, "mg/dL", True),
    ("creatinine", 137, "mg/dL", False),     # the sodium's
])
def test_a_respectively_list_after_ie_pairs_in_order(name, value, unit, ok):
    s = ("Most notably, both creatinine and sodium were within normal levels, i.e. 0.7 mg/dL and 137 mEq/L, respectively.")
    note = f"A 45-year-old woman had a myomectomy. {s} She had a history of encephalopathy."
    v = _judge(2, note, s, name, value, unit)
    assert v.supports is ok, v.reason


def test_ie_and_eg_end_no_sentence():
    from medcalc_maintained.calculators.note_text import sentence

    text = "Her labs were normal, i.e. creatinine 0.7 mg/dL. Drugs, e.g. aspirin, were held. Sodium 137 mmol/L."
    assert text[slice(*sentence(text, text.index("0.7")))] == "Her labs were normal, i.e. creatinine 0.7 mg/dL"
    assert text[slice(*sentence(text, text.index("aspirin")))] == " Drugs, e.g. aspirin, were held"
    assert text[slice(*sentence(text, text.index("137")))] == " Sodium 137 mmol/L"
