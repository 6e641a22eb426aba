"""Triage queue, review packets and their import: hand-worked scoring, routing and metrics, the
single-blind packet (no label, vote or score anywhere), and the export -> fill -> import -> apply
round trip on the real v1.0 split with the imported campaign ledger."""

from __future__ import annotations

import datetime as dt
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from openpyxl import load_workbook
from typer.testing import CliRunner

from medcalc_maintained.ledger import apply as apply_stage
from medcalc_maintained import ledger
from medcalc_maintained.ledger import campaign
from medcalc_maintained import review as rv
from medcalc_maintained import triage as tr
from medcalc_maintained.core.answers import format_answer, parse_answer
from medcalc_maintained.cli import app
from medcalc_maintained.stages.ingest import ingest
from medcalc_maintained.quality.recompute import FLAGGING, recompute

ROOT = Path(__file__).resolve().parents[1]

runner = CliRunner()
REVIEWER = tr.Reviewer("md-im-1", "physician", "internal medicine")


# ----------------------------------------------------------------- real inputs


@pytest.fixture(scope="module")
def real(v1_test_csv, campaign_dir, tmp_path_factory):
    """Instances, recompute audit, campaign ledger, maintained labels, relabel labels (the published
    consensus y_new in the relabel stage's schema) and audit flags (the rules audit: 1 run per row)."""
    sampled = campaign_dir / "phase3" / "y_new_and_sampled_MD_evals.xlsx"
    final = campaign_dir / "phase3" / "y_final_MD_evals_incorporated.xlsx"
    inst = ingest([("test", v1_test_csv)]).instances
    rec = recompute(inst)
    camp = campaign.read_workbooks(sampled, final)
    records, _ = campaign.build_records(camp, inst, rec, decided_at="2025-12-22", release="2.0.0",
                                        id_prefix="audit2025", workbook_names=(sampled.name, final.name))
    d = tmp_path_factory.mktemp("real")
    camp_path = d / "audit-2025.yaml"
    camp_path.write_text(ledger.dump(records, camp_path), encoding="utf-8")
    maintained = apply_stage.build(inst, [camp_path])
    otype = inst.set_index("uid")["Output Type"]
    y_new = dict(zip(camp["uid"].astype(int), camp["y_new"]))
    rows = []
    for uid in inst["uid"].astype(int):
        if uid in y_new:
            label = format_answer(parse_answer(y_new[uid], otype[uid]), otype[uid])
            rows.append({"uid": uid, "split": "test", "status": "labeled", "label": label, "votes": 1,
                         "backend": "replay", "model": "published-consensus"})
        else:
            rows.append({"uid": uid, "split": "test", "status": "deferred", "label": None, "votes": 0,
                         "backend": "replay", "model": "published-consensus"})
    relabel = pd.DataFrame(rows)
    wrong = rec["finding"].isin(FLAGGING)
    flags = pd.DataFrame({"uid": rec["uid"], "split": rec["split"], "runs": 1, "votes_wrong": wrong.astype(int),
                          "flagged": wrong})
    return {"instances": inst, "recompute": rec, "campaign": camp_path, "maintained": maintained,
            "relabel": relabel, "flags": flags}


def params(**over) -> dict:
    p = yaml.safe_load((ROOT / "params.yaml").read_text())["triage"]
    p.update(over)
    return p


def cfg(**over) -> tr.TriageConfig:
    return tr.TriageConfig.from_params(params(**over))


# ----------------------------------------------------------------- scoring, routing, metrics


