"""Error types from evidence: the rule on synthetic cases, and the re-derived types of the campaign."""

from __future__ import annotations

from collections import Counter

import pytest

from medcalc_maintained.calculators.policy import guideline_version
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


# --- the campaign's 279 changed labels ------------------------------------------------------------

OLD_DISTRIBUTION = {"aggregation": 132, "extraction": 71, "unanswerable": 67, "underspecified": 7, "other": 2}


@pytest.mark.slow
def test_campaign_error_types_rederived(campaign_records):
    changed = [r for r in campaign_records if r["label_status"] != "confirmed"]
    assert len(changed) == sum(OLD_DISTRIBUTION.values()) == 279
    dist = Counter(r["error_type"] for r in changed)
    assert set(dist) <= {"aggregation", "extraction", "unanswerable", "underspecified", "other"}
    assert dist["unanswerable"] + sum(1 for r in changed if r["label_status"] == "abstain"
                                      and r["error_type"] == "underspecified") == 69  # every abstention
    # definition choices are no longer called extraction: many more underspecified, far fewer extraction
    assert dist["underspecified"] >= 40 and dist["extraction"] <= 50
    by = {r["uid"]: r for r in campaign_records}
    # verified against the notes:
    # 990 MME: the note gives hydromorphone 60 mg/day; 426 (2022 factor 5) -> 366 (2016 factor 4)
    # 349 HAS-BLED: "uncontrolled hypertension - although ... well-controlled": the hypertension definition
    # 1008 conception: LMP 12/17/2009, cycle 21: 12/31 = LMP + 14 (unadjusted) -> 12/24 cycle-adjusted
    # 23 CKD-EPI: the old 83.072 is the 2009 equation on the same creatinine, 88.5 the 2021 one
    # 893 SOFA: the note says "currently on continuous positive airway pressure"; the entity says false
    expected = {990: "underspecified", 349: "underspecified", 1008: "underspecified", 23: "underspecified",
                893: "extraction"}
    assert {u: by[u]["error_type"] for u in expected} == expected
    assert any("cdc_2016" in line for line in by[990]["evidence"])
    assert any("Continous positive airway pressure" in line for line in by[893]["evidence"])
    # every record carries the policy version of its calculator
    assert all(r["guideline_version"] for r in campaign_records)
    assert by[990]["guideline_version"] == guideline_version(49) == "cdc-2022-mme"
