"""Release 2.3.0's evidence review (data/corrections/2026-12-evidence-*.yaml): the labels a reading of the
note showed wrong are corrected with evidence the verifier certifies, no contradicted `unexplained` label of
2.2.0's `default` stays there, and no label of `default` that a quoted reading the verifier certifies contradicts
stays undecided: each is re-derived or leaves `default` as `disputed`, kept in `full` with both values and the
reason. Built from the committed ledger as `dvc repro` builds release 2.3.0."""

from __future__ import annotations

import json

import pytest

from medcalc_maintained.calculators.evidence import verify

CORRECTED = {211: "8", 215: "9", 848: "10", 229: "-1", 200: "9", 428: "15", 748: "1.238", 221: "0"}
DISPUTED = {435: ("11", "9"), 914: ("21", "22"), 919: ("18", "19"), 925: ("23", "22")}
CONTRADICTED_UNEXPLAINED_IN_2_2 = (200, 221, 428, 435, 748, 914, 919, 925)


@pytest.fixture(scope="module")
def tables(repro_project):
    from medcalc_maintained.project import Project
    from medcalc_maintained.release.plan import load_releases
    from medcalc_maintained.release.table_builder import build_tables

    project = Project.load(repro_project)
    (release,) = [r for r in load_releases(repro_project / "releases.yaml").releases if r.version == "2.3.0"]
    return build_tables(project, release)


@pytest.fixture(scope="module")
def full(tables):
    return tables.combined("full").set_index("uid")


def test_the_labels_the_reading_showed_wrong_are_corrected(full):
    assert {u: full.at[u, "Ground Truth Answer"] for u in CORRECTED} == CORRECTED
    for uid in CORRECTED:
        doc = json.loads(full.at[uid, "Derivation"])
        assert doc["status"] in ("reproduced", "inputs-recorded"), (uid, doc["reason"])
        for inp in doc["inputs"]:  # every recorded input is a quote the verifier certifies today
            assert inp["verdict"]["supports"], (uid, inp)
            assert verify(int(full.at[uid, "Calculator ID"]), inp, full.at[uid, "Patient Note"]).supports


def test_the_evidence_of_each_corrected_input_is_the_note_read_as_a_clinician_does(full):
    inputs = {u: {i["name"]: (i["value"], i["evidence"]["text"]) for i in json.loads(full.at[u, "Derivation"])["inputs"]}
              for u in (215, 848)}
    assert inputs[215]["Encephalopathy"] == (
        "Grade 1-2", "On neurological examination, the patient was disoriented and exhibited asterixis")
    assert inputs[848]["Best verbal response"][0] == "confused"


def test_no_contradicted_unexplained_label_stays_in_default(tables, full):
    default = tables.combined("default").set_index("uid")
    for uid in CONTRADICTED_UNEXPLAINED_IN_2_2:
        if uid in DISPUTED:
            assert uid not in default.index
        else:
            assert json.loads(full.at[uid, "Derivation"])["status"] in ("reproduced", "inputs-recorded")
    for uid, (label, reading) in DISPUTED.items():
        doc = json.loads(full.at[uid, "Derivation"])
        assert full.at[uid, "Label Status"] == "disputed" and full.at[uid, "Ground Truth Answer"] == label
        assert doc["status"] == "disputed" and doc["disputed"]["value"] == reading and doc["disputed"]["reason"]
    disputed = set(full.index[full["Label Status"] == "disputed"])
    assert disputed >= set(DISPUTED) and not disputed & set(default.index)
    assert len(default) == 887 - len(disputed)
    in_default = full[full.index.isin(default.index)]
    left = in_default[(in_default["Evidence Status"] == "contradicted") & (in_default["Derivation Status"] == "unexplained")]
    assert left.empty, left.index.tolist()


