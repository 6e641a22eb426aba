"""Step-wise grading (grading/steps.py) on a real row: v1.0 uid 1, Cockcroft-Gault, an 87-year-old man of
48 kg and 163 cm with creatinine 1.4 mg/dL; label 25.238 mL/min. Expected values are worked by hand from
the formula: CrCl = (140 - age) x weight / (72 x creatinine), with the actual weight at a BMI under 18.5."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from medcalc_maintained.calculators.certify import certify_row
from medcalc_maintained.core.rows import entities_or_empty
from medcalc_maintained.grading.steps import block_problems, certified_reference, grade_steps, stated_inputs
from medcalc_maintained.ledger.evidence_rows import row_document
from medcalc_maintained.release.inputs_config import table

RIGHT = {"sex": "Male", "age": [87, "years"], "weight": [48, "kg"], "height": [163, "cm"],
         "creatinine": [1.4, "mg/dL"]}


@pytest.fixture(scope="module")
def row_and_reference(real_instances):
    r = real_instances[real_instances["uid"] == 1].iloc[0].to_dict()
    docs = [i.document() for i in certify_row(2, entities_or_empty(r["entities"]), r["Patient Note"])]
    full = pd.DataFrame([{"Row Number": 1, "Calculator ID": 2, "Calculator Name": r["Calculator Name"],
                          "Label Status": "confirmed", "Evidence Status": "certified", "Evidence": row_document(docs)}])
    reference = certified_reference(table(full).to_dict("records"))
    row = {"Calculator ID": 2, "Output Type": r["Output Type"], "Ground Truth Answer": "25.238",
           "Lower Limit": "23.976", "Upper Limit": "26.5"}
    return row, reference


def _out(inputs, answer: str) -> str:
    block = inputs if isinstance(inputs, str) else json.dumps(inputs)
    return f"Reading the note.\n<inputs>{block}</inputs>\nCrCl = ...\n<answer>{answer}</answer>"


def test_the_reference_is_the_certified_inputs(row_and_reference):
    _, ref = row_and_reference
    assert ref == {"sex": "Male", "age": [87, "years"], "weight": [48.0, "kg"], "height": [163.0, "cm"],
                   "creatinine": [1.4, "mg/dL"]}


def test_right_inputs_and_right_answer(row_and_reference):
    row, ref = row_and_reference
    rec, inputs = grade_steps(row, _out(RIGHT, "25.24"), ref)
    assert rec["error_class"] == "right" and rec["arithmetic"] is True and rec["inputs_correct"] == 5
    assert not rec["right_from_wrong_inputs"] and {i["status"] for i in inputs} == {"correct"}


def test_a_unit_the_note_does_not_use_is_converted_not_counted_wrong(row_and_reference):
    row, ref = row_and_reference
    stated = {**RIGHT, "creatinine": [123.76, "µmol/L"]}  # 1.4 mg/dL x 88.4
    rec, _ = grade_steps(row, _out(stated, "25.2"), ref)
    assert rec["inputs_correct"] == 5 and rec["error_class"] == "right"


def test_right_inputs_wrong_arithmetic(row_and_reference):
    row, ref = row_and_reference
    rec, _ = grade_steps(row, _out(RIGHT, "35.3"), ref)  # 53 x 48 / 72: the creatinine left out
    assert rec["error_class"] == "arithmetic" and rec["arithmetic"] is False and rec["calculator_value"] == "25.238"


def test_a_wrong_weight_carried_through_is_an_extraction_error(row_and_reference):
    row, ref = row_and_reference
    stated = {**RIGHT, "weight": [45, "kg"]}  # BMI 16.9: actual weight; 53 x 45 / 100.8 = 23.66
    rec, inputs = grade_steps(row, _out(stated, "23.66"), ref)
    assert rec["answer_status"] == "wrong" and rec["error_class"] == "extraction" and rec["arithmetic"] is True
    assert [i["input"] for i in inputs if i["status"] == "wrong"] == ["weight"]
    both, _ = grade_steps(row, _out(stated, "40"), ref)
    assert both["error_class"] == "both"


def test_a_right_answer_from_a_wrong_input_is_flagged(row_and_reference):
    row, ref = row_and_reference
    stated = {**RIGHT, "height": [150, "cm"]}  # BMI 21.3: ideal weight 47.8 kg < 48: 53 x 47.8 / 100.8 = 25.1
    rec, _ = grade_steps(row, _out(stated, "25.238"), ref)
    assert rec["answer_status"] == "correct" and rec["right_from_wrong_inputs"] and rec["inputs_wrong"] == 1


def test_blocks_that_cannot_be_read_are_counted_never_guessed(row_and_reference):
    row, ref = row_and_reference
    cases = {"absent": "no block here <answer>30</answer>", "not_json": _out("age 87, weight 48", "30"),
             "no_declared_input": _out({"BMI": 18.1, "GFR": 30}, "30"),
             "bad_unit": _out({**RIGHT, "age": [87, "mg/dL"]}, "30")}
    recs = {k: grade_steps(row, v, ref)[0] for k, v in cases.items()}
    # nothing to grade in the first three; an age in mg/dL is that input misread: an extraction error
    assert {k: r["error_class"] for k, r in recs.items()} == {**dict.fromkeys(cases, "format"), "bad_unit": "extraction"}
    assert block_problems(recs.values()) == {"absent": 1, "not_json": 1, "no_declared_input": 1, "bad_unit": 1}
    assert recs["bad_unit"]["arithmetic"] is None  # nothing computed from a value with an impossible unit
    assert (recs["bad_unit"]["inputs_bad_unit"], recs["bad_unit"]["inputs_correct"]) == (1, 4)  # the others graded
    assert stated_inputs("<inputs>[1, 2]</inputs>") == ("not_json", None)  # a list is no object


def test_an_undeclared_name_is_extra_and_an_na_label_answered_is_an_abstention_error(row_and_reference):
    row, ref = row_and_reference
    rec, inputs = grade_steps(row, _out({**RIGHT, "BMI": 18.1}, "25.2"), ref)
    assert rec["inputs_extra"] == 1 and rec["error_class"] == "right"
    na = {**row, "Ground Truth Answer": "N/A", "Lower Limit": "N/A", "Upper Limit": "N/A"}
    assert grade_steps(na, _out(RIGHT, "25.2"), ref)[0]["error_class"] == "abstention"
    assert grade_steps(na, _out(RIGHT, "N/A"), ref)[0]["error_class"] == "right"


def test_only_supported_used_inputs_are_certified():
    rows = [{"name": "age", "value": "60", "unit": "years", "verdict": "supports", "used": True},
            {"name": "creatinine", "value": "1.9", "unit": "mg/dL", "verdict": "contradicts", "used": True},
            {"name": "sex", "value": '"Male"', "unit": None, "verdict": "supports", "used": False},
            {"name": "Race", "value": None, "unit": None, "verdict": "supports", "used": True}]
    assert certified_reference(rows) == {"age": [60, "years"], "Race": None}


def test_a_summary_of_several_rows_counts_right_answers_from_wrong_inputs_only_where_the_block_is_readable(
        row_and_reference):
    from medcalc_maintained.grading.steps import summarize

    row, ref = row_and_reference
    good = grade_steps(row, _out(RIGHT, "25.24"), ref)[0]
    bad_unit = grade_steps(row, _out({**RIGHT, "age": [87, "mg/dL"]}, "25.24"), ref)[0]
    lucky = grade_steps(row, _out({**RIGHT, "height": [150, "cm"]}, "25.238"), ref)[0]
    assert bad_unit["right_from_wrong_inputs"] and lucky["right_from_wrong_inputs"]
    unreadable = grade_steps(row, _out("age 87, weight 48", "25.24"), ref)[0]
    assert not unreadable["right_from_wrong_inputs"]
    s = summarize([good, bad_unit, lucky, unreadable])
    # four right answers: one from right inputs, one from an age in mg/dL, one from a wrong height, one from a
    # block that is no JSON (not known how): one of four from right inputs, two of the three readable from wrong
    assert s["accuracy"] == 1.0 and s["right_with_readable_inputs"] == 3 and s["right_from_wrong_inputs"] == 2
    assert s["accuracy_from_right_inputs"] == pytest.approx(1 / 4)
    assert s["share_right_from_wrong_inputs"] == pytest.approx(2 / 3)


def test_a_wrong_input_that_leaves_the_calculator_nothing_to_compute_is_an_extraction_error(row_and_reference):
    row, ref = row_and_reference
    stated = {k: v for k, v in RIGHT.items() if k != "creatinine"}
    rec, inputs = grade_steps(row, _out(stated, "40"), ref)
    assert rec["arithmetic"] is None and rec["error_class"] == "extraction"
    assert [i["status"] for i in inputs if i["input"] == "creatinine"] == ["missing"]


def test_sex_abbreviations_read_as_the_certified_value(row_and_reference):
    row, ref = row_and_reference
    for said in ("m", "man", "MALE"):
        rec, _ = grade_steps(row, _out({**RIGHT, "sex": said}, "25.24"), ref)
        assert rec["inputs_correct"] == 5, said
    rec, _ = grade_steps(row, _out({**RIGHT, "sex": "f"}, "21.45"), ref)  # 25.238 x 0.85: a woman's clearance
    assert rec["error_class"] == "extraction" and rec["inputs_wrong"] == 1


def test_names_the_calculator_reads_as_one_criterion_are_graded_as_one():
    """CHA2DS2-VASc (calculator 4) counts `Hypertension history` or `Hypertension` once: a certified
    `Hypertension history` stated as `Hypertension` is right; HAS-BLED's renal and liver criteria stay apart."""
    row = {"Calculator ID": 4, "Output Type": "integer", "Ground Truth Answer": "3", "Lower Limit": "3",
           "Upper Limit": "3"}
    ref = {"age": [70, "years"], "sex": "Female", "Hypertension history": True, "Stroke": None}
    stated = {"age": [70, "years"], "sex": "Female", "Hypertension": True}
    rec, inputs = grade_steps(row, _out(stated, "3"), ref)  # 1 (age 65-74) + 1 (female) + 1 (hypertension)
    by = {i["input"]: i["status"] for i in inputs}
    assert by["Hypertension history / Hypertension"] == "correct" and rec["error_class"] == "right"
    assert by["Stroke / Transient Ischemic Attacks History / Thromboembolism history"] == "correct"  # absent, unsaid
    lines = json.loads(prompts_file().read_text())["calculators"]
    assert "Renal disease criteria for the HAS-BLED rule: true or false" in lines["25"]
    assert "Liver disease criteria for the HAS-BLED rule: true or false" in lines["25"]


def prompts_file():
    from medcalc_maintained.grading.prompts import INPUTS_FILE

    return INPUTS_FILE


def test_a_ph_or_a_temperature_is_compared_on_an_absolute_scale():
    from medcalc_maintained.calculators.inputs import InputSpec
    from medcalc_maintained.grading.steps import input_matches

    ph = InputSpec("pH", "number")
    assert input_matches(ph, 7.29, 7.22, True) == "wrong"  # within 1%, but another APACHE II band
    assert input_matches(ph, 7.29, 7.292, True) == "correct"
    temp = InputSpec("Temperature", "quantity", "temperature")
    assert input_matches(temp, [38.5, "degc"], [101.3, "degf"], True) == "correct"  # 38.5 °C
    assert input_matches(temp, [38.5, "degc"], [38.2, "degc"], True) == "wrong"


def test_no_output_is_graded_never_a_crash(row_and_reference):
    row, ref = row_and_reference
    rec, _ = grade_steps(row, None, ref)  # type: ignore[arg-type]
    assert rec["error_class"] == "format" and rec["block"] == "absent"
