from medcalc_maintained.calculators import compute


def _v(cid, entities):
    return compute(cid, entities).value


# --- 24 Steroid conversion (equivalents: dexa 0.75, hydrocortisone 20, MP 4, pred 5, cortisone 25)

def test_steroid_dexamethasone_to_prednisolone():
    # 7.96 mg * 5 / 0.75 = 53.067
    r = _v(24, {"input steroid": ["Dexamethasone PO", 7.96, "mg"], "target steroid": "PrednisoLONE PO"})
    assert r == "53.067"


def test_steroid_hydrocortisone_to_dexamethasone():
    # 160 mg * 0.75 / 20 = 6
    assert _v(24, {"input steroid": ["Hydrocortisone PO", 160, "mg"], "target steroid": "Dexamethasone PO"}) == "6"
    # cortisone 100 mg * 20 / 25 = 80 mg hydrocortisone IV
    assert _v(24, {"input steroid": ["Cortisone PO", 100, "mg"], "target steroid": "Hydrocortisone IV"}) == "80"


def test_steroid_unit_conversion_and_missing():
    # 0.04 g = 40 mg prednisone; 40 * 4 / 5 = 32 mg methylprednisolone
    r = _v(24, {"input steroid": ["PredniSONE PO", 0.04, "g"], "target steroid": "MethylPrednisoLONE IV"})
    assert r == "32"
    r = compute(24, {"input steroid": ["PredniSONE PO", 40, "mg"]})
    assert r.value is None and r.missing == ("target steroid",)
    r = compute(24, {"input steroid": ["Unobtainium PO", 40, "mg"], "target steroid": "PredniSONE PO"})
    assert r.value is None and r.invalid == ("input steroid",)


# --- 49 MME (CDC 2022 factors) ----------------------------------------------------------------

def test_mme_mixed_with_buccal_fentanyl_ug():
    # tapentadol 50*1*0.4 = 20; tramadol 50*1*0.2 = 10; fentanyl buccal 20 ug*2*0.13 = 5.2; total 35.2
    e = {
        "Tapentadol Dose": [50, "mg"], "Tapentadol Dose Per Day": [1, "per day"],
        "TraMADol Dose": [50, "mg"], "TraMADol Dose Per Day": [1, "per day"],
        "FentaNYL buccal Dose": [20, "µg"], "FentaNYL buccal Dose Per Day": [2, "per day"],
    }
    assert _v(49, e) == "35.2"


def test_mme_methadone_single_2022_factor():
    # methadone 30 mg * 2/day = 60 mg/day * 4.7 = 282 (pre-2022 tiered factor 10 would give 600)
    e = {"Methadone Dose": [30, "mg"], "Methadone Dose Per Day": [2, "per day"]}
    assert _v(49, e) == "282"
    # hydromorphone 4 mg * 4/day * 5 = 80; plus codeine 30 mg * 4 * 0.15 = 18; total 98
    e = {"HYDROmorphone Dose": [4, "mg"], "HYDROmorphone Dose Per Day": [4, "per day"],
         "Codeine Dose": [30, "mg"], "Codeine Dose Per Day": [4, "per day"]}
    assert _v(49, e) == "98"


def test_mme_fentanyl_patch_and_unit_conversion():
    # patch 25 mcg/hr * 1 * 2.4 = 60
    assert _v(49, {"FentANYL patch Dose": [25, "mcg/hr"], "FentANYL patch Dose Per Day": [1, "per day"]}) == "60"
    # a patch labelled 'mg' is read as the mcg/hr label strength (25 -> 60) and flagged implausible
    r = compute(49, {"FentANYL patch Dose": [25, "mg"], "FentANYL patch Dose Per Day": [1, "per day"]})
    assert r.value == "60" and r.implausible == ("FentANYL patch Dose",)
    # buccal fentanyl 0.1 mg = 100 mcg * 1 * 0.13 = 13
    assert _v(49, {"FentaNYL buccal Dose": [0.1, "mg"], "FentaNYL buccal Dose Per Day": [1, "per day"]}) == "13"


def test_mme_missing_inputs():
    r = compute(49, {"OxyCODONE Dose": [10, "mg"]})
    assert r.value is None and r.missing == ("OxyCODONE Dose Per Day",)
    assert compute(49, {}).value is None
    # oxycodone 10 mg * 3/day * 1.5 = 45
    assert _v(49, {"OxyCODONE Dose": [10, "mg"], "OxyCODONE Dose Per Day": [3, "per day"]}) == "45"


# --- 13 Estimated due date: LMP + 280 + (cycle - 28) ------------------------------------------

def test_due_date_28_day_cycle():
    # 01/01/2021 + 273 days (Jan..Sep 2021) = 10/01/2021; + 7 more = 280 days -> 10/08/2021
    assert _v(13, {"cycle length": 28, "Last menstrual date": "01/01/2021"}) == "10/08/2021"


def test_due_date_cycle_adjustment_and_missing():
    # cycle 32: 10/08/2021 + 4 = 10/12/2021; cycle 22: 10/08/2021 - 6 = 10/02/2021
    assert _v(13, {"cycle length": 32, "Last menstrual date": "01/01/2021"}) == "10/12/2021"
    assert _v(13, {"cycle length": 22, "Last menstrual date": "01/01/2021"}) == "10/02/2021"
    r = compute(13, {"Last menstrual date": "01/01/2021"})
    assert r.value is None and r.missing == ("cycle length",)


# --- 68 Estimated conception: LMP + (cycle - 14) ----------------------------------------------

def test_conception_28_day_cycle():
    # 01/01/2021 + (28 - 14) = + 14 days = 01/15/2021
    assert _v(68, {"cycle length": 28, "Last menstrual date": "01/01/2021"}) == "01/15/2021"


def test_conception_cycle_adjustment_and_invalid():
    # cycle 35: + 21 days = 01/22/2021; cycle 24: + 10 days = 01/11/2021; month wrap 12/25/2020 + 14 = 01/08/2021
    assert _v(68, {"cycle length": 35, "Last menstrual date": "01/01/2021"}) == "01/22/2021"
    assert _v(68, {"cycle length": 24, "Last menstrual date": "01/01/2021"}) == "01/11/2021"
    assert _v(68, {"cycle length": 28, "Last menstrual date": "12/25/2020"}) == "01/08/2021"
    r = compute(68, {"cycle length": 28, "Last menstrual date": "2021-01-01"})
    assert r.value is None and r.invalid == ("Last menstrual date",)


# --- 69 Gestational age = (current - LMP) as weeks, days --------------------------------------

def test_gestational_age_days_only():
    # 03/29/2020 - 03/23/2020 = 6 days = 0 weeks 6 days
    r = compute(69, {"Current Date": "03/29/2020", "Last menstrual date": "03/23/2020"})
    assert r.value == "('0 weeks', '6 days')"


def test_gestational_age_weeks_and_errors():
    # 02/14/2024 -> 03/14/2024 = 29 days (leap Feb); -> 05/14 = +31+30 = 90; -> 05/23 = 99 days = 14 w 1 d
    r = compute(69, {"Current Date": "05/23/2024", "Last menstrual date": "02/14/2024"})
    assert r.value == "('14 weeks', '1 days')"
    r = compute(69, {"Current Date": "01/01/2024", "Last menstrual date": "02/14/2024"})
    assert r.value is None and r.invalid == ("Current Date",)
    r = compute(69, {"Last menstrual date": "02/14/2024"})
    assert r.value is None and r.missing == ("Current Date",)
