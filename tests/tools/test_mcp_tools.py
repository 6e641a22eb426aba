"""The calculators as MCP tools: declared inputs, the server over stdio with the SDK's real client,
and the grading of tool-call traces."""

from __future__ import annotations

import json

import pytest

from medcalc_maintained.calculators import load_all
from medcalc_maintained.calculators.base import Inputs
from medcalc_maintained.calculators.inputs import declared_inputs, spec_by_name
from medcalc_maintained.core.rows import parse_entities
from medcalc_maintained.tools import calculator_tools as T


def test_every_calculator_declares_the_inputs_it_reads_on_real_rows(real_instances):
    reg = load_all()
    assert len(reg) == 55 and all(declared_inputs(cid) for cid in reg)

    class Recording(Inputs):
        def __init__(self, e):
            super().__init__(e)
            self.read = set()

        def has(self, k):
            self.read.add(k)
            return super().has(k)

    undeclared = {}
    for row in real_instances[["calculator_id", "Relevant Entities"]].to_dict("records"):
        cid = int(row["calculator_id"])
        if cid in (24, 49):  # structured entities, declared by hand
            continue
        x = Recording(parse_entities(row["Relevant Entities"]))
        try:
            reg[cid].fn(x)
        except Exception:  # noqa: BLE001 - only the keys read matter here
            pass
        names = {n.lower() for n in spec_by_name(cid)}
        extra = {k for k in x.read if k.lower() not in names}
        if extra:
            undeclared.setdefault(cid, set()).update(extra)
    assert undeclared == {}


def test_schema_and_error_texts():
    crcl = T.input_schema(2)
    assert set(crcl["required"]) == {"sex", "age", "weight", "height", "creatinine"}
    assert crcl["properties"]["creatinine"]["properties"]["unit"]["examples"] == ["mg/dl", "mmol/l", "umol/l"]
    with pytest.raises(T.ToolInputError) as e:
        T.call_calculator(5, {"Systolic Blood Pressure": {"value": 120, "unit": "mmHg"},
                              "Diastolic Blood Pressure": {"value": -5, "unit": "mmHg"}})
    assert "Diastolic Blood Pressure" in str(e.value) and "mmhg" in str(e.value) and "10 to 200" in str(e.value)
    # 350 mm Hg is possible to type but outside the plausibility range (30-300): computed, with a warning
    out = T.call_calculator(5, {"Systolic Blood Pressure": {"value": 350, "unit": "mmHg"},
                                "Diastolic Blood Pressure": {"value": 80, "unit": "mmHg"}})
    assert out["value"] == "170" and "Systolic Blood Pressure" in out["warnings"][0]  # (2*80+350)/3 = 170


def test_grading_three_hand_made_traces(tmp_path, real_maintained):
    from medcalc_maintained.scoring.tool_calls import grade_file

    rows = real_maintained[real_maintained["split"] == "test"]
    traces = [
        # uid 61, MAP, upstream entities SBP 140, DBP 80 mm Hg, label 100. Right tool; DBP passed in
        # kPa: 10.67 kPa x 7.50062 = 80.03 mm Hg (within 1% of 80: correct after unit normalisation);
        # tool: (2 x 80.0316 + 140) / 3 = 100.021; answer 100.02 is the tool's value at 2 decimals.
        {"uid": 61, "calls": [{"tool": "mean_arterial_pressure_map", "arguments": {
            "Systolic Blood Pressure": {"value": 140, "unit": "mm Hg"},
            "Diastolic Blood Pressure": {"value": 10.67, "unit": "kPa"}}}], "answer": "100.02"},
        # uid 81, BMI (10.2 kg, 83.8 cm, label 14.52): wrong tool (body surface area). Mosteller
        # BSA = sqrt(10.2 x 83.8 / 3600) = sqrt(0.23743) = 0.487; answer 0.49: the tool's output, wrong answer.
        {"uid": 81, "calls": [{"tool": "body_surface_area_calculator", "arguments": {
            "weight": {"value": 10.2, "unit": "kg"}, "height": {"value": 83.8, "unit": "cm"}}}],
         "answer": "<answer>0.49</answer>"},
        # uid 487, anion gap (Na 139, Cl 104, HCO3 20 mmol/L, label 15): list, then the right tool
        # with chloride misread as 114 (tool: 139 - 134 = 5); the agent answers 15 anyway.
        {"uid": 487, "calls": [{"tool": "list_calculators", "arguments": {}},
                               {"tool": "anion_gap", "arguments": {"Sodium": {"value": 139, "unit": "mEq/L"},
                                                                   "Chloride": {"value": 114, "unit": "mmol/L"},
                                                                   "Bicarbonate": {"value": 20, "unit": "mmol/L"}}}],
         "answer": "15"},
    ]
    path = tmp_path / "traces.jsonl"
    path.write_text("\n".join(json.dumps(t) for t in traces) + "\n")
    report = grade_file(path, rows)
    s = report.summary()
    assert s["n_traces"] == 3
    assert s["answer_accuracy"] == pytest.approx(2 / 3)       # 61 and 487 right, 81 wrong
    assert s["selection_accuracy"] == pytest.approx(2 / 3)    # 81 picked BSA
    assert s["n_inputs_graded"] == 5 and s["input_accuracy"] == pytest.approx(4 / 5)  # only Chloride wrong
    assert s["answer_equals_tool_output"] == pytest.approx(2 / 3)  # 487 ignored its tool's 5
    per = report.per_input().set_index("input")
    assert per.loc["Chloride", "correct"] == 0 and per.loc["Diastolic Blood Pressure", "correct"] == 1
    assert report.rows.set_index("uid").loc[487, "tool_value"] == "5"
    # the tools' implementation and its conformance over the calculators selected (MAP, BSA, anion gap)
    from medcalc_maintained.conformance import load_vectors

    n = sum(len(v.cases) for v in load_vectors([5, 60, 39]))
    assert s["tools_implementation"].startswith("medcalc_maintained.calculators (medcalc-maintained ")
    assert f": {n}/{n} conformance vectors pass over the 3 calculator(s) selected" in s["tools_implementation"]
    assert report.summary_lines()[-1] == f"tools: {s['tools_implementation']}"