def test_a_shipped_derivation_that_took_another_vital_sign_is_re_derived_from_certified_inputs(full):
    """595 (SIRS) shipped in 2.2.0 with the respiratory rate (18) recorded as its heart rate; the label 2 is the
    definition on the pulse the note states and the bare "WBC 4.1" read as thousands per µL (4.1 /µL would be a
    leukopenia and give 3)."""
    assert full.at[595, "Ground Truth Answer"] == "2" and full.at[595, "Evidence Status"] == "certified"
    recorded = {i["name"]: (i["value"], i["unit"]) for i in json.loads(full.at[595, "Derivation"])["inputs"]}
    assert recorded["White blood cell count"] == (4.1, "10^3/µL")
    read = {i["name"]: i for i in json.loads(full.at[595, "Evidence"])["inputs"]}
    assert read["Heart Rate or Pulse"]["value"] == 137 and read["Heart Rate or Pulse"]["verdict"] == "supports"
    assert "pulse 137" in read["Heart Rate or Pulse"]["quote"]["text"]


def _records(name: str) -> list[dict]:
    import yaml

    from tests.support.paths import ROOT

    return yaml.safe_load((ROOT / "data" / "corrections" / name).read_text(encoding="utf-8"))["corrections"]


# the cut: the rows of 2.3.0's `default` whose contradicted inputs change the label (docs/readings/2026-12-evidence/,
# "The contradicted inputs of 2.3.0's default"), as two blind readings and a third decided them
CUT_CORRECTED = {49: "5", 135: "0", 483: "0.454", 755: "0.8"}
CUT_DISPUTED = {48: ("4", "3"), 792: ("10.5", "17.1"), 347: ("3", "4"), 540: ("1", "2"), 576: ("1", "2")}
# contradicted only by the silence convention (the readers quote the criterion), or by a reading that leaves the
# label inside its limits, or decided by a review record: they stay in `default`
CUT_KEPT = {221, 222, 226, 229, 232, 234, 353, 428, 438, 457, 747, 751, 833, 856, 899, 905, 988, 991}


def test_no_label_of_default_that_a_quoted_reading_changes_stays_undecided(tables, full):
    default = tables.combined("default").set_index("uid")
    for uid, label in CUT_CORRECTED.items():
        assert full.at[uid, "Ground Truth Answer"] == label and full.at[uid, "Label Status"] == "corrected", uid
        assert full.at[uid, "Evidence Status"] == "certified" and uid in default.index, uid
        doc = json.loads(full.at[uid, "Derivation"])
        assert doc["status"] == "inputs-recorded" and all(i["verdict"]["supports"] for i in doc["inputs"]), uid
    for uid, (label, reading) in CUT_DISPUTED.items():
        doc = json.loads(full.at[uid, "Derivation"])
        assert full.at[uid, "Ground Truth Answer"] == label and uid not in default.index, uid
        assert doc["disputed"]["value"] == reading, uid
    in_default = full[full.index.isin(default.index)]
    assert set(in_default.index[in_default["Evidence Status"] == "contradicted"]) == CUT_KEPT
    # 833: "He doesn’t have a history of any liver disease" is a denial (a typographic apostrophe)
    liver = [i for i in json.loads(full.at[833, "Evidence"])["inputs"] if i["name"].startswith("Liver disease")]
    assert liver and all(i["verdict"] == "supports" for i in liver)


def test_every_row_the_reading_recorded_is_derived_from_evidence(full):
    """data/corrections/2026-12-evidence-reading.yaml: two blind readings, certified by the verifier, re-evidence or
    (with a third reading's agreement) correct a label; each such row ships every input certified."""
    records = _records("2026-12-evidence-reading.yaml")
    assert len(records) >= 40
    for rec in records:
        uid = rec["uid"]
        assert full.at[uid, "Ground Truth Answer"] == rec["new_value"], uid
        assert full.at[uid, "Evidence Status"] == "certified", (uid, full.at[uid, "Evidence"][:300])
        shipped = {i["name"]: i for i in json.loads(full.at[uid, "Evidence"])["inputs"] if i["source"] == "recorded"}
        for inp in rec["inputs"]:
            assert shipped[inp["name"]]["verdict"] == "supports", (uid, inp["name"])
        if rec["old_value"] != rec["new_value"]:  # a changed label names the third reading that agrees
            assert "A third reading" in rec["rationale"], uid


