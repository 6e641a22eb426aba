"""Stage errata on the real pipeline outputs (issue 50): it reproduces the committed errata byte for
byte, and `conformance --impl medcalc-bench --errata` reports the same consequences on v1.0 rows."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from medcalc_maintained.cli import app
from medcalc_maintained.project import Project
from medcalc_maintained.stages import errata as stage
from tests.support.paths import ROOT

ERRATA = ROOT / "data" / "errata"


def _pipeline():
    project = Project.load(ROOT)
    missing = [str(p) for p in (project.instances, project.release_table("2.4.1", "full")) if not p.is_file()]
    if missing:
        pytest.skip(f"pipeline outputs absent (run `dvc repro`): {', '.join(missing)}")
    return project


def test_the_stage_reproduces_the_committed_errata(tmp_path):
    pytest.importorskip("medcalc", reason="the errata extra (medcalc-bench 1.7.0) is not installed")
    project = _pipeline()
    reports, out = stage.run(project, out=tmp_path / "errata")
    for name in ("errata.json", "errata.md"):
        assert (out / name).read_bytes() == (ERRATA / name).read_bytes(), name
    assert [r.implementation for r in reports] == ["medcalc-bench", "recorded:verified"]
    assert all(e.status != "unreviewed" for r in reports for e in r.errata)


def test_the_cli_lists_the_errata_with_their_consequences_on_v1_rows():
    pytest.importorskip("medcalc", reason="the errata extra (medcalc-bench 1.7.0) is not installed")
    _pipeline()
    doc = json.loads((ERRATA / "errata.json").read_text())
    pypi = next(r for r in doc["implementations"] if r["implementation"] == "medcalc-bench")
    r = CliRunner().invoke(app, ["conformance", "--impl", "medcalc-bench", "--errata"], env={"COLUMNS": "200"})
    assert r.exit_code == 1, r.output  # the package fails vectors
    text = " ".join(r.output.split())
    assert (f"{len(pypi['errata'])} errata; {sum(e['rows_differ'] for e in pypi['errata'])} v1.0 rows differ from the "
            f"declared definitions, {sum(e['rows_label_follows_implementation'] for e in pypi['errata'])} of whose "
            "v1.0 labels are its answer") in text
    assert f"{pypi['vector_cases_passed']} of {pypi['vector_cases']} cases pass" in text
