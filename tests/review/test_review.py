"""Review packets: the single-blind packet (no label, vote or score anywhere), its validated input
cells, and the export -> fill -> import -> apply round trip on the real v1.0 split with the imported
campaign ledger, directly and through the CLI in a project copy."""

from __future__ import annotations

import re

import pandas as pd
import pytest
from openpyxl import load_workbook

from medcalc_maintained.core.answers import format_answer, parse_answer
from medcalc_maintained.core.errors import DataError
from medcalc_maintained.planning import triage as tr
from medcalc_maintained.review import adjudicate
from medcalc_maintained.review import packet as pkt
from medcalc_maintained.review.layout import PacketError
from tests.support.triage_support import ANSWERS, CASES, REVIEWER, config, controlled_relabel, fill, relabel_and_flags

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
    from tests.support.triage_support import project

    adj = adjudicate.Adjudication.from_section(project(adjudication={"agree_with": ["current"], "id_prefix": "r2"})
                                               .section("triage"))
    assert (adj.agree_with, adj.id_prefix) == (("current",), "r2")
    with pytest.raises(DataError, match=r"unknown adjudication reference\(s\) \['nurse'\]"):
        adjudicate.Adjudication.from_section(project(adjudication={"agree_with": ["nurse"]}).section("triage"))


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
