"""Hepatology, GI bleeding, comorbidity and pharyngitis scores.

Child-Pugh (15), Centor/McIsaac (20), Glasgow-Blatchford (27), Charlson Comorbidity Index (32)
and FeverPAIN (33).

Conventions shared by these scores: a boolean criterion that the entities do not mention counts
as absent (MDCalc's unchecked box); a measured quantity (age, temperature, laboratory value) that
a criterion is derived from is required. A graded finding whose lowest grade means "absent"
(ascites, encephalopathy, liver disease, diabetes, solid tumour) counts as absent when it is not
mentioned, like an unchecked box. Category strings are matched case-insensitively.
"""

from __future__ import annotations

from typing import Any

from medcalc_maintained.calculators.base import Inputs, register

_SEX = {"male": "M", "m": "M", "man": "M", "female": "F", "f": "F", "woman": "F"}



def _any(x: Inputs, *keys: str) -> bool:
    return any(x.flag(x.key(key)) for key in keys)


def _graded(x: Inputs, key: str, options: dict[str, Any], *, absent: Any, true_means: Any = None) -> Any:
    """A graded entity: absent -> ``absent``; booleans False -> ``absent``, True -> ``true_means``
    (invalid when ``true_means`` is None); strings through ``options`` (case-insensitive)."""
    k = x.key(key)
    if not x.has(k):
        return absent
    v = x.raw(k)
    if isinstance(v, bool):
        if not v:
            return absent
        if true_means is None:
            x._note(x.invalid, k)
        return true_means
    return x.choice(k, options)


# ------------------------------------------------------------------------------------------------
_ASCITES = {"absent": 1, "none": 1, "no": 1, "slight": 2, "mild": 2, "moderate": 3, "severe": 3,
            "moderate to severe": 3, "moderate-severe": 3, "tense": 3}
_ENCEPH = {"no encephalopathy": 1, "none": 1, "absent": 1, "grade 0": 1, "no": 1,
           "grade 1-2": 2, "grade 1": 2, "grade 2": 2, "grade 1-2 encephalopathy": 2, "mild": 2,
           "grade 3-4": 3, "grade 3": 3, "grade 4": 3, "grade 3-4 encephalopathy": 3, "severe": 3}


@register(15, "Child-Pugh Score for Cirrhosis Mortality", "integer")
def child_pugh(x: Inputs) -> int:
    """Child-Pugh = bilirubin (<2 mg/dL 1, 2-3 2, >3 3) + albumin (>3.5 g/dL 1, 2.8-3.5 2, <2.8 3)
    + INR (<1.7 1, 1.7-2.3 2, >2.3 3) + ascites (absent 1, slight 2, moderate 3) + hepatic
    encephalopathy (none 1, grade 1-2 2, grade 3-4 3). Ascites / encephalopathy not mentioned are
    taken as absent (1 point each).

    Source: Pugh RN et al., Br J Surg 1973;60:646-9; MDCalc "Child-Pugh Score for Cirrhosis
    Mortality" (calc/340).
    """
    bili = x.quantity(x.key("Bilirubin"), "bilirubin")
    alb = x.quantity(x.key("Albumin"), "albumin")
    inr = x.number(x.key("international normalized ratio", "INR"), range_key="inr")
    asc = _graded(x, "Ascites", _ASCITES, absent=1)
    enc = _graded(x, "Encephalopathy", _ENCEPH, absent=1)
    bili, alb, inr, asc, enc = x.require(bili, alb, inr, asc, enc)[:]
    score = 1 if bili < 2 else 2 if bili <= 3 else 3
    score += 1 if alb > 3.5 else 2 if alb >= 2.8 else 3
    score += 1 if inr < 1.7 else 2 if inr <= 2.3 else 3
    return score + asc + enc


