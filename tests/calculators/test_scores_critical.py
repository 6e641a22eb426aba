from medcalc_maintained.calculators import compute

# ---------------------------------------------------------------------------- GCS (21)


def test_gcs_worked_examples():
    # eye to pain 2 + inappropriate words 3 + withdrawal 4 = 9
    r = compute(21, {"Best eye response": "eye opening to pain", "Best verbal response": "inappropriate words",
                     "Best motor response": "withdrawal from pain"})
    assert r.value == "9"
    # spontaneous 4 + oriented 5 + obeys 6 = 15 (case-insensitive strings)
    r = compute(21, {"Best eye response": "Eyes open spontaneously", "Best verbal response": "ORIENTED",
                     "Best motor response": "obeys commands"})
    assert r.value == "15"


def test_gcs_not_testable_and_missing():
    # a not-testable component: the total Score is undefined
    r = compute(21, {"Best eye response": "not testable", "Best verbal response": "confused",
                     "Best motor response": "obeys commands"})
    assert r.value is None and r.missing == ("Best eye response (not testable)",)
    r = compute(21, {"Best eye response": "no eye opening", "Best verbal response": "confused"})
    assert r.value is None and r.missing == ("Best motor response",)


# ---------------------------------------------------------------------------- APACHE II (28)

_APACHE_BASE = {
    "age": [43.0, "years"], "Temperature": [34.9, "degrees celsius"],
    "Systolic Blood Pressure": [122.0, "mm Hg"], "Diastolic Blood Pressure": [81.0, "mm Hg"],
    "Heart Rate or Pulse": [120.0, "beats per minute"], "respiratory rate": [17.0, "breaths per minute"],
    "FiO₂": [57.0, "%"], "A-a gradient": 375.0, "pH": 7.53, "Sodium": [137.49, "mmol/L"],
    "Potassium": [5.43, "mmol/L"], "creatinine": [1.258, "mg/dL"], "Acute renal failure": True,
    "Hematocrit": [35.0, "%"], "White blood cell count": [9103.0, "µL"], "Glasgow Coma Score": 12.0,
    "History of severe organ failure or immunocompromise": False,
}


def test_apache_worked_example_high_fio2():
    # age 43 -> 0; FiO2 57% so A-a 375 -> 3; temp 34.9 C -> 1; MAP 2/3*81+1/3*122 = 94.7 -> 0;
    # HR 120 -> 2; RR 17 -> 0; pH 7.53 -> 1; Na 137 -> 0; K 5.43 -> 0; Cr 1.258 (x2 ARF) -> 0;
    # Hct 35 -> 0; WBC 9.1 x10^9/L -> 0; 15 - GCS 12 = 3; chronic 0
    # total = 3 + 1 + 2 + 1 + 3 = 10
    assert compute(28, _APACHE_BASE).value == "10"


def test_apache_low_fio2_fahrenheit_chronic_and_arf():
    e = dict(_APACHE_BASE)
    del e["A-a gradient"]
    e.update({"FiO₂": [32.0, "%"], "Partial pressure of oxygen (PaO₂) for Apache II": [57.0, "mm Hg"],
              "Temperature": [95.0, "degrees fahrenheit"], "creatinine": [2.57, "mg/dL"],
              "age": [61.0, "years"], "History of severe organ failure or immunocompromise": True,
              "Surgery Type": "Elective"})
    # FiO2 < 50 -> PaO2 57 (55-60) -> 3; 95 F = (95-32)*5/9 = 35.0 C -> 1; age 61 -> 3;
    # Cr 2.57 -> 3, doubled for ARF -> 6; elective postoperative chronic -> 2
    # others as base: HR 2 + pH 1 + GCS 3 = 6
    # total = 3 + 1 + 3 + 6 + 2 + 6 = 21
    assert compute(28, e).value == "21"


def test_apache_missing_aa_gradient_when_fio2_high():
    e = dict(_APACHE_BASE)
    del e["A-a gradient"]
    r = compute(28, e)
    assert r.value is None and "A-a gradient" in r.missing