def test_the_tool_track_grades_inputs_against_certified_inputs_where_a_row_has_them(tmp_path, real_maintained):
    """uid 487, anion gap: upstream's entities give chloride 104 mmol/L. With a certified chloride of 114
    (made up here, so the two references disagree) the same trace's chloride 114 is right; uid 61 has no
    certified input and keeps upstream's entities; the summary names both references and their rows."""
    import pandas as pd

    from medcalc_maintained.scoring.tool_calls import grade_file

    rows = real_maintained[real_maintained["split"] == "test"]
    traces = [{"uid": 487, "calls": [{"tool": "anion_gap", "arguments": {
        "Sodium": {"value": 139, "unit": "mEq/L"}, "Chloride": {"value": 114, "unit": "mmol/L"},
        "Bicarbonate": {"value": 20, "unit": "mmol/L"}}}], "answer": "5"},
              {"uid": 61, "calls": [{"tool": "mean_arterial_pressure_map", "arguments": {
                  "Systolic Blood Pressure": {"value": 150, "unit": "mm Hg"},
                  "Diastolic Blood Pressure": {"value": 80, "unit": "mm Hg"}}}], "answer": "103.3"}]
    path = tmp_path / "traces.jsonl"
    path.write_text("\n".join(json.dumps(t) for t in traces) + "\n")
    inputs = pd.DataFrame([{"uid": 487, "name": n, "value": v, "unit": "mmol/L", "verdict": "supports", "used": True}
                           for n, v in (("Sodium", "139"), ("Chloride", "114"), ("Bicarbonate", "20"))]
                          + [{"uid": 487, "name": "Albumin", "value": "3.1", "unit": "g/dL", "verdict": "contradicts",
                              "used": True}])
    upstream = grade_file(path, rows)
    certified = grade_file(path, rows, inputs)
    by = lambda r: r.inputs.set_index(["uid", "input"])["status"].to_dict()  # noqa: E731
    assert by(upstream)[(487, "Chloride")] == "wrong" and by(certified)[(487, "Chloride")] == "correct"
    assert by(certified)[(61, "Systolic Blood Pressure")] == "wrong"  # upstream's 140: no certified input for 61
    assert certified.rows.set_index("uid")["input_reference"].to_dict() == {487: "certified", 61: "upstream"}
    assert (487, "Albumin") not in by(certified)  # a contradicted input certifies nothing
    assert certified.summary()["input_reference"] == (
        "certified inputs of the release (config `inputs`) for 1 row(s); upstream Relevant Entities (v1.0 GPT-4 "
        "extraction) for 1 row(s) without certified inputs")


def test_tool_descriptions_name_the_declared_definition_version():
    import yaml

    from medcalc_maintained.calculators import load_all
    from medcalc_maintained.tools.calculator_tools import describe
    from tests.support.paths import ROOT

    policy = yaml.safe_load((ROOT / "src" / "medcalc_maintained" / "calculators" / "definitions.yaml").read_text())
    for cid in load_all():
        assert f"maintained labels: {policy['calculators'][cid]['version']}:" in describe(cid)


def test_tools_state_their_implementation_and_its_conformance():
    """Each tool's description and each call's result say which implementation answered and how many of
    its calculator's conformance vectors it passes (issue 50, item 4)."""
    from medcalc_maintained.conformance import load_vectors
    from medcalc_maintained.tools.calculator_tools import call_calculator, describe

    for v in load_vectors([2, 28, 69]):
        n = len(v.cases)
        assert f"conformance: {n}/{n} vectors pass (vectors sha256 " in describe(v.calculator_id)
    result = call_calculator(5, {"Systolic Blood Pressure": {"value": 120, "unit": "mm Hg"},
                                 "Diastolic Blood Pressure": {"value": 80, "unit": "mm Hg"}})
    c = result["conformance"]
    assert c["implementation"].startswith("medcalc_maintained.calculators") and c["passed"] == c["vectors"] >= 5