def synthetic():
    inst = pd.DataFrame({
        "split": "test", "uid": [1, 2, 3, 4, 5],
        "calculator_id": [2, 2, 2, 4, 4], "Calculator Name": ["CrCl"] * 3 + ["CHA2DS2-VASc"] * 2,
        "Category": ["risk", "lab", "lab", "lab", "severity"], "Output Type": ["decimal"] * 3 + ["integer"] * 2,
        "Ground Truth Answer": ["10", "5", "10", "3", "7"],
    })
    relabel = pd.DataFrame({"uid": [1, 2, 3, 4], "status": ["labeled", "labeled", "labeled", "deferred"],
                            "label": ["12", "N/A", "10.2", None]})
    flags = pd.DataFrame({"uid": [1, 2, 3, 4, 5], "runs": [5, 5, 5, 5, 0], "votes_wrong": [0, 2, 4, 1, 0],
                          "flagged": [False, False, True, False, False]})
    rec = pd.DataFrame({"split": "test", "uid": [1, 2, 3, 4, 5],
                        "finding": ["agrees", "agrees", "agrees", "aggregation_mismatch", "agrees"]})
    return inst, relabel, flags, rec


def test_priority_is_the_weighted_evidence_worked_by_hand():
    inst, relabel, flags, rec = synthetic()
    q = tr.score(inst, rec, relabel, flags, cfg()).set_index("uid")
    # uid 1: rel_err(10, 12) = 2/12 = 0.16667 > 0.05 -> 3 + 0.16667 = 3.166667
    assert q.loc[1, "priority"] == pytest.approx(3.166667)
    assert q.loc[1, "relabel_rel_err"] == pytest.approx(1 / 6)
    # uid 2: 5 vs N/A: rel_err 1, abstention mismatch: 3 + 1 + 3, audit 2/5 wrong * 0.5 = 0.2 -> 7.2
    assert q.loc[2, "priority"] == pytest.approx(7.2) and q.loc[2, "abstention_mismatch"]
    # uid 3: rel_err(10, 10.2) = 0.0196 <= 0.05: no disagreement; audit flag 1 + 4/5 * 0.5 = 1.4
    assert not q.loc[3, "relabel_disagrees"] and q.loc[3, "priority"] == pytest.approx(1.4)
    # uid 4: relabel deferred 1 + audit 1/5 * 0.5 + recompute aggregation_mismatch 0.5 = 1.6
    assert q.loc[4, "priority"] == pytest.approx(1.6)
    # uid 5: no relabel row, no audit runs, recompute agrees: nothing
    assert q.loc[5, "priority"] == 0 and q.loc[5, "relabel_status"] == "missing"
    assert q.sort_values("rank").index.tolist() == [2, 1, 4, 3, 5]
    assert "abstention mismatch" in q.loc[2, "evidence"] and "relabel deferred" in q.loc[4, "evidence"]


def test_ties_break_by_uid_and_relabel_problems_name_the_row():
    inst, relabel, flags, rec = synthetic()
    flags["votes_wrong"] = 0
    flags["flagged"] = False
    relabel.loc[2, "label"] = "10"  # uid 3 now agrees; uid 5 has nothing: both at 0, uid order
    q = tr.score(inst, rec, relabel, flags, cfg())
    assert q.loc[q["priority"] == 0, "uid"].tolist() == [3, 5]
    relabel.loc[0, "label"] = "twelve"
    with pytest.raises(tr.DataError, match=r"uid 1.*'twelve' is not a valid decimal"):
        tr.score(inst, rec, relabel, flags, cfg())
    with pytest.raises(tr.DataError, match="missing column"):
        tr.score(inst, rec, relabel.drop(columns=["status"]), flags, cfg())


