"""The calculators as MCP tools: declared inputs, the server over stdio with the SDK's real client,
and the grading of tool-call traces."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import pytest

from medcalc_maintained.calculators import load_all
from medcalc_maintained.calculators.base import Inputs
from medcalc_maintained.calculators.inputs import declared_inputs, spec_by_name
from medcalc_maintained.core.rows import parse_entities
from medcalc_maintained.tools import calculator_tools as T

SRC = Path(__file__).resolve().parents[1] / "src"


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


async def _session_checks():
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=["-m", "medcalc_maintained.cli", "serve-mcp"],
                                   env={"PYTHONPATH": str(SRC)})
    async with Client(params) as client:
        tools = (await client.list_tools()).tools
        names = {t.name for t in tools}
        calc_tools = names - {"list_calculators", "lookup_instance"}
        assert len(calc_tools) == 55 and {"list_calculators", "lookup_instance"} <= names
        mdrd = next(t for t in tools if t.name == "mdrd_gfr_equation")
        assert "Levey" in mdrd.description and "creatinine" in mdrd.input_schema["properties"]

        async def value(tool, args):
            r = await client.call_tool(tool, args)
            assert not r.is_error, r.content[0].text
            return r.structured_content

        mmhg = lambda v: {"value": v, "unit": "mm Hg"}  # noqa: E731
        # MAP = (2 x DBP + SBP) / 3 = (2 x 60 + 120) / 3 = 80
        r = await value("mean_arterial_pressure_map", {"Systolic Blood Pressure": mmhg(120), "Diastolic Blood Pressure": mmhg(60)})
        assert r["value"] == "80" and any(s.startswith("formula:") for s in r["steps"]) and "Sesso" in r["citation"]
        # BMI = 70 kg / (1.75 m)^2 = 70 / 3.0625 = 22.857
        r = await value("body_mass_index_bmi", {"weight": {"value": 70, "unit": "kg"}, "height": {"value": 175, "unit": "cm"}})
        assert r["value"] == "22.857"
        # anion gap = Na - (Cl + HCO3) = 140 - (100 + 24) = 16
        mmol = lambda v: {"value": v, "unit": "mmol/L"}  # noqa: E731
        r = await value("anion_gap", {"Sodium": mmol(140), "Chloride": mmol(100), "Bicarbonate": mmol(24)})
        assert r["value"] == "16"
        # corrected Ca = 8.0 + 0.8 x (4 - albumin); albumin 20 g/L = 2.0 g/dL -> 8.0 + 1.6 = 9.6
        r = await value("calcium_correction_for_hypoalbuminemia", {"Calcium": {"value": 8.0, "unit": "mg/dL"},
                                                                   "Albumin": {"value": 20, "unit": "g/L"}})
        assert r["value"] == "9.6" and any("= 2 g/dl" in s for s in r["steps"])
        # due date = LMP + 280 days (28-day cycle): 01/01/2020 is day 1 of leap year 2020, day 281 is October 7
        r = await value("estimated_due_date", {"Last menstrual date": "01/01/2020", "cycle length": 28})
        assert r["value"] == "10/07/2020"

        bad = await client.call_tool("creatinine_clearance_cockcroft_gault_equation", {
            "sex": "male", "age": {"value": 60, "unit": "years"}, "weight": {"value": 70, "unit": "kg"},
            "height": {"value": 175, "unit": "cm"}, "creatinine": {"value": -1.2, "unit": "mg/dL"}})
        text = bad.content[0].text
        assert bad.is_error and bad.structured_content is None
        assert "'creatinine'" in text and "mg/dl" in text and "0.1 to 40" in text
        missing = await client.call_tool("mean_arterial_pressure_map", {"Systolic Blood Pressure": mmhg(120)})
        assert missing.is_error and "'Diastolic Blood Pressure': missing" in missing.content[0].text


@pytest.mark.slow
def test_server_over_stdio_with_the_sdk_client():
    anyio.run(_session_checks)


@pytest.fixture(scope="module")
def instances(tables_project):
    """One lookup server state for the module's lookups: each release's rows are read (from the
    project's release tables) once, not once per test and version form."""
    from medcalc_maintained.project import Project
    from medcalc_maintained.tools.mcp_server import Instances

    return Instances(Project.load(tables_project))


@pytest.mark.slow
def test_lookup_instance_gives_note_and_question_never_the_label(instances):
    from medcalc_maintained.tools.mcp_server import handle_call

    res = handle_call("lookup_instance", {"version": "2.0.0", "uid": 61}, instances)
    doc = json.loads(res.content[0].text)
    assert not res.is_error and set(doc) == {"version", "split", "uid", "Patient Note", "Question"}
    assert "mean arterial pressure" in doc["Question"].lower()
    bad = handle_call("lookup_instance", {"version": "2.0.0", "uid": 999999}, instances)
    assert bad.is_error and "uid" in bad.content[0].text


@pytest.mark.slow
@pytest.mark.parametrize("version", ["v2.0", "2.0", "v2.0.0", "2.0.0"])
def test_lookup_instance_takes_every_version_form_evaluate_takes(instances, version):
    from medcalc_maintained.scoring.labels import resolve_against
    from medcalc_maintained.tools.mcp_server import handle_call

    (source,) = resolve_against(instances.project, [version])  # evaluate --against takes it: release 2.0.0
    assert source.origin == "release 2.0.0"
    res = handle_call("lookup_instance", {"version": version, "uid": 61}, instances)
    assert not res.is_error, res.content[0].text
    doc = json.loads(res.content[0].text)
    assert doc["version"] == "2.0.0" and "mean arterial pressure" in doc["Question"].lower()


@pytest.mark.slow
def test_lookup_instance_v1_tag_and_errors_without_server_paths(tables_project, instances):
    from medcalc_maintained.tools.mcp_server import handle_call

    v1 = handle_call("lookup_instance", {"version": "v1.0", "uid": 61}, instances)
    assert not v1.is_error and json.loads(v1.content[0].text)["version"] == "1.0.0"
    root = str(Path(tables_project).resolve())
    for args in ({"version": "v9.9", "uid": 61}, {"version": "nonsense", "uid": 61},
                 {"version": "v2.0", "uid": 999999}, {"version": "v2.0", "uid": "61"},
                 {"version": 2.0, "uid": 61}, {"version": "v2.0", "uid": 61, "split": "train"}):
        res = handle_call("lookup_instance", args, instances)
        text = res.content[0].text
        assert res.is_error, args
        assert root not in text and str(tables_project) not in text and "/tmp" not in text, text
        assert not any(part.startswith("/") and part.count("/") > 1 for part in text.split()), text
    unknown = handle_call("lookup_instance", {"version": "v9.9", "uid": 61}, instances).content[0].text
    assert "'version'" in unknown and "v2.0" in unknown and "2.0.0" in unknown  # names the known tags


@pytest.mark.slow
def test_lookup_instance_without_release_tables_says_which_command_writes_them(pipeline_project):
    """The server reads a release's rows only from its release tables (it never applies the
    ledger): on a project without them the tool error names the command, not a server path."""
    from medcalc_maintained.project import Project
    from medcalc_maintained.tools.mcp_server import Instances, handle_call

    res = handle_call("lookup_instance", {"version": "v2.0", "uid": 61}, Instances(Project.load(pipeline_project)))
    text = res.content[0].text
    assert res.is_error and "release tables of 2.0.0 are missing" in text and "dvc repro release-tables" in text, text
    assert str(Path(pipeline_project).resolve()) not in text and "/tmp" not in text, text


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


def test_tool_descriptions_name_the_declared_definition_version():
    import yaml

    from medcalc_maintained.calculators import load_all
    from medcalc_maintained.tools.calculator_tools import describe
    from paths import ROOT

    policy = yaml.safe_load((ROOT / "src" / "medcalc_maintained" / "calculators" / "definitions.yaml").read_text())
    for cid in load_all():
        assert f"maintained labels: {policy['calculators'][cid]['version']}:" in describe(cid)


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
