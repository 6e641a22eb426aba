"""Published alternative definitions of the reference calculators (the definition policy's "alternatives").

The maintained labels follow one declared definition per calculator (``definitions.yaml`` beside
this file, the registered function in the calculator modules). Other published definitions are
implemented here, over the same ``Relevant Entities``, so that a label can be tested against them:
a label the default does not reproduce but an alternative does is a *definition choice*, not an
extraction or arithmetic error. Nothing here changes a default value.

>>> compute_alternative(63, "delta_gap_minus_delta_bicarbonate", {"Sodium": [140, "mmol/L"],
...     "Chloride": [100, "mmol/L"], "Bicarbonate": [14, "mmol/L"]}).value
'4'

Each alternative is ``fn(x: Inputs)`` registered with :func:`alternative` under
``(calculator id, name)``; the name is the one ``definitions.yaml`` lists.
"""

from __future__ import annotations

import datetime as dt
import math
from typing import Any, Callable

from medcalc_maintained.calculators import dosing_dates as D
from medcalc_maintained.calculators import lab as L
from medcalc_maintained.calculators import physical as P
from medcalc_maintained.calculators import scores_cardio as SC
from medcalc_maintained.calculators import scores_critical as SK
from medcalc_maintained.calculators import scores_misc as SM
from medcalc_maintained.calculators.base import REGISTRY, Inputs, Result, run

ALTERNATIVES: dict[tuple[int, str], Callable[[Inputs], Any]] = {}


def alternative(calculator_id: int, name: str) -> Callable:
    """Decorator: register ``fn`` as the published alternative ``name`` of ``calculator_id``."""

    def deco(fn: Callable) -> Callable:
        if (calculator_id, name) in ALTERNATIVES:
            raise ValueError(f"alternative {name!r} of calculator {calculator_id} registered twice")
        if not (fn.__doc__ or "").strip():
            raise ValueError(f"alternative {name!r} of calculator {calculator_id} has no docstring naming its source")
        ALTERNATIVES[(calculator_id, name)] = fn
        return fn

    return deco


def compute_alternative(calculator_id: int, name: str, entities: dict[str, Any]) -> Result:
    """The value of ``entities`` under alternative ``name`` of calculator ``calculator_id``."""
    from medcalc_maintained.calculators import load_all

    load_all()
    fn = ALTERNATIVES.get((int(calculator_id), name))
    if fn is None:
        raise KeyError(f"calculator {calculator_id} has no alternative {name!r}")
    return run(fn, REGISTRY[int(calculator_id)].output_type, entities)


# --- acid-base ----------------------------------------------------------------------------------

@alternative(63, "delta_gap_minus_delta_bicarbonate")
def delta_gap_excess(x: Inputs) -> float:
    """Delta-delta as a difference: (AG - 12) - (24 - HCO3), the "bicarbonate gap" form
    (Wrenn K. Ann Emerg Med 1990;19:1310-3; Rastegar A. J Am Soc Nephrol 2007;18:2429-31)."""
    na, cl, hco3 = L._anion_gap_inputs(x)
    return (na - (cl + hco3) - 12.0) - (24.0 - hco3)


@alternative(66, "delta_gap_minus_delta_bicarbonate")
def albumin_corrected_delta_gap_excess(x: Inputs) -> float:
    """Albumin-corrected delta-delta: (AG + 2.5 x (4 - albumin) - 12) - (24 - HCO3)
    (Figge J et al. Crit Care Med 1998;26:1807-10 for the albumin term; Rastegar 2007)."""
    na, cl, hco3 = L._anion_gap_inputs(x)
    alb = L._albumin(x)
    (alb,) = x.require(alb)[:]
    return (na - (cl + hco3) + 2.5 * (4.0 - alb) - 12.0) - (24.0 - hco3)


@alternative(64, "normal_anion_gap_10")
def delta_ratio_ag10(x: Inputs) -> float:
    """Delta ratio with a normal anion gap of 10 mEq/L: (AG - 10) / (24 - HCO3) (Kraut JA, Madias NE.
    Clin J Am Soc Nephrol 2007;2:162-74, normal AG ~10 with modern analysers)."""
    na, cl, hco3 = L._anion_gap_inputs(x)
    return (na - (cl + hco3) - 10.0) / (24.0 - hco3)


# --- renal --------------------------------------------------------------------------------------

