from medcalc_maintained.calculators import compute

# ---------------------------------------------------------------------------- Child-Pugh (15)


def test_child_pugh_worked_example_with_umol_bilirubin():
    e = {"international normalized ratio": 2.1, "Ascites": "absent", "Albumin": [3.1, "g/dL"],
         "Encephalopathy": "Grade 1-2", "Bilirubin": [40.2, "µmol/L"]}
    # bilirubin 40.2/17.1 = 2.35 mg/dL (2-3) -> 2; albumin 3.1 (2.8-3.5) -> 2; INR 2.1 (1.7-2.3) -> 2;
    # ascites absent -> 1; encephalopathy grade 1-2 -> 2; total = 2+2+2+1+2 = 9
    assert compute(15, e).value == "9"


def test_child_pugh_grades_and_defaults():
    e = {"international normalized ratio": 2.4, "Ascites": "Moderate", "Albumin": [2.7, "g/dL"],
         "Encephalopathy": "grade 3-4", "Bilirubin": [3.5, "mg/dL"]}
    # 3 + 3 + 3 + 3 + 3 = 15
    assert compute(15, e).value == "15"
    # boundaries: bilirubin 3.0 -> 2, albumin 3.5 -> 2, INR 1.7 -> 2; ascites / encephalopathy not
    # mentioned -> absent (1 each); total = 2+2+2+1+1 = 8
    e = {"international normalized ratio": 1.7, "Albumin": [3.5, "g/dL"], "Bilirubin": [3.0, "mg/dL"]}
    assert compute(15, e).value == "8"


def test_child_pugh_missing_and_bad_category():
    r = compute(15, {"international normalized ratio": 1.2, "Albumin": [4.0, "g/dL"]})
    assert r.value is None and r.missing == ("Bilirubin",)
    r = compute(15, {"international normalized ratio": 1.2, "Albumin": [4.0, "g/dL"],
                     "Bilirubin": [1.0, "mg/dL"], "Ascites": "enormous"})
    assert r.value is None and r.invalid == ("Ascites",)


# ---------------------------------------------------------------------------- Centor (20)


def test_centor_worked_examples():
    # age 15 (15-44) 0; 100.1 F = (100.1-32)*5/9 = 37.8 C (not > 38) 0; cough absent 1; nodes 1 -> 2
    e = {"age": [15.0, "years"], "Cough Absent": True, "Temperature": [100.1, "degrees fahreinheit"],
         "Tender/swollen anterior cervical lymph nodes": True, "Exudate or swelling on tonsils": False}
    assert compute(20, e).value == "2"
    # age 68 (>=45) -1; temp 36.2 0; nothing else -> -1
    e = {"age": [68.0, "years"], "Temperature": [36.2, "degrees celsius"]}
    assert compute(20, e).value == "-1"
    # age 7 (3-14) 1; temp 38.5 > 38 1; exudate 1; cough absent 1 -> 4
    e = {"age": [7.0, "years"], "Temperature": [38.5, "degrees celsius"], "Cough Absent": True,
         "Exudate or swelling on tonsils": True}
    assert compute(20, e).value == "4"


def test_centor_under_three_and_missing_temperature():
    r = compute(20, {"age": [14.0, "months"], "Temperature": [38.4, "degrees celsius"]})
    assert r.value is None and r.invalid == ("age",)
    r = compute(20, {"age": [30.0, "years"]})
    assert r.value is None and r.missing == ("Temperature",)


# ---------------------------------------------------------------------------- Glasgow-Blatchford (27)


def test_gbs_worked_example():
    e = {"Blood Urea Nitrogen (BUN)": [34.0, "mg/dL"], "Hemoglobin": [13.0, "g/dL"], "sex": "Female",
         "Systolic Blood Pressure": [90.0, "mm Hg"], "Heart Rate or Pulse": [80.0, "beats per minute"],
         "Melena present": True, "Cardiac failure present": True}
    # BUN 34 (28-70) 4; Hb 13 woman (>=12) 0; SBP 90 (90-99) 2; HR 80 0; melena 1; cardiac failure 2
    # total = 4+0+2+0+1+2 = 9
    assert compute(27, e).value == "9"