def test_routing_by_specialty_budget_skips_and_second_reviewer():
    inst, relabel, flags, rec = synthetic()
    c = cfg(budget=2, specialty_by_category={"lab": "nephrology", "risk": "cardiology"},
            reviewers=[{"id": "neph-a", "role": "physician", "specialty": "nephrology"},
                       {"id": "neph-b", "role": "physician", "specialty": "nephrology"}])
    deferred = {("test", 2): [{"reviewer": "neph-a", "value": "6", "id": "review-neph-a-test-00002"}]}
    q = tr.score(inst, rec, relabel, flags, c, deferred)
    maintained = inst.assign(**{"Label Source": ["pipeline", "pipeline", "physician", "upstream", "pipeline"]})
    q = tr.route(q, maintained, c, deferred).set_index("uid")
    # uid 2 (second review, priority 17.2) goes to neph-b, not neph-a who deferred on it
    assert q.loc[2, "priority"] == pytest.approx(17.2)
    assert (q.loc[2, "reviewer"], q.loc[2, "routing"]) == ("neph-b", "second review")
    # uid 1 next (risk -> cardiology): nobody has that specialty, skipped without using the budget
    assert not q.loc[1, "in_budget"] and q.loc[1, "routing"] == "no reviewer for specialty 'cardiology'"
    # so uid 4 still fits in the budget of 2: the least loaded nephrologist is neph-a
    assert q.loc[4, "reviewer"] == "neph-a" and q.loc[4, "in_budget"] and q.loc[4, "routing"] == "routed"
    # uid 3 already has a physician label; uid 5 has no evidence (severity has no specialty anyway)
    assert q.loc[3, "routing"] == "label already from physician" and not q.loc[3, "eligible"]
    assert q.loc[5, "routing"] == "no evidence of an error"
    assert int(q["in_budget"].sum()) == 2


def test_precision_at_k_and_uniform_baseline_by_hand():
    # 10 rows ranked 1..10; adjudicated changes at ranks 1, 2 and 4
    q = pd.DataFrame({"split": "test", "uid": range(1, 11), "priority": np.linspace(10, 1, 10),
                      "relabel_disagrees": False, "relabel_rel_err": np.nan, "abstention_mismatch": False,
                      "relabel_status": "labeled", "in_budget": [True] * 4 + [False] * 6,
                      "eligible": True, "label_source": "pipeline", "routing": "routed",
                      "reviewer": ["a"] * 4 + [""] * 6})
    status = ["corrected", "abstain", "confirmed", "corrected"] + ["confirmed"] * 6
    m = pd.DataFrame({"split": "test", "uid": range(1, 11), "Label Status": status})
    c = cfg(budget=4, metrics={"k": [2, 4], "simulations": 20000, "seed": 1})
    out, curve = tr.metrics(q, m, c)
    assert out["base_rate"] == 0.3
    assert out["precision_at_k"]["2"]["triage"] == 1.0
    assert out["precision_at_k"]["4"]["triage"] == 0.75
    assert out["precision_at_k"]["4"]["uniform_expected"] == 0.3
    assert out["precision_at_k"]["4"]["uniform_simulated"] == pytest.approx(0.3, abs=0.01)
    assert out["errors_found_per_review"] == {"triage": 0.75, "uniform": 0.3, "errors_found": 3, "reviews": 4,
                                              "uniform_pool": 10}
    assert curve["triage"].tolist() == [1, 2, 2, 3, 3, 3, 3, 3, 3, 3]
    assert curve["uniform_expected"].tolist()[:3] == [0.3, 0.6, 0.9]


def test_real_queue_ranks_abstention_mismatches_then_disagreements_and_beats_uniform(real):
    c = cfg()
    q = tr.score(real["instances"], real["recompute"], real["relabel"], real["flags"], c)
    q = tr.route(q, real["maintained"], c)
    tier = np.where(q["abstention_mismatch"], 2, np.where(q["relabel_disagrees"], 1, 0))
    assert (np.diff(tier) <= 0).all(), "tiers must not increase down the queue"
    assert int((tier == 2).sum()) == 66  # the paper's 66 N/A disagreements among 887 relabelled rows
    # the paper's 220 + 66 = 286 likely errors, less two dates exactly one day apart (uids 933 and 1017)
    # that its workbook counts but its definition (a difference of more than one day) does not
    assert int((tier >= 1).sum()) == 284
    assert int(q["in_budget"].sum()) == 50
    assert not q.loc[q["in_budget"], "label_source"].eq("physician").any()
    out, _ = tr.metrics(q, real["maintained"], c)
    status = real["maintained"].set_index("uid")["Label Status"]
    top50 = status.loc[q["uid"].head(50)].isin(["corrected", "abstain"]).mean()
    assert out["precision_at_k"]["50"]["triage"] == pytest.approx(top50)
    assert out["truth"]["errors"] == 279 and out["base_rate"] == round(279 / 1047, 4)
    for k in ("25", "50", "100"):
        pk = out["precision_at_k"][k]
        assert pk["triage_without_relabel"] > pk["uniform_ci95"][1]