# ------------------------------------------------------------------------------------------------
@register(20, "Centor Score (Modified/McIsaac) for Strep Pharyngitis", "integer")
def centor_mcisaac(x: Inputs) -> int:
    """Modified Centor (McIsaac) = age 3-14 +1, 15-44 0, >=45 -1; exudate or swelling on tonsils 1;
    tender/swollen anterior cervical nodes 1; temperature > 38 C 1; cough absent 1.

    The score is defined for age >= 3 years (MDCalc offers no younger age band; McIsaac studied
    ages 3-76), so a younger patient's age is reported as invalid.

    Source: McIsaac WJ et al., CMAJ 1998;158:75-83 and JAMA 2004;291:1587-95; MDCalc "Centor
    Score (Modified/McIsaac) for Strep Pharyngitis" (calc/104).
    """
    age_key = x.key("age")
    age = x.quantity(age_key, "age")
    temp = x.quantity(x.key("Temperature"), "temperature", range_key="temperature")
    if age is not None and age < 3:
        x._note(x.invalid, age_key)
    age, temp = x.require(age, temp)[:]
    score = 1 if age < 15 else 0 if age < 45 else -1
    score += 1 if _any(x, "Exudate or swelling on tonsils") else 0
    score += 1 if _any(x, "Tender/swollen anterior cervical lymph nodes") else 0
    score += 1 if temp > 38 else 0
    score += 1 if _any(x, "Cough Absent") else 0
    return score


# ------------------------------------------------------------------------------------------------
@register(27, "Glasgow-Blatchford Bleeding Score (GBS)", "integer")
def glasgow_blatchford(x: Inputs) -> int:
    """GBS = BUN (mg/dL: <18.2 0, 18.2-22.3 2, 22.4-27.9 3, 28-69.9 4, >=70 6; i.e. urea mmol/L
    6.5-7.9 2, 8-9.9 3, 10-24.9 4, >=25 6) + hemoglobin (men: >=13 g/dL 0, 12-12.9 1, 10-11.9 3,
    <10 6; women: >=12 0, 10-11.9 1, <10 6) + SBP (>=110 0, 100-109 1, 90-99 2, <90 3)
    + heart rate >= 100 1 + melena 1 + syncope 2 + hepatic disease 2 + cardiac failure 2.

    Source: Blatchford O et al., Lancet 2000;356:1318-21; MDCalc "Glasgow-Blatchford Bleeding
    Score (GBS)" (calc/518).
    """
    bun = x.quantity(x.key("Blood Urea Nitrogen (BUN)", "BUN"), "bun")
    hb = x.quantity(x.key("Hemoglobin"), "hemoglobin", range_key="hemoglobin")
    sbp = x.quantity(x.key("Systolic Blood Pressure"), "pressure", range_key="systolic_bp")
    hr = x.quantity(x.key("Heart Rate or Pulse"), "rate", range_key="heart_rate")
    sex = x.choice(x.key("sex"), _SEX)
    bun, hb, sbp, hr, sex = x.require(bun, hb, sbp, hr, sex)[:]
    score = 0 if bun < 18.2 else 2 if bun < 22.4 else 3 if bun < 28 else 4 if bun < 70 else 6
    if sex == "M":
        score += 0 if hb >= 13 else 1 if hb >= 12 else 3 if hb >= 10 else 6
    else:
        score += 0 if hb >= 12 else 1 if hb >= 10 else 6
    score += 0 if sbp >= 110 else 1 if sbp >= 100 else 2 if sbp >= 90 else 3
    score += 1 if hr >= 100 else 0
    score += 1 if _any(x, "Melena present") else 0
    score += 2 if _any(x, "Recent syncope") else 0
    score += 2 if _any(x, "Hepatic disease history") else 0
    score += 2 if _any(x, "Cardiac failure present") else 0
    return score


# ------------------------------------------------------------------------------------------------
_LIVER = {"none": 0, "no": 0, "absent": 0, "mild": 1, "moderate": 3, "severe": 3,
          "moderate to severe": 3, "moderate-severe": 3, "moderate to severe liver disease": 3}
_DIABETES = {"none or diet-controlled": 0, "none": 0, "diet-controlled": 0, "no": 0,
             "uncomplicated": 1, "end-organ damage": 2, "end organ damage": 2}
