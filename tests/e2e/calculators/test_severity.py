"""Decision thresholds (calculators/thresholds.yaml) and the severity of a label change (calculators/severity).

Expected levels come from the published cut-offs quoted in each test, not from the code: e.g.
CURB-65 0-1 home / 2 short stay / >=3 hospital (BTS 2009), CHA2DS2-VASc anticoagulation at >=2 in
men and >=3 in women (ESC 2020), QTc prolonged at >=450 ms (men) / >=460 ms (women) and high risk
above 500 ms (AHA/ACCF/HRS 2009, Drew 2010).

The end-to-end tests of this subject; the fast ones are in tests/calculators/test_severity.py."""

from __future__ import annotations

from medcalc_maintained.calculators.severity import LEVELS, change_table, level_counts, per_calculator

# Rows checked by hand against the note's entities and the cut-offs quoted in thresholds.yaml.
VERIFIED = {
    3: "L3",    # CrCl 25.0 -> 9 mL/min: severe (15-29) -> kidney failure (<15), different dosing
    42: "L1",   # CHA2DS2-VASc 3 -> 5 in a 68-year-old woman: anticoagulate (>=3) either way
    47: "L3",   # CHA2DS2-VASc 2 -> 1 in a 21-year-old woman: consider OAC -> no therapy
    240: "L2",  # RCRI 2 -> 3: class III -> IV, both "elevated risk, further evaluation"
    367: "L3",  # corrected Na 137.84 -> 130.56: 0.45% -> 0.9% NaCl in DKA (crosses 135)
    425: "L1",  # HOMA-IR -> N/A: no decision band
    469: "L1",  # free water deficit -0.372 -> -0.31 L: no water to give on either side
    591: "L2",  # SIRS 2 -> 1: criteria met -> not met (diagnostic only)
    928: "L2",  # due date moves 11 days (> 7: re-dated)
    930: "L1",  # due date moves 6 days
}


def test_severity_of_the_changes_of_2_0_0(real_maintained, real_instances):
    from medcalc_maintained.core.answers import labels_agree

    table = change_table(real_maintained, real_instances)
    assert len(table) == 279
    assert set(table["status"]) == {"corrected", "abstain"} and set(table["level"]) <= set(LEVELS)
    assert sum(level_counts(table).values()) == 279 and per_calculator(table)["total"].sum() == 279
    by_uid = table.set_index("uid")
    for uid, level in VERIFIED.items():
        assert by_uid.loc[uid, "level"] == level, (uid, by_uid.loc[uid].to_dict())
    # no change of 2.0.0 stays within the grading tolerance, so none is L0
    otype = real_maintained.set_index("uid")["output_type"]
    assert not any(labels_agree(r.old, r.new, otype[r.uid]) for r in table.itertuples())
    assert level_counts(table)["L0"] == 0
    # every abstention replacing a value of a calculator whose bands change care is L3
    assert set(table[(table["status"] == "abstain") & (table["calculator_id"].isin([15, 18, 20]))]["level"]) == {"L3"}