@alternative(3, "ckd_epi_2009")
def ckd_epi_2009(x: Inputs) -> float:
    """2009 CKD-EPI creatinine equation: 141 x min(SCr/k, 1)^a x max(SCr/k, 1)^-1.209 x 0.993^age
    x 1.018 [female] x 1.159 [Black]; k 0.7/0.9, a -0.329/-0.411 (Levey AS et al. Ann Intern Med
    2009;150:604-12). Race absent = not Black."""
    sex = L._sex(x)
    age = L._age(x)
    scr = L._serum_creatinine(x)
    sex, age, scr = x.require(sex, age, scr)[:]
    black = x.choice("Race", L._RACE_BLACK, required=False, default=False)
    kappa, alpha, sex_factor = (0.7, -0.329, 1.018) if sex == "F" else (0.9, -0.411, 1.0)
    ratio = scr / kappa
    egfr = 141.0 * min(ratio, 1.0) ** alpha * max(ratio, 1.0) ** -1.209 * 0.993**age * sex_factor
    return egfr * (1.159 if black else 1.0)


@alternative(9, "mdrd_186_non_idms")
def mdrd_186(x: Inputs) -> float:
    """Original (non-IDMS) 4-variable MDRD: the IDMS value x 186/175 (Levey AS et al. Ann Intern Med
    1999;130:461-70; Levey AS et al. Clin Chem 2007;53:766-72 for the 175 re-expression)."""
    return REGISTRY[9].fn(x) * 186.0 / 175.0


@alternative(2, "actual_body_weight")
def cockcroft_gault_actual(x: Inputs) -> float:
    """Cockcroft-Gault with actual body weight, as in the 1976 paper (Cockcroft DW, Gault MH.
    Nephron 1976;16:31-41)."""
    sex = L._sex(x)
    age = L._age(x)
    weight = x.quantity("weight", "mass", range_key="body_weight")
    scr = L._serum_creatinine(x)
    sex, age, weight, scr = x.require(sex, age, weight, scr)[:]
    return (140.0 - age) * weight * (0.85 if sex == "F" else 1.0) / (72.0 * scr)


@alternative(26, "katz_1973")
def sodium_katz(x: Inputs) -> float:
    """Katz correction: Na + 0.016 x (glucose mg/dL - 100) (Katz MA. N Engl J Med 1973;289:843-4)."""
    na = L._sodium(x)
    glucose = x.quantity("Glucose", "glucose", range_key="glucose")
    na, glucose = x.require(na, glucose)[:]
    return na + 0.016 * (glucose - 100.0)


# --- lipids and liver ---------------------------------------------------------------------------

@alternative(44, "measured_ldl")
def measured_ldl(x: Inputs) -> float:
    """The directly measured LDL cholesterol when the note prints one (entity ``LDL cholesterol``),
    as NCEP ATP III allows in place of the Friedewald estimate (Circulation 2002;106:3143-421)."""
    ldl = x.quantity(x.key("LDL cholesterol", "LDL"), "cholesterol", range_key="ldl")
    (ldl,) = x.require(ldl)[:]
    return ldl


@alternative(44, "sampson_2020")
def ldl_sampson(x: Inputs) -> float:
    """NIH (Sampson) equation: TC/0.948 - HDL/0.971 - (TG/8.56 + TG x nonHDL/2140 - TG^2/16100)
    - 9.44, mg/dL (Sampson M et al. JAMA Cardiol 2020;5:540-8)."""
    tc = x.quantity("Total cholesterol", "cholesterol")
    hdl = x.quantity("high-density lipoprotein cholesterol", "cholesterol")
    tg = x.quantity("Triglycerides", "triglycerides")
    tc, hdl, tg = x.require(tc, hdl, tg)[:]
    return tc / 0.948 - hdl / 0.971 - (tg / 8.56 + tg * (tc - hdl) / 2140.0 - tg * tg / 16100.0) - 9.44


def _meld_inputs(x: Inputs) -> tuple[float, float, float, float]:
    cr = L._serum_creatinine(x)
    bili = x.quantity("Bilirubin", "bilirubin", range_key="bilirubin")
    inr = x.number("international normalized ratio", range_key="inr")
    na = L._sodium(x)
    dialysis = x.flag("Dialysis at least twice in the past week") or x.flag(
        "Continuous veno-venous hemodialysis for ≥24 hours in the past week")
    cr, bili, inr, na = x.require(cr, bili, inr, na)[:]
    cr = 4.0 if dialysis else min(max(cr, 1.0), 4.0)
    return cr, max(bili, 1.0), max(inr, 1.0), min(max(na, 125.0), 137.0)


