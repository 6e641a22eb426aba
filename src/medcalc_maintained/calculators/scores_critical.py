"""Critical-care and pneumonia severity scores.

Glasgow Coma Score (21), APACHE II (28), PSI/PORT (29), SOFA (43), CURB-65 (45) and the SIRS
criteria (51).

Conventions shared by these scores: a boolean criterion that the entities do not mention counts
as absent (MDCalc's unchecked box); a measured quantity (vital sign, laboratory value) that a
criterion is derived from is required, because the criterion cannot be decided without it.
Vasopressors that are not mentioned are taken as not given. Where the MedCalc-Bench data spell one
entity with several keys (``FiO₂`` / ``FiO2``, ``Continous`` / ``Continuous``), every spelling is
read; key look-up falls back to a case-insensitive match.
"""

from __future__ import annotations

import math

from medcalc_maintained.calculators.base import Inputs, register

_SEX = {"male": "M", "m": "M", "man": "M", "female": "F", "f": "F", "woman": "F"}



def _any(x: Inputs, *keys: str) -> bool:
    """True when any of the boolean entities ``keys`` (any spelling) is present and true."""
    return any(x.flag(x.key(key)) for key in keys)


def _fio2_percent(x: Inputs, *, required: bool = True) -> float | None:
    """FiO2 in percent; a value <= 1 is read as a fraction (0.5 -> 50 %)."""
    v = x.quantity(x.key("FiO₂", "FiO2"), "percent", required=required, range_key=None)
    if v is None:
        return None
    if v <= 1.0:
        v *= 100.0
    x._check_range(x.key("FiO₂", "FiO2"), "percent", v, "fio2")
    return v


def _pao2(x: Inputs, *, required: bool = True) -> float | None:
    key = x.key("Partial pressure of oxygen (PaO₂) for Apache II", "Partial pressure of oxygen (PaO₂)",
             "PaO₂", "PaO2")
    return x.quantity(key, "pressure", required=required, range_key="pao2")


def _paco2(x: Inputs, *, required: bool = True) -> float | None:
    return x.quantity(x.key("PaCO₂", "PaCO2"), "pressure", required=required, range_key="paco2")


def _gcs(x: Inputs) -> float | None:
    return x.number(x.key("Glasgow Coma Score", "Glasgow Coma Scale"), range_key="gcs")


def _map(x: Inputs, *, required: bool = True) -> float | None:
    """Mean arterial pressure = 2/3 DBP + 1/3 SBP (mm Hg)."""
    sbp = x.quantity(x.key("Systolic Blood Pressure"), "pressure", required=required, range_key="systolic_bp")
    dbp = x.quantity(x.key("Diastolic Blood Pressure"), "pressure", required=required, range_key="diastolic_bp")
    if sbp is None or dbp is None:
        return None
    return 2.0 / 3.0 * dbp + 1.0 / 3.0 * sbp


# ------------------------------------------------------------------------------------------------
_GCS_EYE = {
    "eyes open spontaneously": 4, "spontaneous": 4, "spontaneously": 4,
    "eye opening to verbal command": 3, "eye opening to speech": 3, "eye opening to sound": 3, "to speech": 3,
    "eye opening to pain": 2, "to pain": 2,
    "no eye opening": 1, "none": 1,
    "not testable": None, "nt": None,
}
_GCS_VERBAL = {
    "oriented": 5, "orientated": 5,
    "confused": 4, "confused conversation": 4,
    "inappropriate words": 3,
    "incomprehensible sounds": 2,
    "no verbal response": 1, "none": 1,
    "not testable": None, "nt": None,
}
_GCS_MOTOR = {
    "obeys commands": 6,
    "localizes pain": 5, "localises pain": 5, "localizes to pain": 5,
    "withdrawal from pain": 4, "withdraws from pain": 4, "withdrawal to pain": 4,
    "flexion to pain": 3, "abnormal flexion": 3, "decorticate posturing": 3,
    "extension to pain": 2, "decerebrate posturing": 2,
    "no motor response": 1, "none": 1,
    "not testable": None, "nt": None,
}


