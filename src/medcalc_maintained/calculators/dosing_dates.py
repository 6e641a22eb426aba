"""Drug-dose conversions (steroid equivalence, morphine milligram equivalents) and pregnancy dating.

Pregnancy dating follows Naegele's rule generalised to the cycle length (ACOG Committee Opinion
No. 700, 2017; MDCalc "Pregnancy Due Dates Calculator"): ovulation/conception is assumed
14 days before the next expected menses, i.e. at LMP + (cycle length - 14) days, and the due date
is conception + 266 days = LMP + 280 days + (cycle length - 28) days.
"""

from __future__ import annotations

import datetime as dt

from medcalc_maintained.calculators.base import Inputs, _as_number, register
from medcalc_maintained.core import units as U

# --- steroid conversion -----------------------------------------------------------------------

# Anti-inflammatory (glucocorticoid) equivalent doses in mg, as tabulated by MDCalc's Steroid
# Conversion Calculator (Liu D et al., Allergy Asthma Clin Immunol 2013;9:30, Table 1).
_STEROID_EQUIVALENT_MG = {
    "betamethasone iv": 0.75,
    "cortisone po": 25.0,
    "dexamethasone iv": 0.75,
    "dexamethasone po": 0.75,
    "hydrocortisone iv": 20.0,
    "hydrocortisone po": 20.0,
    "methylprednisolone iv": 4.0,
    "methylprednisolone po": 4.0,
    "prednisolone po": 5.0,
    "prednisone po": 5.0,
    "triamcinolone iv": 4.0,
}


def _steroid_key(name: object) -> str:
    return " ".join(str(name).strip().lower().split())


@register(24, "Steroid Conversion Calculator", "decimal")
def steroid_conversion(x: Inputs) -> float:
    """Equivalent dose = input dose (mg) x equivalent(target) / equivalent(input).

    Equivalent doses (mg): betamethasone IV 0.75; cortisone PO 25; dexamethasone IV/PO 0.75;
    hydrocortisone IV/PO 20; methylprednisolone IV/PO 4; prednisolone PO 5; prednisone PO 5;
    triamcinolone IV 4. Source: MDCalc "Steroid Conversion Calculator"; Liu D et al. A practical
    guide to the monitoring and management of the complications of systemic corticosteroid
    therapy. Allergy Asthma Clin Immunol 2013;9:30.
    ``input steroid`` is ``[name, dose, unit]``; ``target steroid`` is a name.
    """
    target = x.choice("target steroid", _STEROID_EQUIVALENT_MG)
    dose_mg = source_eq = None
    if not x.has("input steroid"):
        x._note(x.missing, "input steroid")
    else:
        v = x.raw("input steroid")
        if isinstance(v, (list, tuple)) and len(v) == 3:
            source_eq = _STEROID_EQUIVALENT_MG.get(_steroid_key(v[0]))
            num = _as_number(v[1])
            if source_eq is not None and num is not None:
                try:
                    dose_mg = U.to_canonical("drug_mass", num, str(v[2]))
                except U.UnknownUnit:
                    dose_mg = None
        if dose_mg is None or source_eq is None:
            x._note(x.invalid, "input steroid")
    target, dose_mg, source_eq = x.require(target, dose_mg, source_eq)[:]
    return dose_mg * target / source_eq


# --- morphine milligram equivalents -----------------------------------------------------------

# CDC 2022 MME conversion factors (Dowell D et al. MMWR Recomm Rep 2022;71(No. RR-3), Table 1),
# per mg of daily dose, except fentanyl: transdermal per mcg/hr of patch strength (2.4), buccal /
# sublingual per mcg (0.13, the factor MDCalc and the CDC conversion file use for buccal tablets).
# Methadone uses the single 2022 factor 4.7; the pre-2022 CDC guidance used dose-tiered factors
# (4 for 1-20 mg/day, 8 for 21-40, 10 for 41-60, 12 for >=61 mg/day), which give different MME.
_MME_FACTOR = {
    "codeine": 0.15,
    "hydrocodone": 1.0,
    "hydromorphone": 5.0,
    "methadone": 4.7,
    "morphine": 1.0,
    "oxycodone": 1.5,
    "oxymorphone": 3.0,
    "tapentadol": 0.4,
    "tramadol": 0.2,
    "fentanyl buccal": 0.13,  # per mcg
    "fentanyl patch": 2.4,  # per mcg/hr
}
_MME_ALIASES = {
    "fentanyl transdermal": "fentanyl patch",
    "fentanyl sublingual": "fentanyl buccal",
}


def _opioid_key(name: str) -> str:
    k = " ".join(name.strip().lower().split())
    return _MME_ALIASES.get(k, k)


def _fentanyl_patch_mcg_per_hr(x: Inputs, key: str) -> float | None:
    """Patch strength in mcg/hr. Patches are only labelled in mcg/hr, so a bare mass unit is read
    as the label strength: ``µg``/``mcg`` silently, ``mg`` (impossible for a patch) flagged as
    implausible while still used."""
    v = x.raw(key)
    num = _as_number(v[0]) if isinstance(v, (list, tuple)) and len(v) == 2 else None
    if num is None:
        x._note(x.invalid, key)
        return None
    unit = U.normalise_unit(str(v[1]))
    if unit in ("ug", "mcg"):
        return num
    if unit == "mg":
        x._note(x.implausible, key)
        return num
    try:
        return U.to_canonical("patch_rate", num, str(v[1]))
    except U.UnknownUnit:
        x._note(x.invalid, key)
        return None