# ---------------------------------------------------------------------------- SOFA (43)


def test_sofa_worked_example_units():
    e = {"FiO₂": [60.0, "%"], "Partial pressure of oxygen (PaO₂) for Apache II": [76.0, "mm Hg"],
         "On mechanical ventilation": True, "Hypotension": True, "Glasgow Coma Score": 9.0,
         "creatinine": [121.32, "µmol/L"], "Bilirubin": [88.41, "µmol/L"], "Platelet count": [140400.0, "µL"]}
    # P/F = 76/0.60 = 126.7, ventilated -> 3; hypotension, no pressors -> 1; GCS 9 -> 3;
    # bilirubin 88.41/17.1 = 5.17 mg/dL -> 2; platelets 140.4 x10^3 -> 1;
    # creatinine 121.32/88.4 = 1.37 mg/dL -> 1; total = 3+1+3+2+1+1 = 11
    assert compute(43, e).value == "11"


def test_sofa_pressors_and_urine_output():
    e = {"FiO₂": [71.0, "%"], "Partial pressure of oxygen (PaO₂) for Apache II": [87.0, "mm Hg"],
         "On mechanical ventilation": False, "norEPINEPHrine": [0.27, "mc/kg/min"],
         "Urine Output": [132, "mL/day"], "Glasgow Coma Score": 8.0, "Bilirubin": [3.32, "mg/dL"],
         "Platelet count": [87000.0, "µL"]}
    # P/F = 87/0.71 = 122.5, not ventilated -> capped at 2; norepinephrine 0.27 > 0.1 -> 4;
    # GCS 8 -> 3; bilirubin 3.32 -> 2; platelets 87 -> 2; urine 132 < 200 mL/day -> 4 (creatinine
    # not needed); total = 2+4+3+2+2+4 = 17
    assert compute(43, e).value == "17"
    # dopamine 5 (<=5) -> 2 instead of 4: 17 - 4 + 2 = 15
    e2 = dict(e)
    del e2["norEPINEPHrine"]
    e2["DOPamine"] = [5.0, "mcg/kg/min"]
    assert compute(43, e2).value == "15"


def test_sofa_missing_creatinine_without_oliguria():
    e = {"FiO₂": [21.0, "%"], "Partial pressure of oxygen (PaO₂) for Apache II": [95.0, "mm Hg"],
         "Glasgow Coma Score": 15, "Bilirubin": [0.5, "mg/dL"], "Platelet count": [250000.0, "µL"],
         "Urine Output": [900, "mL/day"]}
    r = compute(43, e)
    assert r.value is None and r.missing == ("creatinine",)
    # with creatinine 0.9: P/F 95/0.21 = 452 -> 0, everything normal -> 0
    e["creatinine"] = [0.9, "mg/dL"]
    assert compute(43, e).value == "0"


# ---------------------------------------------------------------------------- PSI (29)

_PSI = {"age": [64.0, "years"], "sex": "Male", "Renal disease": True, "Liver disease severity": True,
        "Altered mental status": True, "Pleural effusion on x-ray": True,
        "respiratory rate": [34.0, "breaths per minute"], "Systolic Blood Pressure": [94.0, "mm Hg"],
        "Temperature": [38.0, "degrees celsius"], "Heart Rate or Pulse": [94.0, "beats per minute"],
        "pH": 7.6, "Blood Urea Nitrogen (BUN)": [26.75, "mg/dL"], "Sodium": [128.43, "mmol/L"],
        "Glucose": [251.12, "mg/dL"], "Hematocrit": [37.0, "%"],
        "Partial pressure of oxygen (PaO₂) for Apache II": [75.0, "mm Hg"]}


def test_psi_worked_example():
    # 64 (male) + renal 10 + liver 20 + AMS 20 + effusion 10 + RR>=30 20 + Na<130 20 + glucose>=250 10
    # = 64 + 10 + 20 + 20 + 10 + 20 + 20 + 10 = 174
    assert compute(29, _PSI).value == "174"