def test_gbs_urea_mmol_and_male_hb():
    e = {"Blood Urea Nitrogen (BUN)": [9.0, "mmol/L"], "Hemoglobin": [12.5, "g/dL"], "sex": "Male",
         "Systolic Blood Pressure": [105.0, "mm Hg"], "Heart Rate or Pulse": [110.0, "beats per minute"],
         "Recent syncope": True, "Hepatic disease history": True}
    # urea 9 mmol/L = 9*2.801 = 25.2 mg/dL (22.4-28) 3; Hb 12.5 man (12-13) 1; SBP 105 1; HR 110 1;
    # syncope 2; hepatic 2; total = 3+1+1+1+2+2 = 10
    assert compute(27, e).value == "10"
    # Hb 13.0 in a man is >= 13 -> 0 points: 10 - 1 = 9
    e["Hemoglobin"] = [13.0, "g/dL"]
    assert compute(27, e).value == "9"


def test_gbs_missing_sex():
    e = {"Blood Urea Nitrogen (BUN)": [9.0, "mg/dL"], "Hemoglobin": [14.0, "g/dL"],
         "Systolic Blood Pressure": [125.0, "mm Hg"], "Heart Rate or Pulse": [70.0, "beats per minute"]}
    r = compute(27, e)
    assert r.value is None and r.missing == ("sex",)


# ---------------------------------------------------------------------------- Charlson (32)


def test_cci_worked_example_graded_items():
    e = {"age": [75.0, "years"], "Myocardial infarction": True, "Congestive Heart Faliure": True,
         "Peripheral vascular disease": True, "Connective tissue disease": True, "Dementia": True,
         "Liver disease severity": "Mild", "Solid tumor": "Metastatic", "Transient Ischemic Attacks History": False}
    # age 70-79 3; MI 1; CHF 1; PVD 1; CTD 1; dementia 1; mild liver 1; metastatic tumour 6
    # total = 3+1+1+1+1+1+1+6 = 15
    assert compute(32, e).value == "15"


def test_cci_diabetes_ckd_and_localized():
    e = {"age": [55.0, "years"], "Diabetes mellitus criteria for CCI rule": "End-organ damage",
         "Moderate to severe Chronic Kidney Disease": "Severe", "Solid tumor": True,
         "Liver disease severity": "Moderate to Severe", "Transient Ischemic Attacks History": True,
         "Cerebrovascular Accident": True, "AIDS": True}
    # age 50-59 1; diabetes end-organ 2; CKD 2; tumour (extent not given -> localized) 2;
    # moderate-severe liver 3; CVA/TIA counted once 1; AIDS 6; total = 1+2+2+2+3+1+6 = 17
    assert compute(32, e).value == "17"
    # 'None or Diet-controlled' diabetes scores 0; age 49 -> 0
    e = {"age": [49.0, "years"], "Diabetes mellitus criteria for CCI rule": "None or Diet-controlled",
         "Chronic Obstructive Pulmonary Disease": True}
    assert compute(32, e).value == "1"


def test_cci_missing_age():
    r = compute(32, {"Dementia": True})
    assert r.value is None and r.missing == ("age",)


# ---------------------------------------------------------------------------- FeverPAIN (33)


def test_feverpain_examples():
    # fever 1 + purulence 1 + severe inflammation 1 (onset > 3 days 0, cough not mentioned 0) = 3
    e = {"Symptom onset ≤3 days": False, "Purulent tonsils": True, "Fever in past 24 hours": True,
         "Severe tonsil inflammation": True}
    assert compute(33, e).value == "3"
    # all five present = 5; unrelated PECARN keys are ignored
    e = {"Symptom onset ≤3 days": True, "Purulent tonsils": True, "Fever in past 24 hours": True,
         "Severe tonsil inflammation": True, "Absence of cough or coryza": True,
         "Altered mental status for PECARN head injury criteria": True}
    assert compute(33, e).value == "5"


def test_feverpain_nothing_reported_and_invalid_flag():
    # no criteria mentioned: all unchecked -> 0
    assert compute(33, {}).value == "0"
    r = compute(33, {"Purulent tonsils": "maybe"})
    assert r.value is None and r.invalid == ("Purulent tonsils",)
