"""The certified inputs as one table and back (ledger/evidence_rows.py): stage certify's table and the
``Evidence`` documents a release ships are one shape, on rows of the real v1.0 test split."""

from __future__ import annotations

import json

from medcalc_maintained.calculators.certify import certify_row
from medcalc_maintained.core.rows import entities_or_empty
from medcalc_maintained.ledger.evidence_rows import certify_items, documents, frame, row_document, row_items


def _rows(instances, uids):
    return [r for r in instances.to_dict("records") if int(r["uid"]) in uids]


def test_a_table_of_input_documents_reads_back_as_the_same_documents(real_instances):
    rows = _rows(real_instances, {1, 3, 47, 141})  # certified, not addressed, contradicted, absent by convention
    docs = [[i.document() for i in certify_row(int(r["Calculator ID"]), entities_or_empty(r["entities"]),
                                                r["Patient Note"])] for r in rows]
    verdicts = {d["verdict"] for ds in docs for d in ds}
    assert verdicts == {"supports", "contradicts", "not_addressed"}
    table = frame(rows, docs)
    assert len(table) == sum(len(d) for d in docs)
    back = documents(table)
    for r, ds in zip(rows, docs):
        assert json.loads(json.dumps(back[("test", int(r["uid"]))])) == json.loads(json.dumps(ds))


def test_the_row_document_states_the_row_verdict(real_instances):
    rows = _rows(real_instances, {1, 47})
    docs = certify_items(row_items(rows, {("test", int(r["uid"])): r["entities"] for r in rows}, {}))
    cells = {int(r["uid"]): json.loads(row_document(d)) for r, d in zip(rows, docs)}
    assert cells[1]["status"] == "certified" and all(i["verdict"] == "supports" for i in cells[1]["inputs"])
    sex = next(i for i in cells[47]["inputs"] if i["name"] == "sex")
    assert cells[47]["status"] == "contradicted"
    assert (sex["value"], sex["verdict"]) == ("Female", "supports")  # "primigravida" (the "live male baby" is the baby's)
    htn = next(i for i in cells[47]["inputs"] if i["name"] == "Hypertension history")
    assert (htn["value"], htn["verdict"], htn["note_value"]) == (True, "contradicts", False)


def test_an_item_is_certified_once_per_process_and_each_caller_gets_its_own_documents(real_instances, monkeypatch):
    """Releases share most rows' items: a repeated item is read from the memo, equal to certifying it anew,
    and changing a returned document changes no later answer."""
    from medcalc_maintained.ledger import evidence_rows

    rows = _rows(real_instances, {1, 47, 141})
    items = row_items(rows, {("test", int(r["uid"])): r["entities"] for r in rows}, {})
    monkeypatch.setattr(evidence_rows, "_memo", {})
    certified: list[int] = []
    real = evidence_rows._certify

    def counting(chunk):
        certified.extend(int(i[0]) for i in chunk)
        return real(chunk)

    monkeypatch.setattr(evidence_rows, "_certify", counting)
    twice = [items[0], items[1], items[0], items[2]]
    first = certify_items(twice)
    assert len(certified) == 3  # the repeated item once
    anew = [[i.document() for i in certify_row(cid, ents, note, rec, q, abstains=a)] for cid, ents, note, rec, q, a in twice]
    assert first == anew and first[0] == first[2] and first[0] is not first[2]
    first[0][0]["verdict"] = "changed"
    again = certify_items(list(reversed(twice)))
    assert len(certified) == 3  # nothing certified again
    assert again == list(reversed(anew))
    monkeypatch.setattr(evidence_rows, "MEMO_ITEMS", 3)  # a full memo starts over: it never grows past its bound
    (extra,) = row_items(_rows(real_instances, {3}), {("test", 3): _rows(real_instances, {3})[0]["entities"]}, {})
    certify_items([extra])
    assert len(certified) == 4 and len(evidence_rows._memo) == 1
    assert certify_items([items[1]]) == [anew[1]] and len(certified) == 5
