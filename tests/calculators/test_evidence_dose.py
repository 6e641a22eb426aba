"""Dosed drugs read by the evidence verifier (calculators/evidence_dose.py through evidence.verify): the steroid of
the steroid conversion, the steroid it converts to, and the opioids of the MME; each rule on a made-up note where it
fires and on a near one where it must not."""

from __future__ import annotations

import pytest

from medcalc_maintained.calculators.evidence import RULES, verify
from medcalc_maintained.calculators.evidence_dose import opioid_value


def _whole(text: str, name: str, value) -> dict:
    return {"name": name, "value": value, "unit": None, "evidence": {"start": 0, "end": len(text), "text": text}}


def _steroid(text: str, value):
    return verify(24, _whole(text, "input steroid", value), text)


def _opioids(text: str, value):
    return verify(49, _whole(text, "opioids", value), text)


# --------------------------------------------------------------------------------------------
# input steroid: [drug with route, dose, unit]

@pytest.mark.parametrize("text, value", [
    ("She has been taking 40 mg of oral prednisone daily for a month", ["Prednisone PO", 40, "mg"]),
    ("He received methylprednisolone 125 mg IV in the emergency department", ["MethylPrednisoLONE IV", 125, "mg"]),
    ("Solu-Medrol 60 mg was given every 6 hours", ["MethylPrednisoLONE IV", 60, "mg"]),        # the brand states IV
    ("Her home medications include Deltasone 20 mg", ["PredniSONE PO", 20, "mg"]),            # the brand states PO
    ("Patient has taken 1 g of hydrocortisone PO", ["Hydrocortisone PO", 1000, "mg"]),       # the same dose in g
])
def test_a_named_steroid_with_its_dose_and_route_supports(text, value):
    v = _steroid(text, value)
    assert v.supports, v


def test_a_steroid_without_a_route_is_read_only_where_the_conversion_does_not_depend_on_it():
    v = _steroid("She was started on dexamethasone 4 mg for cerebral edema", ["Dexamethasone PO", 4, "mg"])
    assert v.supports and "no route" in v.reason and "IV, PO" in v.reason, v


@pytest.mark.parametrize("text, value, rule", [
    ("She has been taking 40 mg of oral prednisone daily", ["Prednisone PO", 20, "mg"], "value-not-printed"),
    ("She has been taking 40 mcg of oral prednisone daily", ["Prednisone PO", 40, "mg"], "unit-mismatch"),
    ("He received methylprednisolone 125 mg IV", ["MethylPrednisoLONE PO", 125, "mg"], "route-mismatch"),
    ("Solu-Medrol 60 mg was given", ["MethylPrednisoLONE PO", 60, "mg"], "route-mismatch"),
    ("She takes 40 mg of prednisone and 4 mg of dexamethasone", ["Dexamethasone PO", 40, "mg"], "value-not-printed"),
    ("She takes 40 mg of prednisone", ["Dexamethasone PO", 40, "mg"], "not-named"),
    ("She takes no prednisone 40 mg", ["Prednisone PO", 40, "mg"], "negated"),
    ("A low-dose dexamethasone suppression test with 1 mg was done", ["Dexamethasone PO", 1, "mg"], "not-named"),
])
def test_a_steroid_the_quote_does_not_dose_as_recorded_is_rejected(text, value, rule):
    v = _steroid(text, value)
    assert not v.supports and v.rule == rule and rule in RULES, v


# --------------------------------------------------------------------------------------------
# target steroid: the steroid a text converts to (stage certify reads it in the question)

QUESTION = "Based on the patient's dose of Dexamethasone PO, what is the equivalent dosage in mg of PrednisoLONE PO?"


