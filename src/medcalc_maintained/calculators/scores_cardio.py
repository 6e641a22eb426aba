"""Cardiovascular and thromboembolic risk scores.

CHA2DS2-VASc (4), Wells' PE (8), Wells' DVT (16), Revised Cardiac Risk Index (17), HEART (18),
HAS-BLED (25), Caprini 2005 (36), Framingham hard CHD (46) and the PERC rule (48).

Conventions shared by these scores: a boolean criterion that the entities do not mention counts
as absent (MDCalc's unchecked box); a measured quantity (age, heart rate, SpO2, creatinine, lipids,
blood pressure, BMI) that a criterion is derived from is required, because the criterion cannot
be decided without it. Where the MedCalc-Bench data spell one criterion with several keys (e.g.
``Stroke`` / ``Transient Ischemic Attacks History`` / ``Thromboembolism history``), every
spelling is read.
"""

from __future__ import annotations

import math

from medcalc_maintained.calculators.base import Inputs, register

_SEX = {"male": "M", "m": "M", "man": "M", "female": "F", "f": "F", "woman": "F"}


def _any(x: Inputs, *keys: str) -> bool:
    """True when any of the boolean entities ``keys`` is present and true (absent = false)."""
    return any(x.flag(k) for k in keys)


def _age(x: Inputs) -> float | None:
    return x.quantity("age", "age")


def _sex(x: Inputs) -> str | None:
    return x.choice("sex", _SEX)


# ------------------------------------------------------------------------------------------------
@register(4, "CHA2DS2-VASc Score for Atrial Fibrillation Stroke Risk", "integer")
def cha2ds2_vasc(x: Inputs) -> int:
    """CHA2DS2-VASc = C(HF) 1 + H(TN) 1 + A2 (age >=75) 2 + D(M) 1 + S2 (stroke/TIA/thromboembolism) 2
    + V(ascular disease: prior MI, PAD, aortic plaque) 1 + A (age 65-74) 1 + Sc (female) 1.

    Source: Lip GYH et al., Chest 2010;137:263-72; MDCalc "CHA2DS2-VASc Score for Atrial
    Fibrillation Stroke Risk".
    """
    age = _age(x)
    sex = _sex(x)
    age, sex = x.require(age, sex)[:]
    score = 0
    if age >= 75:
        score += 2
    elif age >= 65:
        score += 1
    score += 1 if sex == "F" else 0
    score += 1 if _any(x, "Congestive Heart Faliure", "Congestive Heart Failure", "Congestive heart failure") else 0
    score += 1 if _any(x, "Hypertension history", "Hypertension") else 0
    score += 2 if _any(x, "Stroke", "Transient Ischemic Attacks History", "Thromboembolism history") else 0
    score += 1 if _any(x, "Vascular disease history") else 0
    score += 1 if _any(x, "Diabetes history", "Diabetes mellitus") else 0
    return score


# ------------------------------------------------------------------------------------------------
@register(8, "Wells' Criteria for Pulmonary Embolism", "decimal")
def wells_pe(x: Inputs) -> float:
    """Wells' PE score: clinical signs/symptoms of DVT 3; PE is #1 diagnosis or equally likely 3;
    heart rate > 100 1.5; immobilisation >= 3 days or surgery in previous 4 weeks 1.5; previously
    documented PE or DVT 1.5; hemoptysis 1; malignancy with treatment within 6 months or palliative 1.

    Source: Wells PS et al., Thromb Haemost 2000;83:416-20; MDCalc "Wells' Criteria for Pulmonary
    Embolism".
    """
    hr = x.quantity("Heart Rate or Pulse", "rate", range_key="heart_rate")
    (hr,) = x.require(hr)[:]
    score = 0.0
    score += 3.0 if _any(x, "Clinical signs and symptoms of Deep Vein Thrombosis") else 0.0
    score += 3.0 if _any(x, "Pulmonary Embolism is #1 diagnosis OR equally likely") else 0.0
    score += 1.5 if hr > 100 else 0.0
    score += 1.5 if _any(x, "Immobilization for at least 3 days", "Surgery in the previous 4 weeks") else 0.0
    score += 1.5 if _any(x, "Previously Documented Pulmonary Embolism",
                         "Previously documented Deep Vein Thrombosis") else 0.0
    score += 1.0 if _any(x, "Hemoptysis") else 0.0
    score += 1.0 if _any(x, "Malignancy with treatment within 6 months or palliative") else 0.0
    return score