@register(21, "Glasgow Coma Score (GCS)", "integer")
def glasgow_coma_score(x: Inputs) -> int:
    """GCS = eye (1-4) + verbal (1-5) + motor (1-6), range 3-15.

    A component marked "not testable" makes the total Score undefined (MDCalc: "The Score cannot
    be calculated if one or other of the component criteria is not testable"), so the result is
    not computable.

    Source: Teasdale G, Jennett B. Lancet 1974;2:81-4; Teasdale G et al., Lancet Neurol
    2014;13:844-54; MDCalc "Glasgow Coma Scale/Score (GCS)" (calc/64).
    """
    parts = []
    for key, table in (("Best eye response", _GCS_EYE), ("Best verbal response", _GCS_VERBAL),
                       ("Best motor response", _GCS_MOTOR)):
        k = x.key(key)
        sentinel = object()
        v = x.choice(k, table, default=sentinel)
        if v is None:  # "not testable": the summed score does not exist
            x._note(x.missing, f"{key} (not testable)")
        parts.append(None if v is sentinel else v)
    return int(sum(x.require(*parts)))


# ------------------------------------------------------------------------------------------------
_SURGERY = {
    "nonoperative": 5, "non-operative": 5, "nonoperative ": 5, "none": 5,
    "emergency": 5, "emergency postoperative": 5, "emergency surgery": 5,
    "elective": 2, "elective postoperative": 2, "elective surgery": 2,
}


# APACHE II points of each physiologic variable: ``(lower bound, points)`` from the highest band
# down (the first bound the value reaches gives its points), then the points of a value below every
# bound. Sodium's 111-119 band starts strictly above 110: the smallest number above 110 is its bound.
_APACHE_POINTS: dict[str, tuple[tuple[tuple[float, int], ...], int]] = {
    "temp": (((41, 4), (39, 3), (38.5, 1), (36, 0), (34, 1), (32, 2), (30, 3)), 4),
    "map": (((160, 4), (130, 3), (110, 2), (70, 0), (50, 2)), 4),
    "hr": (((180, 4), (140, 3), (110, 2), (70, 0), (55, 2), (40, 3)), 4),
    "rr": (((50, 4), (35, 3), (25, 1), (12, 0), (10, 1), (6, 2)), 4),
    "ph": (((7.7, 4), (7.6, 3), (7.5, 1), (7.33, 0), (7.25, 2), (7.15, 3)), 4),
    "na": (((180, 4), (160, 3), (155, 2), (150, 1), (130, 0), (120, 2), (math.nextafter(110, math.inf), 3)), 4),
    "k": (((7, 4), (6, 3), (5.5, 1), (3.5, 0), (3, 1), (2.5, 2)), 4),
    "cr": (((3.5, 4), (2.0, 3), (1.5, 2), (0.6, 0)), 2),
    "hct": (((60, 4), (50, 2), (46, 1), (30, 0), (20, 2)), 4),
    "wbc": (((40, 4), (20, 2), (15, 1), (3, 0), (1, 2)), 4),  # x10^9/L
}


def _apache(variable: str, value: float) -> int:
    """The APACHE II points of ``value`` of a physiologic ``variable`` (a key of :data:`_APACHE_POINTS`)."""
    bands, below = _APACHE_POINTS[variable]
    for bound, points in bands:
        if value >= bound:
            return points
    return below


