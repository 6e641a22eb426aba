"""A published record is held to the verdicts its release published (ledger/published.py: frozen_verdicts),
never to a later verifier: check_and_apply takes them per release. A record on the real uid 1 whose quote
today's verifier rejects."""

from __future__ import annotations

import pytest

from medcalc_maintained.core.rows import entities_or_empty
from medcalc_maintained.ledger.apply import check_and_apply
from medcalc_maintained.ledger.derivation import derive
from medcalc_maintained.ledger.published import verdict_key
from medcalc_maintained.ledger.records import LedgerError, dump, load
from tests.support.ledger_support import record


@pytest.fixture(scope="module")
def published_record(real_instances, tmp_path_factory):
    row = real_instances[real_instances["uid"] == 1].iloc[0]
    note = row["Patient Note"]
    quote = note[: note.index(".")]  # the first sentence: it states no weight of 60 kg
    inp = {"name": "weight", "value": 60.0, "unit": "kg", "evidence": {"start": 0, "end": len(quote), "text": quote},
           "source": "hand"}
    value = derive(2, entities_or_empty(row["entities"]), [inp]).value
    assert value is not None
    rec = record(release="2.2.0", old_value=str(row["Ground Truth Answer"]), new_value=value, inputs=[inp])
    path = tmp_path_factory.mktemp("ledger") / "published.yaml"
    path.write_text(dump([rec], path), encoding="utf-8")
    return load([path]), verdict_key(2, note, inp)


def test_todays_verifier_refuses_the_quote(real_instances, published_record):
    records, _ = published_record
    with pytest.raises(LedgerError, match=r"inputs\[0\] \(weight\).*rule"):
        check_and_apply(real_instances, records)


def test_the_published_verdict_holds_the_record_of_its_release_only(real_instances, published_record):
    records, key = published_record
    kept = {"supports": True, "rule": "supports", "reason": "as published"}
    out = check_and_apply(real_instances, records, frozen={"2.2.0": {key: kept}})
    assert out.loc[out["uid"] == 1, "Correction IDs"].item() == "T-0001"
    with pytest.raises(LedgerError, match="weight"):  # another release's verdicts say nothing of it
        check_and_apply(real_instances, records, frozen={"2.1.0": {key: kept}})
