"""Import of the published audit campaign, maintained labels, and the physician-agreement report."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pytest

from medcalc_maintained import ledger
from medcalc_maintained.core.answers import parse_answer, same_value
from medcalc_maintained.ledger import campaign
from medcalc_maintained.quality import agreement as report


@pytest.fixture(scope="module")
def inputs(real_instances, campaign_table, campaign_workbooks):
    """The v1.0 instances, the campaign table and the two workbooks (the session's shared readings, conftest.py)."""
    sampled, final = campaign_workbooks
    return real_instances, campaign_table, sampled, final


@pytest.fixture(scope="module")
def imported(campaign_records, campaign_ledger, real_maintained):
    """The records ``campaign.build_records`` makes of the campaign (the session's ``campaign_records``, which
    asserts that no cell was unreadable), written as a ledger file, and that ledger applied to the instances."""
    return campaign_records, campaign_ledger, real_maintained


def test_every_audited_row_becomes_one_valid_record(inputs, imported):
    _, _, _, final = inputs
    records, path, _ = imported
    wb = pd.read_excel(final, keep_default_na=False)
    assert len(records) == len(wb) == 887
    assert len({r["id"] for r in records}) == len(records)
    # the written file passes the ledger reader (schema) as is
    assert len(ledger.load([path])) == len(records)
    assert all(r["decision"] == "accepted" and r["blinded"] for r in records)


def test_the_import_runs_the_stored_check_findings_with_their_structured_fields(inputs):
    """import-campaign runs the checks of the test rows itself: the findings stage recompute stores
    in findings.parquet, row for row, plus ``unmentioned``; the stored table alone is refused."""
    from medcalc_maintained.quality.checks import FINDING_COLUMNS, STRUCTURED_COLUMNS
    from medcalc_maintained.stages.import_campaign import campaign_checks
    from medcalc_maintained.stages.recompute import recompute_and_check

    inst, camp, *_ = inputs
    rec, stored = recompute_and_check(inst, workers=1)
    got = campaign_checks(inst, rec)
    assert list(stored.columns) == FINDING_COLUMNS and list(got.columns) == FINDING_COLUMNS + STRUCTURED_COLUMNS
    pd.testing.assert_frame_equal(got[FINDING_COLUMNS], stored)
    absent = got["check"] == "required_input_absent"
    assert absent.sum() > 0 and got.loc[absent, "unmentioned"].map(len).eq(1).all()
    assert got.loc[~absent, "unmentioned"].map(len).eq(0).all()
    with pytest.raises(ValueError, match="structured=True"):
        campaign.build_records(camp, inst, rec, decided_at="2025-12-22", release="2.0.0", id_prefix="x",
                               workbook_names=("a", "b"), checks=stored)


def test_sources_and_rationales_follow_the_physician_column(inputs, imported):
    _, _, _, final = inputs
    records, *_ = imported
    wb = pd.read_excel(final, keep_default_na=False).set_index("uid")
    md = wb["y* (Physician label)"].map(lambda c: str(c).strip() != "")
    by_uid = {r["uid"]: r for r in records}
    assert sum(r["source"] == "physician" for r in records) == int(md.sum()) == 50
    for uid in wb.index[md]:
        note = str(wb.at[uid, "Physician Note (Optional)"]).strip()
        assert by_uid[uid]["source"] == "physician"
        if note:
            assert by_uid[uid]["rationale"] == note


def test_maintained_labels_equal_y_final(inputs, imported, v1_test_csv):
    inst, _, _, final = inputs
    *_, maintained = imported
    upstream_rows = len(pd.read_csv(v1_test_csv))
    wb = pd.read_excel(final, keep_default_na=False)
    m = maintained.set_index("uid")
    assert len(maintained) == upstream_rows
    verified = m[m["Label Status"] != "unverified"]
    assert sorted(verified.index) == sorted(wb["uid"])
    assert (m["Label Status"] == "unverified").sum() == upstream_rows - len(wb)
    n_na = 0
    for uid, y_final in zip(wb["uid"], wb["y_final"]):
        otype = m.at[uid, "Output Type"]
        label = m.at[uid, "Ground Truth Answer"]
        if isinstance(y_final, dt.datetime):
            assert label == y_final.strftime("%m/%d/%Y"), uid
        elif str(y_final).strip() == "N/A":
            n_na += 1
            assert label == "N/A" and m.at[uid, "Label Status"] == "abstain", uid
        else:
            assert same_value(label, y_final, otype), (uid, label, y_final)
    assert (m["Label Status"] == "abstain").sum() == n_na
    # one representation per output type: gestational age stays a (weeks, days) tuple
    ga = m[m["Original Ground Truth Answer"].str.contains("weeks")]
    assert len(ga) and ga["Ground Truth Answer"].str.fullmatch(r"\('\d+ weeks', '\d days'\)").all()
    # changed labels carry the id of their correction; unchanged upstream labels keep theirs
    changed = m[m["Ground Truth Answer"] != m["Original Ground Truth Answer"]]
    assert (changed["Correction IDs"] != "").all()
    assert (m.loc[m["Label Status"] == "unverified", "Ground Truth Answer"]
            == m.loc[m["Label Status"] == "unverified", "Original Ground Truth Answer"]).all()


def test_status_rule_against_v1_labels(inputs, imported):
    inst, *_ = inputs
    records, *_ = imported
    orig = inst.set_index("uid")
    for r in records:
        otype = orig.at[r["uid"], "Output Type"]
        assert r["old_value"] == orig.at[r["uid"], "Ground Truth Answer"]
        new = parse_answer(r["new_value"], otype)
        if new.is_abstain:
            assert r["label_status"] == "abstain"
        elif otype == "decimal" and new.kind != "gestational_age":
            lo, hi = float(orig.at[r["uid"], "Lower Limit"]), float(orig.at[r["uid"], "Upper Limit"])
            inside = min(lo, hi) - 1e-6 <= new.value <= max(lo, hi) + 1e-6
            assert (r["label_status"] == "confirmed") == inside, r
        else:
            assert (r["label_status"] == "confirmed") == same_value(new, r["old_value"], otype), r


def test_unreadable_cells_are_reported_not_guessed(inputs):
    inst, camp, sampled, final = inputs
    broken = camp.copy()
    broken.loc[0, "y_final"] = "Multiple"
    records, unreadable = campaign.build_records(
        broken, inst, None, decided_at="2025-12-22", release="2.0.0", id_prefix="x", workbook_names=("a", "b"))
    assert len(records) == len(camp) - 1
    assert unreadable and unreadable[0]["uid"] == int(camp.loc[0, "uid"]) and unreadable[0]["column"] == "y_final"


def test_report_reproduces_published_agreement(inputs, imported):
    inst, camp, *_ = inputs
    *_, maintained = imported
    rep = report.agreement_report(camp, inst, maintained, n_boot=500, seed=7)
    o, n, m = (rep["label_sets"][k] for k in ("original", "recomputed", "maintained"))
    # published: original 10/50, sMAPE 72.7%; recomputed 37/50, sMAPE 20.1%
    assert (o["agree"], round(o["smape"], 1)) == (10, 72.7)
    assert (n["agree"], round(n["smape"], 1)) == (37, 20.1)
    assert o["agree_ci95"][0] <= 10 <= o["agree_ci95"][1]
    assert n["smape_ci95"][0] <= 20.1 <= n["smape_ci95"][1]
    # maintained labels incorporate the physician adjudication
    assert m["agree"] >= n["agree"]
    # seeded: the same seed gives the same intervals
    again = report.agreement_report(camp, inst, maintained, n_boot=500, seed=7)
    assert again["label_sets"] == rep["label_sets"]


def test_agreement_rules_on_hand_made_rows():
    star = [None, 5.0, 5.0, 100.0, 0.0, 50.0]
    cands = {"a": [None, 6.0, None, 104.0, 0.04, 30.0], "b": [3.0, 7.0, 5.0, 106.0, 0.2, 50.0]}
    flags = report.agreement_flags(star, cands)
    # row0 both N/A -> agree; one N/A -> disagree. row1 ordinal (5, 6, 7 <= 20): |5-6| <= 1 yes, |5-7| no
    # row3 non-ordinal: 5% of 100 = 5 -> 104 yes, 106 no; row4 y*=0: |0.04| <= 0.05 yes, 0.2 no
    assert flags["a"].tolist() == [True, True, False, True, True, False]
    assert flags["b"].tolist() == [False, False, True, False, False, True]
    # sMAPE of a: rows 1,3,4,5 -> 200*1/11, 200*4/204, 200*0.04/0.04, 200*20/80
    terms = report.smape_terms(star, cands["a"])
    assert len(terms) == len(star) and np.isnan(terms[[0, 2]]).all()  # a missing value: no term, row kept
    assert terms[[1, 3, 4, 5]].tolist() == pytest.approx([200 / 11, 800 / 204, 200.0, 50.0])
    # physician_agreement's sMAPE is the mean of these terms over the rows both value
    assert report.physician_agreement(star, cands, n_boot=10)["label_sets"]["a"]["smape"] == \
        pytest.approx((200 / 11 + 800 / 204 + 200.0 + 50.0) / 4, abs=1e-4)