# ------------------------------------------------------------------------------------------------
@register(16, "Wells' Criteria for DVT", "integer")
def wells_dvt(x: Inputs) -> int:
    """Wells' DVT score: active cancer 1; bedridden recently > 3 days or major surgery within
    12 weeks 1; calf swelling > 3 cm vs other leg 1; collateral (nonvaricose) superficial veins 1;
    entire leg swollen 1; localised tenderness along the deep venous system 1; pitting oedema
    confined to symptomatic leg 1; paralysis, paresis or recent plaster immobilisation of the lower
    extremity 1; previously documented DVT 1; alternative diagnosis as likely or more likely -2.

    Source: Wells PS et al., N Engl J Med 2003;349:1227-35; MDCalc "Wells' Criteria for DVT".
    """
    items = [
        ("Active cancer",),
        ("Bedridden recently >3 days or major surgery within 12 weeks", "Bedridden recently >3 days",
         "Major surgery within 12 weeks"),
        ("Calf swelling >3 centimeters compared to the other leg",),
        ("Collateral (nonvaricose) superficial veins present",),
        ("Entire Leg Swollen",),
        ("Localized tenderness along the deep venous system",),
        ("Pitting edema, confined to symptomatic leg",),
        ("Paralysis, paresis, or recent plaster immobilization of the lower extremity",),
        ("Previously documented Deep Vein Thrombosis",),
    ]
    score = sum(1 for keys in items if _any(x, *keys))
    if _any(x, "Alternative diagnosis to Deep Vein Thrombosis as likely or more likely"):
        score -= 2
    return score


# ------------------------------------------------------------------------------------------------
@register(17, "Revised Cardiac Risk Index for Pre-Operative Risk", "integer")
def rcri(x: Inputs) -> int:
    """Revised Cardiac Risk Index (Lee): one point each for elevated-risk surgery (intraperitoneal,
    intrathoracic or suprainguinal vascular), history of ischaemic heart disease, history of
    congestive heart failure, history of cerebrovascular disease, pre-operative insulin treatment,
    pre-operative creatinine > 2 mg/dL (176.8 umol/L).

    Source: Lee TH et al., Circulation 1999;100:1043-9; MDCalc "Revised Cardiac Risk Index for
    Pre-Operative Risk".
    """
    creat = x.quantity("Pre-operative creatinine", "creatinine")
    (creat,) = x.require(creat)[:]
    score = 0
    score += 1 if _any(x, "Elevated-risk surgery") else 0
    score += 1 if _any(x, "History of ischemic heart disease") else 0
    score += 1 if _any(x, "Congestive Heart Failure criteria for the Cardiac Risk Index rule") else 0
    score += 1 if _any(x, "History of cerebrovascular disease", "Cerebrovascular disease history") else 0
    score += 1 if _any(x, "Pre-operative treatment with insulin") else 0
    score += 1 if creat > 2.0 else 0
    return score


# ------------------------------------------------------------------------------------------------
_HEART_HISTORY = {"slightly suspicious": 0, "moderately suspicious": 1, "highly suspicious": 2}
_HEART_ECG = {
    "normal": 0,
    "non-specific repolarization disturbance": 1,
    "nonspecific repolarization disturbance": 1,
    "non-specific repolarisation disturbance": 1,
    "significant st deviation": 2,
}
_HEART_TROPONIN = {
    "less than or equal to normal limit": 0,
    "between the normal limit or up to three times the normal limit": 1,
    "between the normal limit and up to three times the normal limit": 1,
    "1-3 times normal limit": 1,
    "greater than three times normal limit": 2,
    "more than three times normal limit": 2,
}


