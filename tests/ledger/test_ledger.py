"""The corrections ledger: a hand-made ledger applied to a few instances, and every rejection."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from medcalc_maintained.cli import app
from medcalc_maintained.ledger import LedgerError
from medcalc_maintained.ledger import apply as apply_stage
from medcalc_maintained.stages.ingest import ingest
from tests.support.ledger_support import record

runner = CliRunner()


@pytest.fixture(scope="module")
def instances(v1_test_csv) -> pd.DataFrame:
    return ingest([("test", v1_test_csv)]).instances


def row(instances, uid):
    return instances.loc[instances["uid"] == uid].iloc[0]


def write_ledger(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump({"corrections": records}, sort_keys=False), encoding="utf-8")
    return path


def test_hand_made_ledger_applied_to_instances(instances, tmp_path):
    r1, r3, r927, r1029 = (row(instances, u) for u in (1, 3, 928, 1029))
    assert r1["Ground Truth Answer"] == "25.238"
    ledger = write_ledger(tmp_path / "ledger" / "batch.yaml", [
        record(),  # decimal corrected: 25.238 -> 30
        record(id="T-0002", uid=3, old_value=r3["Ground Truth Answer"], new_value="N/A", label_status="abstain",
               error_type="unanswerable", rationale="No current creatinine in the note."),
        record(id="T-0003", uid=928, old_value=r927["Ground Truth Answer"], new_value="2014-09-12",
               label_status="corrected", error_type="aggregation"),
        record(id="T-0004", uid=1029, old_value=r1029["Ground Truth Answer"], new_value="14 weeks 1 day",
               label_status="confirmed", error_type=None, rationale="Same gestational age in weeks and days."),
        record(id="T-0005", uid=2, old_value=row(instances, 2)["Ground Truth Answer"], new_value="1",
               decision="rejected", label_status="corrected"),
    ])
    out = apply_stage.build(instances, [ledger.parent])
    by = out.set_index("uid")
    # decimal: label 30, limits 30*0.95 = 28.5 and 30*1.05 = 31.5
    assert by.loc[1, "Ground Truth Answer"] == "30"
    assert (by.loc[1, "Lower Limit"], by.loc[1, "Upper Limit"]) == ("28.5", "31.5")
    assert by.loc[1, "Original Ground Truth Answer"] == "25.238"
    assert by.loc[1, "Label Status"] == "corrected" and by.loc[1, "Correction IDs"] == "T-0001"
    assert by.loc[1, "Label Source"] == "contributor" and by.loc[1, "Error Type"] == "extraction"
    # abstention: N/A everywhere
    assert tuple(by.loc[3, ["Ground Truth Answer", "Lower Limit", "Upper Limit"]]) == ("N/A", "N/A", "N/A")
    assert by.loc[3, "Label Status"] == "abstain"
    # date written MM/DD/YYYY, limits equal the answer
    assert tuple(by.loc[928, ["Ground Truth Answer", "Lower Limit", "Upper Limit"]]) == ("09/12/2014",) * 3
    # gestational age keeps v1.0's representation ('14 weeks', '1 days'); a bare 99 (days) is refused
    assert by.loc[1029, "Ground Truth Answer"] == "('14 weeks', '1 days')"
    assert by.loc[1029, "Label Status"] == "confirmed"
    # rejected record changes nothing; untouched rows stay unverified with the upstream label
    assert by.loc[2, "Label Status"] == "unverified" and by.loc[2, "Correction IDs"] == ""
    assert by.loc[2, "Ground Truth Answer"] == row(instances, 2)["Ground Truth Answer"]
    assert (out["Label Status"] == "unverified").sum() == len(instances) - 4
    # drop-in: every upstream column is still there
    for col in ("Row Number", "Calculator ID", "Patient Note", "Question", "Relevant Entities", "Ground Truth Explanation"):
        assert col in out.columns


def test_records_chain_across_releases(instances, tmp_path):
    ledger = write_ledger(tmp_path / "l.yaml", [
        record(id="A-1", release="2.0.0", new_value="30"),
        record(id="A-2", release="2.1.0", old_value="30", new_value="N/A", label_status="abstain", error_type="underspecified"),
    ])
    v20 = apply_stage.build(instances, [ledger], upto="2.0.0").set_index("uid")
    v21 = apply_stage.build(instances, [ledger], upto="2.1.0").set_index("uid")
    assert v20.loc[1, "Ground Truth Answer"] == "30"
    assert v21.loc[1, "Ground Truth Answer"] == "N/A" and v21.loc[1, "Correction IDs"] == "A-1;A-2"


def invoke_apply(instances_path: Path, ledger: Path, out: Path):
    return runner.invoke(app, ["apply", "--ledger", str(ledger), "--instances", str(instances_path), "--out", str(out)])


@pytest.fixture(scope="module")
def instances_file(instances, tmp_path_factory) -> Path:
    p = tmp_path_factory.mktemp("inst") / "instances.parquet"
    instances.to_parquet(p)
    return p


@pytest.mark.parametrize(
    "records, field, words",
    [
        ([record(uid=99999)], "uid", "does not exist"),
        ([record(old_value="24.0")], "old_value", "does not match the current label"),
        ([record(), record(id="T-0002", new_value="31")], "decision", "second accepted record"),
        ([record(error_type="typo")], "error_type", "is not one of"),
        ([record(label_status="fixed")], "label_status", "is not one of"),
        ([record(decision="maybe")], "decision", "is not one of"),
        ([record(id="T-0001"), record(id="T-0001", uid=2, old_value="38", new_value="40")], "id", "already used"),
        ([{k: v for k, v in record().items() if k != "rationale"}], "rationale", "required"),
        ([record(new_value="lots")], "new_value", "not a valid decimal answer"),
        ([record(new_value="N/A", label_status="corrected")], "label_status", "needs label_status 'abstain'"),
    ],
)
def test_bad_ledger_is_rejected_naming_file_and_field(records, field, words, instances_file, tmp_path):
    ledger = write_ledger(tmp_path / "bad-batch.yaml", records)
    out = tmp_path / "out"
    result = invoke_apply(instances_file, ledger, out)
    text = " ".join(result.output.split())
    assert result.exit_code != 0
    assert "bad-batch.yaml" in text and f"field '{field}'" in text and words in text, text
    assert not out.exists() or not any(out.iterdir())


def test_malformed_yaml_is_rejected(instances_file, tmp_path):
    bad = tmp_path / "broken.yaml"
    bad.write_text("corrections:\n  - id: T-1\n    uid: [1, 2\n", encoding="utf-8")
    out = tmp_path / "out"
    result = invoke_apply(instances_file, bad, out)
    text = " ".join(result.output.split())
    assert result.exit_code != 0 and "broken.yaml" in text and "malformed YAML at line" in text
    assert not out.exists()


def test_all_problems_are_listed(instances, tmp_path):
    ledger = write_ledger(tmp_path / "many.yaml", [record(uid=99999), record(id="T-2", error_type="typo")])
    with pytest.raises(LedgerError) as exc:
        apply_stage.build(instances, [ledger])
    fields = {p.field for p in exc.value.problems}
    assert {"uid", "error_type"} <= fields


# -- control characters: refused by ledger validation, never written anywhere -----------------
@pytest.mark.parametrize("change, field, shown", [
    ({"rationale": "Weight \x1b[31mwas\x1b[0m read from an earlier admission."}, "rationale", "U+001B (ESC)"),
    ({"evidence": ["note, paragraph 2", "ring \x07 the bell"]}, "evidence.1", "U+0007 (BEL)"),
    ({"reviewer": {"id": "md-1\x7f", "role": "physician", "specialty": "nephrology"}}, "reviewer.id", "U+007F (DEL)"),
    ({"rationale": "C1 control \x9b here"}, "rationale", "U+009B"),
])
def test_control_characters_in_a_record_are_refused(change, field, shown, instances_file, tmp_path):
    ledger = write_ledger(tmp_path / "ctl.yaml", [record(**change)])
    assert "\\" in ledger.read_text()  # YAML carries them as escapes (\e, \a, ...) in a quoted string
    out = tmp_path / "out"
    result = invoke_apply(instances_file, ledger, out)
    text = " ".join(result.output.split())
    assert result.exit_code == 2, text
    assert "ctl.yaml" in text and "record T-0001" in text and f"field '{field}'" in text and shown in text, text
    assert "Traceback" not in result.output and "\x1b" not in result.output and "\x07" not in result.output
    assert not out.exists() or not any(out.iterdir())


def test_tabs_and_newlines_in_text_are_kept(instances, tmp_path):
    from medcalc_maintained.ledger import records as ledger_records

    ledger = write_ledger(tmp_path / "ok.yaml", [record(rationale="Line one.\n\tLine two.\r\n")])
    recs, problems = ledger_records.collect([ledger])
    assert problems == [] and recs[0]["rationale"] == "Line one.\n\tLine two.\r\n"


def test_propose_refuses_a_rationale_with_an_escape_sequence(tmp_path, real_instances):
    from tests.support.ledger_support import minimal_project

    root = minimal_project(tmp_path / "p", real_instances)
    result = runner.invoke(app, ["propose", "--uid", "41", "--new-value", "N/A", "--error-type", "unanswerable",
                                 "--rationale", "The note lacks an input.\x1b]0;owned\x07", "--date", "2026-03-02"],
                           env={"MEDCALC_ROOT": str(root)})
    text = " ".join(result.output.split())
    assert result.exit_code != 0 and "field 'rationale'" in text and "U+001B (ESC)" in text, text
    assert list((root / "data" / "corrections").iterdir()) == []


def test_propose_reads_its_inputs_file_first(tmp_path, real_instances):
    """``propose(inputs_file=)`` (``propose --inputs``): the derivation file is read before anything
    else, so a malformed one is refused naming it, here before the empty rationale; nothing is written."""
    from medcalc_maintained.core.errors import DataError
    from medcalc_maintained.ledger.propose import propose
    from medcalc_maintained.project import Project
    from tests.support.ledger_support import minimal_project

    root = minimal_project(tmp_path / "p", real_instances)
    bad = tmp_path / "inputs.yaml"
    bad.write_text("inputs: [5]\n")
    with pytest.raises(DataError, match=r"inputs\.yaml, field 'inputs\.0': 5 is not of type 'object'"):
        propose(Project.load(root), uid=41, new_value="N/A", error_type="unanswerable", rationale=" ", inputs_file=bad)
    bad.write_text("inputs: []\n")  # the same call with a well-formed file: the rationale is refused
    with pytest.raises(DataError, match="--rationale: must say why"):
        propose(Project.load(root), uid=41, new_value="N/A", error_type="unanswerable", rationale=" ", inputs_file=bad)
    assert list((root / "data" / "corrections").iterdir()) == []