_TUMOR = {"none": 0, "no": 0, "absent": 0, "localized": 2, "localised": 2, "metastatic": 6}
_CKD = {"severe": True, "moderate": True, "moderate to severe": True, "none": False, "mild": False}


@register(32, "Charlson Comorbidity Index (CCI)", "integer")
def charlson(x: Inputs) -> int:
    """CCI (MDCalc version of Charlson 1987) = age (<50 0, 50-59 1, 60-69 2, 70-79 3, >=80 4)
    + MI 1 + CHF 1 + peripheral vascular disease 1 + CVA or TIA 1 + dementia 1 + chronic pulmonary
    disease 1 + connective tissue disease 1 + peptic ulcer disease 1 + liver disease (mild 1,
    moderate to severe 3) + diabetes (uncomplicated 1, end-organ damage 2) + hemiplegia 2
    + moderate to severe CKD 2 + solid tumour (localized 2, metastatic 6) + leukemia 2
    + lymphoma 2 + AIDS 6. A solid tumour reported without its extent counts as localized
    (metastasis not described); diabetes reported only as present counts as uncomplicated.

    Source: Charlson ME et al., J Chronic Dis 1987;40:373-83; Charlson ME et al., J Clin
    Epidemiol 1994;47:1245-51 (age points); MDCalc "Charlson Comorbidity Index (CCI)" (calc/3917).
    """
    age = x.quantity(x.key("age"), "age")
    liver = _graded(x, "Liver disease severity", _LIVER, absent=0)
    diabetes = _graded(x, "Diabetes mellitus criteria for CCI rule", _DIABETES, absent=0, true_means=1)
    tumor = _graded(x, "Solid tumor", _TUMOR, absent=0, true_means=2)
    ckd = _graded(x, "Moderate to severe Chronic Kidney Disease", _CKD, absent=False, true_means=True)
    age, liver, diabetes, tumor, ckd = x.require(age, liver, diabetes, tumor, ckd)[:]
    score = 0 if age < 50 else 1 if age < 60 else 2 if age < 70 else 3 if age < 80 else 4
    score += 1 if _any(x, "Myocardial infarction") else 0
    score += 1 if _any(x, "Congestive Heart Faliure", "Congestive Heart Failure") else 0
    score += 1 if _any(x, "Peripheral vascular disease") else 0
    score += 1 if _any(x, "Cerebrovascular Accident", "Transient Ischemic Attacks History") else 0
    score += 1 if _any(x, "Dementia") else 0
    score += 1 if _any(x, "Chronic Obstructive Pulmonary Disease") else 0
    score += 1 if _any(x, "Connective tissue disease") else 0
    score += 1 if _any(x, "Peptic ulcer disease") else 0
    score += liver + diabetes + tumor
    score += 2 if _any(x, "Hemiplegia") else 0
    score += 2 if ckd else 0
    score += 2 if _any(x, "Leukemia") else 0
    score += 2 if _any(x, "Lymphoma") else 0
    score += 6 if _any(x, "AIDS") else 0
    return score


# ------------------------------------------------------------------------------------------------
@register(33, "FeverPAIN Score for Strep Pharyngitis", "integer")
def feverpain(x: Inputs) -> int:
    """FeverPAIN = Fever in past 24 h 1 + Purulent tonsils 1 + Attend rapidly (symptom onset
    <= 3 days) 1 + severely Inflamed tonsils 1 + No cough or coryza 1 (0-5).

    Source: Little P et al., BMJ 2013;347:f5806; MDCalc "FeverPAIN Score for Strep Pharyngitis"
    (calc/3825).
    """
    score = 1 if _any(x, "Fever in past 24 hours") else 0
    score += 1 if _any(x, "Purulent tonsils") else 0
    score += 1 if _any(x, "Symptom onset ≤3 days") else 0
    score += 1 if _any(x, "Severe tonsil inflammation") else 0
    score += 1 if _any(x, "Absence of cough or coryza") else 0
    return score
