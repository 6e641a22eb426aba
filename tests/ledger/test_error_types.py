"""Error types from evidence: the rule on synthetic cases, and the re-derived types of the campaign."""

from __future__ import annotations

from medcalc_maintained.ledger.error_types import Evidence, classify_error, explain, gather, named_inputs

MAP = {"Systolic Blood Pressure": [120, "mm Hg"], "Diastolic Blood Pressure": [60, "mm Hg"]}  # MAP 80


def _type(cid, entities, old, new, otype, **kw):
    status = "abstain" if new == "N/A" else "corrected"
    ev = gather(cid, entities, old, new, otype, **kw)
    return classify_error(status, kw.get("rationale", ""), kw.get("finding"), ev), ev


def test_status_and_timepoint_rules():
    assert classify_error("confirmed", "", "agrees", Evidence()) is None
    assert classify_error("abstain", "No EKG results", None, Evidence()) == "unanswerable"
    assert classify_error("abstain", "multiple values over the time course", None, Evidence()) == "underspecified"
    assert classify_error("corrected", "Using the most recent values from May 20", "agrees", Evidence(default_old=True)) \
        == "underspecified"


def test_definition_choice_is_underspecified():
    # methadone 30 mg/day: 2022 factors 141 (declared), 2016 tiers 240
    e = {"Methadone Dose": [10, "mg"], "Methadone Dose Per Day": [3, "per day"]}
    t, ev = _type(49, e, "141", "240", "decimal")
    assert t == "underspecified" and ev.default_old and ev.alternatives_new == ["cdc_2016"]
    # the old label followed LMP + 14 (alternative), the new one the cycle-adjusted default
    t, ev = _type(68, {"Last menstrual date": "12/17/2009", "cycle length": 21}, "12/31/2009", "12/24/2009", "date")
    assert t == "underspecified" and ev.alternatives_old == ["lmp_plus_14"] and ev.default_new
    assert any("lmp_plus_14" in line for line in explain(ev))


def test_wrong_logic_is_aggregation():
    t, ev = _type(5, MAP, "90", "80", "decimal")
    assert t == "aggregation" and ev.default_old is False and ev.default_new
    # a new label reached only by an alternative, the old by nothing: the old logic was wrong
    e = {"Last menstrual date": "03/01/2024", "cycle length": 35}
    t, _ = _type(13, e, "11/29/2024", "12/15/2024", "date")  # 12/15 = calendar rule + 7 days
    assert t == "aggregation"


def test_extraction_needs_an_input_shown_wrong():
    # entities reproduce the old label; nothing names an input -> other, not extraction
    t, ev = _type(5, MAP, "80", "85", "decimal")
    assert t == "other" and ev.default_old and not ev.wrong_inputs
    # the rationale names an input of the row
    t, ev = _type(5, MAP, "80", "85", "decimal", rationale="the systolic reading was 135")
    assert t == "extraction" and ev.wrong_inputs == ["rationale names Systolic Blood Pressure"]
    # the recompute flagged an implausible input
    t, _ = _type(5, MAP, "80", "85", "decimal", finding="implausible_input")
    assert t == "extraction"
    # a single boolean flip reproduces the new label (hypertension entered as absent)
    cha = {"age": [70, "years"], "sex": "Female", "Hypertension history": False}
    t, ev = _type(4, cha, "2", "3", "integer")
    assert t == "extraction" and "flipping Hypertension history alone" in ev.wrong_inputs[0]
    # an error finding of the offline checks
    t, ev = _type(5, MAP, "80", "85", "decimal", error_findings=["portal hypertension entered as hypertension"])
    assert t == "extraction" and ev.wrong_inputs == ["check: portal hypertension entered as hypertension"]
    # without evidence only the recompute finding is known
    assert classify_error("corrected", "", "agrees") == "other"
    assert classify_error("corrected", "", "aggregation_mismatch") == "aggregation"


def test_named_inputs_ignore_generic_words():
    ents = {"Hypertension history": True, "Liver disease criteria for the HAS-BLED rule": False, "age": [70, "years"]}
    assert named_inputs("no liver disease in the history", ents) == ["Liver disease criteria for the HAS-BLED rule"]
    assert named_inputs("history of the rule, criteria", ents) == []