# ----------------------------------------------------------------- packets


def fill(path: Path, answers: dict[str, dict], out: Path) -> dict[str, int]:
    """Fill a packet as a reviewer would: type values into the answer/comment cells by row id."""
    wb = load_workbook(path)
    ws = wb[rv.REVIEW]
    where = {}
    for r in range(2, ws.max_row + 1):
        rid = ws.cell(row=r, column=1).value
        where[rid] = r
        for key, value in answers.get(rid, {}).items():
            ws.cell(row=r, column=rv.COL[key], value=value)
    wb.save(out)
    return where


CASES = {
    # row: (relabel status, relabel label) of the controlled relabel table
    41: ("labeled", "4"),                          # CHA2DS2-VASc, current label 4
    146: ("labeled", "38"),                        # MDRD, current label N/A (campaign abstention)
    928: ("labeled", "09/12/2014"),                # due date, current 09/12/2014
    1029: ("labeled", "('14 weeks', '2 days')"),   # gestational age, current 14 weeks 1 day
    15: ("deferred", None),                        # CrCl, unverified 37.663
}
ANSWERS = {
    "test-00041": {"answer": 4, "comment": "CHF, hypertension, age 75+ as documented."},
    "test-00146": {"answer": 38.5, "comment": "Creatinine 1.6 mg/dL from the labs.", "timepoint": "at admission"},
    "test-00928": {"answer": dt.datetime(2014, 9, 20), "comment": "LMP taken from the second visit."},
    "test-01029": {"answer": "14 weeks 2 days", "comment": "Counted from the LMP to the visit date."},
    "test-00015": {"answer": 40.1, "comment": "Actual body weight used."},
}


def controlled_relabel(real) -> pd.DataFrame:
    rl = real["relabel"].copy()
    for uid, (status, label) in CASES.items():
        rl.loc[rl["uid"] == uid, ["status", "label"]] = [status, label]
    return rl


