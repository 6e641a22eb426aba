"""The calculators as MCP tools: declared inputs, the server over stdio with the SDK's real client,
and the grading of tool-call traces.

The end-to-end tests of this subject; the fast ones are in tests/tools/test_mcp_tools.py."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import pytest

from tests.support.paths import ROOT

SRC = ROOT / "src"


async def _session_checks():
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=sys.executable, args=["-m", "medcalc_maintained.cli", "serve-mcp"],
                                   env={"PYTHONPATH": str(SRC)})
    # the server's stderr named explicitly: stdio_client's default is the sys.stderr of the moment mcp was first
    # imported, which under pytest can be an earlier test's capsys buffer (no file descriptor to hand the process)
    async with Client(stdio_client(params, errlog=sys.__stderr__)) as client:
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


def test_server_over_stdio_with_the_sdk_client():
    anyio.run(_session_checks)


@pytest.fixture(scope="module")
def instances(tables_project):
    """One lookup server state for the module's lookups: each release's rows are read (from the
    project's release tables) once, not once per test and version form."""
    from medcalc_maintained.project import Project
    from medcalc_maintained.tools.mcp_server import Instances

    return Instances(Project.load(tables_project))


def test_lookup_instance_gives_note_and_question_never_the_label(instances):
    from medcalc_maintained.tools.mcp_server import handle_call

    res = handle_call("lookup_instance", {"version": "2.0.0", "uid": 61}, instances)
    doc = json.loads(res.content[0].text)
    assert not res.is_error and set(doc) == {"version", "split", "uid", "Patient Note", "Question"}
    assert "mean arterial pressure" in doc["Question"].lower()
    bad = handle_call("lookup_instance", {"version": "2.0.0", "uid": 999999}, instances)
    assert bad.is_error and "uid" in bad.content[0].text


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


def test_lookup_instance_without_release_tables_says_which_command_writes_them(pipeline_project):
    """The server reads a release's rows only from its release tables (it never applies the
    ledger): on a project without them the tool error names the command, not a server path."""
    from medcalc_maintained.project import Project
    from medcalc_maintained.tools.mcp_server import Instances, handle_call

    res = handle_call("lookup_instance", {"version": "v2.0", "uid": 61}, Instances(Project.load(pipeline_project)))
    text = res.content[0].text
    assert res.is_error and "release tables of 2.0.0 are missing" in text and "dvc repro release-tables" in text, text
    assert str(Path(pipeline_project).resolve()) not in text and "/tmp" not in text, text