def test_every_disputed_row_of_the_reading_keeps_its_label_and_leaves_default(tables, full):
    default = tables.combined("default").set_index("uid")
    for rec in _records("2026-12-evidence-disputes.yaml"):
        uid = rec["uid"]
        assert rec["decision"] == "disputed" and full.at[uid, "Label Status"] == "disputed", uid
        assert full.at[uid, "Ground Truth Answer"] == rec["old_value"] and uid not in default.index
        assert json.loads(full.at[uid, "Derivation"])["disputed"]["value"] == rec["new_value"]


def test_every_verified_row_states_what_its_note_says_of_each_input(repro_project, tables, full):
    """2.3.0's `full` ships stage certify's reading of every verified row (`Evidence Status`,
    `Evidence`), and its shares over `default` are the stage's."""
    summary = json.loads((repro_project / "data" / "evidence" / "summary.json").read_text(encoding="utf-8"))
    verified = full[full["Label Status"] != "unverified"]
    assert full.loc[full["Label Status"] == "unverified", "Evidence Status"].isna().all()
    assert set(verified["Evidence Status"]) <= {"certified", "contradicted", "not_addressed"}
    default = tables.combined("default").set_index("uid")
    in_default = verified.loc[verified.index.isin(default.index), "Evidence Status"].value_counts().to_dict()
    assert in_default == {k: summary["default"][k]["rows"] for k in ("certified", "contradicted", "not_addressed")
                          if summary["default"][k]["rows"]}
    for uid in (215, 848):  # the corrected inputs are certified quotes of their notes
        doc = json.loads(full.at[uid, "Evidence"])
        recorded = [i for i in doc["inputs"] if i["source"] == "recorded"]
        assert recorded and all(i["verdict"] == "supports" for i in recorded), (uid, recorded)


def test_the_recorded_verdicts_reverify_and_the_card_states_the_shares(full):
    from medcalc_maintained.contracts.release_evidence import evidence_view
    from medcalc_maintained.release.evidence_changes import headline_text

    sample = full.reset_index().iloc[::7]  # every 7th row: the contract runs on all of them in `validate`
    view = evidence_view(sample, "2.3.0")
    assert len(view) == int((sample["Label Status"] != "unverified").sum()) > 100
    facts = ["evidence_recorded", "status_follows_verdicts", "inputs_complete", "quotes_are_note", "verdicts_reverify"]
    assert view[facts].all().all(), view.loc[~view[facts].all(axis=1), "evidence_problem"].tolist()[:3]
    text = headline_text(full.reset_index(), "2.3.0")
    n = int((full["Label Status"] != "unverified").sum())
    certified = int((full["Evidence Status"] == "certified").sum())
    assert f"Over all {n} verified labels" in text and f"{certified} (" in text and "derived from evidence" in text
    assert headline_text(full.reset_index(), "2.2.0") == ""


def test_the_card_of_2_3_leads_with_what_a_visitor_needs_and_keeps_the_long_tables_last(repro_project, tables):
    """From 2.3.0 (core/versions.CARD_LEAD_FROM) the card opens with the score shift and evidence shares, then
    what the dataset is, how to evaluate and what changed; the column reference comes last, linked from the top."""
    from medcalc_maintained.release.card import render_card
    from medcalc_maintained.release.plan import load_releases

    plan = load_releases(repro_project / "releases.yaml")
    template = repro_project / "dataset_card.md"
    card = render_card(template.read_text(encoding="utf-8"), template, tables, plan)
    body = card.split("\n---\n", 1)[1]
    sections = [line[3:] for line in body.splitlines() if line.startswith("## ")]
    assert sections[:3] == ["Dataset summary", "How to evaluate", "What changed in this release"] and sections[-1] == "Fields"
    assert body.index("**Evidence.** Of the") < body.index("## Dataset summary")  # the shares open the card
    assert "[every column\nand value](#fields)" in body and "docs/harnesses.md" in body and "README. Every harness" not in body
    changed = body[body.index("## What changed in this release"):body.index("## Configs and splits")]
    assert "| **all calculators** |" in changed and "| Derivation Status | verified rows |" in changed
    assert "<!--" not in body and "lead order" not in body