def test_round_trip_export_fill_import_apply(real, tmp_path):
    inst, camp = real["instances"], real["campaign"]
    before = real["maintained"].set_index("uid")
    assert [before.loc[u, "Ground Truth Answer"] for u in (41, 146, 928, 1029, 15)] == \
        ["4", "N/A", "09/12/2014", "('14 weeks', '1 days')", "37.663"]
    packet = rv.export_packet(inst, [("test", u) for u in CASES], REVIEWER, tmp_path / "packet.xlsx")
    fill(packet, ANSWERS, tmp_path / "filled.xlsx")
    corrections = tmp_path / "corrections"
    corrections.mkdir()
    out = corrections / "review-md-im-1.yaml"
    records, pk = rv.import_packet(tmp_path / "filled.xlsx", instances=inst, ledger_paths=[camp, corrections],
                                   relabel=controlled_relabel(real), recompute=real["recompute"],
                                   reviewers=[REVIEWER], adjudication=rv.Adjudication(("relabel", "physician")),
                                   out=out, decided_at="2026-02-01")
    assert ledger.load([out])  # a valid ledger file
    by = {r["uid"]: r for r in records}
    # 41: agrees with the relabel (4) and the current label -> accepted, confirmed
    assert (by[41]["decision"], by[41]["label_status"], by[41]["error_type"]) == ("accepted", "confirmed", None)
    # 146: 38.5 is inside 38 +- 5% (36.1..39.9) -> accepted; N/A -> 38.5 is a correction
    assert (by[146]["decision"], by[146]["label_status"], by[146]["new_value"]) == ("accepted", "corrected", "38.5")
    assert by[146]["old_value"] == "N/A" and by[146]["scoring_timepoint"] == "at admission"
    assert by[146]["error_type"] == "extraction"  # recompute reproduces the v1.0 label from its features
    # 928: 09/20/2014 is not the relabel's 09/12/2014 -> deferred, both values kept
    assert (by[928]["decision"], by[928]["new_value"], by[928]["second_opinion"]) == ("deferred", "09/20/2014", "09/12/2014")
    # 1029: 14 weeks 2 days = the relabel -> accepted, written in v1.0's tuple form
    assert (by[1029]["decision"], by[1029]["new_value"]) == ("accepted", "('14 weeks', '2 days')")
    # 15: the relabel has no label -> deferred, no second opinion
    assert (by[15]["decision"], by[15]["second_opinion"]) == ("deferred", None)
    for r in records:
        assert r["source"] == "physician" and r["blinded"] is True and r["reviewer"] == REVIEWER.as_record()
        assert r["rationale"] == ANSWERS[rv.row_id("test", r["uid"])]["comment"]

    with pytest.raises(rv.PacketError, match=r"cell A\d+: row test-00041 was already imported for reviewer md-im-1"):
        rv.import_packet(tmp_path / "filled.xlsx", instances=inst, ledger_paths=[camp, corrections],
                         relabel=controlled_relabel(real), recompute=real["recompute"], reviewers=[REVIEWER],
                         adjudication=rv.Adjudication(), out=corrections / "again.yaml", decided_at="2026-02-01")
    assert sorted(p.name for p in corrections.iterdir()) == ["review-md-im-1.yaml"]

    after = apply_stage.build(inst, [camp, corrections]).set_index("uid")
    changed = [u for u in after.index
               if not after.loc[u, ["Ground Truth Answer", "Label Status", "Label Source", "Correction IDs"]]
               .equals(before.loc[u, ["Ground Truth Answer", "Label Status", "Label Source", "Correction IDs"]])]
    assert sorted(changed) == [41, 146, 1029]
    assert after.loc[41, ["Ground Truth Answer", "Label Status", "Label Source"]].tolist() == ["4", "confirmed", "physician"]
    assert after.loc[41, "Correction IDs"] == "audit2025-00041;review-md-im-1-test-00041"
    assert after.loc[146, ["Ground Truth Answer", "Lower Limit", "Upper Limit", "Label Status"]].tolist() == \
        ["38.5", "36.575", "40.425", "corrected"]
    assert after.loc[1029, "Ground Truth Answer"] == "('14 weeks', '2 days')"
    assert after.loc[928, "Ground Truth Answer"] == "09/12/2014" and after.loc[15, "Label Status"] == "unverified"


def test_second_reviewer_agreeing_with_the_first_physician_is_accepted(real, tmp_path):
    inst, camp = real["instances"], real["campaign"]
    corrections = tmp_path / "corrections"
    corrections.mkdir()
    ob1, ob2 = tr.Reviewer("md-ob-1", "physician", "obstetrics"), tr.Reviewer("md-ob-2", "physician", "obstetrics")
    adj = rv.Adjudication(("relabel", "physician"))
    rl = controlled_relabel(real)
    common = dict(instances=inst, ledger_paths=[camp, corrections], relabel=rl, recompute=real["recompute"],
                  reviewers=[ob1, ob2], adjudication=adj, decided_at="2026-02-01")
    for who, name in ((ob1, "first"), (ob2, "second")):
        p = rv.export_packet(inst, [("test", 928)], who, tmp_path / f"{name}.xlsx")
        fill(p, {"test-00928": ANSWERS["test-00928"]}, p)
        recs, _ = rv.import_packet(p, out=corrections / f"{name}.yaml", **common)
        assert recs[0]["decision"] == ("deferred" if name == "first" else "accepted")
    # a third acceptance of the same row in the same (unreleased) release breaks a ledger rule: reported
    # at the packet row, nothing written
    ob3 = tr.Reviewer("md-ob-3", "physician", "obstetrics")
    p = rv.export_packet(inst, [("test", 928)], ob3, tmp_path / "third.xlsx")
    fill(p, {"test-00928": ANSWERS["test-00928"]}, p)
    with pytest.raises(rv.PacketError, match=r"third.xlsx, sheet Review, cell A2: record review-md-ob-3-test-00928.*"
                                             r"second accepted record"):
        rv.import_packet(p, out=corrections / "third.yaml", **{**common, "reviewers": [ob1, ob2, ob3]})
    assert not (corrections / "third.yaml").exists()
    after = apply_stage.build(inst, [camp, corrections]).set_index("uid")
    assert after.loc[928, ["Ground Truth Answer", "Label Status", "Label Source"]].tolist() == \
        ["09/20/2014", "corrected", "physician"]