@register(18, "HEART Score for Major Cardiac Events", "integer")
def heart_score(x: Inputs) -> int:
    """HEART score = History (slightly 0 / moderately 1 / highly suspicious 2) + ECG (normal 0 /
    non-specific repolarisation disturbance 1 / significant ST deviation 2) + Age (<45 0 / 45-64 1 /
    >=65 2) + Risk factors (none 0 / 1-2 risk factors 1 / >=3 risk factors or history of
    atherosclerotic disease 2) + initial Troponin (<= normal 0 / 1-3x normal 1 / >3x normal 2).
    Risk factors: hypertension, hypercholesterolaemia, diabetes mellitus, obesity (BMI > 30),
    smoking (current or quit <= 3 months), family history (parent or sibling with CVD < 65);
    atherosclerotic disease: prior MI, PCI/CABG, CVA/TIA or peripheral arterial disease.

    Source: Six AJ et al., Neth Heart J 2008;16:191-6; Backus BE et al., Int J Cardiol
    2013;168:2153-8; MDCalc "HEART Score for Major Cardiac Events".
    """
    age = _age(x)
    history = x.choice("Suspicion History", _HEART_HISTORY)
    ecg = x.choice("Electrocardiogram Test", _HEART_ECG)
    trop = x.choice("Initial troponin", _HEART_TROPONIN)
    age, history, ecg, trop = x.require(age, history, ecg, trop)[:]
    age_pts = 2 if age >= 65 else (1 if age >= 45 else 0)
    n_rf = sum(
        1
        for keys in (
            ("Hypertension history",),
            ("hypercholesterolemia",),
            ("Diabetes mellitus criteria for CCI rule", "Diabetes history"),
            ("obesity",),
            ("smoking",),
            ("parent or sibling with Cardiovascular disease before age 65",),
        )
        if _any(x, *keys)
    )
    athero = _any(x, "atherosclerotic disease", "Transient Ischemic Attacks History")
    if athero or n_rf >= 3:
        rf_pts = 2
    elif n_rf >= 1:
        rf_pts = 1
    else:
        rf_pts = 0
    return history + ecg + age_pts + rf_pts + trop


# ------------------------------------------------------------------------------------------------
@register(25, "HAS-BLED Score for Major Bleeding Risk", "integer")
def has_bled(x: Inputs) -> int:
    """HAS-BLED: one point each for Hypertension (uncontrolled, SBP > 160), Abnormal renal function,
    Abnormal liver function, Stroke history, Bleeding history or predisposition, Labile INR,
    Elderly (age > 65), Drugs predisposing to bleeding (antiplatelets, NSAIDs), alcohol use
    (>= 8 drinks/week).

    Source: Pisters R et al., Chest 2010;138:1093-100; MDCalc "HAS-BLED Score for Major Bleeding
    Risk". Absent drink count = no alcohol point.
    """
    age = _age(x)
    drinks = x.number("Number of Alcoholic Drinks Per Week", required=False, range_key="alcohol_drinks_per_week")
    (age,) = x.require(age)[:]
    score = 0
    score += 1 if _any(x, "Hypertension history") else 0
    score += 1 if _any(x, "Renal disease criteria for the HAS-BLED rule") else 0
    score += 1 if _any(x, "Liver disease criteria for the HAS-BLED rule") else 0
    score += 1 if _any(x, "Stroke") else 0
    score += 1 if _any(x, "Prior major bleeding or predisposition to bleeding") else 0
    score += 1 if _any(x, "Labile international normalized ratio") else 0
    score += 1 if age > 65 else 0
    score += 1 if _any(x, "Medication usage predisposing to bleeding") else 0
    score += 1 if (drinks is not None and drinks >= 8) else 0
    return score


# ------------------------------------------------------------------------------------------------
_SURGERY = {
    "none": 0,
    "no surgery": 0,
    "minor": 1,
    "major": 2,
    "major >45 min": 2,
    "laparoscopic": 2,
    "laparoscopic >45 min": 2,
    "arthroscopic": 2,
    "elective major lower extremity arthroplasty": 5,
}
_MOBILITY = {
    "normal": 0,
    "normal/ambulatory": 0,
    "ambulatory": 0,
    "on bed rest": 1,
    "bed rest": 1,
    "confined to bed >72 hours": 2,
}