@pytest.mark.parametrize("raw", ['Infinity', '-Infinity', 'NaN', '1e400', '"Infinity"', '"1e400"'])
def test_non_finite_inputs_are_tool_errors_naming_the_input(raw):
    import json

    from medcalc_maintained.tools.mcp_server import handle_call

    # the arguments as the server's JSON reader gives them: 1e400 becomes infinity
    args = json.loads('{"Systolic Blood Pressure": {"value": %s, "unit": "mmHg"},'
                      ' "Diastolic Blood Pressure": {"value": 80, "unit": "mmHg"}}' % raw)
    r = handle_call("mean_arterial_pressure_map", args, None)
    assert r.is_error and r.structured_content is None
    assert "input 'Systolic Blood Pressure'" in r.content[0].text and "not a finite number" in r.content[0].text


def test_an_overflowing_result_is_a_tool_error_naming_the_inputs():
    from medcalc_maintained.tools.mcp_server import handle_call

    # BMI = weight / height^2 = 1e308 kg / (1e-5 m)^2 overflows to infinity
    r = handle_call("body_mass_index_bmi", {"weight": {"value": 1e308, "unit": "kg"},
                                            "height": {"value": 0.001, "unit": "cm"}}, None)
    assert r.is_error and "'weight'" in r.content[0].text and "'height'" in r.content[0].text
    assert "not a finite number" in r.content[0].text


def test_the_mme_tool_track_keeps_upstreams_per_drug_entities(tmp_path, real_maintained):
    """uid 990, MME (hydromorphone 60 mg x1, tapentadol 30 mg x3, oxymorphone 10 mg x3 per day): a call with
    exactly those doses is right on every input, with or without the release's certified (one-list) input."""
    import pandas as pd

    from medcalc_maintained.scoring.tool_calls import grade_file
    from medcalc_maintained.tools.calculator_tools import tool_name

    rows = real_maintained[real_maintained["split"] == "test"]
    doses = [("HYDROmorphone", 60, 1), ("Tapentadol", 30, 3), ("OxyMORphone", 10, 3)]
    call = {"tool": tool_name(49), "arguments": {"opioids": [
        {"drug": d, "dose": {"value": v, "unit": "mg"}, "doses_per_day": n} for d, v, n in doses]}}
    path = tmp_path / "traces.jsonl"
    path.write_text(json.dumps({"uid": 990, "calls": [call], "answer": "426"}) + "\n")
    inputs = pd.DataFrame([{"uid": 990, "name": "opioids", "value": json.dumps([[d, v, "mg", n] for d, v, n in doses]),
                            "unit": None, "verdict": "supports", "used": True}])
    for report in (grade_file(path, rows), grade_file(path, rows, inputs)):
        assert len(report.inputs) == 6 and (report.inputs["status"] == "correct").all()
        assert report.rows["input_reference"].tolist() == ["upstream"]


def test_the_tool_does_not_require_what_the_definition_decides_when_unmentioned():
    """Child-Pugh: an unmentioned ascites or encephalopathy is absent by the declared definition, as the
    calculator reads it; the tool refused such a call until its conformance ran through the tool itself."""
    from medcalc_maintained.tools.calculator_tools import call_calculator, input_schema

    args = {"Bilirubin": {"value": 1.5, "unit": "mg/dL"}, "Albumin": {"value": 3.8, "unit": "g/dL"},
            "international normalized ratio": 1.2}
    assert call_calculator(15, args)["value"] == "5"  # 1 + 1 + 1, and 1 each for no ascites, no encephalopathy
    assert "Ascites" not in input_schema(15)["required"] and "Bilirubin" in input_schema(15)["required"]


def test_tool_arguments_turn_entities_into_the_tools_shapes():
    from medcalc_maintained.tools.calculator_tools import arguments_to_entities, tool_arguments

    steroid = {"input steroid": ["PredniSONE PO", 10, "mg"], "target steroid": "MethylPrednisoLONE IV"}
    assert tool_arguments(24, steroid)["input steroid"] == {"name": "PredniSONE PO", "dose": 10, "unit": "mg"}
    assert arguments_to_entities(24, tool_arguments(24, steroid)) == steroid
    mme = {"Morphine Dose": [30, "mg"], "Morphine Dose Per Day": [2, "per day"]}
    assert tool_arguments(49, mme) == {"opioids": [{"drug": "Morphine", "dose": {"value": 30, "unit": "mg"},
                                                    "doses_per_day": 2}]}
    assert arguments_to_entities(49, tool_arguments(49, mme)) == mme
