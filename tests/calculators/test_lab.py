"""Hand-worked checks of the laboratory calculators (expected values computed in the comments)."""

import pytest

from medcalc_maintained.calculators import compute


def num(r):
    assert r.value is not None, (r.missing, r.invalid)
    return float(r.value)


# -- 2 Creatinine clearance (Cockcroft-Gault) ---------------------------------------------------


def test_crcl_normal_bmi_uses_min_of_ibw_and_actual():
    # BMI 70/1.75^2 = 22.86 (normal); IBW = 50 + 2.3*(175/2.54 - 60) = 50 + 2.3*8.898 = 70.465
    # weight = min(70.465, 70) = 70; CrCl = (140-60)*70/(72*1.0) = 5600/72 = 77.778
    r = compute(2, {"sex": "Male", "age": [60, "years"], "weight": [70, "kg"], "height": [175, "cm"],
                    "creatinine": [1.0, "mg/dL"]})
    assert r.value == "77.778"


def test_crcl_underweight_female_umol():
    # creatinine 88.4 umol/L = 1.0 mg/dL; BMI 40/1.6^2 = 15.6 (underweight) -> actual 40 kg
    # CrCl = (140-80)*40*0.85/(72*1.0) = 2040/72 = 28.333
    r = compute(2, {"sex": "Female", "age": [80, "years"], "weight": [40, "kg"], "height": [160, "cm"],
                    "creatinine": [88.4, "µmol/L"]})
    assert r.value == "28.333"


def test_crcl_obese_uses_adjusted_weight():
    # BMI 100/1.6^2 = 39.1; height 160/2.54 = 62.992 in; IBW = 45.5 + 2.3*2.992 = 52.382
    # ABW = 52.382 + 0.4*(100-52.382) = 52.382 + 19.047 = 71.429
    # CrCl = (140-40)*71.429*0.85/(72*1.0) = 6071.5/72 = 84.326
    r = compute(2, {"sex": "Female", "age": [40, "years"], "weight": [220.462, "lbs"], "height": [160, "cm"],
                    "creatinine": [1.0, "mg/dL"]})
    assert num(r) == pytest.approx(84.326, abs=0.002)


def test_crcl_missing_height():
    r = compute(2, {"sex": "Male", "age": [60, "years"], "weight": [70, "kg"], "creatinine": [1.0, "mg/dL"]})
    assert r.value is None and r.missing == ("height",)


# -- 3 CKD-EPI 2021 ----------------------------------------------------------------------------


def test_ckd_epi_female_at_kappa():
    # SCr/k = 0.7/0.7 = 1 -> both power terms 1; 0.9938^50 = exp(50*ln 0.9938) = exp(-0.31096) = 0.73276
    # eGFR = 142 * 0.73276 * 1.012 = 105.30
    r = compute(3, {"sex": "Female", "creatinine": [0.7, "mg/dL"], "age": [50, "years"]})
    assert num(r) == pytest.approx(105.30, abs=0.01)


def test_ckd_epi_male_high_creatinine():
    # SCr/k = 1.8/0.9 = 2; 2^-1.200 = 0.43528; 0.9938^60 = exp(-0.37316) = 0.68855
    # eGFR = 142 * 0.43528 * 0.68855 = 42.56
    r = compute(3, {"sex": "Male", "creatinine": [1.8, "mg/dL"], "age": [60, "years"]})
    assert num(r) == pytest.approx(42.56, abs=0.01)


def test_ckd_epi_umol_conversion():
    # 79.56 umol/L / 88.4 = 0.9 mg/dL -> SCr/k = 1; eGFR = 142 * 0.9938^40 = 142 * exp(-0.24877) = 142*0.77975 = 110.72
    r = compute(3, {"sex": "Male", "creatinine": [79.56, "µmol/L"], "age": [40, "years"]})
    assert num(r) == pytest.approx(110.72, abs=0.01)


def test_ckd_epi_missing_sex():
    r = compute(3, {"creatinine": [1.0, "mg/dL"], "age": [40, "years"]})
    assert r.value is None and r.missing == ("sex",)


