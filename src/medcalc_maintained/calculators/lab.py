"""Laboratory-derived calculators: renal function, electrolytes and acid-base, lipids, liver indices.

Every function reads its inputs through :class:`~medcalc_maintained.calculators.base.Inputs`,
converts units only via :mod:`medcalc_maintained.core.units` (canonical units: creatinine, BUN, glucose,
calcium, bilirubin, cholesterol, triglycerides in mg/dL; electrolytes in mmol/L = mEq/L; albumin in
g/dL; platelets per µL; mass kg; length cm; age years) and returns a plain number.
"""

from __future__ import annotations

import math

from medcalc_maintained.calculators.base import Inputs, register

# -- shared input helpers ----------------------------------------------------------------------

_SEX = {"male": "M", "m": "M", "man": "M", "female": "F", "f": "F", "woman": "F"}

# Race only matters for MDRD (Black vs. not Black); every other stated race is "not Black".
_RACE_BLACK = {
    "black": True,
    "african american": True,
    "african-american": True,
    "black or african american": True,
    "white": False,
    "caucasian": False,
    "asian": False,
    "hispanic": False,
    "latino": False,
    "other": False,
    "non-black": False,
}


def _sex(x: Inputs) -> str | None:
    return x.choice("sex", _SEX)


def _age(x: Inputs) -> float | None:
    return x.quantity("age", "age", range_key="age")


def _serum_creatinine(x: Inputs) -> float | None:
    return x.quantity("creatinine", "creatinine", range_key="creatinine")


def _sodium(x: Inputs) -> float | None:
    return x.quantity("Sodium", "sodium", range_key="sodium")


def _anion_gap_inputs(x: Inputs) -> tuple[float, float, float]:
    """Serum sodium, chloride and bicarbonate (mmol/L = mEq/L); stops when any is absent."""
    na = _sodium(x)
    cl = x.quantity("Chloride", "chloride", range_key="chloride")
    hco3 = x.quantity("Bicarbonate", "bicarbonate", range_key="bicarbonate")
    na, cl, hco3 = x.require(na, cl, hco3)[:]
    return na, cl, hco3


def _albumin(x: Inputs) -> float | None:
    return x.quantity("Albumin", "albumin", range_key="albumin")


def _ideal_body_weight(sex: str, height_cm: float) -> float:
    """Devine IBW (kg): 50 (male) or 45.5 (female) + 2.3 kg per inch of height over 60 in."""
    height_in = height_cm / 2.54
    return (50.0 if sex == "M" else 45.5) + 2.3 * (height_in - 60.0)


# -- renal function ----------------------------------------------------------------------------


@register(2, "Creatinine Clearance (Cockcroft-Gault Equation)", "decimal")
def creatinine_clearance(x: Inputs) -> float:
    """CrCl (mL/min) = (140 - age) x weight (kg) x [0.85 if female] / (72 x SCr mg/dL).

    Source: Cockcroft DW, Gault MH. Nephron 1976;16:31-41; MDCalc "Creatinine Clearance
    (Cockcroft-Gault Equation)". Weight choice as fixed by the MedCalc-Bench question (which
    follows MDCalc's BMI-based guidance): BMI < 18.5 kg/m2 -> actual body weight; 18.5-24.9 ->
    min(ideal, actual); >= 25 -> adjusted body weight = IBW + 0.4 x (actual - IBW), with the Devine
    ideal body weight 50 kg (male) / 45.5 kg (female) + 2.3 kg per inch over 60 in.
    """
    sex = _sex(x)
    age = _age(x)
    weight = x.quantity("weight", "mass", range_key="body_weight")
    height = x.quantity("height", "length", range_key="height")
    scr = _serum_creatinine(x)
    sex, age, weight, height, scr = x.require(sex, age, weight, height, scr)[:]
    bmi = weight / (height / 100.0) ** 2
    ibw = _ideal_body_weight(sex, height)
    if bmi < 18.5:
        used = weight
    elif bmi < 25.0:
        used = min(ibw, weight)
    else:
        used = ibw + 0.4 * (weight - ibw)
    return (140.0 - age) * used * (0.85 if sex == "F" else 1.0) / (72.0 * scr)


