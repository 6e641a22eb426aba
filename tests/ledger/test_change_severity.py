"""Change severity in the ledger (a stated ``change_severity`` is checked), the ``Change Severity``
column of the maintained labels, and the release contract view ``change_severity``.

Levels by hand from the cut-offs of thresholds.yaml: CrCl (uid 1, Cockcroft-Gault) 25.238 is in
the severe-impairment band 15-29 (FDA 2020), 30 in the moderate band 30-59 -> another dosing
action: L3; 25.238 -> 28 stays severe: L1."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml

from medcalc_maintained.contracts.severity_views import severity_view
from medcalc_maintained.ledger.apply import build
from medcalc_maintained.ledger.records import LedgerError
from tests.support.ledger_support import record as shared_record


def record(**kw) -> dict:
    return shared_record(**{"id": "S-0001", **kw})


def ledger(tmp_path: Path, *records: dict) -> Path:
    path = tmp_path / "l.yaml"
    path.write_text(yaml.safe_dump({"corrections": list(records)}, sort_keys=False), encoding="utf-8")
    return path


def test_a_stated_severity_must_be_the_computed_one(real_instances, tmp_path):
    with pytest.raises(LedgerError) as exc:
        build(real_instances, [ledger(tmp_path, record(change_severity="L1"))])
    p = exc.value.problems[0]
    assert p.record == "S-0001" and p.field == "change_severity" and "is L3" in p.problem and "l.yaml" in p.path
    with pytest.raises(LedgerError, match="change_severity"):
        build(real_instances, [ledger(tmp_path, record(change_severity="L9"))])  # the schema's enum
    out = build(real_instances, [ledger(tmp_path, record(change_severity="L3"))]).set_index("uid")
    assert out.loc[1, "Change Severity"] == "L3" and out.loc[2, "Change Severity"] == "L0"


def test_change_severity_is_derived_without_a_stated_value(real_instances, tmp_path):
    out = build(real_instances, [ledger(tmp_path, record(new_value="28"))]).set_index("uid")
    assert out.loc[1, "Change Severity"] == "L1"
    assert set(out["Change Severity"].drop(index=1)) == {"L0"}  # no other label changed


def test_the_corrections_config_carries_the_stated_level(real_instances, tmp_path):
    """The release tables take a record's stated level (apply has checked it) and compute one only
    for a record that states none: a stated L1 on the L3 change 25.238 -> 30 (which apply would
    refuse) shows that the tables do not recompute it."""
    from medcalc_maintained import ledger as ledger_pkg
    from medcalc_maintained.release.table_builder import _records_table

    def table(**kw):
        records, _ = ledger_pkg.collect([ledger(tmp_path, record(**kw))])
        return _records_table(records, real_instances, "9.0.0", tmp_path, include_unreleased=True)

    assert table(change_severity="L1")["change_severity"].tolist() == ["L1"]
    assert table()["change_severity"].tolist() == ["L3"]


def test_a_new_record_states_its_level_only_when_it_can_be_worked_out(real_instances):
    from medcalc_maintained.ledger.records import state_change_severity

    row = real_instances[(real_instances["split"] == "test") & (real_instances["uid"] == 1)].iloc[0]
    cid, otype = row["Calculator ID"], str(row["Output Type"])
    assert state_change_severity(record(), cid, otype)["change_severity"] == "L3"  # 25.238 -> 30 (module doc)
    assert state_change_severity(record(new_value="28"), cid, otype)["change_severity"] == "L1"
    assert "change_severity" not in state_change_severity(record(new_value="about thirty"), cid, otype)


def test_real_change_severity_of_2_0_0(real_maintained):
    ct = pd.crosstab(real_maintained["Label Status"], real_maintained["Change Severity"])
    changed = real_maintained[real_maintained["Label Status"].isin(["corrected", "abstain"])]
    assert changed["Change Severity"].value_counts().to_dict() == {"L1": 121, "L3": 110, "L2": 48}
    assert int(ct.loc["unverified", "L0"]) == 160 and set(real_maintained.loc[
        real_maintained["Label Status"] == "unverified", "Change Severity"]) == {"L0"}
    # a confirmation keeps the label within ±5%, yet 4 of them straddle a cut-off (e.g. CKD 61 vs 59)
    assert int((real_maintained["Label Status"] == "confirmed").sum() - ct.loc["confirmed", "L0"]) == 4


def _full(**over) -> pd.DataFrame:
    row = {"split": "test", "uid": 1, "Calculator ID": 2, "Output Type": "decimal",
           "Relevant Entities": "{'age': [70, 'years'], 'sex': 'Male'}",
           "Original Ground Truth Answer": "25.238", "Ground Truth Answer": "30", "Change Severity": "L3"}
    row.update(over)
    return pd.DataFrame([row])


@pytest.mark.parametrize("over, facts", [
    ({}, (True, True, True)),
    ({"Change Severity": "L1"}, (True, True, False)),                         # wrong level
    ({"Change Severity": "L0"}, (True, False, False)),                        # a change outside tolerance is not L0
    ({"Ground Truth Answer": "25.238", "Change Severity": "L1"}, (True, False, False)),  # unchanged must be L0
    ({"Ground Truth Answer": "25.238", "Change Severity": "L0"}, (True, True, True)),
    ({"Change Severity": "L5"}, (False, False, False)),
    ({"Change Severity": None}, (False, False, False)),
])
def test_full_view_facts(over, facts):
    v = severity_view(_full(**over), pd.DataFrame())
    assert tuple(v.loc[0, ["severity_allowed", "severity_consistent", "severity_matches"]]) == facts


def test_corrections_view_uses_the_row_of_full():
    corrections = pd.DataFrame({"id": ["A", "B", "C"], "split": "test", "uid": [1, 1, 9], "old_value": "25.238",
                                "new_value": ["30", "28", "30"], "change_severity": ["L3", "L3", "L3"]})
    v = severity_view(_full(), corrections).set_index("id")
    assert v.loc["A", "severity_matches"] and not v.loc["B", "severity_matches"]  # 25.238 -> 28 is L1
    assert not v.loc["C", "severity_matches"]  # uid 9 is not a row of full
    assert list(v["config"]) == ["full", "corrections", "corrections", "corrections"]


def test_card_table_counts_the_changes_of_the_release_per_calculator_and_level():
    from medcalc_maintained.release.card import severity_table

    recs = pd.DataFrame({
        "release": ["2.0.0", "2.0.0", "2.0.0", "2.0.0", "1.5.0", "2.0.0"],
        "decision": ["accepted", "accepted", "accepted", "accepted", "accepted", "rejected"],
        "label_status": ["corrected", "abstain", "confirmed", "corrected", "corrected", "corrected"],
        "old_value": ["15", "15", "15", "2", "15", "15"],
        "new_value": ["9", "N/A", "15", "3", "12", "12"],
        "Calculator Name": ["GCS", "GCS", "GCS", "CURB-65", "GCS", "GCS"],
        "change_severity": ["L3", "L3", "L0", "L1", "L2", "L2"],
    })
    text = severity_table(recs, "2.0.0")
    # a confirmation, an earlier release and a rejected record are not changes of 2.0.0
    assert "| CURB-65 | 0 | 1 | 0 | 0 | 1 |" in text and "| GCS | 0 | 0 | 0 | 2 | 2 |" in text
    assert "| **all calculators** | 0 | 1 | 0 | 2 | 3 |" in text
    assert severity_table(recs, "3.0.0") == "No label change in this release."


# Confirmed rows whose two values agree within the tolerance but lie on either side of a cut-off
# of thresholds.yaml, so the (tiny) change still crosses a band:
STRADDLING = {
    295: "FIB-4 1.296 -> 1.3, age < 65: low (< 1.3) -> indeterminate (>= 1.3)",
    370: "corrected sodium 145.664 -> 139.78: high (> 145) -> normal",
    380: "corrected sodium 145.008 -> 144.67: high (> 145) -> normal",
    384: "corrected sodium 146.36 -> 143.24: high (> 145) -> normal",
}


def _straddles(rec: dict, row: pd.Series) -> bool:
    """Whether a cut-off of the row's band set (thresholds.yaml) lies between the record's values:
    some band admits one value and not the other."""
    from medcalc_maintained.calculators.thresholds import thresholds

    t = thresholds().get(int(row["Calculator ID"]))
    try:
        x, y = float(rec["old_value"]), float(rec["new_value"])
    except ValueError:
        return False  # dates and abstentions have no bands
    if t is None:
        return False
    sets = t.bands_for(row.get("entities"))
    return any(b.admits(x) != b.admits(y) for _, bands in sets for b in bands[1:])


def test_campaign_records_state_their_severity(campaign_records, real_instances):
    """The generated campaign ledger carries ``change_severity`` on every record; hand-checked rows
    (thresholds.yaml): CHA2DS2-VASc 3 -> 5 in a woman of 68 stays in the anticoagulation band (L1),
    RCRI 2 -> 3 moves class III -> IV (L2), Cockcroft-Gault 25 -> 9 mL/min crosses into kidney
    failure dosing (L3); a confirmed label is L0 unless its values straddle a cut-off
    (:data:`STRADDLING`, and no other row)."""
    by_uid = {r["uid"]: r for r in campaign_records}
    assert all(r.get("change_severity") in ("L0", "L1", "L2", "L3") for r in campaign_records)
    assert by_uid[42]["change_severity"] == "L1"
    assert by_uid[240]["change_severity"] == "L2"
    assert by_uid[3]["change_severity"] == "L3"
    rows = real_instances[real_instances["split"] == "test"].set_index("uid")
    confirmed = [r for r in campaign_records if r["label_status"] == "confirmed"]
    straddling = {r["uid"] for r in confirmed if _straddles(r, rows.loc[r["uid"]])}
    assert straddling == set(STRADDLING)
    assert {r["uid"] for r in confirmed if r["change_severity"] != "L0"} == straddling
    assert {by_uid[u]["change_severity"] for u in STRADDLING} <= {"L2", "L3"}  # a band crossed


def test_propose_states_the_severity_of_the_change(project_root):
    from medcalc_maintained.ledger.propose import propose
    from medcalc_maintained.project import Project

    project = Project.load(project_root)
    # back to the upstream value: a confirmation (status is said against the upstream label), still a
    # severe change of the current label
    got = propose(project, uid=3, new_value="25.017", error_type="none", rationale="recomputed by hand",
                  today="2026-11-23")
    assert got.record["label_status"] == "confirmed"
    assert got.record["change_severity"] == "L3"  # 9 -> 25 mL/min: out of the kidney-failure band