@alternative(23, "meld_na_unrounded")
def meld_na_unrounded(x: Inputs) -> float:
    """MELD-Na of Kim et al. without OPTN's rounding of MELD(i) to the tenth before the sodium term
    (Kim WR et al. N Engl J Med 2008;359:1018-26): MELD = 10 x MELD(i) + 1.32 (137 - Na)
    - 0.033 x 10 MELD(i) (137 - Na), rounded to an integer, capped at 40."""
    cr, bili, inr, na = _meld_inputs(x)
    meld_i = 10.0 * (0.957 * math.log(cr) + 0.378 * math.log(bili) + 1.120 * math.log(inr) + 0.643)
    meld = meld_i + 1.32 * (137.0 - na) - 0.033 * meld_i * (137.0 - na) if meld_i > 11 else meld_i
    return float(min(math.floor(meld + 0.5), 40))


@alternative(23, "meld_2002")
def meld_without_sodium(x: Inputs) -> float:
    """MELD before sodium (UNOS 2002): 10 x (0.957 ln Cr + 0.378 ln bili + 1.120 ln INR + 0.643),
    rounded, capped at 40 (Kamath PS et al. Hepatology 2001;33:464-70)."""
    cr, bili, inr, _ = _meld_inputs(x)
    return float(min(math.floor(10.0 * (0.957 * math.log(cr) + 0.378 * math.log(bili)
                                        + 1.120 * math.log(inr) + 0.643) + 0.5), 40))


@alternative(15, "cholestatic_bilirubin")
def child_pugh_cholestatic(x: Inputs) -> int:
    """Child-Pugh with the bilirubin bands for cholestatic disease (PBC/PSC): <4 mg/dL 1, 4-10 2,
    >10 3 (Pugh RN et al. Br J Surg 1973;60:646-9, modification for primary biliary cirrhosis)."""
    score = REGISTRY[15].fn(x)
    (bili,) = x.require(x.quantity(x.key("Bilirubin"), "bilirubin"))[:]  # present: fn computed
    default = 1 if bili < 2 else 2 if bili <= 3 else 3
    return score - default + (1 if bili < 4 else 2 if bili <= 10 else 3)


# --- dosing and dates ---------------------------------------------------------------------------

# CDC 2016 conversion factors (Dowell D et al. MMWR Recomm Rep 2016;65(1):1-49 and the CDC
# "Calculating total daily dose of opioids for safer dosage" sheet): hydromorphone 4, tramadol 0.1,
# methadone tiered by total daily dose (1-20 mg 4, 21-40 8, 41-60 10, >= 61 12).
_MME_2016 = dict(D._MME_FACTOR, hydromorphone=4.0, tramadol=0.1)


def _mme_2016_factor(name: str, daily: float) -> float | None:
    if name == "methadone":
        return 4.0 if daily <= 20 else 8.0 if daily <= 40 else 10.0 if daily <= 60 else 12.0
    return _MME_2016.get(name)


@alternative(49, "cdc_2016")
def mme_cdc_2016(x: Inputs) -> float:
    """MME/day with the CDC 2016 factors: hydromorphone 4, tramadol 0.1, methadone 4/8/10/12 by daily
    dose (1-20/21-40/41-60/>=61 mg); the other factors as in 2022 (Dowell D et al. MMWR Recomm Rep
    2016;65(1):1-49)."""
    return D.mme_total(x, _mme_2016_factor)


@alternative(13, "lmp_plus_280")
def due_date_unadjusted(x: Inputs) -> dt.date:
    """EDD = LMP + 280 days, ignoring the cycle length (ACOG Committee Opinion No. 700, 2017)."""
    return D.lmp_date(x) + dt.timedelta(days=280)


@alternative(13, "naegele_calendar")
def due_date_naegele(x: Inputs) -> dt.date:
    """Naegele's calendar rule: LMP + 1 year - 3 months + 7 days (Naegele FC, 1812; as taught in
    Williams Obstetrics), cycle length ignored; the day is clipped to the month's last day."""
    lmp = D.lmp_date(x)
    year, month = (lmp.year + 1, lmp.month - 3) if lmp.month > 3 else (lmp.year, lmp.month + 9)
    day = min(lmp.day, 28 if month == 2 else 30 if month in (4, 6, 9, 11) else 31)
    return dt.date(year, month, day) + dt.timedelta(days=7)


@alternative(13, "naegele_calendar_cycle_adjusted")
def due_date_naegele_adjusted(x: Inputs) -> dt.date:
    """Naegele's calendar rule (LMP + 1 year - 3 months + 7 days) plus (cycle length - 28) days
    (the calendar form of the cycle-adjusted rule; ACOG Committee Opinion No. 700, 2017)."""
    _, cycle = D.lmp_and_cycle(x)
    return due_date_naegele(x) + dt.timedelta(days=int(cycle) - 28)


@alternative(68, "lmp_plus_14")
def conception_unadjusted(x: Inputs) -> dt.date:
    """Conception = LMP + 14 days, ignoring the cycle length (ACOG Committee Opinion No. 700, 2017)."""
    return D.lmp_date(x) + dt.timedelta(days=14)