@register(3, "CKD-EPI Equations for Glomerular Filtration Rate", "decimal")
def ckd_epi_2021(x: Inputs) -> float:
    """2021 race-free CKD-EPI creatinine equation (mL/min/1.73 m2).

    eGFR = 142 x min(SCr/k, 1)^a x max(SCr/k, 1)^-1.200 x 0.9938^age x [1.012 if female], with
    k = 0.7 (female) / 0.9 (male) and a = -0.241 (female) / -0.302 (male); SCr in mg/dL.
    Source: Inker LA et al. N Engl J Med 2021;385:1737-49; MDCalc "CKD-EPI Equations for
    Glomerular Filtration Rate (GFR)" (2021 equation, as the MedCalc-Bench question asks).
    """
    sex = _sex(x)
    age = _age(x)
    scr = _serum_creatinine(x)
    sex, age, scr = x.require(sex, age, scr)[:]
    kappa, alpha, sex_factor = (0.7, -0.241, 1.012) if sex == "F" else (0.9, -0.302, 1.0)
    ratio = scr / kappa
    return 142.0 * min(ratio, 1.0) ** alpha * max(ratio, 1.0) ** -1.200 * 0.9938**age * sex_factor


@register(9, "MDRD GFR Equation", "decimal")
def mdrd_gfr(x: Inputs) -> float:
    """4-variable IDMS-traceable MDRD (mL/min/1.73 m2).

    eGFR = 175 x SCr^-1.154 x age^-0.203 x [0.742 if female] x [1.212 if Black]; SCr in mg/dL.
    Source: Levey AS et al. Ann Intern Med 2006;145:247-54; MDCalc "MDRD GFR Equation". Race is
    optional: when it is not stated the Black-race factor is not applied (MDCalc's default).
    """
    sex = _sex(x)
    age = _age(x)
    scr = _serum_creatinine(x)
    black = x.choice("Race", _RACE_BLACK, required=False, default=False)
    sex, age, scr = x.require(sex, age, scr)[:]
    egfr = 175.0 * scr**-1.154 * age**-0.203
    if sex == "F":
        egfr *= 0.742
    if black:
        egfr *= 1.212
    return egfr


@register(40, "Fractional Excretion of Sodium (FENa)", "decimal")
def fena(x: Inputs) -> float:
    """FENa (%) = (SCr x UNa) / (SNa x UCr) x 100.

    Source: Espinel CH. JAMA 1976;236:579-81; MDCalc "Fractional Excretion of Sodium (FENa)".
    Creatinines in one unit (mg/dL), sodiums in one unit (mmol/L), so the ratio is unitless.
    """
    scr = _serum_creatinine(x)
    ucr = x.quantity("Urine creatinine", "creatinine", range_key="urine_creatinine")
    sna = _sodium(x)
    una = x.quantity("Urine sodium", "sodium", range_key="urine_sodium")
    scr, ucr, sna, una = x.require(scr, ucr, sna, una)[:]
    return scr * una / (sna * ucr) * 100.0


# -- electrolytes and osmolality ----------------------------------------------------------------


@register(7, "Calcium Correction for Hypoalbuminemia", "decimal")
def corrected_calcium(x: Inputs) -> float:
    """Corrected Ca (mg/dL) = serum Ca + 0.8 x (normal albumin 4 g/dL - albumin g/dL).

    Source: Payne RB et al. Br Med J 1973;4:643-6; MDCalc "Calcium Correction for
    Hypoalbuminemia" (normal albumin 4 g/dL, as the MedCalc-Bench question fixes).
    """
    ca = x.quantity("Calcium", "calcium", range_key="calcium")
    alb = _albumin(x)
    ca, alb = x.require(ca, alb)[:]
    return ca + 0.8 * (4.0 - alb)


@register(26, "Sodium Correction for Hyperglycemia", "decimal")
def corrected_sodium(x: Inputs) -> float:
    """Corrected Na (mEq/L) = measured Na + 0.024 x (glucose mg/dL - 100) (Hillier correction).

    Source: Hillier TA, Abbott RD, Barrett EJ. Am J Med 1999;106:399-403; MDCalc "Sodium
    Correction for Hyperglycemia" (which also shows Katz's 0.016 factor; Hillier's is used here).
    """
    na = _sodium(x)
    glucose = x.quantity("Glucose", "glucose", range_key="glucose")
    na, glucose = x.require(na, glucose)[:]
    return na + 0.024 * (glucose - 100.0)


@register(30, "Serum Osmolality", "decimal")
def serum_osmolality(x: Inputs) -> float:
    """Calculated osmolality (mOsm/kg) = 2 x Na (mmol/L) + BUN (mg/dL)/2.8 + glucose (mg/dL)/18.

    Source: MDCalc "Serum Osmolality/Osmolarity"; Dorwart WV, Chalmers L. Clin Chem 1975;21:190-4.
    """
    na = _sodium(x)
    bun = x.quantity("Blood Urea Nitrogen (BUN)", "bun", range_key="bun")
    glucose = x.quantity("Glucose", "glucose", range_key="glucose")
    na, bun, glucose = x.require(na, bun, glucose)[:]
    return 2.0 * na + bun / 2.8 + glucose / 18.0