@register(28, "APACHE II Score", "integer")
def apache_ii(x: Inputs) -> int:
    """APACHE II = acute physiology score (12 variables) + age points + chronic health points.

    Physiology points (Knaus 1985 Table 1 / MDCalc): rectal temperature, MAP (2/3 DBP + 1/3 SBP),
    heart rate, respiratory rate, oxygenation (FiO2 >= 50 %: A-a gradient >499 4, 350-499 3,
    200-349 2, <200 0; FiO2 < 50 %: PaO2 >70 0, 61-70 1, 55-60 3, <55 4), arterial pH, sodium,
    potassium, creatinine (points doubled in acute renal failure), hematocrit, WBC (x10^9/L) and
    15 - GCS. Age: <=44 0, 45-54 2, 55-64 3, 65-74 5, >=75 6. Chronic health: history of severe
    organ insufficiency or immunocompromise -> nonoperative or emergency postoperative 5,
    elective postoperative 2. When that history is present and no surgery type is given, the
    admission is taken as nonoperative (no operation described). When FiO2 >= 50 % and no A-a
    gradient is given, it is computed from PaO2 and PaCO2 (A-a = FiO2 x 713 - PaCO2/0.8 - PaO2).

    Source: Knaus WA et al., Crit Care Med 1985;13:818-29; MDCalc "APACHE II Score" (calc/1868).
    """
    age = x.quantity(x.key("age"), "age")
    temp = x.quantity(x.key("Temperature"), "temperature", range_key="temperature")
    mean_ap = _map(x)
    hr = x.quantity(x.key("Heart Rate or Pulse"), "rate", range_key="heart_rate")
    rr = x.quantity(x.key("respiratory rate"), "rate", range_key="respiratory_rate")
    ph = x.number(x.key("pH"), range_key="ph")
    na = x.quantity(x.key("Sodium"), "sodium")
    k = x.quantity(x.key("Potassium"), "potassium", range_key="potassium")
    cr = x.quantity(x.key("creatinine", "Creatinine"), "creatinine")
    hct = x.quantity(x.key("Hematocrit"), "percent", range_key="hematocrit")
    wbc = x.quantity(x.key("White blood cell count"), "count_per_ul", range_key="wbc")
    gcs = _gcs(x)
    fio2 = _fio2_percent(x)

    oxy = None
    if fio2 is not None:
        if fio2 >= 50:
            aa_key = x.key("A-a gradient", "A-a Gradient")
            aa = x.number(aa_key, required=False, range_key="aa_gradient")
            if aa is None:
                pao2 = _pao2(x, required=False)
                paco2 = _paco2(x, required=False)
                if pao2 is not None and paco2 is not None:
                    aa = fio2 / 100.0 * (760.0 - 47.0) - paco2 / 0.8 - pao2
                else:
                    x._note(x.missing, aa_key)
            if aa is not None:
                oxy = 4 if aa >= 500 else 3 if aa >= 350 else 2 if aa >= 200 else 0
        else:
            pao2 = _pao2(x)
            if pao2 is not None:
                oxy = 0 if pao2 > 70 else 1 if pao2 >= 61 else 3 if pao2 >= 55 else 4

    chronic = 0
    if _any(x, "History of severe organ failure or immunocompromise"):
        # no surgery type given: no operation described, i.e. a nonoperative admission (5)
        chronic = x.choice(x.key("Surgery Type"), _SURGERY, required=False, default=5)
    # split in three calls, each of names of one type (oxy and chronic are ints); any None stops it
    age, temp, mean_ap, hr, rr, ph, na, k = x.require(age, temp, mean_ap, hr, rr, ph, na, k)[:]
    cr, hct, wbc, gcs, fio2 = x.require(cr, hct, wbc, gcs, fio2)[:]
    oxy, chronic = x.require(oxy, chronic)[:]

    arf = _any(x, "Acute renal failure", "Acute Renal Failure")
    age_pts = 0 if age < 45 else 2 if age < 55 else 3 if age < 65 else 5 if age < 75 else 6
    cr_pts = _apache("cr", cr) * (2 if arf else 1)
    aps = (_apache("temp", temp) + _apache("map", mean_ap) + _apache("hr", hr) + _apache("rr", rr) + oxy
           + _apache("ph", ph) + _apache("na", na) + _apache("k", k) + cr_pts + _apache("hct", hct)
           + _apache("wbc", wbc / 1000.0) + (15 - int(round(gcs))))
    return aps + age_pts + chronic


