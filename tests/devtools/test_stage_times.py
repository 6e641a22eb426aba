"""``devtools/stage_times.py``: each stage's seconds read from a ``dvc repro`` output as it arrives, written
for ``summary`` (the command on a fresh copy of the project, with DVC itself, is the fixture of
tests/e2e/pipeline/test_pipeline.py)."""

from __future__ import annotations

import io

from rich.console import Console
from typer.testing import CliRunner

from medcalc_maintained.cli import app
from medcalc_maintained.cli.summary import _stage_times
from medcalc_maintained.devtools.stage_times import StageTime, read_times, time_lines, write_times
from medcalc_maintained.project import Project

# DVC 3's own lines around two stages, one run and one skipped, with a stage's own output between them
OUTPUT = [
    "Running stage 'ingest':\n",
    "> medcalc-maintained ingest\n",
    "ingest: 1047 rows\n",
    "Updating lock file 'dvc.lock'\n",
    "\n",
    "Stage 'recompute' didn't change, skipping\n",
    "Running stage 'certify':\n",
    "> medcalc-maintained certify\n",
    "Updating lock file 'dvc.lock'\n",
    "Stage 'release' is cached - skipping run, checking out outputs\n",
    "Use `dvc push` to send your updates to remote storage.\n",
]


def test_a_stage_lasts_from_its_line_to_the_next_stage_line_or_the_end():
    ticks = iter([100.0, 102.5, 102.75, 110.0, 111.0, 111.5])  # start; ingest; recompute; certify; release; end
    echo = io.StringIO()
    times, total = time_lines(OUTPUT, clock=lambda: next(ticks), echo=echo)
    assert times == [StageTime("ingest", 0.25, True), StageTime("recompute", 7.25, False),
                     StageTime("certify", 1.0, True), StageTime("release", 0.5, False)]
    assert total == 11.5
    assert echo.getvalue() == "".join(OUTPUT)  # every line passed through unchanged


def test_no_stage_lines_no_stages():
    ticks = iter([0.0, 3.0])
    assert time_lines(["Data and pipelines are up to date.\n"], clock=lambda: next(ticks)) == ([], 3.0)


def test_summary_prints_the_stages_that_ran_slowest_first(tmp_path):
    path = tmp_path / "stage-times.json"
    write_times(path, [StageTime("ingest", 4.5, True), StageTime("recompute", 0.3, False),
                       StageTime("certify", 30.25, True)], 40.0, 0, ["certify"])
    doc = read_times(path)
    assert doc is not None and doc["command"] == "dvc repro certify" and doc["exit_code"] == 0
    (tmp_path / "params.yaml").write_text(f"repro:\n  times: {path}\n", encoding="utf-8")
    out = io.StringIO()
    assert _stage_times(Project.load(tmp_path), Console(file=out, width=100)) is True
    text = out.getvalue()
    assert text.index("certify") < text.index("ingest") and "30.2" in text and "76%" in text
    assert "1 unchanged (skipped)" in text and "recompute" not in text
    path.write_text("{not json", encoding="utf-8")
    assert read_times(path) is None
    assert _stage_times(Project.load(tmp_path), Console(file=io.StringIO())) is False


def test_repro_runs_dvc_with_the_arguments_given_passes_its_output_through_and_keeps_its_exit_code(tmp_path, capsys):
    """run_repro on a stand-in for the dvc executable (DVC itself runs in tests/e2e/pipeline/test_pipeline.py's
    fixture): the arguments reach it after ``repro``, its lines reach stdout as they are, its exit code is kept."""
    import sys

    from medcalc_maintained.devtools.stage_times import run_repro

    fake = tmp_path / "dvc"
    fake.write_text(f"#!{sys.executable}\nimport pathlib, sys\n"
                    "pathlib.Path('argv.txt').write_text(' '.join(sys.argv[1:]))\n"
                    "print(\"Running stage 'certify':\")\nprint('> medcalc-maintained certify')\n"
                    "print(\"Stage 'triage' didn't change, skipping\")\nsys.exit(3)\n", encoding="utf-8")
    fake.chmod(0o755)
    code, times, total = run_repro(tmp_path, ["certify", "--dry"], dvc=str(fake))
    assert code == 3 and (tmp_path / "argv.txt").read_text() == "repro certify --dry"
    assert [(t.stage, t.ran) for t in times] == [("certify", True), ("triage", False)]
    assert 0 <= sum(t.seconds for t in times) <= total
    assert capsys.readouterr().out == ("Running stage 'certify':\n> medcalc-maintained certify\n"
                                       "Stage 'triage' didn't change, skipping\n")
    result = CliRunner().invoke(app, ["repro", "--help"])
    assert result.exit_code == 0 and "build/repro/stage-times.json" in result.output


def test_the_times_file_makes_no_pipeline_folder_a_valid_out(tmp_path):
    """The times live in a folder of their own: the folder of a known file is a valid ``--out``, and build/
    holds the release."""
    import pytest

    from medcalc_maintained.core.errors import DataError

    project = Project.load(tmp_path)
    assert project.stage_times.parent.name == "repro" and project.stage_times.parent.parent == project.release_build.parent
    with pytest.raises(DataError, match="holds the pipeline path"):
        project.guard_out("build")