@register(38, "Free Water Deficit", "decimal")
def free_water_deficit(x: Inputs) -> float:
    """FWD (L) = TBW fraction x weight (kg) x (Na / 140 - 1).

    TBW fraction: child (< 18 y) 0.6; adult male 18-64 y 0.6, adult female 0.5; elderly (>= 65 y)
    male 0.5, female 0.45. Source: MDCalc "Free Water Deficit"; Adrogue HJ, Madias NE. N Engl J
    Med 2000;342:1493-9 (ideal sodium 140 mEq/L, as the MedCalc-Bench question fixes).
    """
    sex = _sex(x)
    age = _age(x)
    weight = x.quantity("weight", "mass", range_key="body_weight")
    na = _sodium(x)
    sex, age, weight, na = x.require(sex, age, weight, na)[:]
    if age < 18:
        tbw = 0.6
    elif age < 65:
        tbw = 0.6 if sex == "M" else 0.5
    else:
        tbw = 0.5 if sex == "M" else 0.45
    return tbw * weight * (na / 140.0 - 1.0)


@register(39, "Anion Gap", "decimal")
def anion_gap(x: Inputs) -> float:
    """Anion gap (mEq/L) = Na - (Cl + HCO3).

    Source: MDCalc "Anion Gap"; Kraut JA, Madias NE. Clin J Am Soc Nephrol 2007;2:162-74.
    """
    na, cl, hco3 = _anion_gap_inputs(x)
    return na - (cl + hco3)


@register(63, "Delta Gap", "decimal")
def delta_gap(x: Inputs) -> float:
    """Delta gap (mEq/L) = anion gap - 12 (normal anion gap), anion gap = Na - (Cl + HCO3).

    Source: MDCalc "Delta Gap" / "Anion Gap"; Wrenn K. Ann Emerg Med 1990;19:1310-3.
    """
    na, cl, hco3 = _anion_gap_inputs(x)
    return na - (cl + hco3) - 12.0


@register(64, "Delta Ratio", "decimal")
def delta_ratio(x: Inputs) -> float:
    """Delta ratio = (anion gap - 12) / (24 - HCO3).

    Source: MDCalc "Delta Ratio (Delta Gap)"; Rastegar A. J Am Soc Nephrol 2007;18:2429-31.
    """
    na, cl, hco3 = _anion_gap_inputs(x)
    return (na - (cl + hco3) - 12.0) / (24.0 - hco3)


@register(65, "Albumin Corrected Anion Gap", "decimal")
def albumin_corrected_anion_gap(x: Inputs) -> float:
    """Albumin-corrected AG (mEq/L) = Na - (Cl + HCO3) + 2.5 x (4 - albumin g/dL).

    Source: Figge J, Jabor A, Kazda A, Fencl V. Crit Care Med 1998;26:1807-10; MDCalc "Anion Gap"
    (albumin-corrected anion gap).
    """
    na, cl, hco3 = _anion_gap_inputs(x)
    alb = _albumin(x)
    (alb,) = x.require(alb)[:]
    return na - (cl + hco3) + 2.5 * (4.0 - alb)


@register(66, "Albumin Corrected Delta Gap", "decimal")
def albumin_corrected_delta_gap(x: Inputs) -> float:
    """Albumin-corrected delta gap (mEq/L) = [Na - (Cl + HCO3) + 2.5 x (4 - albumin)] - 12.

    Source: Figge J et al. Crit Care Med 1998;26:1807-10 (albumin correction); MDCalc "Anion Gap"
    / "Delta Gap" (normal anion gap 12 mEq/L).
    """
    na, cl, hco3 = _anion_gap_inputs(x)
    alb = _albumin(x)
    (alb,) = x.require(alb)[:]
    return na - (cl + hco3) + 2.5 * (4.0 - alb) - 12.0


@register(67, "Albumin Corrected Delta Ratio", "decimal")
def albumin_corrected_delta_ratio(x: Inputs) -> float:
    """Albumin-corrected delta ratio = ([Na - (Cl + HCO3) + 2.5 x (4 - albumin)] - 12) / (24 - HCO3).

    Source: Figge J et al. Crit Care Med 1998;26:1807-10; MDCalc "Delta Ratio (Delta Gap)" with
    the albumin-corrected anion gap.
    """
    na, cl, hco3 = _anion_gap_inputs(x)
    alb = _albumin(x)
    (alb,) = x.require(alb)[:]
    return (na - (cl + hco3) + 2.5 * (4.0 - alb) - 12.0) / (24.0 - hco3)


# -- liver ------------------------------------------------------------------------------------