# -- 9 MDRD ------------------------------------------------------------------------------------


def test_mdrd_male_no_race():
    # 175 * 1.0^-1.154 * 50^-0.203 = 175 * exp(-0.203*3.91202) = 175 * 0.45197 = 79.095
    r = compute(9, {"age": [50, "years"], "creatinine": [1.0, "mg/dL"], "sex": "Male"})
    assert num(r) == pytest.approx(79.095, abs=0.01)


def test_mdrd_female_black_and_white():
    # Black female: 79.095 * 0.742 * 1.212 = 71.131; White female: 79.095 * 0.742 = 58.689
    r = compute(9, {"age": [50, "years"], "creatinine": [88.4, "µmol/L"], "sex": "Female", "Race": "Black"})
    assert num(r) == pytest.approx(71.131, abs=0.01)
    r = compute(9, {"age": [50, "years"], "creatinine": [1.0, "mg/dL"], "sex": "female", "Race": "White"})
    assert num(r) == pytest.approx(58.689, abs=0.01)


def test_mdrd_unknown_race_invalid():
    r = compute(9, {"age": [50, "years"], "creatinine": [1.0, "mg/dL"], "sex": "Male", "Race": "Martian"})
    assert r.value is None and r.invalid == ("Race",)


# -- 40 FENa -----------------------------------------------------------------------------------


def test_fena_basic():
    # (1.0 * 40) / (140 * 100) * 100 = 4000/14000 = 0.2857 %
    r = compute(40, {"creatinine": [1.0, "mg/dL"], "Urine creatinine": [100, "mg/dL"],
                     "Sodium": [140, "mEq/L"], "Urine sodium": [40, "mmol/L"]})
    assert r.value == "0.286"


def test_fena_mixed_units_and_missing():
    # serum creatinine 176.8 umol/L = 2.0 mg/dL: (2.0 * 20)/(130 * 50) * 100 = 40/6500*100 = 0.615 %
    r = compute(40, {"creatinine": [176.8, "µmol/L"], "Urine creatinine": [50, "mg/dL"],
                     "Sodium": [130, "mmol/L"], "Urine sodium": [20, "mEq/L"]})
    assert r.value == "0.615"
    r = compute(40, {"creatinine": [1.0, "mg/dL"], "Urine creatinine": [100, "mg/dL"], "Sodium": [140, "mEq/L"]})
    assert r.value is None and r.missing == ("Urine sodium",)


# -- 7 Corrected calcium -----------------------------------------------------------------------


def test_calcium_correction_mg_dl():
    # 8.0 + 0.8*(4 - 2.0) = 8.0 + 1.6 = 9.6
    assert compute(7, {"Calcium": [8.0, "mg/dL"], "Albumin": [2.0, "g/dL"]}).value == "9.6"


def test_calcium_correction_si_units():
    # Ca 2.0 mmol/L * 4.008 = 8.016 mg/dL; albumin 30 g/L = 3.0 g/dL; 8.016 + 0.8*(4-3) = 8.816
    assert compute(7, {"Calcium": [2.0, "mmol/L"], "Albumin": [30, "g/L"]}).value == "8.816"
    r = compute(7, {"Calcium": [8.0, "mg/dL"]})
    assert r.value is None and r.missing == ("Albumin",)


# -- 26 Sodium correction ----------------------------------------------------------------------


def test_sodium_correction_mg_dl():
    # 130 + 0.024*(600 - 100) = 130 + 12 = 142
    assert compute(26, {"Sodium": [130, "mEq/L"], "Glucose": [600, "mg/dL"]}).value == "142"


def test_sodium_correction_mmol_glucose():
    # glucose 11.1 mmol/L * 18.016 = 199.978 mg/dL; 130 + 0.024*99.978 = 130 + 2.3995 = 132.399
    r = compute(26, {"Sodium": [130, "mmol/L"], "Glucose": [11.1, "mmol/L"]})
    assert num(r) == pytest.approx(132.399, abs=0.002)


