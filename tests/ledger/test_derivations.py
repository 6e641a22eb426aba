"""Derivations: a verified label is its declared definition applied to recorded, evidenced inputs.

Real rows of the v1.0 test split and the imported audit campaign, and small records made here:
the reconstruction classes of known rows, a hand-made correction with inputs that reproduces its
label and a tampered one that breaks the ledger rules and contract naming row and input, the
refusal of a value the declared definition cannot give (GCS with a component not testable), and a
physician re-confirming a corrected label."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from medcalc_maintained import ledger
from medcalc_maintained.cli import app
from medcalc_maintained.contracts.views import ledger_view
from medcalc_maintained.core.answers import limits
from medcalc_maintained.core.rows import entities_or_empty
from medcalc_maintained.ledger import derivation as D
from medcalc_maintained.ledger import reconstruct as R
from medcalc_maintained.ledger.apply import build
from tests.support.ledger_support import minimal_project, record

runner = CliRunner()


def _row(instances: pd.DataFrame, uid: int) -> dict:
    return instances[instances["uid"] == uid].iloc[0].to_dict()


def _record(rec: dict, uid: int) -> dict:
    """A contributor's accepted record of ``uid`` (ledger_support's record, fields of ``rec`` on top)."""
    return record(id=f"T-{uid:04d}", uid=uid, source="contributor", reviewer={"id": "tester", "role": "contributor"},
                  blinded=False, release="2.0.0", **rec)


@pytest.fixture(scope="module")
def by_uid(campaign_records) -> dict[int, dict]:
    return {r["uid"]: r for r in campaign_records}


@pytest.mark.parametrize("uid, alternative, declared, label", [
    (997, "cdc_2016", "290", "389"),     # MME: the correction used CDC 2016 factors; 2022 gives v1.0's 290
    (1003, "cdc_2016", "322", "301"),
    (739, "delta_gap_minus_delta_bicarbonate", "2.1", "-3"),   # Na - Cl - HCO3 - 12, not (AG - 12) - (24 - HCO3)
])
def test_corrections_that_follow_another_definition_are_definition_contradictions(by_uid, real_instances, uid,
                                                                                    alternative, declared, label):
    rec = by_uid[uid]
    assert (rec["new_value"], rec["reconstruction"], rec["definition"]) == (label, R.CONTRADICTION, alternative)
    row = _row(real_instances, uid)
    assert D.derive(row["calculator_id"], entities_or_empty(row["entities"])).value == declared
    assert D.derive(row["calculator_id"], entities_or_empty(row["entities"]), definition=alternative).value == label


@pytest.mark.parametrize("uid, declared", [(211, "8"), (155, "21.547")])
def test_abstentions_the_declared_convention_decides_are_definition_contradictions(by_uid, uid, declared):
    """Child-Pugh: unmentioned ascites is absent; MDRD: race unstated is not Black (definitions.yaml)."""
    rec = by_uid[uid]
    assert (rec["new_value"], rec["reconstruction"]) == ("N/A", R.CONTRADICTION)
    line = next(e for e in rec["evidence"] if e.startswith("derivation ("))
    assert line.endswith(f"gives {declared}")


def test_a_convention_overrules_a_never_mentioned_finding_by_its_structured_field(real_instances, real_recompute):
    """uid 211 (Child-Pugh, N/A): the check finds ascites never mentioned, and the declared definition
    scores unmentioned ascites as absent, so the N/A contradicts it. The ledger learns which input
    the finding is about from ``unmentioned``: the same prose without it justifies the N/A."""
    from medcalc_maintained.stages.import_campaign import campaign_checks

    checks = campaign_checks(real_instances, real_recompute)
    found = checks[checks["uid"] == 211].to_dict("records")
    assert [f["unmentioned"] for f in found if f["check"] == "required_input_absent"] == [("ascites",)]
    row = _row(real_instances, 211)
    args = (row["calculator_id"], entities_or_empty(row["entities"]), row["Patient Note"], "N/A", "N/A", "N/A",
            row["Output Type"])
    got = R.reconstruct(*args, findings=found)
    assert got.klass == R.CONTRADICTION and "never mentions the ascites" in got.reason
    assert R.reconstruct(*args, findings=[{**f, "unmentioned": ()} for f in found]).klass == R.JUSTIFIED
    with pytest.raises(ValueError, match="structured=True"):
        R.reconstruct(*args, findings=[{k: v for k, v in f.items() if k != "unmentioned"} for f in found])


def test_every_campaign_record_has_a_class_and_the_reconstructed_ones_reproduce(by_uid, real_instances):
    rows = real_instances.set_index("uid")
    classes = {r["reconstruction"] for r in by_uid.values()}
    assert classes <= set(R.CLASSES) and R.INPUTS in classes and R.JUSTIFIED in classes
    rebuilt = [r for r in by_uid.values() if r["reconstruction"] == R.INPUTS]
    assert rebuilt
    for rec in rebuilt:
        row = rows.loc[rec["uid"]]
        note = row["Patient Note"]
        for inp in rec["inputs"]:
            ev = inp["evidence"]
            assert inp["reconstructed"] is True
            assert ev["start"] is None or note[ev["start"]:ev["end"]] == ev["text"]
        d = D.derive(row["calculator_id"], entities_or_empty(row["entities"]), rec["inputs"])
        lo, hi = limits(rec["new_value"], row["Output Type"])
        assert D.reproduces(d.value, rec["new_value"], lo, hi, row["Output Type"]), rec["uid"]
    # an abstention justified by a physician's stated reason keeps it
    assert by_uid[249]["reconstruction"] == R.JUSTIFIED and "surgery" in by_uid[249]["justification"]


def test_search_reads_a_number_after_its_name_with_evidence():
    note = "A 60-year-old man. Heart rate 118 beats per minute, respiratory rate 24. Temperature 38.9 degrees celsius."
    ents = {"Temperature": [38.9, "degrees celsius"], "Heart Rate or Pulse": [80, "beats per minute"],
            "respiratory rate": [24, "breaths per minute"], "White blood cell count": [8000, "/µL"]}
    assert D.derive(51, ents).value == "2"  # SIRS from the wrong heart rate: temperature + respiratory rate
    inputs = R.search_inputs(51, ents, note, "3", "3", "3", "integer")
    assert inputs is not None and len(inputs) == 1
    (inp,) = inputs
    assert (inp["name"], inp["value"], inp["unit"]) == ("Heart Rate or Pulse", 118, "beats per minute")
    ev = inp["evidence"]
    assert note[ev["start"]:ev["end"]] == ev["text"] and ev["text"].startswith("118")
    # nothing in the note gives 4: no patch is invented
    assert R.search_inputs(51, ents, note, "4", "4", "4", "integer") is None


def _wbc(instances: pd.DataFrame, value: float) -> dict:
    """An input of uid 593 (SIRS): the white cell count, quoted from the note ("830/µL")."""
    note = _row(instances, 593)["Patient Note"]
    text = "830/µL"
    start = note.index(text)
    return {"name": "White blood cell count", "value": value, "unit": "/µL",
            "evidence": {"start": start, "end": start + len(text), "text": text}}


def test_a_correction_with_inputs_reproduces_its_label_and_a_tampered_input_breaks_it(real_instances, tmp_path):
    row = _row(real_instances, 593)
    ents = entities_or_empty(row["entities"])
    good = _wbc(real_instances, 830)
    derived = D.derive(row["calculator_id"], ents, [good]).value
    old = str(row["Ground Truth Answer"])
    # the recorded WBC (leucopenia, < 4,000/µL) is one SIRS criterion
    assert int(derived) == int(D.derive(row["calculator_id"], {**ents, "White blood cell count": [8300, "/µL"]}).value) + 1
    status = "confirmed" if derived == old else "corrected"
    path = tmp_path / "c.yaml"
    rec = _record({"old_value": old, "new_value": derived, "label_status": status, "inputs": [good],
                   "error_type": None if status == "confirmed" else "extraction"}, 593)
    path.write_text(ledger.dump([rec], path), encoding="utf-8")
    assert build(real_instances, [path]).set_index("uid").loc[593, "Ground Truth Answer"] == derived

    tampered = dict(good, value=8300)  # a normal count: one criterion fewer, the label no longer follows
    path.write_text(ledger.dump([dict(rec, inputs=[tampered])], path), encoding="utf-8")
    with pytest.raises(ledger.LedgerError) as err:
        build(real_instances, [path])
    text = str(err.value)
    assert "uid 593" in text and "White blood cell count = [8300, '/µL']" in text and "field 'inputs'" in text
    # the ledger contract's view says the same, record by record
    view = ledger_view(ledger.records_frame(ledger.load([path])), real_instances)
    assert view["derivation_holds"].tolist() == [False]
    path.write_text(ledger.dump([rec], path), encoding="utf-8")
    assert ledger_view(ledger.records_frame(ledger.load([path])), real_instances)["derivation_holds"].tolist() == [True]

    # evidence that is not the note's text at its offsets is refused
    bad = dict(good, evidence=dict(good["evidence"], text="999/µL"))
    path.write_text(ledger.dump([dict(rec, inputs=[bad])], path), encoding="utf-8")
    with pytest.raises(ledger.LedgerError, match=r"evidence text '999/µL' is not the note's text"):
        build(real_instances, [path])


def test_an_unknown_definition_and_a_contributor_override_are_refused(real_instances, tmp_path):
    row = _row(real_instances, 997)
    path = tmp_path / "c.yaml"
    rec = _record({"old_value": str(row["Ground Truth Answer"]), "new_value": "389", "label_status": "corrected",
                   "definition": "cdc_2031"}, 997)
    path.write_text(ledger.dump([rec], path), encoding="utf-8")
    with pytest.raises(ledger.LedgerError, match=r"definition 'cdc_2031' is not one of calculators/definitions.yaml"):
        build(real_instances, [path])
    rec = dict(rec, definition=None, override={"reason": "clinical judgement"})
    path.write_text(ledger.dump([rec], path), encoding="utf-8")
    with pytest.raises(ledger.LedgerError, match="an override .* needs a physician reviewer"):
        build(real_instances, [path])
    rec["definition"] = "cdc_2016"
    del rec["override"]
    path.write_text(ledger.dump([rec], path), encoding="utf-8")
    assert build(real_instances, [path]).set_index("uid").loc[997, "Ground Truth Answer"] == "389"


@pytest.fixture
def root(tmp_path, real_instances) -> Path:
    return minimal_project(tmp_path / "p", real_instances)


def _propose(root, *extra):
    args = ["propose", "--uid", "862", "--new-value", extra[0], "--error-type", "extraction", "--rationale",
            "GCS recomputed from the note", "--date", "2026-03-02", *extra[1:]]
    return runner.invoke(app, args, env={"MEDCALC_ROOT": str(root)})


def test_propose_refuses_a_gcs_the_declared_definition_cannot_give(root):
    """uid 862: the eye response is not testable, so the declared gcs-1974-not-testable-undefined is N/A."""
    r = _propose(root, "13")
    assert r.exit_code != 0
    assert "gcs-1974-not-testable-undefined gives no value (Best eye response (not testable))" in r.output
    assert list((root / "data" / "corrections").iterdir()) == []
    # naming the alternative: the value must be the alternative's (1T scores the eye 1: 10, not 13)
    r = _propose(root, "13", "--definition", "not_testable_scored_1")
    assert r.exit_code != 0 and "not_testable_scored_1 applied to the row's entities with no input changed gives 10" in r.output
    assert _propose(root, "10", "--definition", "not_testable_scored_1").exit_code == 0
    # an override states its reason and needs a physician
    r = _propose(root, "13", "--override-reason", "eye opening to voice on re-examination")
    assert r.exit_code != 0 and "needs a physician reviewer" in r.output
    r = _propose(root, "13", "--override-reason", "eye opening to voice on re-examination", "--reviewer-role",
                 "physician", "--source", "physician", "--blinded")
    assert r.exit_code == 0, r.output
    recs = ledger.load([root / "data" / "corrections"])
    assert [(x["new_value"], x.get("definition"), (x.get("override") or {}).get("reason")) for x in recs] == [
        ("10", "not_testable_scored_1", None), ("13", None, "eye opening to voice on re-examination")]


def test_reconstruction_report_counts_match_its_rows(campaign_records):
    from medcalc_maintained.ledger import campaign

    table = campaign.reconstruction_table(campaign_records)
    summary = json.loads(json.dumps(campaign.reconstruction_summary(table)))
    assert summary["rows"] == len(campaign_records) == 887
    assert sum(n for by in summary["counts"].values() for n in by.values()) == 887
    for klass, shown in summary["examples"].items():
        assert len(shown) == min(10, int((table["reconstruction"] == klass).sum()))
