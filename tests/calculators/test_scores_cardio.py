"""Hand-worked cases for the cardiovascular / thromboembolic scores (scores_cardio)."""

from medcalc_maintained.calculators import compute

# ---------------------------------------------------------------- 4 CHA2DS2-VASc


def test_cha2ds2_vasc_elderly_woman():
    # age 78 -> 2, female -> 1, HTN 1, DM 1, stroke 2: 2+1+1+1+2 = 7
    e = {"age": [78, "years"], "sex": "Female", "Hypertension history": True, "Diabetes history": True,
         "Stroke": True, "Congestive Heart Faliure": False}
    assert compute(4, e).value == "7"


def test_cha2ds2_vasc_tia_vascular_chf_spelling():
    # age 66 -> 1, male 0, CHF (data's 'Faliure' spelling) 1, TIA -> 2, vascular 1: 1+0+1+2+1 = 5
    e = {"age": [66, "years"], "sex": "Male", "Congestive Heart Faliure": True,
         "Transient Ischemic Attacks History": True, "Vascular disease history": True}
    assert compute(4, e).value == "5"


def test_cha2ds2_vasc_age_in_months_and_missing_sex():
    # 780 months / 12 = 65 years -> 1 point; male, nothing else: total 1
    assert compute(4, {"age": [780, "months"], "sex": "male"}).value == "1"
    r = compute(4, {"age": [70, "years"]})
    assert r.value is None and r.missing == ("sex",)


# ---------------------------------------------------------------- 8 Wells' PE


def test_wells_pe_tachycardia_dvt_signs_hemoptysis():
    # DVT signs 3 + HR 110 > 100 -> 1.5 + hemoptysis 1 = 5.5
    e = {"Heart Rate or Pulse": [110, "beats per minute"], "Clinical signs and symptoms of Deep Vein Thrombosis": True,
         "Hemoptysis": True}
    assert compute(8, e).value == "5.5"


def test_wells_pe_combined_items_count_once():
    # HR 100 is not > 100 -> 0; surgery + immobilisation is ONE item -> 1.5; prior DVT -> 1.5; malignancy 1
    # 0 + 1.5 + 1.5 + 1 = 4.0
    e = {"Heart Rate or Pulse": [100, "bpm"], "Surgery in the previous 4 weeks": True,
         "Immobilization for at least 3 days": True, "Previously documented Deep Vein Thrombosis": True,
         "Malignancy with treatment within 6 months or palliative": True}
    r = compute(8, e)
    assert r.value == "4" and r.number == 4.0


def test_wells_pe_missing_heart_rate():
    r = compute(8, {"Hemoptysis": True})
    assert r.value is None and r.missing == ("Heart Rate or Pulse",)


# ---------------------------------------------------------------- 16 Wells' DVT


def test_wells_dvt_alternative_diagnosis_only():
    # nothing present, alternative diagnosis as likely: 0 - 2 = -2
    e = {"Alternative diagnosis to Deep Vein Thrombosis as likely or more likely": True, "Active cancer": False}
    assert compute(16, e).value == "-2"


def test_wells_dvt_bedridden_or_surgery_single_item():
    # cancer 1 + (bedridden OR major surgery, both true, one item) 1 + entire leg swollen 1 = 3
    e = {"Active cancer": True, "Bedridden recently >3 days or major surgery within 12 weeks": True,
         "Major surgery within 12 weeks": True, "Entire Leg Swollen": True}
    assert compute(16, e).value == "3"


# ---------------------------------------------------------------- 17 RCRI


def test_rcri_creatinine_umol_conversion():
    # creatinine 190 umol/L / 88.4 = 2.149 mg/dL > 2 -> 1; ischaemic heart disease 1; CHF 1: total 3
    e = {"Pre-operative creatinine": [190, "µmol/L"], "History of ischemic heart disease": True,
         "Congestive Heart Failure criteria for the Cardiac Risk Index rule": True}
    assert compute(17, e).value == "3"


def test_rcri_cerebrovascular_either_key_and_threshold():
    # 'History of cerebrovascular disease' True counts even if the other spelling is False -> 1;
    # creatinine 2.0 mg/dL is not > 2 -> 0: total 1
    e = {"Pre-operative creatinine": [2.0, "mg/dL"], "History of cerebrovascular disease": True,
         "Cerebrovascular disease history": False}
    assert compute(17, e).value == "1"


def test_rcri_missing_creatinine():
    r = compute(17, {"Elevated-risk surgery": True})
    assert r.value is None and r.missing == ("Pre-operative creatinine",)