# -- 30 Serum osmolality -----------------------------------------------------------------------


def test_osmolality_conventional():
    # 2*140 + 28/2.8 + 180/18 = 280 + 10 + 10 = 300
    r = compute(30, {"Sodium": [140, "mEq/L"], "Blood Urea Nitrogen (BUN)": [28, "mg/dL"], "Glucose": [180, "mg/dL"]})
    assert r.value == "300"


def test_osmolality_si_units():
    # BUN 10 mmol/L * 2.801 = 28.01 mg/dL -> /2.8 = 10.0036; glucose 10 mmol/L * 18.016 = 180.16 -> /18 = 10.0089
    # 280 + 10.0036 + 10.0089 = 300.0125
    r = compute(30, {"Sodium": [140, "mmol/L"], "Blood Urea Nitrogen (BUN)": [10, "mmol/L"], "Glucose": [10, "mmol/L"]})
    assert num(r) == pytest.approx(300.012, abs=0.002)


# -- 31 HOMA-IR --------------------------------------------------------------------------------


def test_homa_ir_conventional():
    # 10 * 81 / 405 = 810/405 = 2.0
    assert compute(31, {"Glucose": [81, "mg/dL"], "Insulin": [10, "µIU/mL"]}).value == "2"


def test_homa_ir_si_units():
    # insulin 60 pmol/L / 6 = 10 uIU/mL; glucose 5 mmol/L * 18.016 = 90.08 mg/dL; 10*90.08/405 = 2.2242
    r = compute(31, {"Glucose": [5, "mmol/L"], "Insulin": [60, "pmol/L"]})
    assert num(r) == pytest.approx(2.224, abs=0.001)


# -- 38 Free water deficit ---------------------------------------------------------------------


def test_free_water_deficit_adult_male():
    # 0.6 * 70 * (154/140 - 1) = 42 * 0.1 = 4.2
    r = compute(38, {"age": [30, "years"], "weight": [70, "kg"], "sex": "Male", "Sodium": [154, "mmol/L"]})
    assert r.value == "4.2"


def test_free_water_deficit_elderly_female_lbs():
    # 154 lb * 0.45359237 = 69.853 kg; 0.45 * 69.853 * (161/140 - 1) = 31.434 * 0.15 = 4.715
    r = compute(38, {"age": [70, "years"], "weight": [154, "lbs"], "sex": "Female", "Sodium": [161, "mEq/L"]})
    assert num(r) == pytest.approx(4.715, abs=0.001)


def test_free_water_deficit_child_months():
    # 17 months = 1.4 y -> child 0.6; 0.6 * 10 * (168/140 - 1) = 6 * 0.2 = 1.2
    r = compute(38, {"age": [17, "months"], "weight": [10, "kg"], "sex": "Female", "Sodium": [168, "mmol/L"]})
    assert r.value == "1.2"


# -- 39 / 63 / 64 anion gap family ---------------------------------------------------------------

AG = {"Sodium": [140, "mEq/L"], "Chloride": [100, "mmol/L"], "Bicarbonate": [14, "mEq/L"]}


def test_anion_gap():
    # 140 - (100 + 14) = 26
    assert compute(39, AG).value == "26"
    # 140 - (104 + 24) = 12
    assert compute(39, {"Sodium": [140, "mmol/L"], "Chloride": [104, "mEq/L"], "Bicarbonate": [24, "mmol/L"]}).value == "12"


def test_anion_gap_missing_and_bad_unit():
    r = compute(39, {"Sodium": [140, "mEq/L"], "Bicarbonate": [24, "mEq/L"]})
    assert r.value is None and r.missing == ("Chloride",)
    r = compute(39, {"Sodium": [140, "mEq/L"], "Chloride": [100, "g/L"], "Bicarbonate": [24, "mEq/L"]})
    assert r.value is None and r.invalid == ("Chloride",)