# ------------------------------------------------------------------------------------------------
def _present(x: Inputs, *keys: str) -> bool:
    """A comorbidity given as boolean or as a severity string ('Mild', 'Severe'...)."""
    for key in keys:
        k = x.key(key)
        if not x.has(k):
            continue
        v = x.raw(k)
        if isinstance(v, str) and v.strip().lower() not in ("true", "false", "yes", "no", "present",
                                                             "absent", "0", "1", "none"):
            return True
        if x.flag(k):
            return True
    return False


@register(29, "PSI Score: Pneumonia Severity Index for CAP", "integer")
def pneumonia_severity_index(x: Inputs) -> int:
    """PSI/PORT score = age (years; women age - 10) + nursing home 10 + neoplastic disease 30 +
    liver disease 20 + CHF 10 + cerebrovascular disease 10 + renal disease 10 + altered mental
    status 20 + RR >= 30/min 20 + SBP < 90 mm Hg 20 + temperature < 35 or >= 40 C 15 + pulse >= 125
    10 + pH < 7.35 30 + BUN >= 30 mg/dL 20 + sodium < 130 mmol/L 20 + glucose >= 250 mg/dL 10 +
    hematocrit < 30 % 10 + PaO2 < 60 mm Hg 10 + pleural effusion 10.

    Source: Fine MJ et al., N Engl J Med 1997;336:243-50; MDCalc "PSI/PORT Score: Pneumonia
    Severity Index for CAP" (calc/33).
    """
    age = x.quantity(x.key("age"), "age")
    sex = x.choice(x.key("sex"), _SEX)
    rr = x.quantity(x.key("respiratory rate"), "rate", range_key="respiratory_rate")
    sbp = x.quantity(x.key("Systolic Blood Pressure"), "pressure", range_key="systolic_bp")
    temp = x.quantity(x.key("Temperature"), "temperature", range_key="temperature")
    hr = x.quantity(x.key("Heart Rate or Pulse"), "rate", range_key="heart_rate")
    ph = x.number(x.key("pH"), range_key="ph")
    bun = x.quantity(x.key("Blood Urea Nitrogen (BUN)", "BUN"), "bun")
    na = x.quantity(x.key("Sodium"), "sodium")
    glu = x.quantity(x.key("Glucose"), "glucose")
    hct = x.quantity(x.key("Hematocrit"), "percent", range_key="hematocrit")
    pao2 = _pao2(x)
    age, sex, rr, sbp, temp, hr = x.require(age, sex, rr, sbp, temp, hr)[:]
    ph, bun, na, glu, hct, pao2 = x.require(ph, bun, na, glu, hct, pao2)[:]

    score = age - 10 if sex == "F" else age
    score += 10 if _any(x, "Nursing home resident") else 0
    score += 30 if _present(x, "Neoplastic disease") else 0
    score += 20 if _present(x, "Liver disease severity", "Liver disease history") else 0
    score += 10 if _any(x, "Congestive Heart Faliure", "Congestive Heart Failure") else 0
    score += 10 if _any(x, "Cerebrovascular disease history") else 0
    score += 10 if _present(x, "Renal disease", "Renal disease history") else 0
    score += 20 if _any(x, "Altered mental status") else 0
    score += 20 if rr >= 30 else 0
    score += 20 if sbp < 90 else 0
    score += 15 if (temp < 35 or temp >= 40) else 0
    score += 10 if hr >= 125 else 0
    score += 30 if ph < 7.35 else 0
    score += 20 if bun >= 30 else 0
    score += 20 if na < 130 else 0
    score += 10 if glu >= 250 else 0
    score += 10 if hct < 30 else 0
    score += 10 if pao2 < 60 else 0
    score += 10 if _any(x, "Pleural effusion on x-ray") else 0
    return int(round(score))


