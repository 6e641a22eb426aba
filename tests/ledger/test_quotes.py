"""Quotes located by their text (ledger/quotes.py) and what a new contributor meets in ``propose``
(issue 48 item 5): ``--quote`` and text-only evidence in ``--inputs`` get their offsets from the note
(refused, naming the text, when it is absent or occurs more than once), a unit-mismatch refusal names
``unit_reading``, an underivable value lists the calculator's published alternatives, and the
confirmation line echoes the value as typed.

Synthetic notes for the locator; the real v1.0 test split in a minimal project (uid 127: Wells PE,
"pulse rate was 108/min"; uid 824: "Albumin 3.5 mg/ dL"; uid 862: GCS with a component not
testable; uid 1: Cockcroft-Gault 25.238) for the command."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from medcalc_maintained import ledger
from medcalc_maintained.cli import app
from medcalc_maintained.core.errors import DataError
from medcalc_maintained.ledger import rules
from medcalc_maintained.ledger.quotes import QuoteError, evidence_line, locate, locate_inputs, text_only
from tests.support.ledger_support import minimal_project

runner = CliRunner()
NOTE = "BP 130/80 mm Hg, pulse rate was 108/min, temperature was 36.8 C. Pulse rate was 96/min on day 2."


# -- the locator ----------------------------------------------------------------------------------

def test_a_quote_that_occurs_once_gets_its_offsets():
    start, end = locate(NOTE, "pulse rate was 108/min")
    assert NOTE[start:end] == "pulse rate was 108/min" and start == 17
    assert evidence_line(NOTE, "108/min") == f"note[{NOTE.index('108/min')}:{NOTE.index('108/min') + 7}] '108/min'"


@pytest.mark.parametrize("text, words", [
    ("was", "'was' occurs 3 times in the note"),
    ("ulse rate was", "occurs 2 times"),                  # case as printed: "pulse" and "Pulse" both hold it
    ("pulse rate was 110/min", "'pulse rate was 110/min' does not occur in the note"),
    ("Pulse Rate was 108/min", "does not occur"),         # case is the note's
    ("  ", "an empty quote locates nothing"),
])
def test_a_quote_absent_or_repeated_is_refused_naming_it(text, words):
    with pytest.raises(QuoteError, match=words) as err:
        locate(NOTE, text)
    if "times" in words:
        assert "quote a longer passage" in str(err.value)


def test_overlapping_occurrences_count():
    with pytest.raises(QuoteError, match="'aa' occurs 2 times"):
        locate("aaa", "aa")


def test_only_evidence_given_as_text_alone_is_located():
    assert text_only("108/min") == "108/min" and text_only({"text": "108/min"}) == "108/min"
    assert text_only({"start": 1, "end": 2, "text": "x"}) is None and text_only({"start": None, "text": "x"}) is None
    inputs = [{"name": "Heart Rate or Pulse", "value": 108, "evidence": {"text": "pulse rate was 108/min"}},
              {"name": "Temperature", "value": 36.8, "evidence": "temperature was 36.8 C"},
              {"name": "Hemoptysis", "value": False, "evidence": {"text": ""}},
              {"name": "Age", "value": 40, "evidence": {"start": 0, "end": 2, "text": "BP"}}]
    asked = []
    out = locate_inputs(inputs, lambda: asked.append(1) or NOTE, "in.yaml")
    assert [i["evidence"] for i in out] == [
        {"start": 17, "end": 39, "text": "pulse rate was 108/min"},
        {"start": NOTE.index("temperature"), "end": NOTE.index("temperature") + 22, "text": "temperature was 36.8 C"},
        {"start": None, "end": None, "text": ""},               # the form of an input absent from the note
        {"start": 0, "end": 2, "text": "BP"}]                   # offsets given: kept (still checked as before)
    assert asked == [1]                                         # the note is read once, when needed
    assert locate_inputs(inputs[3:], lambda: pytest.fail("the note is not needed"), "in.yaml") == inputs[3:]


def test_an_input_whose_text_is_absent_or_repeated_names_file_input_and_rule():
    inputs = [{"name": "Age", "value": 40, "evidence": {"start": 0, "end": 2, "text": "BP"}},
              {"name": "Heart Rate or Pulse", "value": 108, "evidence": {"text": "was"}}]
    with pytest.raises(DataError) as err:
        locate_inputs(inputs, lambda: NOTE, "in.yaml")
    text = str(err.value)
    assert text.startswith("in.yaml, field 'inputs.1.evidence': inputs[1] (Heart Rate or Pulse): evidence text 'was' "
                           "occurs 3 times in the note"), text
    assert "quote a longer passage" in text and "rule: a quote located by its text must occur exactly once" in text


# -- the ledger's messages --------------------------------------------------------------------------

def test_the_unit_mismatch_hint_names_unit_reading_with_an_example():
    hint = rules.fix_hint("unit-mismatch", {"name": "Albumin", "value": 3.5, "unit": "g/dL"})
    assert "unit_reading" in hint and "unit_reading: {printed: mg/dL, why:" in hint and "\n" not in hint
    assert "unit_reading" not in rules.fix_hint("unit-mismatch", {"name": "opioids", "value": [["morphine", 10, "mg"]]})
    assert rules.fix_hint("wrong-quantity", {"value": 3.5}) == ""


def test_an_underivable_value_lists_the_published_alternatives_or_says_there_are_none():
    rec = {"new_value": "13"}
    gcs = rules.underivable_problem(rec, calculator_id=21, output_type="integer",
                                    entities={"Best eye response": "eyes do not open (not testable)"})
    assert gcs is not None and "not_testable_scored_1 (a not-testable component scored 1" in gcs, gcs
    bmi = rules.underivable_problem({"new_value": "22"}, calculator_id=6, output_type="decimal", entities={})
    assert bmi is not None and "publishes no alternative definition of calculator 6" in bmi, bmi
    assert "name the alternative" not in bmi


# -- propose, as a contributor runs it -------------------------------------------------------------

@pytest.fixture
def root(tmp_path, real_instances) -> Path:
    return minimal_project(tmp_path / "p", real_instances)


def _propose(root: Path, uid: int, value: str, *extra: str, error_type: str = "extraction"):
    args = ["propose", "--uid", str(uid), "--new-value", value, "--error-type", error_type,
            "--rationale", "Read from the note.", "--date", "2026-11-27", *extra]
    return runner.invoke(app, args, env={"MEDCALC_ROOT": str(root)})


def _flat(r) -> str:
    return " ".join(r.output.split())


def _written(root: Path) -> list[dict]:
    return [r.data for r in ledger.load([root / "data" / "corrections"])]


def test_propose_quote_records_the_offsets_it_found(root, real_instances):
    note = real_instances.set_index("uid").loc[127, "Patient Note"]
    r = _propose(root, 127, "3", "--quote", "pulse rate was 108/min", "--quote", "temperature was 36.8",
                 error_type="none")
    assert r.exit_code == 0, r.output
    (rec,) = _written(root)
    start = note.index("pulse rate was 108/min")
    assert rec["evidence"][0] == f"note[{start}:{start + 22}] 'pulse rate was 108/min'"
    s, e = (int(x) for x in rec["evidence"][1][5:rec["evidence"][1].index("]")].split(":"))
    assert note[s:e] == "temperature was 36.8"


@pytest.mark.parametrize("quote, words", [
    ("was", "--quote: 'was' occurs 31 times in the note"),
    ("pulse rate was 110/min", "--quote: 'pulse rate was 110/min' does not occur in the note"),
])
def test_propose_refuses_a_quote_absent_or_repeated_and_writes_nothing(root, quote, words):
    r = _propose(root, 127, "3", "--quote", quote, error_type="none")
    out = _flat(r)
    assert r.exit_code == 2 and words in out and "exactly once" in out, out
    if "times" in words:
        assert "quote a longer passage" in out
    assert list((root / "data" / "corrections").iterdir()) == []


def test_propose_inputs_may_give_evidence_as_text_only(root, tmp_path, real_instances):
    note = real_instances.set_index("uid").loc[127, "Patient Note"]
    f = tmp_path / "inputs.yaml"
    f.write_text(yaml.safe_dump({"inputs": [{"name": "Heart Rate or Pulse", "value": 108, "unit": "beats per minute",
                                             "evidence": {"text": "pulse rate was 108/min"}}]}), encoding="utf-8")
    r = _propose(root, 127, "3", "--inputs", str(f), error_type="none")
    assert r.exit_code == 0, r.output
    (rec,) = _written(root)
    start = note.index("pulse rate was 108/min")
    assert rec["inputs"][0]["evidence"] == {"start": start, "end": start + 22, "text": "pulse rate was 108/min"}
    # the same file through ledger derive: the offsets are found the same way
    r = runner.invoke(app, ["ledger", "derive", "--uid", "127", "--inputs", str(f), "--label", "3"],
                      env={"MEDCALC_ROOT": str(root)})
    assert f"note[{start}:{start + 22}]" in _flat(r) and "verifier: supports" in _flat(r), r.output


@pytest.mark.parametrize("text, words", [
    ("pulse rate 108", "evidence text 'pulse rate 108' does not occur in the note"),
    ("was", "evidence text 'was' occurs 31 times in the note"),
])
def test_propose_inputs_refuses_a_text_only_quote_naming_file_input_and_rule(root, tmp_path, text, words):
    f = tmp_path / "inputs.yaml"
    f.write_text(yaml.safe_dump({"inputs": [{"name": "Heart Rate or Pulse", "value": 108, "unit": "beats per minute",
                                             "evidence": text}]}), encoding="utf-8")
    r = _propose(root, 127, "3", "--inputs", str(f), error_type="none")
    out = _flat(r)
    assert r.exit_code == 2, out
    assert "inputs.yaml" in out and "inputs[0] (Heart Rate or Pulse)" in out and words in out, out
    assert "rule: a quote located by its text must occur exactly once in the row's note" in out
    assert list((root / "data" / "corrections").iterdir()) == []


def test_propose_keeps_given_offsets_and_still_checks_them(root, tmp_path):
    f = tmp_path / "inputs.yaml"
    f.write_text(yaml.safe_dump({"inputs": [{"name": "Heart Rate or Pulse", "value": 108, "unit": "beats per minute",
                                             "evidence": {"start": 0, "end": 22, "text": "pulse rate was 108/min"}}]}),
                 encoding="utf-8")
    r = _propose(root, 127, "3", "--inputs", str(f), error_type="none")
    assert r.exit_code == 2 and "is not the note's text at 0..22" in _flat(r), r.output


def test_a_unit_mismatch_refusal_names_unit_reading(root, tmp_path):
    f = tmp_path / "inputs.yaml"
    albumin = {"name": "Albumin", "value": 3.5, "unit": "g/dL", "evidence": {"text": "Albumin 3.5 mg/ dL"}}
    f.write_text(yaml.safe_dump({"inputs": [albumin]}), encoding="utf-8")
    r = _propose(root, 824, "1.12", "--inputs", str(f))
    out = _flat(r)
    assert r.exit_code == 2 and "inputs[0] (Albumin)" in out and "rule unit-mismatch" in out, out
    assert "unit_reading: {printed: mg/dL, why:" in out, out
    # declared as the hint says, the unit no longer stands in the way
    f.write_text(yaml.safe_dump({"inputs": [{**albumin, "unit_reading": {
        "printed": "mg/ dL", "why": "an albumin of 3.5 mg/dL is impossible; 3.5 is the usual g/dL value"}}]}),
        encoding="utf-8")
    out = _flat(_propose(root, 824, "1.12", "--inputs", str(f)))
    assert "unit-mismatch" not in out, out


def test_propose_lists_the_alternatives_of_an_underivable_value(root):
    r = _propose(root, 862, "13")
    out = _flat(r)
    assert r.exit_code == 2 and "not_testable_scored_1 (a not-testable component scored 1" in out, out


def test_the_confirmation_line_echoes_the_typed_value_and_the_label_it_replaces(root):
    r = _propose(root, 862, "10", "--definition", "not_testable_scored_1")
    assert r.exit_code == 0, r.output
    assert "C-0001: test uid 862: 10 replaces the current label 18 (corrected, extraction)" in _flat(r), r.output
    # a confirmation records upstream's value, value for value; the line still shows what was typed
    r = _propose(root, 1, "25.3", error_type="none")
    out = _flat(r)
    assert r.exit_code == 0, r.output
    assert "C-0002: test uid 1: 25.3 replaces the current label 25.238 (recorded as the upstream label '25.238', " \
           "value for value) (confirmed, no error type)" in out, out
    assert [x["new_value"] for x in _written(root)] == ["10", "25.238"]