def test_delta_gap():
    # AG 26 - 12 = 14
    assert compute(63, AG).value == "14"
    # sodium 322 mg/dL * 10 / 22.99 = 140.061 mmol/L: AG = 140.061 - (100 + 24) = 16.061; 16.061 - 12 = 4.061
    r = compute(63, {"Sodium": [322, "mg/dL"], "Chloride": [100, "mmol/L"], "Bicarbonate": [24, "mmol/L"]})
    assert num(r) == pytest.approx(4.061, abs=0.001)


def test_delta_ratio():
    # (26 - 12)/(24 - 14) = 14/10 = 1.4
    assert compute(64, AG).value == "1.4"
    # AG = 139 - (104 + 28.2) = 6.8; (6.8 - 12)/(24 - 28.2) = -5.2/-4.2 = 1.238
    r = compute(64, {"Sodium": [139, "mmol/L"], "Chloride": [104, "mmol/L"], "Bicarbonate": [28.2, "mmol/L"]})
    assert r.value == "1.238"


def test_delta_ratio_bicarbonate_24_is_not_computable():
    # denominator 24 - 24 = 0
    r = compute(64, {"Sodium": [140, "mEq/L"], "Chloride": [100, "mEq/L"], "Bicarbonate": [24, "mEq/L"]})
    assert r.value is None and r.invalid == ("<arithmetic>",)


# -- 65 / 66 / 67 albumin-corrected family ------------------------------------------------------


def test_albumin_corrected_anion_gap():
    # 26 + 2.5*(4 - 2.0) = 26 + 5 = 31
    assert compute(65, {**AG, "Albumin": [2.0, "g/dL"]}).value == "31"
    # albumin 20 g/L = 2.0 g/dL -> 31
    assert compute(65, {**AG, "Albumin": [20, "g/L"]}).value == "31"
    r = compute(65, AG)
    assert r.value is None and r.missing == ("Albumin",)


def test_albumin_corrected_delta_gap():
    # 31 - 12 = 19
    assert compute(66, {**AG, "Albumin": [2.0, "g/dL"]}).value == "19"
    # AG = 137 - (116 + 12.1) = 8.9; 8.9 + 2.5*(4 - 3.7) = 9.65; 9.65 - 12 = -2.35 (albumin 37 g/L = 3.7 g/dL)
    assert compute(66, {"Sodium": [137, "mEq/L"], "Chloride": [116, "mEq/L"], "Bicarbonate": [12.1, "mEq/L"],
                        "Albumin": [37, "g/L"]}).value == "-2.35"


def test_albumin_corrected_delta_ratio():
    # 19 / (24 - 14) = 1.9
    assert compute(67, {**AG, "Albumin": [2.0, "g/dL"]}).value == "1.9"
    # -2.35 / (24 - 12.1) = -2.35/11.9 = -0.197
    assert compute(67, {"Sodium": [137, "mEq/L"], "Chloride": [116, "mEq/L"], "Bicarbonate": [12.1, "mEq/L"],
                        "Albumin": [3.7, "g/dL"]}).value == "-0.197"


def test_albumin_mg_dl_is_flagged_implausible():
    # albumin 3.5 mg/dL = 0.0035 g/dL (outside 0.5-7 g/dL): AG 136-(101+22) = 13; 13 + 2.5*(4-0.0035) = 22.991
    r = compute(65, {"Sodium": [136, "mEq/L"], "Chloride": [101, "mEq/L"], "Bicarbonate": [22, "mEq/L"],
                     "Albumin": [3.5, "mg/dL"]})
    assert num(r) == pytest.approx(22.991, abs=0.001) and r.implausible == ("Albumin",)


# -- 19 FIB-4 ----------------------------------------------------------------------------------


def test_fib4_per_ul():
    # platelets 200000/uL = 200 x10^9/L; 50*40/(200*sqrt(25)) = 2000/1000 = 2.0
    r = compute(19, {"age": [50, "years"], "Aspartate aminotransferase": [40, "U/L"],
                     "Alanine aminotransferase": [25, "U/L"], "Platelet count": [200000, "µL"]})
    assert r.value == "2"