# ------------------------------------------------------------------------------------------------
def _dose(x: Inputs, *names: str) -> float:
    """Vasopressor dose in mcg/kg/min; not mentioned = not given (0)."""
    v = x.quantity(x.key(*names), "vasopressor", required=False, range_key="vasopressor")
    return 0.0 if v is None else v


@register(43, "Sequential Organ Failure Assessment (SOFA) Score", "integer")
def sofa(x: Inputs) -> int:
    """SOFA = sum of six organ scores (0-4 each).

    Respiration PaO2/FiO2 (mm Hg): >=400 0, 300-399 1, 200-299 2 (also <200 when not ventilated),
    100-199 with mechanical ventilation (incl. CPAP) 3, <100 with ventilation 4. Coagulation
    platelets (x10^3/uL): >=150 0, 100-149 1, 50-99 2, 20-49 3, <20 4. Liver bilirubin (mg/dL):
    <1.2 0, 1.2-1.9 1, 2.0-5.9 2, 6.0-11.9 3, >=12 4. Cardiovascular: no hypotension 0;
    MAP < 70 mm Hg 1; dopamine <=5 or dobutamine (any dose) 2; dopamine >5, epinephrine <=0.1 or
    norepinephrine <=0.1 3; dopamine >15, epinephrine >0.1 or norepinephrine >0.1 4 (mcg/kg/min).
    CNS GCS: 15 0, 13-14 1, 10-12 2, 6-9 3, <6 4. Renal creatinine (mg/dL): <1.2 0, 1.2-1.9 1,
    2.0-3.4 2, 3.5-4.9 or urine output <500 mL/day 3, >=5.0 or urine output <200 mL/day 4.
    Hypotension is a MAP < 70 computed from SBP/DBP or a reported hypotension (worst value).

    Source: Vincent JL et al., Intensive Care Med 1996;22:707-10; MDCalc "Sequential Organ
    Failure Assessment (SOFA) Score" (calc/691).
    """
    pao2 = _pao2(x)
    fio2 = _fio2_percent(x)
    gcs = _gcs(x)
    bili = x.quantity(x.key("Bilirubin"), "bilirubin")
    plt = x.quantity(x.key("Platelet count"), "count_per_ul", range_key="platelets")
    cr_key = x.key("creatinine", "Creatinine")
    cr = x.quantity(cr_key, "creatinine", required=False)
    uo = x.quantity(x.key("Urine Output"), "urine_output", required=False, range_key="urine_output")
    renal_decided = cr is not None or (uo is not None and uo < 200)  # UO < 200 mL/day is already 4
    if not renal_decided:
        x._note(x.missing, cr_key)
    pao2, fio2, gcs, bili, plt, _ = x.require(pao2, fio2, gcs, bili, plt, True if renal_decided else None)[:]

    vent = _any(x, "On mechanical ventilation", "Continous positive airway pressure",
                "Continuous positive airway pressure")
    pf = pao2 / (fio2 / 100.0)
    if vent and pf < 100:
        resp = 4
    elif vent and pf < 200:
        resp = 3
    elif pf < 300:
        resp = 2
    elif pf < 400:
        resp = 1
    else:
        resp = 0

    p = plt / 1000.0
    coag = 0 if p >= 150 else 1 if p >= 100 else 2 if p >= 50 else 3 if p >= 20 else 4
    liver = 0 if bili < 1.2 else 1 if bili < 2.0 else 2 if bili < 6.0 else 3 if bili < 12.0 else 4
    g = round(gcs)
    cns = 0 if g >= 15 else 1 if g >= 13 else 2 if g >= 10 else 3 if g >= 6 else 4

    dop = _dose(x, "DOPamine", "Dopamine")
    dob = _dose(x, "DOBUTamine", "Dobutamine")
    epi = _dose(x, "EPINEPHrine", "Epinephrine")
    norepi = _dose(x, "norEPINEPHrine", "Norepinephrine")
    mean_ap = _map(x, required=False)
    hypotension = _any(x, "Hypotension") or (mean_ap is not None and mean_ap < 70)
    if dop > 15 or epi > 0.1 or norepi > 0.1:
        cv = 4
    elif dop > 5 or epi > 0 or norepi > 0:
        cv = 3
    elif dop > 0 or dob > 0:
        cv = 2
    elif hypotension:
        cv = 1
    else:
        cv = 0

    renal = 0
    if cr is not None:
        renal = 0 if cr < 1.2 else 1 if cr < 2.0 else 2 if cr < 3.5 else 3 if cr < 5.0 else 4
    if uo is not None:
        renal = max(renal, 4 if uo < 200 else 3 if uo < 500 else 0)
    return resp + coag + liver + cv + cns + renal


