"""The `disputed` tier: a record that says a reading of the note contradicts a label while nothing
certifies it keeps the label as it was, marks the row `disputed` and takes it out of `default`; a
later accepted record decides it. Records on uid 1 of the v1.0 test split (upstream 25.238)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml

from medcalc_maintained.core.labels import in_default
from medcalc_maintained.ledger import LedgerError
from medcalc_maintained.ledger import apply as apply_stage
from medcalc_maintained.ledger.derivation import row_derivations
from medcalc_maintained.ledger.records import collect
from medcalc_maintained.stages.ingest import ingest
from tests.support.ledger_support import record


@pytest.fixture(scope="module")
def instances(v1_test_csv) -> pd.DataFrame:
    return ingest([("test", v1_test_csv)]).instances


def ledger(tmp_path: Path, *records: dict) -> Path:
    path = tmp_path / "ledger.yaml"
    path.write_text(yaml.safe_dump({"corrections": list(records)}, sort_keys=False), encoding="utf-8")
    return path


def dispute(**kw) -> dict:
    return record(**{"id": "D-1", "release": "2.1.0", "old_value": "30", "new_value": "27.5", "decision": "disputed",
                     "rationale": "two readings disagree on the weight", **kw})


def test_a_disputed_row_keeps_its_label_and_leaves_default(instances, tmp_path):
    path = ledger(tmp_path, record(id="A-1", release="2.0.0"), dispute())
    at_20 = apply_stage.build(instances, [path], upto="2.0.0").set_index("uid")
    at_21 = apply_stage.build(instances, [path], upto="2.1.0").set_index("uid")
    assert at_20.loc[1, "Label Status"] == "corrected" and at_20.loc[1, "Ground Truth Answer"] == "30"
    row = at_21.loc[1]
    assert row["Label Status"] == "disputed" and row["Ground Truth Answer"] == "30"  # the label stays
    assert row["Correction IDs"] == "A-1;D-1" and not in_default(row["Label Status"])
    assert in_default("corrected") and not in_default("unverified")
    # its derivation states both values and the reason, beside the label's own derivation status
    records, _ = collect([path])
    docs = row_derivations(at_21.reset_index(), instances, records)
    doc = next(d for d, u in zip(docs, at_21.index) if u == 1)
    assert doc["status"] == "disputed" and doc["label_status"] in ("reproduced", "unexplained")
    assert doc["disputed"] == {"value": "27.5", "record": "D-1", "reason": "two readings disagree on the weight"}


def test_a_later_accepted_record_decides_a_disputed_row(instances, tmp_path):
    path = ledger(tmp_path, record(id="A-1", release="2.0.0"), dispute(),
                  record(id="A-2", release="2.2.0", old_value="30", new_value="27.5", decided_at="2026-02-01"))
    out = apply_stage.build(instances, [path], upto="2.2.0").set_index("uid")
    assert out.loc[1, "Label Status"] == "corrected" and out.loc[1, "Ground Truth Answer"] == "27.5"


@pytest.mark.parametrize("bad, words", [
    (dispute(old_value="31"), "old_value '31' does not match the current label '30'"),
    (dispute(label_status="confirmed"), "label_status 'confirmed' but new_value '27.5' differs from the upstream label"),
])
def test_a_disputed_record_follows_the_record_rules(instances, tmp_path, bad, words):
    with pytest.raises(LedgerError) as exc:
        apply_stage.build(instances, [ledger(tmp_path, record(id="A-1", release="2.0.0"), bad)])
    assert words in str(exc.value)


def test_a_row_cannot_be_corrected_and_disputed_in_one_release(instances, tmp_path):
    path = ledger(tmp_path, record(id="A-1", release="2.1.0"), dispute(id="D-2", decided_at="2026-02-01"))
    with pytest.raises(LedgerError) as exc:
        apply_stage.build(instances, [path])
    assert "second accepted record for test uid 1 in release 2.1.0: D-2" in str(exc.value)
