"""Release 2.2.0: evidence that states what it claims. Built from the committed ledger as `dvc repro`
builds it: every derivation counts only verifier-accepted inputs, the labels the issue's reading
showed wrong are corrected, harmonized N/As without evidenced inputs are set back, N/A rows carry no
numeric derivation value, and the release contract ``evidence_supports_inputs`` blocks a release
whose shipped inputs do not state what they claim."""

from __future__ import annotations

import json
import shutil

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from medcalc_maintained.calculators.evidence import verify
from medcalc_maintained.ledger.derivation import DERIVED
from tests.support.release_support import built_copy, cli

# builds releases 2.1.0 and 2.2.0 from the repro project

FULL = ("data", "full", "test-00000-of-00001.parquet")


@pytest.fixture(scope="module")
def built(tmp_path_factory, repro_project):
    return built_copy(tmp_path_factory, repro_project, "2.2.0", "r22")


@pytest.fixture(scope="module")
def full(built):
    _root, out = built
    return pq.read_table(out.joinpath(*FULL)).to_pandas().set_index("Row Number")


def test_the_labels_the_reading_showed_wrong_are_corrected(full):
    want = {891: "13", 902: "10", 905: "9", 427: "6", 146: "N/A", 152: "N/A"}
    assert {u: full.at[u, "Ground Truth Answer"] for u in want} == want
    for u in (146, 152):  # the physicians' N/A stands: neither note states a serum creatinine
        doc = json.loads(full.at[u, "Derivation"])
        assert doc["status"] == "na-justified" and doc["value"] is None and "creatinine" in doc["reason"]


def test_every_derivation_rests_on_inputs_the_verifier_accepts(built, full):
    """Every input carries the verdict 2.2.0 published (frozen in data/released/published.json:
    a later verifier never rewrites a published release), and each frozen verdict is the one on
    that input; an input no frozen verdict covers carries today's verifier's."""
    from medcalc_maintained.ledger.published import load_published, verdict_key

    frozen = load_published(built[0] / "data" / "released" / "published.json")["2.2.0"].verdicts
    verified = full[full["Label Status"] != "unverified"]
    derived = unexplained = from_frozen = 0
    for uid, r in verified.iterrows():
        doc = json.loads(r["Derivation"])
        assert doc["status"] == r["Derivation Status"]
        for inp in doc["inputs"]:
            assert inp["source"] in ("search", "hand", "physician", "upstream") and "reconstructed" not in inp
            published = frozen.get(verdict_key(int(r["Calculator ID"]), r["Patient Note"], inp))
            if published is not None:
                from_frozen += 1
                assert inp["verdict"] == published, (uid, inp)
            else:
                again = verify(int(r["Calculator ID"]), inp, r["Patient Note"])
                assert again.supports == inp["verdict"]["supports"], (uid, inp)
            if doc["status"] in DERIVED:
                assert inp["verdict"]["supports"], (uid, inp)  # no bare number, no other quantity's value ...
        if doc["status"] in DERIVED:
            derived += 1
        else:
            unexplained += doc["status"] == "unexplained"
        if r["Ground Truth Answer"] == "N/A":
            assert doc["value"] is None, uid  # an N/A ships no numeric derivation value
    assert derived + unexplained == len(verified) and derived >= 0.95 * len(verified)
    assert from_frozen == len(frozen) == 72  # every input 2.2.0 published


def test_the_inputs_the_issue_found_unsupported_never_ship_as_evidence(full):
    # (uid, input, the quote 2.1.0 shipped as its evidence)
    shipped = [(127, "Heart Rate or Pulse", "36.8"), (595, "Heart Rate or Pulse", "18"), (891, "Glasgow Coma Score", "15"),
               (200, "Bilirubin", "125 umol/L"), (745, "Chloride", "110"), (902, "Continous positive airway pressure", None),
               (905, "Continous positive airway pressure", None), (427, "Peripheral vascular disease", None),
               (427, "Connective tissue disease", None), (925, "Major Surgery in the last month", None)]
    for uid, name, quote in shipped:
        doc = json.loads(full.at[uid, "Derivation"])
        for inp in doc["inputs"]:
            if inp["name"] == name and (quote is None or inp["evidence"]["text"] == quote) and inp["value"] not in (False, None):
                assert doc["status"] not in DERIVED, (uid, name, doc["status"])


def test_the_card_and_changelog_state_the_verifier_accepted_share_and_each_change(built, full):
    _root, out = built
    card = (out / "README.md").read_text(encoding="utf-8")
    verified = full[full["Label Status"] != "unverified"]
    derived = int(verified["Derivation Status"].isin(DERIVED).sum())
    assert f"**{derived} of {len(verified)} verified labels" in card and "evidence verifier accepts" in card
    log = (out / "CHANGELOG.md").read_text(encoding="utf-8")
    section = log.split("## 2.2.0")[1].split("\n## ")[0]
    review = section.split("### Evidence review")[1]
    changed = review.split("#### Labels changed")[1].split("####")[0]
    assert "| 891 |" in changed and "14 → 13" in changed and "| 146 |" in changed and "40.402 → N/A" in changed
    withdrawn = review.split("#### Derivations withdrawn to `unexplained`")[1].split("####")[0]
    assert "| 127 |" in withdrawn and "wrong-quantity" in withdrawn and "| 200 |" in withdrawn
    rerecorded = review.split("#### Inputs re-recorded")[1]
    assert "| 257 |" in rerecorded


def test_the_release_contract_blocks_a_shipped_input_that_quotes_another_quantity(built, full, tmp_path):
    root, out = built
    r = cli(root, "validate", "--no-docs", str(out))
    assert r.exit_code == 0, r.output
    bad = tmp_path / "bad"
    shutil.copytree(out, bad)
    path = bad.joinpath(*FULL)
    table = pq.read_table(path)
    df = table.to_pandas()
    i = int(df.index[df["Row Number"] == 153][0])  # MDRD: creatinine 175 umol/L on admission, by hand
    doc = json.loads(df.at[i, "Derivation"])
    assert doc["status"] == "inputs-recorded" and doc["inputs"][0]["name"] == "creatinine"
    note = df.at[i, "Patient Note"]
    start = note.index("175")
    doc["inputs"][0]["evidence"] = {"start": start, "end": start + 3, "text": "175"}  # a bare number
    df.at[i, "Derivation"] = json.dumps(doc)
    pq.write_table(pa.Table.from_pandas(df, schema=table.schema, preserve_index=False), path)
    r = cli(root, "validate", "--no-docs", str(bad))
    assert r.exit_code != 0
    line = next(x for x in r.output.splitlines() if "evidence_supports_inputs" in x)
    assert line.startswith("BLOCKING") and "uid 153" in line and "creatinine" in line and "'175'" in line
    assert "bare-number" in " ".join(r.output.split())