# ------------------------------------------------------------------------------------------------
@register(51, "SIRS Criteria", "integer")
def sirs(x: Inputs) -> int:
    """Number of SIRS criteria met (0-4): temperature > 38 C or < 36 C; heart rate > 90/min;
    respiratory rate > 20/min or PaCO2 < 32 mm Hg; WBC > 12,000/uL or < 4,000/uL or > 10 % bands.

    Source: Bone RC et al., ACCP/SCCM Consensus Conference, Chest 1992;101:1644-55; MDCalc "SIRS,
    Sepsis, and Septic Shock Criteria" (calc/1096).
    """
    temp = x.quantity(x.key("Temperature"), "temperature", range_key="temperature")
    hr = x.quantity(x.key("Heart Rate or Pulse"), "rate", range_key="heart_rate")
    paco2 = _paco2(x, required=False)
    rr_key = x.key("respiratory rate")
    rr = x.quantity(rr_key, "rate", required=False, range_key="respiratory_rate")
    bands = _any(x, "Band form > 10%", "Bands > 10%")
    wbc_key = x.key("White blood cell count")
    wbc = x.quantity(wbc_key, "count_per_ul", required=not bands, range_key="wbc")
    resp_met = (rr is not None and rr > 20) or (paco2 is not None and paco2 < 32)
    if rr is None and not resp_met:  # respiratory criterion undecided
        x._note(x.missing, rr_key)
    temp, hr, _, _ = x.require(temp, hr, rr if not resp_met else True, wbc if not bands else True)[:]
    count = 0
    count += 1 if (temp > 38 or temp < 36) else 0
    count += 1 if hr > 90 else 0
    count += 1 if resp_met else 0
    count += 1 if (bands or (wbc is not None and (wbc > 12000 or wbc < 4000))) else 0  # wbc required unless bands
    return count


# ------------------------------------------------------------------------------------------------
@register(45, "CURB-65 Score for Pneumonia Severity", "integer")
def curb_65(x: Inputs) -> int:
    """CURB-65 = confusion 1 + BUN > 19 mg/dL (urea > 7 mmol/L) 1 + respiratory rate >= 30 1
    + SBP < 90 or DBP <= 60 mm Hg 1 + age >= 65 1.

    Source: Lim WS et al., Thorax 2003;58:377-82; MDCalc "CURB-65 Score for Pneumonia Severity"
    (calc/324).
    """
    age = x.quantity(x.key("age"), "age")
    bun = x.quantity(x.key("Blood Urea Nitrogen (BUN)", "BUN"), "bun")
    rr = x.quantity(x.key("respiratory rate"), "rate", range_key="respiratory_rate")
    sbp = x.quantity(x.key("Systolic Blood Pressure"), "pressure", range_key="systolic_bp")
    dbp = x.quantity(x.key("Diastolic Blood Pressure"), "pressure", range_key="diastolic_bp")
    age, bun, rr, sbp, dbp = x.require(age, bun, rr, sbp, dbp)[:]
    score = 1 if _any(x, "Confusion") else 0
    score += 1 if bun > 19 else 0
    score += 1 if rr >= 30 else 0
    score += 1 if (sbp < 90 or dbp <= 60) else 0
    score += 1 if age >= 65 else 0
    return score