# ---------------------------------------------------------------- 18 HEART


def test_heart_high_risk():
    # history highly 2 + ECG ST deviation 2 + age 70 (>=65) 2 + risk factors HTN, smoking (2 -> 1)
    # + troponin >3x 2 = 2+2+2+1+2 = 9
    e = {"age": [70, "years"], "Suspicion History": "Highly suspicious", "Electrocardiogram Test": "Significant ST deviation",
         "Initial troponin": "greater than three times normal limit", "Hypertension history": True, "smoking": True}
    assert compute(18, e).value == "9"


def test_heart_atherosclerotic_disease_gives_two():
    # slightly 0 + normal 0 + age 44 (<45) 0 + known atherosclerotic disease 2 + troponin normal 0 = 2
    e = {"age": [44, "years"], "Suspicion History": "slightly suspicious", "Electrocardiogram Test": "NORMAL",
         "Initial troponin": "less than or equal to normal limit", "atherosclerotic disease": True}
    assert compute(18, e).value == "2"


def test_heart_three_risk_factors_and_bad_category():
    # moderately 1 + non-specific repolarisation 1 + age 45 -> 1 + 3 risk factors -> 2 + troponin 1-3x 1 = 6
    e = {"age": [45, "years"], "Suspicion History": "Moderately suspicious",
         "Electrocardiogram Test": "Non-specific repolarization disturbance",
         "Initial troponin": "between the normal limit or up to three times the normal limit",
         "hypercholesterolemia": True, "Diabetes mellitus criteria for CCI rule": True,
         "parent or sibling with Cardiovascular disease before age 65": True}
    assert compute(18, e).value == "6"
    e["Electrocardiogram Test"] = "sinus rhythm"
    r = compute(18, e)
    assert r.value is None and r.invalid == ("Electrocardiogram Test",)


# ---------------------------------------------------------------- 25 HAS-BLED


def test_has_bled_elderly_drinker():
    # age 70 > 65 -> 1, HTN 1, stroke 1, 8 drinks/week (>= 8) 1: total 4
    e = {"age": [70, "years"], "Hypertension history": True, "Stroke": True, "Number of Alcoholic Drinks Per Week": 8}
    assert compute(25, e).value == "4"


def test_has_bled_age_65_not_elderly_and_string_drinks():
    # age 65 is not > 65 -> 0; '7' drinks < 8 -> 0; labile INR 1; bleeding drugs 1: total 2
    e = {"age": [65, "years"], "Number of Alcoholic Drinks Per Week": "7",
         "Labile international normalized ratio": True, "Medication usage predisposing to bleeding": True}
    assert compute(25, e).value == "2"


def test_has_bled_missing_age():
    r = compute(25, {"Stroke": True})
    assert r.value is None and r.missing == ("age",)


# ---------------------------------------------------------------- 36 Caprini


def test_caprini_major_surgery_bed_rest():
    # age 45 -> 1; major surgery 2; bed rest 1; BMI 26 > 25 -> 1; DVT and PE history = one item 3;
    # varicose veins 1: 1+2+1+1+3+1 = 9
    e = {"age": [45, "years"], "sex": "Male", "Surgery Type": "major", "Mobility": "on bed rest",
         "Body Mass Index (BMI)": [26, "kg/m^2"], "Previously documented Deep Vein Thrombosis": True,
         "Previously Documented Pulmonary Embolism": True, "Varicose veins": True}
    assert compute(36, e).value == "9"


def test_caprini_no_surgery_fracture():
    # age 80 -> 3; surgery not mentioned -> 0; confined to bed >72 h 2; BMI 25 not > 25 -> 0;
    # hip fracture 5; central venous access 2; malignancy 2: 3+0+2+0+5+2+2 = 14
    e = {"age": [80, "years"], "sex": "Female", "Mobility": "confined to bed >72 hours",
         "Body Mass Index (BMI)": [25.0, "kg/m^2"], "Hip, pelvis, or leg fracture in the last month": True,
         "Current central venous access": True, "Present or previous malignancy": True}
    assert compute(36, e).value == "14"


def test_caprini_missing_bmi():
    r = compute(36, {"age": [50, "years"], "Mobility": "normal"})
    assert r.value is None and r.missing == ("Body Mass Index (BMI)",)


# ---------------------------------------------------------------- 46 Framingham hard CHD


