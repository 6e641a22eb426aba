"""``ledger/derivation_check.py``: what ``ledger derive`` checks, as a library call (issue 47, item 4).

The row is test uid 593 (SIRS, upstream label 2) of the real v1.0 split in a project with an empty
ledger. Its upstream entities are 37.4 °C, 87 beats per minute, 20 breaths per minute and a WBC of
830/µL: only the WBC (< 4,000/µL) meets a SIRS criterion (temperature 36-38 °C, heart rate not over
90, respiratory rate not over 20), so the declared definition gives 1, not the label 2. The note's
first count, 7920/µL at a nearby clinic, meets none: 0 criteria."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml

from medcalc_maintained.core.errors import DataError
from medcalc_maintained.ledger.derivation_check import applied_derivation, check_row
from medcalc_maintained.ledger.records import Record
from medcalc_maintained.project import Project
from tests.support.ledger_support import minimal_project

QUOTE = "white blood cell (WBC) count of 7920/μL"


@pytest.fixture(scope="module")
def project(tmp_path_factory, real_instances) -> Project:
    return Project.load(minimal_project(tmp_path_factory.mktemp("derive") / "p", real_instances))


def note_of_593(project: Project) -> str:
    inst = pd.read_parquet(project.instances, columns=["split", "uid", "Patient Note"])
    return str(inst[(inst["split"] == "test") & (inst["uid"] == 593)].iloc[0]["Patient Note"])


def inputs_file(project: Project, name: str, **extra) -> Path:
    """A derivation file with one input: the WBC count of 7920/µL, quoted at its offsets in the note."""
    start = note_of_593(project).index(QUOTE)
    inp = {"name": "White blood cell count", "value": 7920, "unit": "/µL",
           "evidence": {"start": start, "end": start + len(QUOTE), "text": QUOTE}, **extra}
    path = project.root / name
    path.write_text(yaml.safe_dump({"inputs": [inp]}, allow_unicode=True), encoding="utf-8")
    return path


def test_without_a_file_the_row_s_label_is_checked_against_its_upstream_entities(project):
    check = check_row(project, "test", 593)
    assert check.from_record and check.inputs == [] and check.verdicts == [] and check.problems == []
    assert check.label == "2" and check.result.value == "1" and check.result.status == "unexplained"
    assert not check.derives and not check.holds
    assert int(check.row["Calculator ID"]) == 51 and str(check.row["Label Status"]) == "unverified"


def test_a_label_given_is_checked_instead_of_the_row_s(project):
    check = check_row(project, "test", 593, label="1")
    assert check.label == "1" and check.result.status == "reproduced" and check.holds


def test_an_input_from_another_time_derives_only_with_its_timepoint_stated(project):
    plain = check_row(project, "test", 593, inputs_file=inputs_file(project, "plain.yaml"), label="0")
    assert not plain.from_record and [i["value"] for i in plain.inputs] == [7920]
    assert plain.result.value == "0" and plain.problems == []  # the value gives the label ...
    assert [v.rule for v in plain.verdicts] == ["timepoint"]   # ... but the quote is dated at the clinic
    assert plain.result.status == "unexplained" and not plain.holds
    dated = check_row(project, "test", 593, label="0", inputs_file=inputs_file(
        project, "dated.yaml", timepoint={"when": "at a nearby clinic", "why": "the first blood test of the illness"}))
    assert [v.supports for v in dated.verdicts] == [True]
    assert dated.result.status == "inputs-recorded" and dated.holds


def test_a_quote_that_is_not_the_note_s_text_is_an_evidence_problem(project):
    path = project.root / "false.yaml"
    path.write_text(yaml.safe_dump({"inputs": [{"name": "White blood cell count", "value": 7920, "unit": "/µL",
                                                "evidence": {"start": 0, "end": 12, "text": "not the note"}}]}))
    check = check_row(project, "test", 593, inputs_file=path, label="0")
    assert check.problems == ["inputs[0] (White blood cell count) evidence text 'not the note' is not the note's "
                              "text at 0..12"]
    assert not check.holds


def test_bad_input_is_a_data_error_naming_the_option_or_file(project):
    with pytest.raises(DataError, match=r"--definition.*definition 'nope' is not one of"):
        check_row(project, "test", 593, definition="nope")
    path = inputs_file(project, "named.yaml")
    path.write_text("definition: nope\n")
    with pytest.raises(DataError, match=r"named\.yaml.*definition 'nope'"):
        check_row(project, "test", 593, inputs_file=path)
    with pytest.raises(DataError, match="uid 99999 does not exist in split 'test'"):
        check_row(project, "test", 99999)


def test_the_applied_derivation_skips_a_disputed_record():
    records = [Record({"id": "C-1", "decision": "accepted", "inputs": [{"name": "x"}], "definition": "alt",
                       "justification": None, "rationale": "r"}, "f.yaml", 0),
               Record({"id": "C-2", "decision": "disputed", "inputs": [{"name": "y"}]}, "f.yaml", 1),
               Record({"id": "C-3", "decision": "accepted", "inputs": [{"name": "z"}]}, "f.yaml", 2, valid=False)]
    assert applied_derivation(records, "C-1;C-2") == {"inputs": [{"name": "x"}], "definition": "alt",
                                                      "justification": None}
    assert applied_derivation(records, "C-1;C-3") == applied_derivation(records, "C-1")  # an invalid record is no record
    assert applied_derivation(records, "") == {} and applied_derivation(records, "C-2") == {}
