"""Impact-aware triage (quality/impact.py): expected severity of a row, harm ranking, severe errors
found, the checked config, and the acceptance figure on the real adjudicated rows.

Expected levels come from the published cut-offs (CURB-65 0-1 home / 2 short stay / >=3 hospital;
CrCl dosing bands) and the weights written here, not from the code under test."""

from __future__ import annotations

import pandas as pd
import pytest

from medcalc_maintained.core.errors import DataError
from medcalc_maintained.planning import impact

W = {"L0": 0.0, "L1": 1.0, "L2": 3.0, "L3": 5.0}


def cfg(ranking="harm", **over) -> impact.ImpactConfig:
    return impact.ImpactConfig.from_section({"ranking": ranking, "impact": {"weights": W, "saturation": 6.0, **over}}, "p.yaml")


def synthetic():
    q = pd.DataFrame({
        "rank": range(1, 6), "split": "test", "uid": [1, 2, 3, 4, 5],
        "calculator_id": [45, 45, 32, 45, 2], "output_type": ["integer"] * 4 + ["decimal"],
        "priority": [3.0, 6.0, 0.0, 1.2, 3.0],
        "relabel_status": ["labeled", "labeled", "missing", "deferred", "labeled"],
        "relabel_label": ["2", "5", None, None, "50.5"],
        "recompute_finding": ["agrees", "agrees", "agrees", "aggregation_mismatch", "agrees"],
    })
    inst = pd.DataFrame({"split": "test", "uid": [1, 2, 3, 4, 5], "Ground Truth Answer": ["1", "4", "7", "3", "50"]})
    rec = pd.DataFrame({"split": "test", "uid": [1, 2, 3, 4, 5], "recomputed": [1, 4, 7, 2, 50]})
    return q, inst, rec


def test_expected_severity_and_harm_worked_by_hand():
    q, inst, rec = synthetic()
    out = impact.expected_severity(q, inst, rec, cfg()).set_index("uid")
    # 1: CURB-65 1 -> 2 (home -> short stay) L3, p = 3/6; 2: 4 -> 5 same band L1, p = 1;
    # 3: Charlson, no alternative: prior of a calculator without bands = weight of L1; p = 0;
    # 4: recompute 3 -> 2 (hospital -> short stay) L3, p = 1.2/6;
    # 5: relabel within 5% of 50: no change to measure -> CrCl prior = mean(L1, L2, L3) = 3
    assert out["expected_severity"].to_dict() == {1: "L3", 2: "L1", 3: "L1", 4: "L3", 5: "L3"}
    assert out["severity_source"].to_dict() == {1: "relabel", 2: "relabel", 3: "prior", 4: "recompute", 5: "prior"}
    assert out["severity_weight"].to_dict() == {1: 5.0, 2: 1.0, 3: 1.0, 4: 5.0, 5: 3.0}
    assert out["harm"].to_dict() == pytest.approx({1: 2.5, 2: 1.0, 3: 0.0, 4: 1.0, 5: 1.5})


def test_harm_and_evidence_orders():
    q, inst, rec = synthetic()
    harm = impact.rank(q, inst, rec, cfg("harm"))
    assert harm["uid"].tolist() == [1, 5, 2, 4, 3]  # 2 before 4: same harm, higher priority
    assert harm["rank"].tolist() == [1, 2, 3, 4, 5]
    evidence = impact.rank(q, inst, rec, cfg("evidence"))
    assert evidence["uid"].tolist() == [2, 1, 5, 4, 3]
    marked = q.assign(policy_contradiction=[False, False, False, True, False])
    assert impact.rank(marked, inst, rec, cfg("harm"))["uid"].tolist() == [4, 1, 5, 2, 3]


def test_severity_metrics_by_hand():
    q, inst, rec = synthetic()
    q = impact.expected_severity(q, inst, rec, cfg())
    maintained = pd.DataFrame({"split": "test", "uid": [1, 2, 3, 4, 5],
                               "Label Status": ["corrected", "corrected", "unverified", "confirmed", "abstain"],
                               "Change Severity": ["L3", "L1", "L0", "L0", "L2"]})
    m = impact.severity_metrics(q, maintained, 2, "harm")
    # harm: uids 1, 5 -> 2 errors, both severe; evidence: uids 2, 1 -> 2 errors, 1 severe
    assert m["all_rows"]["harm"] == {"errors": 2, "severe": 2, "reviews": 2}
    assert m["all_rows"]["evidence"] == {"errors": 2, "severe": 1, "reviews": 2}
    assert m["all_rows"]["uniform_expected"] == {"errors": 1.2, "severe": 0.8, "reviews": 2}  # 2 x 3/5, 2 x 2/5
    # adjudicated rows leave uid 3 out: 4 rows, 3 errors, 2 severe
    assert m["adjudicated_rows"]["uniform_expected"] == {"errors": 1.5, "severe": 1.0, "reviews": 2}


def test_severity_metrics_derive_change_severity_when_the_column_is_missing():
    q, inst, rec = synthetic()
    q = impact.expected_severity(q, inst, rec, cfg())
    maintained = pd.DataFrame({"split": "test", "uid": [1, 2], "calculator_id": [45, 45], "output_type": "integer",
                               "Label Status": ["corrected", "corrected"],
                               "Original Ground Truth Answer": ["1", "4"], "Ground Truth Answer": ["2", "5"]})
    m = impact.severity_metrics(q, maintained, 5, "harm")
    assert m["all_rows"]["harm"]["errors"] == 2 and m["all_rows"]["harm"]["severe"] == 1  # 1 -> 2 L3, 4 -> 5 L1


@pytest.mark.parametrize("section, field", [
    ({"ranking": "random", "impact": {"weights": W, "saturation": 6}}, "triage.ranking"),
    ({"ranking": "harm", "impact": {"weights": {"L1": 1, "L2": 2, "L3": 3}, "saturation": 6}}, "triage.impact.weights"),
    ({"ranking": "harm", "impact": {"weights": {**W, "L2": 0.5}, "saturation": 6}}, "triage.impact.weights"),
    ({"ranking": "harm", "impact": {"weights": {**W, "L3": "high"}, "saturation": 6}}, "triage.impact.weights.L3"),
    ({"ranking": "harm", "impact": {"weights": W, "saturation": 0}}, "triage.impact.saturation"),
])
def test_bad_impact_config_is_refused_with_its_field(section, field):
    with pytest.raises(DataError) as exc:
        impact.ImpactConfig.from_section(section, "p.yaml")
    assert exc.value.field == field and "p.yaml" in str(exc.value)


def test_defaults_rank_by_harm():
    from tests.support.triage_support import project

    assert impact.ImpactConfig.from_project(project()).ranking == "harm"