# --- body size ----------------------------------------------------------------------------------

@alternative(10, "robinson_1983")
def ibw_robinson(x: Inputs) -> float:
    """Robinson IBW: 52 kg (male) / 49 kg (female) + 1.9 / 1.7 kg per inch over 60 in (Robinson JD
    et al. Am J Hosp Pharm 1983;40:1016-9)."""
    sex = x.choice("sex", P._SEX)
    h = P._height_cm(x)
    sex, h = x.require(sex, h)[:]
    inches = h / 2.54 - 60.0
    return 52.0 + 1.9 * inches if sex == "male" else 49.0 + 1.7 * inches


@alternative(60, "du_bois_1916")
def bsa_du_bois(x: Inputs) -> float:
    """Du Bois BSA (m^2) = 0.007184 x weight^0.425 x height^0.725 (Du Bois D, Du Bois EF. Arch Intern
    Med 1916;17:863-71)."""
    w = P._weight_kg(x)
    h = P._height_cm(x)
    w, h = x.require(w, h)[:]
    return 0.007184 * w**0.425 * h**0.725


# --- scores -------------------------------------------------------------------------------------

@alternative(4, "cha2ds2_va_2024")
def cha2ds2_va(x: Inputs) -> int:
    """CHA2DS2-VA: CHA2DS2-VASc without the female sex point (Van Gelder IC et al. 2024 ESC
    Guidelines for atrial fibrillation, Eur Heart J 2024;45:3314-414)."""
    score = REGISTRY[4].fn(x)
    return score - (1 if SC._sex(x) == "F" else 0)


@alternative(25, "hypertension_uncontrolled_sbp_160")
def has_bled_uncontrolled(x: Inputs) -> int:
    """HAS-BLED with the hypertension point only for uncontrolled hypertension, systolic BP > 160
    mm Hg (Pisters R et al. Chest 2010;138:1093-100, Table 1 definition); a history of hypertension
    without a systolic pressure above 160 in the entities scores 0."""
    score = REGISTRY[25].fn(x)
    sbp = x.quantity(x.key("Systolic Blood Pressure"), "pressure", required=False)
    htn = 1 if SC._any(x, "Hypertension history") else 0
    return score - htn + (1 if sbp is not None and sbp > 160 else 0)


@alternative(20, "original_centor")
def centor_original(x: Inputs) -> int:
    """Original Centor score without the McIsaac age term (Centor RM et al. Med Decis Making
    1981;1:239-46)."""
    score = REGISTRY[20].fn(x)
    (age,) = x.require(x.quantity(x.key("age"), "age"))[:]  # present: fn computed
    return score - (1 if age < 15 else 0 if age < 45 else -1)


@alternative(21, "not_testable_scored_1")
def gcs_not_testable_as_1(x: Inputs) -> int:
    """GCS with a "not testable" component scored as its lowest value, 1 (the common "1T" practice
    for intubated patients; Teasdale G et al. Lancet Neurol 2014;13:844-54 recommend reporting NT)."""
    parts = []
    for key, table in (("Best eye response", SK._GCS_EYE), ("Best verbal response", SK._GCS_VERBAL),
                       ("Best motor response", SK._GCS_MOTOR)):
        sentinel = object()
        v = x.choice(x.key(key), table, default=sentinel)
        parts.append(None if v is sentinel else (1 if v is None else v))
    return int(sum(x.require(*parts)))


@alternative(28, "chronic_health_unstated_elective")
def apache_unstated_elective(x: Inputs) -> int:
    """APACHE II with the chronic health points for an unstated admission type taken as elective
    postoperative (2) instead of nonoperative (5) (Knaus WA et al. Crit Care Med 1985;13:818-29)."""
    score = REGISTRY[28].fn(x)
    unstated = SK._any(x, "History of severe organ failure or immunocompromise") and not x.has(x.key("Surgery Type"))
    return score - 3 if unstated else score


@alternative(32, "without_age_points")
def cci_without_age(x: Inputs) -> int:
    """Charlson index without the age points (the 1987 comorbidity-only index; Charlson ME et al.
    J Chronic Dis 1987;40:373-83)."""
    score = REGISTRY[32].fn(x)
    (age,) = x.require(x.quantity(x.key("age"), "age"))[:]  # present: fn computed
    return score - (0 if age < 50 else 1 if age < 60 else 2 if age < 70 else 3 if age < 80 else 4)


__all__ = ["ALTERNATIVES", "alternative", "compute_alternative"]
_ = SM  # scores_misc is imported so that its registrations exist before any alternative runs
