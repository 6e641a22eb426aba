"""How a conformance run judges answers, reads vector files and calls implementations (synthetic
cases made here)."""

from __future__ import annotations

import datetime as dt
import json
import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from medcalc_maintained.cli import app
from medcalc_maintained.conformance import agrees, load_vectors
from medcalc_maintained.conformance.vectors import Case, parse_file
from medcalc_maintained.core.errors import DataError

MAP_FILE = """\
calculator_id: 5
name: Mean Arterial Pressure (MAP)
follows: map-2/3dbp+1/3sbp
source: a textbook
formula: (2 DBP + SBP) / 3
cases:
  - id: a
    why: typical
    inputs: {{Systolic Blood Pressure: [120, mm hg], Diastolic Blood Pressure: [80, mm hg]}}
    expected: {a}
  - id: b
    why: wide pulse pressure
    inputs: {{Systolic Blood Pressure: [150, mm hg], Diastolic Blood Pressure: [60, mm hg]}}
    expected: 90
"""


def _case(expected, tolerance=None):
    return Case("x", "why", {}, expected, tolerance=tolerance)


def test_decimal_tolerance_is_rounding_not_formula():
    assert agrees(_case(93.333), "decimal", 93.3333333)[0]
    assert agrees(_case(93.333), "decimal", "93.33")[0]          # 0.003 < 0.1% of 93.333
    assert not agrees(_case(93.333), "decimal", 93.0)[0]
    assert agrees(_case(0.5), "decimal", 0.5009)[0] and not agrees(_case(0.5), "decimal", 0.502)[0]  # floor 0.001
    assert not agrees(_case(1.0, tolerance=0.0), "decimal", 1.0001)[0]
    assert agrees(_case(7.0), "decimal", "abc") == (False, "'abc' is not a number")


def test_integer_date_and_gestational_age_forms():
    assert agrees(_case(3), "integer", 3.0)[0] and agrees(_case(3), "integer", "3")[0]
    ok, why = agrees(_case(3), "integer", 3.4)
    assert not ok and why == "off by +0.4"
    assert agrees(_case("02/29/2024"), "date", dt.date(2024, 2, 29))[0]
    assert agrees(_case("02/29/2024"), "date", "03/01/2024") == (False, "+1 days")
    assert not agrees(_case("02/29/2024"), "date", "2024-02-29")[0]
    assert agrees(_case([14, 1]), "weeks_days", "('14 weeks', '1 days')")[0]
    assert agrees(_case([14, 1]), "weeks_days", (14, 1))[0]
    assert not agrees(_case([14, 1]), "weeks_days", (14, 2))[0]


def _write(tmp_path: Path, text: str, name: str = "5.yaml") -> Path:
    d = tmp_path / "vectors"
    d.mkdir(exist_ok=True)
    (d / name).write_text(text)
    return d


@pytest.mark.parametrize("edit, field, words", [
    (("follows: map-2/3dbp+1/3sbp", "follows: map-dbp+1/3pp"), "follows", "policy declares"),
    (("Systolic Blood Pressure: [120", "Systolc: [120"), "inputs", "'Systolc' is not a declared input"),
    (("expected: 90", "expected: ninety"), "expected", "case b: 'ninety' is not a number"),
    (("  - id: b\n", "  - id: a\n"), "id", "case a: id repeated"),
    (("    why: typical\n", ""), "why", "case a: missing why"),
])
def test_a_bad_vector_file_is_refused_naming_file_case_and_field(tmp_path, edit, field, words):
    d = _write(tmp_path, MAP_FILE.format(a=93.333).replace(*edit))
    with pytest.raises(DataError) as exc:
        parse_file(d / "5.yaml")
    assert exc.value.field == field and words in str(exc.value) and "5.yaml" in str(exc.value)


def test_a_file_named_for_another_calculator_is_refused(tmp_path):
    d = _write(tmp_path, MAP_FILE.format(a=93.333), name="6.yaml")
    with pytest.raises(DataError, match="named 5.yaml"):
        load_vectors(directory=d)


def _impl_module(tmp_path: Path, monkeypatch) -> str:
    (tmp_path / "wrong_map.py").write_text(textwrap.dedent("""
        def calc(calculator_id, inputs):
            s, d = inputs["Systolic Blood Pressure"][0], inputs["Diastolic Blood Pressure"][0]
            if s > 140:
                raise RuntimeError("no wide pulse pressures here")
            return (s + d) / 2          # the arithmetic mean: not MAP
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    return "wrong_map:calc"


def test_cli_names_the_first_failing_case_with_expected_and_got(tmp_path, monkeypatch):
    d = _write(tmp_path, MAP_FILE.format(a=93.333))
    out = tmp_path / "report.json"
    r = CliRunner().invoke(app, ["conformance", "--impl", _impl_module(tmp_path, monkeypatch), "--vectors", str(d),
                                 "--json", str(out)], env={"COLUMNS": "200"})
    assert r.exit_code == 1, r.output
    text = " ".join(r.output.split())
    assert "0/2" in text and "5 Mean Arterial Pressure (MAP): first failing case a: expected 93.333, got 100.0 " \
        "(off by +6.667" in text
    assert "0 of 1 calculators pass every case; 0 of 2 cases pass" in text
    report = json.loads(out.read_text())
    fails = report["calculators"][0]["failures"]
    assert [f["case"] for f in fails] == ["a", "b"]
    assert fails[1]["got"] is None and fails[1]["reason"] == "raised RuntimeError: no wide pulse pressures here"


def test_cli_passes_ours_and_a_program_speaking_json_lines(tmp_path):
    d = _write(tmp_path, MAP_FILE.format(a=93.333))
    r = CliRunner().invoke(app, ["conformance", "--vectors", str(d)], env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    assert "1 of 1 calculators pass every case; 2 of 2 cases pass" in " ".join(r.output.split())
    prog = tmp_path / "prog.py"
    prog.write_text(textwrap.dedent("""
        import json, sys
        for line in sys.stdin:
            q = json.loads(line)
            s, d = q["inputs"]["Systolic Blood Pressure"][0], q["inputs"]["Diastolic Blood Pressure"][0]
            reply = {"value": round((s + 2 * d) / 3, 2)} if s < 140 else {"error": "too high for me"}
            print(json.dumps(reply), flush=True)
    """))
    r = CliRunner().invoke(app, ["conformance", "--impl", f"cmd:{sys.executable} {prog}", "--vectors", str(d)],
                           env={"COLUMNS": "200"})
    assert r.exit_code == 1, r.output
    text = " ".join(r.output.split())
    assert "1/2" in text and "first failing case b: expected 90, got null (no result: too high for me)" in text


def test_cli_refuses_what_it_cannot_load(tmp_path):
    d = _write(tmp_path, MAP_FILE.format(a=93.333))
    r = CliRunner().invoke(app, ["conformance", "--impl", "no_such_module_xyz:f", "--vectors", str(d)])
    assert r.exit_code == 2 and "cannot import 'no_such_module_xyz'" in r.output
    r = CliRunner().invoke(app, ["conformance", "--calculator", "6", "--vectors", str(d)])
    assert r.exit_code == 2 and "no vectors for calculator(s) [6]" in r.output
    r = CliRunner().invoke(app, ["conformance", "--impl", "nonsense", "--vectors", str(d)])
    assert r.exit_code == 2 and "give ours, medcalc-bench, recorded:NAME, a module:function, or cmd:COMMAND" in r.output