def test_invalid_cells_are_reported_with_their_address_and_nothing_is_imported(real, tmp_path):
    inst, camp = real["instances"], real["campaign"]
    packet = rv.export_packet(inst, [("test", u) for u in CASES], REVIEWER, tmp_path / "packet.xlsx")
    bad = dict(ANSWERS)
    bad["test-00146"] = {"answer": "abc"}
    bad["test-00041"] = {"answer": 4.5}
    bad["test-01029"] = {"answer": "N/A"}  # N/A without a comment
    bad["test-00015"] = {"answer": None}
    where = fill(packet, bad, tmp_path / "bad.xlsx")
    corrections = tmp_path / "corrections"
    corrections.mkdir()
    with pytest.raises(rv.PacketError) as exc:
        rv.import_packet(tmp_path / "bad.xlsx", instances=inst, ledger_paths=[camp, corrections],
                         relabel=controlled_relabel(real), recompute=real["recompute"], reviewers=[REVIEWER],
                         adjudication=rv.Adjudication(), out=corrections / "x.yaml", decided_at="2026-02-01")
    text = str(exc.value)
    name = str(tmp_path / "bad.xlsx")
    assert f"{name}, sheet Review, cell F{where['test-00146']}: 'abc' is not a valid decimal answer" in text
    assert f"cell F{where['test-00041']}: '4.5' is not a valid integer answer (not a whole number)" in text
    assert f"cell I{where['test-01029']}: row test-01029 is answered N/A without a comment" in text
    assert f"cell F{where['test-00015']}: the answer of row test-00015 is empty" in text
    assert len(exc.value.problems) == 4
    assert list(corrections.iterdir()) == []


