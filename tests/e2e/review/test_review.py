"""Review packets: the single-blind packet (no label, vote or score anywhere), its validated input
cells, and the export -> fill -> import -> apply round trip on the real v1.0 split with the imported
campaign ledger, directly and through the CLI in a project copy.

The end-to-end tests of this subject; the fast ones are in tests/review/test_review.py."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from typer.testing import CliRunner

from medcalc_maintained import ledger
from medcalc_maintained.cli import app
from medcalc_maintained.ledger.apply import build
from medcalc_maintained.planning import triage as tr
from medcalc_maintained.review import adjudicate
from medcalc_maintained.review import packet as pkt
from medcalc_maintained.review.layout import PacketError
from tests.review import test_review as fast_tests
from tests.review.test_review import ADJ
from tests.support.triage_support import ANSWERS, CASES, REVIEWER, controlled_relabel, fill

# shared with the fast tests
real = fast_tests.real


runner = CliRunner()


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