def test_psi_female_and_units():
    e = dict(_PSI)
    e.update({"sex": "Female", "Glucose": [15.0, "mmol/L"], "Temperature": [104.0, "degrees fahrenheit"],
              "Blood Urea Nitrogen (BUN)": [11.0, "mmol/L"]})
    # female: 64 - 10 = 54; glucose 15 mmol/L = 270 mg/dL -> 10 (unchanged);
    # 104 F = 40 C -> +15; BUN 11 mmol/L = 30.8 mg/dL -> +20
    # 174 - 10 + 15 + 20 = 199
    assert compute(29, e).value == "199"


def test_psi_missing_sex():
    e = dict(_PSI)
    del e["sex"]
    r = compute(29, e)
    assert r.value is None and r.missing == ("sex",)


# ---------------------------------------------------------------------------- SIRS (51)


def test_sirs_counts():
    # temp 39.4 > 38 (1); HR 100 > 90 (1); RR 22 > 20 (1); WBC 6370 normal (0) -> 3
    e = {"Temperature": [39.4, "degrees celsius"], "Heart Rate or Pulse": [100.0, "beats per minute"],
         "respiratory rate": [22.0, "breaths per minute"], "White blood cell count": [6370.0, "m^3"]}
    assert compute(51, e).value == "3"
    # 96.0 F = (96-32)*5/9 = 35.6 C < 36 (1); HR 80 (0); RR 16 but PaCO2 30 < 32 (1);
    # WBC 13,000/uL > 12,000 (1) -> 3
    e = {"Temperature": [96.0, "degrees fahrenheit"], "Heart Rate or Pulse": [80.0, "bpm"],
         "respiratory rate": [16.0, "breaths per minute"], "PaCO₂": [30.0, "mm hg"],
         "White blood cell count": [13000.0, "µL"]}
    assert compute(51, e).value == "3"


def test_sirs_missing_wbc():
    e = {"Temperature": [37.0, "degrees celsius"], "Heart Rate or Pulse": [80.0, "beats per minute"],
         "respiratory rate": [16.0, "breaths per minute"]}
    r = compute(51, e)
    assert r.value is None and r.missing == ("White blood cell count",)


# ---------------------------------------------------------------------------- CURB-65 (45)


def test_curb65_worked_examples():
    # confusion 1 + BUN 28 > 19 (1) + RR 40 >= 30 (1) + SBP 78 < 90 (1) + age 78 >= 65 (1) = 5
    e = {"age": [78.0, "years"], "Systolic Blood Pressure": [78.0, "mm hg"],
         "Diastolic Blood Pressure": [45.0, "mm hg"], "Blood Urea Nitrogen (BUN)": [28.0, "mg/dL"],
         "respiratory rate": [40.0, "breaths per minute"], "Confusion": True}
    assert compute(45, e).value == "5"
    # urea 4.7 mmol/L = 4.7*2.801 = 13.2 mg/dL (0); age 78 (1); SBP 104/DBP 71 (0); RR 19 (0) -> 1
    e = {"age": [78.0, "years"], "Systolic Blood Pressure": [104.0, "mm hg"],
         "Diastolic Blood Pressure": [71.0, "mm hg"], "Blood Urea Nitrogen (BUN)": [4.7, "mmol/L"],
         "respiratory rate": [19.0, "breaths per minute"]}
    assert compute(45, e).value == "1"


def test_curb65_dbp_boundary_and_missing():
    # DBP 60 <= 60 counts (1); age 40 (0); BUN 10 (0); RR 20 (0) -> 1
    e = {"age": [40.0, "years"], "Systolic Blood Pressure": [120.0, "mm hg"],
         "Diastolic Blood Pressure": [60.0, "mm hg"], "Blood Urea Nitrogen (BUN)": [10.0, "mg/dL"],
         "respiratory rate": [20.0, "breaths per minute"]}
    assert compute(45, e).value == "1"
    del e["Blood Urea Nitrogen (BUN)"]
    r = compute(45, e)
    assert r.value is None and r.missing == ("Blood Urea Nitrogen (BUN)",)
