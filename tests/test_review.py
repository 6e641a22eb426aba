"""Review packets: the single-blind packet (no label, vote or score anywhere), its validated input
cells, and the export -> fill -> import -> apply round trip on the real v1.0 split with the imported
campaign ledger, directly and through the CLI in a project copy."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest
from openpyxl import load_workbook
from typer.testing import CliRunner

from medcalc_maintained import ledger
from medcalc_maintained.cli import app
from medcalc_maintained.core.answers import format_answer, parse_answer
from medcalc_maintained.core.io import DataError
from medcalc_maintained.ledger.apply import build
from medcalc_maintained.planning import triage as tr
from medcalc_maintained.review import adjudicate
from medcalc_maintained.review import packet as pkt
from medcalc_maintained.review.layout import PacketError
from triage_support import ANSWERS, CASES, REVIEWER, config, controlled_relabel, fill, relabel_and_flags

runner = CliRunner()
ADJ = adjudicate.Adjudication(("relabel", "physician"), "review")


@pytest.fixture(scope="module")
def real(real_instances, real_recompute, real_maintained, campaign_ledger, campaign_table):
    """The shared session fixtures, plus relabel labels and audit flags built from them."""
    relabel, flags = relabel_and_flags(real_instances, real_recompute, campaign_table)
    return {"instances": real_instances, "recompute": real_recompute, "campaign": campaign_ledger,
            "maintained": real_maintained, "relabel": relabel, "flags": flags}


@pytest.mark.parametrize("raw, otype, style, problem", [
    ("N/A", "integer", "gestational_age", None),
    ("14 weeks 2 days", "integer", "gestational_age", None),
    ("100", "integer", "gestational_age", "write weeks and days, as W weeks D days"),
    ("09/20/2014", "date", None, None),
    ("14 weeks 2 days", "integer", None, "weeks and days are not a number"),
    ("14 weeks 2 days", "decimal", None, "weeks and days are not a number"),
    ("4.5", "integer", None, "not a whole number"),
    ("4", "integer", None, None),
    ("4.5", "decimal", None, None),
    ("abc", "decimal", None, "not a number, date, gestational age or N/A"),
])
def test_answer_fits_its_output_type_and_label_style(raw, otype, style, problem):
    from medcalc_maintained.core.labels import fit_problem

    assert fit_problem(parse_answer(raw, otype), otype, style) == problem


def test_adjudication_comes_from_the_triage_parameters():
    from triage_support import project

    adj = adjudicate.Adjudication.from_section(project(adjudication={"agree_with": ["current"], "id_prefix": "r2"})
                                               .section("triage"))
    assert (adj.agree_with, adj.id_prefix) == (("current",), "r2")
    with pytest.raises(DataError, match=r"unknown adjudication reference\(s\) \['nurse'\]"):
        adjudicate.Adjudication.from_section(project(adjudication={"agree_with": ["nurse"]}).section("triage"))


@pytest.mark.slow
def test_round_trip_export_fill_import_apply(real, tmp_path):
    inst, camp = real["instances"], real["campaign"]
    before = real["maintained"].set_index("uid")
    assert [before.loc[u, "Ground Truth Answer"] for u in (41, 146, 928, 1029, 15)] == \
        ["4", "N/A", "09/12/2014", "('14 weeks', '1 days')", "37.663"]
    packet = pkt.export_packet(inst, [("test", u) for u in CASES], REVIEWER, tmp_path / "packet.xlsx")
    fill(packet, ANSWERS, tmp_path / "filled.xlsx")
    corrections = tmp_path / "corrections"
    corrections.mkdir()
    out = corrections / "review-md-im-1.yaml"
    records, pk = adjudicate.import_packet(tmp_path / "filled.xlsx", instances=inst, ledger_paths=[camp, corrections],
                                   relabel=controlled_relabel(real["relabel"]), recompute=real["recompute"],
                                   reviewers=[REVIEWER], adjudication=ADJ,
                                   out=out, decided_at="2026-02-01")
    assert ledger.load([out])  # a valid ledger file
    by = {r["uid"]: r for r in records}
    # 41: agrees with the relabel (4) and the current label -> accepted, confirmed
    assert (by[41]["decision"], by[41]["label_status"], by[41]["error_type"]) == ("accepted", "confirmed", None)
    # 146: 38.5 is inside the relabel's 38 +- 5% (36.1..39.9) -> accepted; it also agrees with the upstream
    # 40.402 within the band, so the row is confirmed and ships the upstream value, value for value
    assert (by[146]["decision"], by[146]["label_status"], by[146]["new_value"]) == ("accepted", "confirmed", "40.402")
    assert by[146]["old_value"] == "N/A" and by[146]["scoring_timepoint"] == "at admission"
    assert by[146]["error_type"] is None  # a confirmation has no error type
    # 928: 09/20/2014 is not the relabel's 09/12/2014 -> deferred, both values kept
    assert (by[928]["decision"], by[928]["new_value"], by[928]["second_opinion"]) == ("deferred", "09/20/2014", "09/12/2014")
    # 1029: 14 weeks 2 days = the relabel -> accepted, written in v1.0's tuple form
    assert (by[1029]["decision"], by[1029]["new_value"]) == ("accepted", "('14 weeks', '2 days')")
    # 15: the relabel has no label -> deferred, no second opinion
    assert (by[15]["decision"], by[15]["second_opinion"]) == ("deferred", None)
    for r in records:
        assert r["source"] == "physician" and r["blinded"] is True and r["reviewer"] == REVIEWER.as_record()
        assert r["rationale"] == ANSWERS[pkt.row_id("test", r["uid"])]["comment"]

    with pytest.raises(PacketError, match=r"cell A\d+: row test-00041 was already imported for reviewer md-im-1"):
        adjudicate.import_packet(tmp_path / "filled.xlsx", instances=inst, ledger_paths=[camp, corrections],
                         relabel=controlled_relabel(real["relabel"]), recompute=real["recompute"], reviewers=[REVIEWER],
                         adjudication=ADJ, out=corrections / "again.yaml", decided_at="2026-02-01")
    assert sorted(p.name for p in corrections.iterdir()) == ["review-md-im-1.yaml"]

    after = build(inst, [camp, corrections]).set_index("uid")
    changed = [u for u in after.index
               if not after.loc[u, ["Ground Truth Answer", "Label Status", "Label Source", "Correction IDs"]]
               .equals(before.loc[u, ["Ground Truth Answer", "Label Status", "Label Source", "Correction IDs"]])]
    assert sorted(changed) == [41, 146, 1029]
    assert after.loc[41, ["Ground Truth Answer", "Label Status", "Label Source"]].tolist() == ["4", "confirmed", "physician"]
    assert after.loc[41, "Correction IDs"] == "audit2025-00041;review-md-im-1-test-00041"
    assert after.loc[146, ["Ground Truth Answer", "Lower Limit", "Upper Limit", "Label Status"]].tolist() == \
        ["40.402", "38.3819", "42.4221", "confirmed"]
    assert after.loc[1029, "Ground Truth Answer"] == "('14 weeks', '2 days')"
    assert after.loc[928, "Ground Truth Answer"] == "09/12/2014" and after.loc[15, "Label Status"] == "unverified"


@pytest.mark.slow
def test_second_reviewer_agreeing_with_the_first_physician_is_accepted(real, tmp_path):
    inst, camp = real["instances"], real["campaign"]
    corrections = tmp_path / "corrections"
    corrections.mkdir()
    ob1, ob2 = tr.Reviewer("md-ob-1", "physician", "obstetrics"), tr.Reviewer("md-ob-2", "physician", "obstetrics")
    rl = controlled_relabel(real["relabel"])
    common = dict(instances=inst, ledger_paths=[camp, corrections], relabel=rl, recompute=real["recompute"],
                  reviewers=[ob1, ob2], adjudication=ADJ, decided_at="2026-02-01")
    for who, name in ((ob1, "first"), (ob2, "second")):
        p = pkt.export_packet(inst, [("test", 928)], who, tmp_path / f"{name}.xlsx")
        fill(p, {"test-00928": ANSWERS["test-00928"]}, p)
        recs, _ = adjudicate.import_packet(p, out=corrections / f"{name}.yaml", **common)
        assert recs[0]["decision"] == ("deferred" if name == "first" else "accepted")
    after = build(inst, [camp, corrections]).set_index("uid")
    assert after.loc[928, ["Ground Truth Answer", "Label Status", "Label Source"]].tolist() == \
        ["09/20/2014", "corrected", "physician"]


@pytest.mark.slow
def test_a_third_acceptance_is_reported_at_its_packet_row_and_nothing_written(real, tmp_path):
    inst, camp = real["instances"], real["campaign"]
    corrections = tmp_path / "corrections"
    corrections.mkdir()
    obs = [tr.Reviewer(f"md-ob-{i}", "physician", "obstetrics") for i in (1, 2, 3)]
    common = dict(instances=inst, ledger_paths=[camp, corrections], relabel=controlled_relabel(real["relabel"]),
                  recompute=real["recompute"], reviewers=obs, adjudication=ADJ, decided_at="2026-02-01")
    for who, name in zip(obs, ("first", "second", "third")):
        p = pkt.export_packet(inst, [("test", 928)], who, tmp_path / f"{name}.xlsx")
        fill(p, {"test-00928": ANSWERS["test-00928"]}, p)
        if name != "third":
            adjudicate.import_packet(p, out=corrections / f"{name}.yaml", **common)
    # a third acceptance of the same row in the same (unreleased) release breaks a ledger rule: reported
    # at the packet row, nothing written
    with pytest.raises(PacketError, match=r"third.xlsx, sheet Review, cell A2: record review-md-ob-3-test-00928.*"
                                          r"second accepted record"):
        adjudicate.import_packet(p, out=corrections / "third.yaml", **common)
    assert not (corrections / "third.yaml").exists()


def test_invalid_cells_are_reported_with_their_address_and_nothing_is_imported(real, tmp_path):
    inst, camp = real["instances"], real["campaign"]
    packet = pkt.export_packet(inst, [("test", u) for u in CASES], REVIEWER, tmp_path / "packet.xlsx")
    bad = dict(ANSWERS)
    bad["test-00146"] = {"answer": "abc"}
    bad["test-00041"] = {"answer": 4.5}
    bad["test-01029"] = {"answer": "N/A"}  # N/A without a comment
    bad["test-00015"] = {"answer": None}
    where = fill(packet, bad, tmp_path / "bad.xlsx")
    corrections = tmp_path / "corrections"
    corrections.mkdir()
    with pytest.raises(PacketError) as exc:
        adjudicate.import_packet(tmp_path / "bad.xlsx", instances=inst, ledger_paths=[camp, corrections],
                         relabel=controlled_relabel(real["relabel"]), recompute=real["recompute"], reviewers=[REVIEWER],
                         adjudication=ADJ, out=corrections / "x.yaml", decided_at="2026-02-01")
    text = str(exc.value)
    name = str(tmp_path / "bad.xlsx")
    assert f"{name}, sheet Review, cell F{where['test-00146']}: 'abc' is not a valid decimal answer" in text
    assert f"cell F{where['test-00041']}: '4.5' is not a valid integer answer (not a whole number)" in text
    assert f"cell I{where['test-01029']}: row test-01029 is answered N/A without a comment" in text
    assert f"cell F{where['test-00015']}: the answer of row test-00015 is empty" in text
    assert len(exc.value.problems) == 4
    assert list(corrections.iterdir()) == []


def test_packet_has_no_label_vote_or_score_in_any_cell(real, tmp_path):
    c = config()
    q = tr.route(tr.score(real["instances"], real["recompute"], real["relabel"], real["flags"], c), real["maintained"], c)
    who = c.reviewer(q.loc[q["in_budget"], "reviewer"].value_counts().index[0])
    from medcalc_maintained.quality.checks import run_checks
    from medcalc_maintained.review.workflow import note_evidence

    evidence = note_evidence(run_checks(real["instances"], real["recompute"]))
    mine = pkt.select_rows(q, who.id, max_rows=3)
    quoted = q[[(s, int(u)) in evidence for s, u in zip(q["split"], q["uid"])]].head(2)  # rows with note evidence
    rows = pd.concat([mine, quoted]).drop_duplicates(["split", "uid"])
    assert len(rows) == 5
    path = pkt.export_packet(real["instances"], zip(rows["split"], rows["uid"]), who, tmp_path / "p.xlsx", evidence)
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
        verbatim[pkt.row_id("test", u)] = {"calculator": inst.loc[u, "Calculator Name"], "note": inst.loc[u, "Patient Note"],
                                          "question": inst.loc[u, "Question"]}
    headers = [h for _, h, _ in pkt.COLUMNS]
    assert not [h for h in headers if re.search(r"label|priority|vote|score|rank|relabel|audit|original", h, re.I)]
    scanned = evidence_cells = 0
    for ws in wb.worksheets:
        for row in ws.iter_rows():
            for cell in row:
                v = cell.value
                if v is None:
                    continue
                scanned += 1
                assert isinstance(v, str), f"{ws.title}!{cell.coordinate} holds a number: {v!r}"
                if ws.title == pkt.REVIEW and cell.row > 1:
                    rid = ws.cell(row=cell.row, column=1).value
                    key = pkt.COLUMNS[cell.column - 1][0]
                    assert key not in pkt.INPUTS, f"input cell {cell.coordinate} is pre-filled"
                    if key in verbatim[rid]:
                        assert v == verbatim[rid][key]  # upstream text exactly, nothing appended
                        continue
                    if key == "evidence":  # only sentences quoted from the row's own note
                        note = verbatim[rid]["note"]
                        assert all(line[2:] in note for line in v.splitlines()), v
                        evidence_cells += 1
                        continue
                for tok in forbidden:
                    assert not re.search(boundary.format(re.escape(tok)), v), \
                        f"{ws.title}!{cell.coordinate} contains {tok!r}: {v[:80]!r}"
    assert scanned > 5 * 5
    assert evidence_cells >= 2
    # rows are listed by row id, not in priority order
    ids = [wb[pkt.REVIEW].cell(row=r, column=1).value for r in range(2, 7)]
    assert ids == sorted(ids)


def test_packet_input_cells_are_validated_and_the_rest_locked(real, tmp_path):
    path = pkt.export_packet(real["instances"], [("test", u) for u in CASES], REVIEWER, tmp_path / "p.xlsx")
    ws = load_workbook(path)[pkt.REVIEW]
    assert ws.protection.sheet
    covered = {}
    for dv in ws.data_validations.dataValidation:
        for rng in dv.sqref.ranges:
            for cell in rng.cells:
                covered[(cell[0], cell[1])] = dv
    for r in range(2, 7):
        otype_hint = ws.cell(row=r, column=pkt.COL["answer_format"]).value
        for key in pkt.INPUTS:
            col = pkt.COL[key]
            assert (r, col) in covered, f"no validation on {key} of row {r}"
            assert ws.cell(row=r, column=col).protection.locked is False
        ans = covered[(r, pkt.COL["answer"])]
        assert ans.type == "custom" and '"N/A"' in ans.formula1 and ans.error == otype_hint
        assert ws.cell(row=r, column=pkt.COL["note"]).protection.locked is not False
    assert set(load_workbook(path).sheetnames) == {"Instructions", "Review", "Packet"}
    text = pkt.INSTRUCTIONS_TEXT
    assert "N/A" in text and "timepoint" in text and "guideline" in text



# ----------------------------------------------------------------- the CLI in a project copy


@pytest.fixture()
def project(project_root, campaign_dir, monkeypatch):
    """A writable project copy with the pipeline's first outputs, where the real `audit` and `relabel`
    stages run offline on their defaults (the rules audit and the replayed published consensus)."""
    (project_root / "data" / "upstream").mkdir(parents=True, exist_ok=True)
    (project_root / "data" / "upstream" / "validate-medcalc-labels").symlink_to(campaign_dir)
    monkeypatch.setenv("MEDCALC_ROOT", str(project_root))
    for stage in ("audit", "relabel"):
        r = runner.invoke(app, [stage])
        assert r.exit_code == 0, r.output
    return project_root


@pytest.mark.slow
def test_cli_triage_export_import_apply(project):
    r = runner.invoke(app, ["triage"])
    assert r.exit_code == 0, r.output
    q = pd.read_csv(project / "data/triage/queue.csv")
    assert len(q) == 1047 and int(q["in_budget"].sum()) == 50 and q["rank"].tolist() == list(range(1, 1048))
    m = json.loads((project / "data/triage/summary.json").read_text())
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
        answers[pkt.row_id("test", u)] = {"answer": label, "comment": "Recomputed from the note."}
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
    again = q2.loc[mine["uid"]]
    # unless the label has no derivation: those go back to a physician whoever decided them
    assert not again.loc[~again["underived"], "in_budget"].any()
    assert again.loc[again["in_budget"], "evidence"].str.startswith("label has no derivation").all()
    assert int(q2["in_budget"].sum()) == 50
    r = runner.invoke(app, ["summary"])
    assert r.exit_code == 0 and "triage precision@k vs uniform sampling" in r.output