@register(49, "Morphine Milligram Equivalents (MME) Calculator", "decimal")
def morphine_milligram_equivalents(x: Inputs) -> float:
    """MME/day = sum over opioids of dose x doses per day x conversion factor.

    Factors (CDC 2022, as used by MDCalc "Morphine Milligram Equivalents (MME) Calculator"):
    codeine 0.15, hydrocodone 1, hydromorphone 5, methadone 4.7, morphine 1, oxycodone 1.5,
    oxymorphone 3, tapentadol 0.4, tramadol 0.2 (per mg); fentanyl patch 2.4 (per mcg/hr);
    fentanyl buccal 0.13 (per mcg). Source: Dowell D et al. CDC Clinical Practice Guideline for
    Prescribing Opioids for Pain - United States, 2022. MMWR Recomm Rep 2022;71(3):1-95.
    Note: the pre-2022 CDC tiered methadone factors (4/8/10/12 by daily dose) are NOT used, and
    the 2022 hydromorphone factor is 5 (was 4). Entities: ``<Opioid> Dose`` [dose, unit] and
    ``<Opioid> Dose Per Day`` [n, 'per day'].
    """
    return mme_total(x, lambda name, daily: _MME_FACTOR.get(name))


def mme_total(x: Inputs, factor_of) -> float:
    """Sum of daily dose x factor, with ``factor_of(opioid, daily dose)`` giving the conversion
    factor (``None`` for an unknown opioid); shared by the default and the published alternatives
    (``calculators/alternatives.py``)."""
    drugs: dict[str, str] = {}
    for key in x.entities:
        k = str(key).strip()
        if k.lower().endswith(" dose per day"):
            continue
        if k.lower().endswith(" dose"):
            drugs[k] = k[: -len(" dose")]
    for key in x.entities:
        k = str(key).strip()
        if k.lower().endswith(" dose per day") and k[: -len(" per day")] not in drugs:
            x._note(x.missing, k[: -len(" per day")])
    if not drugs:
        x._note(x.missing, "<opioid Dose>")
        x.require(None)
    total = 0.0
    ok = True
    for key, drug in drugs.items():
        name = _opioid_key(drug)
        if name not in _MME_FACTOR:
            x._note(x.invalid, key)
            ok = False
            continue
        per_day = x.quantity(f"{key} Per Day", "per_day", range_key="doses_per_day")
        if name == "fentanyl patch":
            dose = _fentanyl_patch_mcg_per_hr(x, key)
        else:
            dose = x.quantity(key, "drug_mass")
            if dose is not None and name == "fentanyl buccal":
                dose *= 1000.0  # mg -> mcg, the unit its factor applies to
        if dose is None or per_day is None:
            ok = False
            continue
        factor = factor_of(name, dose * per_day)
        if factor is None:
            x._note(x.invalid, key)
            ok = False
            continue
        total += dose * per_day * factor
    if not ok:
        x.require(None)
    return total


# --- pregnancy dating -------------------------------------------------------------------------

def lmp_date(x: Inputs) -> dt.date:
    """The first day of the last menstrual period (required): the start of every LMP-based date."""
    lmp = x.date("Last menstrual date")
    (lmp,) = x.require(lmp)[:]
    return lmp


def lmp_and_cycle(x: Inputs) -> tuple[dt.date, float]:
    """The LMP and the cycle length in whole days (both required; both read before either is
    refused, so a row missing both names both)."""
    lmp = x.date("Last menstrual date")
    cycle = x.number("cycle length", range_key="menstrual_cycle_length")
    lmp, cycle = x.require(lmp, cycle)[:]
    if cycle != int(cycle):
        x._note(x.invalid, "cycle length")
        x.require(None)
    return lmp, cycle


@register(13, "Estimated Due Date", "date")
def estimated_due_date(x: Inputs) -> dt.date:
    """Naegele's rule adjusted for cycle length: EDD = LMP + 280 days + (cycle length - 28) days.

    A longer cycle means later ovulation and a later due date; a shorter cycle an earlier one.
    Source: MDCalc "Pregnancy Due Dates Calculator"; ACOG Committee Opinion No. 700, Methods for
    estimating the due date, Obstet Gynecol 2017;129:e150-4.
    """
    lmp, cycle = lmp_and_cycle(x)
    return lmp + dt.timedelta(days=280 + int(cycle) - 28)


@register(68, "Estimated of Conception", "date")
def estimated_conception_date(x: Inputs) -> dt.date:
    """Estimated conception (ovulation) date = LMP + (cycle length - 14) days, i.e. LMP + 2 weeks
    for a 28-day cycle; equals the cycle-adjusted due date minus 266 days.

    Source: MDCalc "Pregnancy Due Dates Calculator"; ACOG Committee Opinion No. 700 (2017)
    (conception ~14 days before the next expected menses; EDD = conception + 266 days).
    """
    lmp, cycle = lmp_and_cycle(x)
    return lmp + dt.timedelta(days=int(cycle) - 14)


@register(69, "Estimated Gestational Age", "integer")
def estimated_gestational_age(x: Inputs) -> tuple[int, int]:
    """Gestational age = (current date - LMP) in completed weeks and days.

    Source: ACOG Committee Opinion No. 700 (2017): gestational age is counted from the first day
    of the last menstrual period; MDCalc "Pregnancy Due Dates Calculator". Returns (weeks, days).
    """
    lmp = x.date("Last menstrual date")
    today = x.date("Current Date")
    lmp, today = x.require(lmp, today)[:]
    days = (today - lmp).days
    if days < 0:
        x._note(x.invalid, "Current Date")
        x.require(None)
    return days // 7, days % 7
