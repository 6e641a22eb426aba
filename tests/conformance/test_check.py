"""How a conformance run judges answers, reads vector files and calls implementations (synthetic
cases made here)."""

from __future__ import annotations

import datetime as dt
import json
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from medcalc_maintained.cli import app
from medcalc_maintained.conformance import agrees, load_vectors, run_vectors
from medcalc_maintained.conformance.base import Implementation, NoResult
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
    """A module in the current folder (found as `python -m` finds it, no PYTHONPATH)."""
    (tmp_path / "wrong_map.py").write_text(textwrap.dedent("""
        def calc(calculator_id, inputs):
            s, d = inputs["Systolic Blood Pressure"][0], inputs["Diastolic Blood Pressure"][0]
            if s > 140:
                raise RuntimeError("no wide pulse pressures here")
            return (s + d) / 2          # the arithmetic mean: not MAP
    """))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
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
        print("calc server v1 ready", flush=True)          # a banner: skipped
        for line in sys.stdin:
            q = json.loads(line)
            s, d = q["inputs"]["Systolic Blood Pressure"][0], q["inputs"]["Diastolic Blood Pressure"][0]
            reply = {"value": round((s + 2 * d) / 3, 2)} if s < 140 else {"error": "too high for me"}
            print(json.dumps({"id": q["id"], **reply}), flush=True)
    """))
    r = CliRunner().invoke(app, ["conformance", "--impl", f"cmd:{sys.executable} {prog}", "--vectors", str(d)],
                           env={"COLUMNS": "200"})
    assert r.exit_code == 1, r.output
    text = " ".join(r.output.split())
    assert "1/2" in text and "first failing case b: expected 90, got null (no result: too high for me)" in text


def test_a_program_that_hangs_is_stopped_and_one_that_dies_fails_the_rest(tmp_path):
    from medcalc_maintained.conformance.implementations import _command

    files = load_vectors(directory=_write(tmp_path, MAP_FILE.format(a=93.333)))
    hang = tmp_path / "hang.py"
    hang.write_text("import sys, time\nsys.stdin.readline()\ntime.sleep(60)\n")
    impl = _command(f"cmd:{sys.executable} {hang}", timeout=1.0)
    try:
        [c] = run_vectors(files, impl).calculators
    finally:
        impl.close()
    assert c.passed == 0 and "no answer within 1 s" in c.results[0].reason and "stopped" in c.results[1].reason
    dies = tmp_path / "dies.py"
    dies.write_text("import json, sys\nq = json.loads(sys.stdin.readline())\n"
                    "print(json.dumps({'id': q['id'], 'value': 93.333}), flush=True)\n")
    impl = _command(f"cmd:{sys.executable} {dies}", timeout=10.0)
    try:
        [c] = run_vectors(files, impl).calculators
    finally:
        impl.close()
    assert [r.ok for r in c.results] == [True, False] and "exited" in c.results[1].reason


def test_an_exception_fails_even_a_case_whose_definition_gives_no_result(tmp_path):
    text = MAP_FILE.format(a=93.333).replace("    expected: 90\n", "    expected: null\n")
    files = load_vectors(directory=_write(tmp_path, text))

    def raises(calculator_id, inputs):
        raise TypeError("bad operand")

    def refuses(calculator_id, inputs):
        raise NoResult("cannot")

    def numpy_answer(calculator_id, inputs):
        return np.float32(93.3333) if inputs["Systolic Blood Pressure"][0] == 120 else None

    assert [r.ok for r in run_vectors(files, Implementation("r", "r", raises)).calculators[0].results] == [False, False]
    assert [r.ok for r in run_vectors(files, Implementation("n", "n", refuses)).calculators[0].results] == [False, True]
    assert [r.ok for r in run_vectors(files, Implementation("np", "np", numpy_answer)).calculators[0].results] \
        == [True, True]


def test_a_release_vectors_json_runs_and_a_tampered_one_is_refused(tmp_path):
    from medcalc_maintained.conformance.vectors import canonical, digest_of

    files = load_vectors([5, 69])
    path = tmp_path / "vectors.json"
    path.write_text(json.dumps({"vectors_sha256": digest_of(files), "calculators": canonical(files)}))
    again = load_vectors(directory=path)
    assert [f.calculator_id for f in again] == [5, 69] and digest_of(again) == digest_of(files)
    doc = json.loads(path.read_text())
    doc["calculators"][0]["cases"][0]["expected"] = 1.0
    path.write_text(json.dumps(doc))
    with pytest.raises(DataError, match="is not the sha256 of the vectors it holds"):
        load_vectors(directory=path)


@pytest.mark.parametrize("edit, words", [
    (("    why: typical\n", "    why: typical\n    tolerence: 0.5\n"), "case a: unknown key(s) 'tolerence'"),
    (("  - id: a\n", "  - id: 7\n"), "case #1: id is a text"),
    (("cases:\n", "notes: x\ncases:\n"), "unknown key(s) 'notes'"),
])
def test_unknown_keys_and_numeric_ids_are_refused(tmp_path, edit, words):
    d = _write(tmp_path, MAP_FILE.format(a=93.333).replace(*edit))
    with pytest.raises(DataError) as exc:
        parse_file(d / "5.yaml")
    assert words in str(exc.value)


def test_cli_refuses_what_it_cannot_load(tmp_path, monkeypatch):
    d = _write(tmp_path, MAP_FILE.format(a=93.333))
    (tmp_path / "broken_impl.py").write_text("raise RuntimeError('half-installed')\n")
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(app, ["conformance", "--impl", "broken_impl:f", "--vectors", str(d)])
    assert r.exit_code == 2 and "cannot import 'broken_impl': RuntimeError: half-installed" in r.output
    r = CliRunner().invoke(app, ["conformance", "--vectors", str(tmp_path / "no-such-folder")])
    assert r.exit_code == 2 and "no such folder of vector files" in r.output
    r = CliRunner().invoke(app, ["conformance", "--vectors", str(tmp_path)])  # a folder without vector files
    assert r.exit_code == 2 and "holds no vector file" in r.output
    r = CliRunner().invoke(app, ["conformance", "--impl", "no_such_module_xyz:f", "--vectors", str(d)])
    assert r.exit_code == 2 and "cannot import 'no_such_module_xyz'" in r.output
    r = CliRunner().invoke(app, ["conformance", "--calculator", "6", "--vectors", str(d)])
    assert r.exit_code == 2 and "no vectors for calculator(s) [6]" in r.output
    r = CliRunner().invoke(app, ["conformance", "--impl", "nonsense", "--vectors", str(d)])
    assert r.exit_code == 2 and "give ours, medcalc-bench, recorded:NAME, a module:function, or cmd:COMMAND" in r.output


def test_a_failure_is_recorded_without_the_machines_file_paths():
    """What Python appends to an import error (the file's absolute path) differs per checkout; the
    recorded reason must not, or the committed errata differ on every other machine."""
    def refuses(cid, inputs):
        raise NoResult("importing medcalc.x fails: cannot import name 'y' from 'medcalc.z' "
                       "(/home/someone/.venv/lib/python3.11/site-packages/medcalc/z.py)")

    def crashes(cid, inputs):
        raise ImportError("cannot import name 'y' from 'medcalc.z' (C:\\venv\\Lib\\site-packages\\medcalc\\z.py)")

    files = load_vectors([5])
    for impl, reason in ((refuses, "no result: importing medcalc.x fails: cannot import name 'y' from 'medcalc.z'"),
                         (crashes, "raised ImportError: cannot import name 'y' from 'medcalc.z'")):
        [result] = run_vectors(files, Implementation("x", "x", impl)).calculators
        assert {r.reason for r in result.results} == {reason}