def test_framingham_male_nonsmoker():
    # ln50 = 3.91202, ln200 = 5.29832, ln120 = 4.78749
    # L = 52.00961*3.91202 + 20.014077*5.29832 - 0.905964*3.91202 + 1.305784*4.78749
    #     - 4.605038*3.91202*5.29832 - 2.93323*3.91202^2 - 172.300168
    #   = 203.463 + 106.041 - 3.544 + 6.251 - 95.449 - 44.890 - 172.300 = -0.428
    # risk = 1 - 0.9402^exp(-0.428) = 1 - 0.9402^0.6516 = 1 - 0.96062 = 3.94 %
    e = {"sex": "Male", "age": [50, "years"], "Total cholesterol": [200, "mg/dL"],
         "high-density lipoprotein cholesterol": [50, "mg/dL"], "Systolic Blood Pressure": [120, "mm Hg"]}
    r = compute(46, e)
    assert abs(r.number - 3.94) < 0.02


def test_framingham_female_smoker_over_78_mmol():
    # TC 5.0 mmol/L * 38.67 = 193.35 mg/dL (ln 5.26450); HDL 1.0 mmol/L = 38.67 (ln 3.65506);
    # ln80 = 4.38203, ln150 = 5.01064, smoker age capped: ln78 = 4.35671, BP treated
    # L = 31.764001*4.38203 + 22.465206*5.26450 - 1.187731*3.65506 + 2.552905*5.01064 + 0.420251
    #     + 13.07543 - 5.060998*4.38203*5.26450 - 2.996945*4.35671 - 146.5933061
    #   = 139.191 + 118.268 - 4.341 + 12.792 + 0.420 + 13.075 - 116.753 - 13.057 - 146.593 = 3.002
    # risk = 1 - 0.98767^exp(3.002) = 1 - 0.98767^20.12 = 1 - 0.7791 = 22.09 %
    e = {"sex": "Female", "age": [80, "years"], "Total cholesterol": [5.0, "mmol/L"],
         "high-density lipoprotein cholesterol": [1.0, "mmol/L"], "Systolic Blood Pressure": [150, "mm hg"],
         "Smoker": True, "Blood pressure being treated with medicines": True}
    r = compute(46, e)
    assert abs(r.number - 22.09) < 0.05


def test_framingham_male_smoker_over_70_and_missing():
    # ln72 = 4.27667, ln180 = 5.19296, ln45 = 3.80666, ln130 = 4.86753, smoker term uses ln70 = 4.24850
    # L = 52.00961*4.27667 + 20.014077*5.19296 - 0.905964*3.80666 + 1.305784*4.86753 + 12.096316
    #     - 4.605038*4.27667*5.19296 - 2.84367*4.24850 - 2.93323*4.27667^2 - 172.300168
    #   = 222.428 + 103.932 - 3.449 + 6.356 + 12.096 - 102.271 - 12.081 - 53.649 - 172.300 = 1.062
    # risk = 1 - 0.9402^exp(1.062) = 1 - 0.9402^2.8935 = 1 - 0.8366 = 16.34 %
    e = {"sex": "Male", "age": [72, "years"], "Total cholesterol": [180, "mg/dL"],
         "high-density lipoprotein cholesterol": [45, "mg/dL"], "Systolic Blood Pressure": [130, "mm Hg"],
         "Smoker": True}
    r = compute(46, e)
    assert abs(r.number - 16.34) < 0.05
    del e["high-density lipoprotein cholesterol"]
    r = compute(46, e)
    assert r.value is None and r.missing == ("high-density lipoprotein cholesterol",)


# ---------------------------------------------------------------- 48 PERC


def test_perc_thresholds_inclusive():
    # age 50 (>=50) 1; HR 100 (>=100) 1; SaO2 95 (not <95) 0; hormone use 1: total 3
    e = {"age": [50, "years"], "Heart Rate or Pulse": [100, "beats per minute"], "O₂ saturation percentage": [95, "%"],
         "Hormone use": True}
    assert compute(48, e).value == "3"


def test_perc_age_in_months_low_sat_prior_vte():
    # 588 months / 12 = 49 y -> 0; HR 99 -> 0; SaO2 94 < 95 -> 1; prior PE 1; hemoptysis 1: total 3
    e = {"age": [588, "months"], "Heart Rate or Pulse": [99, "bpm"], "O₂ saturation percentage": [94, "%"],
         "Previously Documented Pulmonary Embolism": True, "Hemoptysis": True}
    assert compute(48, e).value == "3"


def test_perc_missing_saturation():
    r = compute(48, {"age": [30, "years"], "Heart Rate or Pulse": [80, "bpm"]})
    assert r.value is None and r.missing == ("O₂ saturation percentage",)