def test_packet_has_no_label_vote_or_score_in_any_cell(real, tmp_path):
    c = cfg()
    q = tr.route(tr.score(real["instances"], real["recompute"], real["relabel"], real["flags"], c), real["maintained"], c)
    who = c.reviewer(q.loc[q["in_budget"], "reviewer"].value_counts().index[0])
    rows = rv.select_rows(q, who.id, max_rows=5)
    assert len(rows) == 5
    path = rv.export_packet(real["instances"], zip(rows["split"], rows["uid"]), who, tmp_path / "p.xlsx")
    inst = real["instances"].set_index("uid")
    maint = real["maintained"].set_index("uid")
    rl = real["relabel"].set_index("uid")
    flags = real["flags"].set_index("uid")
    forbidden: set[str] = set()
    for r in rows.to_dict("records"):
        u = int(r["uid"])
        otype = inst.loc[u, "Output Type"]
        for label in (inst.loc[u, "Ground Truth Answer"], inst.loc[u, "Lower Limit"], inst.loc[u, "Upper Limit"],
                      maint.loc[u, "Ground Truth Answer"], rl.loc[u, "label"]):
            if label is None or parse_answer(label, otype).is_abstain:
                continue  # N/A is an answer every packet explains
            a = parse_answer(label, otype)
            forbidden |= {str(label), format_answer(a, otype)}
            if a.kind == "date":
                forbidden |= {a.value.isoformat(), a.value.strftime("%m/%d/%Y")}
            if a.kind == "gestational_age":
                forbidden |= {str(int(a.value)), f"{a.weeks} weeks"}
        for score in (r["priority"], r["relabel_rel_err"]):
            if score == score:  # not NaN
                forbidden |= {f"{score:g}", f"{score:.2f}", f"{score:.3f}", f"{score:.4f}", str(score)}
        forbidden |= {str(int(r["rank"]))}
        # votes: the audit's wrong votes and runs, the relabel's agreeing votes
        forbidden |= {str(int(flags.loc[u, "votes_wrong"])), str(int(flags.loc[u, "runs"])), str(int(rl.loc[u, "votes"]))}
    assert forbidden
    boundary = r"(?<![\w.\-/]){}(?![\w.\-/])"
    wb = load_workbook(path)
    verbatim = {}
    for r in rows.to_dict("records"):
        u = int(r["uid"])
        verbatim[rv.row_id("test", u)] = {"calculator": inst.loc[u, "Calculator Name"], "note": inst.loc[u, "Patient Note"],
                                          "question": inst.loc[u, "Question"]}
    headers = [h for _, h, _ in rv.COLUMNS]
    assert not [h for h in headers if re.search(r"label|priority|vote|score|rank|relabel|audit|original", h, re.I)]
    scanned = 0
    for ws in wb.worksheets:
        for row in ws.iter_rows():
            for cell in row:
                v = cell.value
                if v is None:
                    continue
                scanned += 1
                assert isinstance(v, str), f"{ws.title}!{cell.coordinate} holds a number: {v!r}"
                if ws.title == rv.REVIEW and cell.row > 1:
                    rid = ws.cell(row=cell.row, column=1).value
                    key = rv.COLUMNS[cell.column - 1][0]
                    assert key not in rv.INPUTS, f"input cell {cell.coordinate} is pre-filled"
                    if key in verbatim[rid]:
                        assert v == verbatim[rid][key]  # upstream text exactly, nothing appended
                        continue
                for tok in forbidden:
                    assert not re.search(boundary.format(re.escape(tok)), v), \
                        f"{ws.title}!{cell.coordinate} contains {tok!r}: {v[:80]!r}"
    assert scanned > 5 * 5
    # rows are listed by row id, not in priority order
    ids = [wb[rv.REVIEW].cell(row=r, column=1).value for r in range(2, 7)]
    assert ids == sorted(ids)


def test_packet_input_cells_are_validated_and_the_rest_locked(real, tmp_path):
    path = rv.export_packet(real["instances"], [("test", u) for u in CASES], REVIEWER, tmp_path / "p.xlsx")
    ws = load_workbook(path)[rv.REVIEW]
    assert ws.protection.sheet
    covered = {}
    for dv in ws.data_validations.dataValidation:
        for rng in dv.sqref.ranges:
            for cell in rng.cells:
                covered[(cell[0], cell[1])] = dv
    for r in range(2, 7):
        otype_hint = ws.cell(row=r, column=rv.COL["answer_format"]).value
        for key in rv.INPUTS:
            col = rv.COL[key]
            assert (r, col) in covered, f"no validation on {key} of row {r}"
            assert ws.cell(row=r, column=col).protection.locked is False
        ans = covered[(r, rv.COL["answer"])]
        assert ans.type == "custom" and '"N/A"' in ans.formula1 and ans.error == otype_hint
        assert ws.cell(row=r, column=rv.COL["note"]).protection.locked is not False
    assert set(load_workbook(path).sheetnames) == {"Instructions", "Review", "Packet"}
    text = rv.INSTRUCTIONS_TEXT
    assert "N/A" in text and "timepoint" in text and "guideline" in text


# ----------------------------------------------------------------- the CLI in a project copy


