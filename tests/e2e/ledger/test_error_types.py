"""Error types from evidence: the rule on synthetic cases, and the re-derived types of the campaign.

The end-to-end tests of this subject; the fast ones are in tests/ledger/test_error_types.py."""

from __future__ import annotations

from collections import Counter

from medcalc_maintained.calculators.policy import guideline_version

OLD_DISTRIBUTION = {"aggregation": 132, "extraction": 71, "unanswerable": 67, "underspecified": 7, "other": 2}


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