@register(36, "Caprini Score for Venous Thromboembolism (2005)", "integer")
def caprini(x: Inputs) -> int:
    """Caprini VTE risk score (2005 version, as on MDCalc).

    Age <=40 0 / 41-60 1 / 61-74 2 / >=75 3. Type of surgery: none 0, minor 1, major >45 min 2,
    laparoscopic >45 min 2, arthroscopic 2, elective major lower-extremity arthroplasty 5.
    Recent (<1 month): major surgery 1, CHF 1, sepsis 1, pneumonia 1, immobilising plaster cast 2,
    hip/pelvis/leg fracture 5, stroke 5, multiple trauma 5, acute spinal cord injury (paralysis) 5.
    Venous disease / clotting disorder: varicose veins 1, current swollen legs 1, current central
    venous access 2, history of DVT/PE 3 (one item), family history of thrombosis 3, factor V
    Leiden 3, prothrombin 20210A 3, elevated homocysteine 3, lupus anticoagulant 3, elevated
    anticardiolipin antibody 3, HIT 3, other congenital or acquired thrombophilia 3.
    Mobility: normal 0, bed rest 1, confined to bed >72 h 2. Other: history of IBD 1, BMI > 25 1,
    acute MI 1, COPD 1, present or previous malignancy 2, other risk factors 1. Female only:
    pregnancy/postpartum 1, unexplained stillborn/recurrent abortion 1, OCP/HRT 1.

    Source: Caprini JA, Dis Mon 2005;51:70-8; MDCalc "Caprini Score for Venous Thromboembolism
    (2005)". An absent surgery type means no surgery (0); absent mobility means normal (0).
    """
    age = _age(x)
    bmi = x.quantity("Body Mass Index (BMI)", "bmi")
    surgery = x.choice("Surgery Type", _SURGERY, required=False, default=0)
    mobility = x.choice("Mobility", _MOBILITY, required=False, default=0)
    age, bmi = x.require(age, bmi)[:]
    score = 0
    if age >= 75:
        score += 3
    elif age >= 61:
        score += 2
    elif age >= 41:
        score += 1
    score += surgery + mobility
    weighted = [
        (1, ("Major Surgery in the last month",)),
        (1, ("Congestive Heart Failure in the last month",)),
        (1, ("Sepsis in the last month",)),
        (1, ("Pneumonia in the last month",)),
        (2, ("Immobilizing plaster cast in the last month",)),
        (5, ("Hip, pelvis, or leg fracture in the last month",)),
        (5, ("Stroke in the last month",)),
        (5, ("Multiple trauma in the last month",)),
        (5, ("Acute spinal cord injury causing paralysis in the last month",)),
        (1, ("Varicose veins",)),
        (1, ("Current swollen legs",)),
        (2, ("Current central venous access",)),
        (3, ("Previously documented Deep Vein Thrombosis", "Previously Documented Pulmonary Embolism")),
        (3, ("Family history of thrombosis",)),
        (3, ("Positive Factor V Leiden",)),
        (3, ("Positive prothrombin 20210A",)),
        (3, ("Elevated serum homocysteine",)),
        (3, ("Positive lupus anticoagulant",)),
        (3, ("Elevated anticardiolipin antibody",)),
        (3, ("Heparin-induced thrombocytopenia",)),
        (3, ("Other congenital or acquired thrombophilia",)),
        (1, ("History of inflammatory bowel disease",)),
        (1, ("Acute Myocardial infarction",)),
        (1, ("Chronic Obstructive Pulmonary Disease",)),
        (2, ("Present or previous malignancy",)),
        (1, ("Other risk factors",)),
    ]
    score += sum(pts for pts, keys in weighted if _any(x, *keys))
    score += 1 if bmi > 25 else 0
    if x.choice("sex", _SEX, required=False) == "F":
        score += sum(
            1
            for k in (
                "Pregnancy or postpartum",
                "History of unexplained stillborn infant, recurrent spontaneous abortion",
                "Oral contraceptives or hormone replacement",
            )
            if x.flag(k)
        )
    return score