def test_fib4_per_litre_and_missing():
    # platelets 1.5e11/L = 150 x10^9/L; 60*90/(150*sqrt(36)) = 5400/900 = 6.0
    r = compute(19, {"age": [60, "years"], "Aspartate aminotransferase": [90, "U/L"],
                     "Alanine aminotransferase": [36, "IU/L"], "Platelet count": [1.5e11, "L"]})
    assert r.value == "6"
    r = compute(19, {"age": [60, "years"], "Aspartate aminotransferase": [90, "U/L"], "Platelet count": [1.5e11, "L"]})
    assert r.value is None and r.missing == ("Alanine aminotransferase",)


# -- 23 MELD Na ----------------------------------------------------------------------------------

MELD_BASE = {"Dialysis at least twice in the past week": False,
             "Continuous veno-venous hemodialysis for ≥24 hours in the past week": False}


def test_meld_na_floor_values():
    # Cr, bili, INR set to 1.0 -> MELD(i) = 0.643 -> 0.6 -> x10 = 6 (<= 11, no sodium term)
    r = compute(23, {**MELD_BASE, "creatinine": [0.5, "mg/dL"], "Bilirubin": [0.4, "mg/dL"],
                     "international normalized ratio": 0.9, "Sodium": [137, "mEq/L"]})
    assert r.value == "6"


def test_meld_na_sodium_term():
    # 0.957*ln2 + 0.378*ln3 + 1.120*ln2 + 0.643 = 0.66334 + 0.41528 + 0.77632 + 0.643 = 2.49794 -> 2.5 -> 25
    # 25 + 1.32*(137-130) - 0.033*25*(137-130) = 25 + 9.24 - 5.775 = 28.465 -> 28
    r = compute(23, {**MELD_BASE, "creatinine": [2.0, "mg/dL"], "Bilirubin": [51.3, "µmol/L"],
                     "international normalized ratio": 2.0, "Sodium": [130, "mmol/L"]})
    assert r.value == "28"
    # sodium 120 -> bounded at 125: 25 + 1.32*12 - 0.033*25*12 = 25 + 15.84 - 9.9 = 30.94 -> 31
    r = compute(23, {**MELD_BASE, "creatinine": [2.0, "mg/dL"], "Bilirubin": [3.0, "mg/dL"],
                     "international normalized ratio": 2.0, "Sodium": [120, "mEq/L"]})
    assert r.value == "31"


def test_meld_na_dialysis_sets_creatinine_4():
    # dialysis -> Cr = 4: 0.957*ln4 + 0.643 = 1.32668 + 0.643 = 1.96968 -> 2.0 -> 20; Na 137 -> 20
    r = compute(23, {"creatinine": [1.5, "mg/dL"], "Bilirubin": [1.0, "mg/dL"], "international normalized ratio": 1.0,
                     "Sodium": [137, "mEq/L"], "Dialysis at least twice in the past week": True})
    assert r.value == "20"
    r = compute(23, {"creatinine": [1.5, "mg/dL"], "Bilirubin": [1.0, "mg/dL"], "Sodium": [137, "mEq/L"]})
    assert r.value is None and r.missing == ("international normalized ratio",)


# -- 44 LDL (Friedewald) -----------------------------------------------------------------------


def test_ldl_conventional():
    # 200 - 50 - 150/5 = 200 - 50 - 30 = 120
    r = compute(44, {"Total cholesterol": [200, "mg/dL"], "high-density lipoprotein cholesterol": [50, "mg/dL"],
                     "Triglycerides": [150, "mg/dL"]})
    assert r.value == "120"


def test_ldl_mmol():
    # TC 5.0 mmol/L * 38.67 = 193.35; HDL 1.0 * 38.67 = 38.67; TG 1.0 mmol/L * 88.57 = 88.57 -> /5 = 17.714
    # 193.35 - 38.67 - 17.714 = 136.966
    r = compute(44, {"Total cholesterol": [5.0, "mmol/L"], "high-density lipoprotein cholesterol": [1.0, "mmol/L"],
                     "Triglycerides": [1.0, "mmol/L"]})
    assert num(r) == pytest.approx(136.966, abs=0.001)