def test_the_target_is_the_steroid_named_after_the_cue_of_conversion():
    assert verify(24, _whole(QUESTION, "target steroid", "PrednisoLONE PO"), QUESTION).supports
    # the steroid converted from is named too, but it is not the target
    v = verify(24, _whole(QUESTION, "target steroid", "Dexamethasone PO"), QUESTION)
    assert not v.supports and v.rule == "value-not-printed", v
    q = QUESTION.replace("PrednisoLONE PO", "Hydrocortisone IV")
    v = verify(24, _whole(q, "target steroid", "Hydrocortisone PO"), q)
    assert not v.supports and v.rule == "route-mismatch", v
    q = "Convert her prednisone to dexamethasone."
    assert verify(24, _whole(q, "target steroid", "Dexamethasone IV"), q).supports
    q = "She takes prednisone and dexamethasone."  # no conversion named
    v = verify(24, _whole(q, "target steroid", "Dexamethasone IV"), q)
    assert not v.supports and v.rule == "not-named", v


# --------------------------------------------------------------------------------------------
# opioids: [[drug, dose, unit, doses per day], ...]

LIST = "The patient takes 60 mg of HYDROmorphone 1 time a day, 30 mg of Tapentadol 3 times a day."


@pytest.mark.parametrize("text, value", [
    (LIST, [["HYDROmorphone", 60, "mg", 1], ["Tapentadol", 30, "mg", 3]]),
    ("Home medications: oxycodone 10 mg every 6 hours and MS Contin 30 mg twice daily",
     [["OxyCODONE", 10, "mg", 4], ["Morphine", 30, "mg", 2]]),
    ("He uses a fentanyl patch 25 mcg/hr once daily and tramadol 50 mg TID",
     [["FentANYL patch", 25, "µg/hr", 1], ["TraMADol", 50, "mg", 3]]),
    ("Codeine 30 mg q4h", [["Codeine", 30, "mg", 6]]),
])
def test_every_opioid_named_with_its_dose_and_doses_a_day_supports(text, value):
    v = _opioids(text, value)
    assert v.supports, v


@pytest.mark.parametrize("text, value, rule", [
    (LIST, [["HYDROmorphone", 60, "mg", 2], ["Tapentadol", 30, "mg", 3]], "value-not-printed"),   # 1 a day, not 2
    (LIST, [["HYDROmorphone", 30, "mg", 1], ["Tapentadol", 30, "mg", 3]], "value-not-printed"),   # 30 mg is tapentadol's
    (LIST, [["HYDROmorphone", 60, "µg", 1], ["Tapentadol", 30, "mg", 3]], "unit-mismatch"),
    (LIST, [["HYDROmorphone", 60, "mg", 1]], "unlisted-drug"),                                     # tapentadol left out
    (LIST, [["HYDROmorphone", 60, "mg", 1], ["Tapentadol", 30, "mg", 3], ["Codeine", 30, "mg", 1]], "not-named"),
    ("He takes oxycodone 10 mg for pain", [["OxyCODONE", 10, "mg", 4]], "frequency-not-stated"),
    ("He uses fentanyl 25 mcg daily", [["FentANYL patch", 25, "µg", 1]], "route-not-stated"),       # patch or buccal?
    ("She received morphine 4 mg IV every 4 hours", [["Morphine", 4, "mg", 6]], "route-mismatch"),   # factors are oral
])
def test_an_opioid_list_the_quote_does_not_state_whole_is_rejected(text, value, rule):
    v = _opioids(text, value)
    assert not v.supports and v.rule == rule and rule in RULES, v


def test_the_opioid_list_is_assembled_from_the_dose_and_dose_per_day_entities():
    ents = {"OxyCODONE Dose": [60, "mg"], "OxyCODONE Dose Per Day": [1, "per day"], "Codeine Dose": [10, "mg"],
            "Codeine Dose Per Day": [2, "per day"], "age": [40, "years"]}
    assert opioid_value(ents) == [["OxyCODONE", 60, "mg", 1], ["Codeine", 10, "mg", 2]]
    assert opioid_value({"age": [40, "years"]}) is None