@register(19, "Fibrosis-4 (FIB-4) Index for Liver Fibrosis", "decimal")
def fib4(x: Inputs) -> float:
    """FIB-4 = age (y) x AST (U/L) / (platelets (10^9/L) x sqrt(ALT (U/L))).

    Source: Sterling RK et al. Hepatology 2006;43:1317-25; MDCalc "Fibrosis-4 (FIB-4) Index for
    Liver Fibrosis".
    """
    age = _age(x)
    ast = x.quantity("Aspartate aminotransferase", "enzyme", range_key="aminotransferase")
    alt = x.quantity("Alanine aminotransferase", "enzyme", range_key="aminotransferase")
    plt = x.quantity("Platelet count", "count_per_ul", range_key="platelets")
    age, ast, alt, plt = x.require(age, ast, alt, plt)[:]
    plt_10e9_per_l = plt / 1000.0  # 1 per µL = 10^6 per L = 10^-3 x 10^9 per L
    return age * ast / (plt_10e9_per_l * math.sqrt(alt))


@register(23, "MELD Na (UNOS/OPTN)", "decimal")
def meld_na(x: Inputs) -> float:
    """MELD-Na per OPTN/UNOS policy (2016), as on MDCalc "MELD Na (UNOS/OPTN)".

    Creatinine, bilirubin and INR below 1.0 are set to 1.0; creatinine is capped at 4.0 mg/dL and
    set to 4.0 after dialysis at least twice or CVVHD >= 24 h in the past week; sodium is bounded
    to 125-137 mEq/L. MELD(i) = 0.957 ln(Cr) + 0.378 ln(bili) + 1.120 ln(INR) + 0.643, rounded to
    the tenth and multiplied by 10. If MELD(i) > 11: MELD = MELD(i) + 1.32 (137 - Na)
    - 0.033 MELD(i) (137 - Na). The score is rounded to an integer and capped at 40.
    Source: OPTN Policy 9.1 (MELD-Na, Jan 2016); Kim WR et al. N Engl J Med 2008;359:1018-26.
    """
    cr = _serum_creatinine(x)
    bili = x.quantity("Bilirubin", "bilirubin", range_key="bilirubin")
    inr = x.number("international normalized ratio", range_key="inr")
    na = _sodium(x)
    dialysis = x.flag("Dialysis at least twice in the past week") or x.flag(
        "Continuous veno-venous hemodialysis for ≥24 hours in the past week"
    )
    cr, bili, inr, na = x.require(cr, bili, inr, na)[:]
    cr = 4.0 if dialysis else min(max(cr, 1.0), 4.0)
    bili = max(bili, 1.0)
    inr = max(inr, 1.0)
    na = min(max(na, 125.0), 137.0)
    meld_i = 0.957 * math.log(cr) + 0.378 * math.log(bili) + 1.120 * math.log(inr) + 0.643
    meld_i = math.floor(meld_i * 10.0 + 0.5)  # rounded to the tenth, x 10
    meld: float = meld_i
    if meld_i > 11:
        meld = meld_i + 1.32 * (137.0 - na) - 0.033 * meld_i * (137.0 - na)
    return float(min(math.floor(meld + 0.5), 40))


# -- metabolic and lipids -----------------------------------------------------------------------


@register(31, "HOMA-IR (Homeostatic Model Assessment for Insulin Resistance)", "decimal")
def homa_ir(x: Inputs) -> float:
    """HOMA-IR = fasting insulin (µIU/mL) x fasting glucose (mg/dL) / 405.

    Source: Matthews DR et al. Diabetologia 1985;28:412-9; MDCalc "HOMA-IR (Homeostatic Model
    Assessment for Insulin Resistance)".
    """
    insulin = x.quantity("Insulin", "insulin", range_key="insulin")
    glucose = x.quantity("Glucose", "glucose", range_key="glucose")
    insulin, glucose = x.require(insulin, glucose)[:]
    return insulin * glucose / 405.0


@register(44, "LDL Calculated", "decimal")
def ldl_friedewald(x: Inputs) -> float:
    """Friedewald LDL (mg/dL) = total cholesterol - HDL - triglycerides / 5.

    Source: Friedewald WT, Levy RI, Fredrickson DS. Clin Chem 1972;18:499-502; MDCalc "LDL
    Calculated" (not valid when triglycerides exceed 400 mg/dL; the value is still returned).
    """
    tc = x.quantity("Total cholesterol", "cholesterol", range_key="cholesterol")
    hdl = x.quantity("high-density lipoprotein cholesterol", "cholesterol", range_key="hdl")
    tg = x.quantity("Triglycerides", "triglycerides", range_key="triglycerides")
    tc, hdl, tg = x.require(tc, hdl, tg)[:]
    return tc - hdl - tg / 5.0
