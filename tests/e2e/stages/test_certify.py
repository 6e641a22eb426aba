"""Stage `certify` on real rows: every input of every verified row gets a verdict with its quote, the
summary states the three shares the card gives, and triage routes a row whose input the note
contradicts. A copy of the pipeline project whose maintained labels are cut to a few rows (the
stage reads every verified row; the cut keeps the test fast)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from medcalc_maintained.project import Project

UIDS = (1, 2, 41, 47, 135, 146, 240, 300, 500, 951)  # 951: a steroid conversion, its target stated by the question


@pytest.fixture
def certified(project_root):
    from medcalc_maintained.stages import certify

    p = Project.load(project_root)
    maintained = pd.read_parquet(p.maintained)
    maintained[maintained["uid"].isin(UIDS)].to_parquet(p.maintained, index=False)
    frame, summary, seconds = certify.run(p, workers=1)
    assert seconds > 0
    return p, frame, summary


def test_every_input_of_every_verified_row_has_a_verdict(certified):
    p, frame, summary = certified
    verified = pd.read_parquet(p.maintained)
    verified = verified[verified["Label Status"] != "unverified"]
    assert set(frame["uid"]) == set(verified["uid"].astype(int))
    assert set(frame["verdict"]) <= {"supports", "contradicts", "not_addressed"}
    # a supported input quotes the note itself at its offsets (or is absent by the definition's convention); an
    # input the question states quotes the question
    texts = {"note": dict(zip(verified["uid"].astype(int), verified["Patient Note"])),
             "question": dict(zip(verified["uid"].astype(int), verified["Question"]))}
    for r in frame[(frame["verdict"] == "supports") & ~frame["convention"]].to_dict("records"):
        assert texts[r["quote_in"]][r["uid"]][r["quote_start"]:r["quote_end"]] == r["quote_text"], r
    assert set(frame.loc[frame["quote_in"] == "question", "name"]) == {"target steroid"}
    assert frame["quote_in"].isna().equals(frame["quote_start"].isna())
    v = summary["verified"]
    assert v["rows"] == len(verified) == sum(v[k]["rows"] for k in ("certified", "contradicted", "not_addressed"))
    on_disk = json.loads((p.path("data/evidence") / "summary.json").read_text())
    assert on_disk["verified"] == v and pd.read_parquet(p.path("data/evidence") / "inputs.parquet").shape == frame.shape


def test_a_heart_rate_the_note_states_otherwise_is_contradicted_and_routed(certified, evidence_tables):
    """uid 135: upstream's extraction says a heart rate of 115; the note's examination: 'heart rate of 76
    beats/min'. (uid 47, the case this test read before, is a mother whose baby is a boy: her sex is
    certified by 'primigravida'.)"""
    from medcalc_maintained.stages import certify, triage

    p, frame, _ = certified
    hr = frame[(frame["uid"] == 135) & (frame["name"] == "Heart Rate or Pulse")].iloc[0]
    assert (hr["verdict"], json.loads(hr["value"]), json.loads(hr["note_value"])) == ("contradicts", 115.0, "76 beats/min")
    assert "heart rate of 76" in hr["quote_text"]
    sex = frame[(frame["uid"] == 47) & (frame["name"] == "sex")].iloc[0]
    assert sex["verdict"] == "supports" and "primigravida" in sex["quote_text"].lower()
    reasons = certify.contradicted_rows(frame)
    assert "Heart Rate or Pulse = 115.0 but the note states \"76 beats/min\"" in reasons[("test", 135)]
    relabel, flags = evidence_tables
    for path, table in ((p.relabel_labels, relabel), (p.audit_flags, flags)):
        path.parent.mkdir(parents=True, exist_ok=True)
        table.to_parquet(path, index=False)
    run = triage.run(p, budget=5)
    row = run.queue[run.queue["uid"] == 135].iloc[0]
    assert bool(row["contradicted"]) and "evidence contradicts an input: Heart Rate or Pulse" in row["evidence"]


@pytest.fixture(scope="module")
def evidence_tables(real_instances, real_recompute, campaign_table):
    from tests.support.triage_support import relabel_and_flags

    return relabel_and_flags(real_instances, real_recompute, campaign_table)