# ------------------------------------------------------------------------------------------------
@register(46, "Framingham Risk Score for Hard Coronary Heart Disease", "decimal")
def framingham_hard_chd(x: Inputs) -> float:
    """10-year risk (%) of hard CHD (MI or coronary death), ATP III continuous Framingham equation.

    Men:   L = 52.00961 ln(age) + 20.014077 ln(TC) - 0.905964 ln(HDL) + 1.305784 ln(SBP)
               + 0.241549 BPtreated + 12.096316 smoker - 4.605038 ln(age) ln(TC)
               - 2.84367 ln(min(age, 70)) smoker - 2.93323 ln(age)^2 - 172.300168
           risk = 1 - 0.9402^exp(L)
    Women: L = 31.764001 ln(age) + 22.465206 ln(TC) - 1.187731 ln(HDL) + 2.552905 ln(SBP)
               + 0.420251 BPtreated + 13.07543 smoker - 5.060998 ln(age) ln(TC)
               - 2.996945 ln(min(age, 78)) smoker - 146.5933061
           risk = 1 - 0.98767^exp(L)
    TC and HDL in mg/dL, SBP in mm Hg; result x 100 (percent). Absent smoking / treatment = no.

    Source: NCEP ATP III, JAMA 2001;285:2486-97 (risk-assessment equations); MDCalc "Framingham
    Risk Score for Hard Coronary Heart Disease" (Evidence: formula).
    """
    age = _age(x)
    sex = _sex(x)
    tc = x.quantity("Total cholesterol", "cholesterol")
    hdl = x.quantity("high-density lipoprotein cholesterol", "cholesterol", range_key="hdl")
    sbp = x.quantity("Systolic Blood Pressure", "pressure", range_key="systolic_bp")
    age, sex, tc, hdl, sbp = x.require(age, sex, tc, hdl, sbp)[:]
    smoker = 1.0 if _any(x, "Smoker") else 0.0
    treated = 1.0 if _any(x, "Blood pressure being treated with medicines") else 0.0
    la, ltc, lhdl, lsbp = math.log(age), math.log(tc), math.log(hdl), math.log(sbp)
    if sex == "M":
        l_sum = (52.00961 * la + 20.014077 * ltc - 0.905964 * lhdl + 1.305784 * lsbp
                 + 0.241549 * treated + 12.096316 * smoker - 4.605038 * la * ltc
                 - 2.84367 * math.log(min(age, 70.0)) * smoker - 2.93323 * la * la - 172.300168)
        risk = 1.0 - 0.9402 ** math.exp(l_sum)
    else:
        l_sum = (31.764001 * la + 22.465206 * ltc - 1.187731 * lhdl + 2.552905 * lsbp
                 + 0.420251 * treated + 13.07543 * smoker - 5.060998 * la * ltc
                 - 2.996945 * math.log(min(age, 78.0)) * smoker - 146.5933061)
        risk = 1.0 - 0.98767 ** math.exp(l_sum)
    return risk * 100.0


# ------------------------------------------------------------------------------------------------
@register(48, "PERC Rule for Pulmonary Embolism", "integer")
def perc(x: Inputs) -> int:
    """Number of PERC criteria met: age >= 50; heart rate >= 100; SaO2 < 95%; unilateral leg
    swelling; hemoptysis; recent surgery or trauma (<= 4 weeks, requiring general anaesthesia);
    prior PE or DVT; hormone use (oral contraceptives, hormone replacement or oestrogen).

    Source: Kline JA et al., J Thromb Haemost 2004;2:1247-55; MDCalc "PERC Rule for Pulmonary
    Embolism".
    """
    age = _age(x)
    hr = x.quantity("Heart Rate or Pulse", "rate", range_key="heart_rate")
    sat = x.quantity("O₂ saturation percentage", "percent", range_key="oxygen_saturation")
    age, hr, sat = x.require(age, hr, sat)[:]
    n = 0
    n += 1 if age >= 50 else 0
    n += 1 if hr >= 100 else 0
    n += 1 if sat < 95 else 0
    n += 1 if _any(x, "Unilateral Leg Swelling") else 0
    n += 1 if _any(x, "Hemoptysis") else 0
    n += 1 if _any(x, "Recent surgery or trauma") else 0
    n += 1 if _any(x, "Previously Documented Pulmonary Embolism", "Previously documented Deep Vein Thrombosis") else 0
    n += 1 if _any(x, "Hormone use") else 0
    return n
