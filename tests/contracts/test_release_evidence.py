"""Contract view ``evidence`` (contracts/release_evidence.py): a release's recorded verdicts are checked
again against the row's own note. Rows of the real v1.0 test split, certified here, then tampered with."""

from __future__ import annotations

import copy
import json

import pandas as pd
import pytest

from medcalc_maintained.calculators.certify import certify_row
from medcalc_maintained.contracts.release_evidence import evidence_view
from medcalc_maintained.core.rows import entities_or_empty
from medcalc_maintained.ledger.evidence_rows import row_document

FACTS = ["evidence_recorded", "status_follows_verdicts", "inputs_complete", "quotes_are_note", "verdicts_reverify"]


def _full_row(instances: pd.DataFrame, uid: int, docs: list[dict] | None = None, status: str | None = None) -> dict:
    r = instances[instances["uid"] == uid].iloc[0].to_dict()
    if docs is None:
        docs = [i.document() for i in certify_row(int(r["Calculator ID"]), entities_or_empty(r["entities"]),
                                                 r["Patient Note"])]
    cell = row_document(docs)
    return {"split": "test", "uid": uid, "Calculator ID": int(r["Calculator ID"]), "Patient Note": r["Patient Note"],
            "Relevant Entities": r["Relevant Entities"], "Label Status": "confirmed",
            "Ground Truth Answer": r["Ground Truth Answer"], "Output Type": r["Output Type"],
            "Derivation": json.dumps({"status": "reproduced", "inputs": []}), "Evidence": cell,
            "Evidence Status": status or json.loads(cell)["status"]}


@pytest.fixture(scope="module")
def certified(real_instances):
    """Cockcroft-Gault uid 1 (sex, age, weight, height, creatinine) and MDRD uid 141 (race absent by
    the definition's convention): every input supported."""
    rows = [_full_row(real_instances, 1), _full_row(real_instances, 141)]
    assert [json.loads(r["Evidence"])["status"] for r in rows] == ["certified", "certified"]
    return rows


def _view(rows: list[dict], version: str = "2.3.0") -> pd.DataFrame:
    return evidence_view(pd.DataFrame(rows), version).set_index("uid")


def test_recorded_verdicts_of_certified_rows_reverify(certified):
    view = _view(certified)
    assert view[FACTS].all().all(), view["evidence_problem"].tolist()
    assert view["evidence_problem"].isna().all()


def test_releases_before_2_3_0_have_no_evidence_to_check(certified):
    assert evidence_view(pd.DataFrame(certified), "2.2.0").empty


def test_a_quote_moved_off_its_text_is_caught(real_instances, certified):
    docs = copy.deepcopy(json.loads(certified[0]["Evidence"])["inputs"])
    q = next(d for d in docs if d["name"] == "creatinine")["quote"]
    q["start"], q["end"] = q["start"] + 1, q["end"] + 1
    view = _view([_full_row(real_instances, 1, docs)])
    assert not view.at[1, "quotes_are_note"]
    assert "quote of creatinine" in view.at[1, "evidence_problem"]


def test_a_supported_value_the_quote_does_not_state_fails_reverification(real_instances, certified):
    docs = copy.deepcopy(json.loads(certified[0]["Evidence"])["inputs"])
    age = next(d for d in docs if d["name"] == "age")
    age["value"] = age["value"] + 3  # the note states 87
    view = _view([_full_row(real_instances, 1, docs)])
    assert not view.at[1, "verdicts_reverify"] and not view.at[1, "inputs_complete"]
    assert "age supports 90" in view.at[1, "evidence_problem"]


def test_a_status_the_verdicts_do_not_give_is_caught(real_instances, certified):
    docs = copy.deepcopy(json.loads(certified[0]["Evidence"])["inputs"])
    next(d for d in docs if d["name"] == "weight")["verdict"] = "not_addressed"
    row = _full_row(real_instances, 1, docs)
    doc = json.loads(row["Evidence"])
    doc["status"] = "certified"  # claims every input supported
    row["Evidence"], row["Evidence Status"] = json.dumps(doc), "certified"
    view = _view([row])
    assert view.at[1, "evidence_recorded"] and not view.at[1, "status_follows_verdicts"]


def test_an_input_the_derivation_uses_must_be_listed(real_instances, certified):
    docs = [d for d in json.loads(certified[0]["Evidence"])["inputs"] if d["name"] != "weight"]
    view = _view([_full_row(real_instances, 1, docs)])
    assert not view.at[1, "inputs_complete"] and "weight" in view.at[1, "evidence_problem"]


def test_evidence_that_is_missing_or_disagrees_with_its_status_is_not_recorded(certified):
    missing = {**certified[0], "Evidence": None}
    other = {**certified[1], "Evidence Status": "contradicted"}
    view = _view([missing, other])
    assert not view.at[1, "evidence_recorded"] and not view.at[141, "evidence_recorded"]


def test_an_input_the_question_states_is_checked_against_the_question(real_instances):
    r = real_instances[real_instances["uid"] == 948].iloc[0]  # steroid conversion: the target is the question's
    docs = [i.document() for i in certify_row(int(r["Calculator ID"]), entities_or_empty(r["entities"]),
                                              r["Patient Note"], (), r["Question"])]
    target = next(d for d in docs if d["name"] == "target steroid")
    assert target["verdict"] == "supports" and target["quote_in"] == "question"
    row = {**_full_row(real_instances, 948, docs), "Question": r["Question"]}
    assert _view([row])[FACTS].all().all()
    target["quote_in"] = "note"  # the same offsets read in the note are not the quote
    view = _view([{**_full_row(real_instances, 948, docs), "Question": r["Question"]}])
    assert not view.at[948, "quotes_are_note"]
