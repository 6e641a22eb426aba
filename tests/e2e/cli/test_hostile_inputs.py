"""Hostile inputs are bounded and refused in one line naming file and place (issue 27): JSON nested
thousands deep, `--out` targets over the hand-written ledger or data/, "None" as an answer, control
characters in the ledger, and a full disk. Refusals run through the real CLI in a new process,
measured for CPU time and peak memory (see test_review_bounded.run_cli).

The end-to-end tests of this subject; the fast ones are in tests/cli/test_hostile_inputs.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from medcalc_maintained.core.errors import DataError
from medcalc_maintained.grading.predictions import read_predictions
from tests.cli.test_hostile_inputs import DEEP
from tests.review.test_review_bounded import cpu_seconds, run_cli
from tests.scoring.test_evaluate import ORIGINAL, frame, write_jsonl


def refused(root: Path, *args: str) -> str:
    """The one-line refusal of a real CLI run (exit 2, no traceback, < 2 s CPU, < 300 MB)."""
    t0 = cpu_seconds()
    code, out, _, peak = run_cli(root, *args)
    seconds = cpu_seconds() - t0
    assert code == 2 and "Traceback" not in out, out
    assert len(out.strip().splitlines()) == 1, out
    assert seconds < 2 and peak < 300, (seconds, peak)
    return " ".join(out.split())


# the CLI in a new process
def test_a_prediction_nested_2000_deep_is_refused_naming_file_and_line(tmp_path):
    labels = tmp_path / "labels.parquet"
    frame(ORIGINAL).to_parquet(labels)
    preds = write_jsonl(tmp_path / "preds.jsonl", ['{"uid": 1, "output": "1"}', '{"uid": 2, "output": ' + DEEP + "}"])
    with pytest.raises(DataError, match="line 2: JSON nested more than 64 levels deep"):
        read_predictions(preds)
    out = refused(tmp_path, "evaluate", str(preds), "--against", str(labels), "--out", str(tmp_path / "o"))
    assert f"{preds}, line 2: JSON nested more than 64 levels deep" in out, out
    assert not (tmp_path / "o").exists()


LEDGER_TEXT = "corrections:\n- id: hand-written-1\n  uid: 1\n  note: written by a person\n"


@pytest.fixture
def project(tmp_path) -> Path:
    """A project with a hand-written ledger file, a label set and predictions."""
    root = tmp_path / "p"
    (root / "data" / "corrections").mkdir(parents=True)
    (root / "data" / "corrections" / "mine.yaml").write_text(LEDGER_TEXT)
    (root / "params.yaml").write_text("apply:\n  ledger: [data/corrections]\n  out: data/maintained\n")
    frame(ORIGINAL).to_parquet(root / "labels.parquet")
    write_jsonl(root / "preds.jsonl", [{"uid": 1, "output": "25"}])
    return root


def snapshot(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("args, words", [
    (["apply", "--out", "data/corrections"], "--out data/corrections: would write over the hand-written ledger"),
    (["apply", "--out", "data/corrections/sub"], "--out data/corrections/sub: is inside the hand-written ledger"),
    (["evaluate", "preds.jsonl", "--against", "labels.parquet", "--out", "data/corrections", "--force"],
     "--out data/corrections: would write over the hand-written ledger"),
    (["evaluate", "preds.jsonl", "--against", "labels.parquet", "--out", "data", "--force"],
     "--out data: would write over the hand-written ledger"),
    (["evaluate", "preds.jsonl", "--against", "labels.parquet", "--out", ".", "--force"],
     "--out .: would write over the hand-written ledger"),
    (["evaluate", "preds.jsonl", "--against", "labels.parquet", "--out", "data/interim/..", "--force"],
     "would write over the hand-written ledger"),
    (["evaluate", "preds.jsonl", "--against", "labels.parquet", "--out", "build", "--force"],
     "--out build: holds the pipeline path build/"),
    (["review", "import", "x.xlsx", "--out", "data/corrections"], "--out data/corrections: would write over"),
    (["release", "build", "--out", "data"], "--out data: would write over the hand-written ledger"),
])
# the CLI in a new process
def test_an_out_over_the_ledger_or_data_is_refused_and_the_ledger_stays(project, args, words):
    before = snapshot(project)
    out = refused(project, *args)
    assert words in out, out
    assert snapshot(project) == before  # byte-identical: nothing written, nothing deleted


# the CLI in a new process
def test_a_new_out_directory_is_still_written(project):
    code, out, _, _ = run_cli(project, "evaluate", "preds.jsonl", "--against", "labels.parquet", "--out", "runs/one",
                              "--n-boot", "200")
    assert code == 0, out
    assert (project / "runs" / "one" / "graded.csv").is_file()
    assert (project / "data" / "corrections" / "mine.yaml").read_text() == LEDGER_TEXT