@pytest.fixture()
def project(real, campaign_dir, tmp_path, monkeypatch):
    """A project copy with the upstream outputs, where the real `audit` and `relabel` stages run
    offline on their defaults (the rules audit and the replayed published consensus)."""
    root = tmp_path / "proj"
    (root / "data" / "corrections").mkdir(parents=True)
    (root / "data" / "upstream").mkdir(parents=True)
    (root / "data" / "upstream" / "validate-medcalc-labels").symlink_to(campaign_dir)
    shutil.copy(ROOT / "params.yaml", root / "params.yaml")
    for rel, df in (("interim/instances.parquet", real["instances"]), ("audit/recompute.parquet", real["recompute"]),
                    ("maintained/instances.parquet", real["maintained"])):
        (root / "data" / rel).parent.mkdir(parents=True, exist_ok=True)
        df.to_parquet(root / "data" / rel, index=False)
    (root / "data" / "campaign").mkdir()
    shutil.copy(real["campaign"], root / "data" / "campaign" / "audit-2025.yaml")
    monkeypatch.setenv("MEDCALC_ROOT", str(root))
    for stage in ("audit", "relabel"):
        r = runner.invoke(app, [stage])
        assert r.exit_code == 0, r.output
    return root


def test_cli_triage_export_import_apply(project):
    r = runner.invoke(app, ["triage"])
    assert r.exit_code == 0, r.output
    q = pd.read_csv(project / "data/triage/queue.csv")
    assert len(q) == 1047 and int(q["in_budget"].sum()) == 50 and q["rank"].tolist() == list(range(1, 1048))
    m = json.loads((project / "data/triage/metrics.json").read_text())
    assert set(m["precision_at_k"]) == {"25", "50", "100"} and m["budget"] == 50
    assert (project / "data/triage/errors_found.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    curve = pd.read_csv(project / "data/triage/errors_found.csv")
    assert curve.columns.tolist() == ["reviews", "triage", "triage_without_relabel", "uniform_expected"]

    who = q.loc[q["in_budget"], "reviewer"].value_counts().index[0]
    packet = project / "packet.xlsx"
    r = runner.invoke(app, ["review", "export", "--reviewer", who, "--out", str(packet), "--max-rows", "5"])
    assert r.exit_code == 0, r.output
    mine = q[(q["reviewer"] == who) & q["in_budget"]].head(5)
    assert len(mine) == 5
    rl = pd.read_parquet(project / "data/relabel/labels.parquet").set_index("uid")
    answers = {}
    for u in mine["uid"]:
        label = rl.loc[u, "label"]
        answers[rv.row_id("test", u)] = {"answer": label, "comment": "Recomputed from the note."}
    bad = dict(answers)
    first = next(iter(bad))
    bad[first] = {"answer": "soon", "comment": "x"}
    where = fill(packet, bad, project / "bad.xlsx")
    r = runner.invoke(app, ["review", "import", str(project / "bad.xlsx")])
    assert r.exit_code == 2
    assert f"sheet Review, cell F{where[first]}: 'soon' is not a valid" in r.output
    assert list((project / "data/corrections").iterdir()) == []

    fill(packet, answers, project / "good.xlsx")
    r = runner.invoke(app, ["review", "import", str(project / "good.xlsx"), "--decided-at", "2026-02-02"])
    assert r.exit_code == 0, r.output
    written = project / "data/corrections/review-good.yaml"
    recs = ledger.load([written])
    assert len(recs) == 5 and all(x["decision"] == "accepted" for x in recs)
    r = runner.invoke(app, ["apply"])
    assert r.exit_code == 0, r.output
    after = pd.read_parquet(project / "data/maintained/instances.parquet").set_index("uid")
    assert (after.loc[mine["uid"], "Label Source"] == "physician").all()
    # re-running triage no longer routes these rows (their label now comes from a physician)
    assert runner.invoke(app, ["triage"]).exit_code == 0
    q2 = pd.read_csv(project / "data/triage/queue.csv").set_index("uid")
    assert not q2.loc[mine["uid"], "in_budget"].any()
    assert int(q2["in_budget"].sum()) == 50
    r = runner.invoke(app, ["summary"])
    assert r.exit_code == 0 and "triage precision@k vs uniform sampling" in r.output
