"""Stage ingest on the real v1.0 split, on a synthetic train split, and on broken inputs."""

from __future__ import annotations

import ast
import csv
import json
from pathlib import Path

import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from medcalc_maintained.cli import app

runner = CliRunner()


def run_ingest(*args: str, cwd: Path | None = None):
    return runner.invoke(app, ["ingest", *args], catch_exceptions=False)


def test_real_v1_split(v1_test_csv, tmp_path):
    # Independent expectations read straight from the file with the csv module.
    with v1_test_csv.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    calculators = {r["Calculator ID"] for r in rows}

    result = run_ingest("--input", str(v1_test_csv), "--out", str(tmp_path))
    assert result.exit_code == 0, result.output
    df = pd.read_parquet(tmp_path / "instances.parquet")
    q = pd.read_csv(tmp_path / "quarantine.csv")

    assert len(df) == len(rows)
    assert df["calculator_id"].nunique() == len(calculators)
    assert len(q) == 0
    assert df["uid"].tolist() == [int(r["Row Number"]) for r in rows]
    # upstream columns kept verbatim
    for col in rows[0]:
        assert df[col].tolist() == [r[col] for r in rows], col
    # entities are JSON of the Python-literal dict
    for r, ent in zip(rows[:50], df["entities"][:50]):
        assert json.loads(ent) == json.loads(json.dumps(ast.literal_eval(r["Relevant Entities"])))
    # typed ground truth
    by_type = {t: set(g) for t, g in df.groupby("output_type")["gt_kind"]}
    assert by_type["date"] == {"date"}
    assert by_type["decimal"] <= {"decimal", "integer"}
    ga = df[df["Ground Truth Answer"].str.contains("weeks")]
    assert (ga["gt_kind"] == "gestational_age").all() and len(ga) > 0
    assert df.loc[df["uid"] == 1, "gt_value"].item() == float(rows[0]["Ground Truth Answer"])


def _write_csv(path: Path, rows: list[dict], columns: list[str] | None = None) -> Path:
    columns = columns or list(rows[0])
    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=columns)
        w.writeheader()
        for r in rows:
            w.writerow({c: r.get(c, "") for c in columns})
    return path


@pytest.fixture
def sample_rows(v1_test_csv) -> list[dict]:
    with v1_test_csv.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    # a few rows of different output types
    picks = [rows[0], rows[40], rows[927], rows[1028]]
    return [dict(r) for r in picks]


def _assert_failed_cleanly(result, out: Path, *needles: str):
    assert result.exit_code != 0
    text = " ".join(result.output.split())
    for n in needles:
        assert n in text, (n, text)
    assert not (out / "instances.parquet").exists()
    assert not list(out.glob(".*.tmp"))


def test_missing_column(sample_rows, tmp_path):
    cols = [c for c in sample_rows[0] if c != "Relevant Entities"]
    bad = _write_csv(tmp_path / "bad.csv", sample_rows, cols)
    out = tmp_path / "out"
    _assert_failed_cleanly(run_ingest("--input", str(bad), "--out", str(out)), out, "bad.csv", "missing column", "Relevant Entities")


def test_duplicate_row_number(sample_rows, tmp_path):
    sample_rows[1]["Row Number"] = sample_rows[0]["Row Number"]
    bad = _write_csv(tmp_path / "dup.csv", sample_rows)
    out = tmp_path / "out"
    _assert_failed_cleanly(run_ingest("--input", str(bad), "--out", str(out)), out, "dup.csv", "duplicate Row Number")


def test_empty_file(tmp_path):
    bad = tmp_path / "empty.csv"
    bad.write_bytes(b"")
    out = tmp_path / "out"
    _assert_failed_cleanly(run_ingest("--input", str(bad), "--out", str(out)), out, "empty.csv", "empty")


def test_header_only_file(sample_rows, tmp_path):
    bad = tmp_path / "header.csv"
    bad.write_text(",".join(sample_rows[0]) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    _assert_failed_cleanly(run_ingest("--input", str(bad), "--out", str(out)), out, "header.csv", "no rows")


def test_not_utf8(sample_rows, tmp_path):
    good = _write_csv(tmp_path / "latin.csv", sample_rows)
    data = good.read_bytes().replace("Creatinine".encode(), "Cr\xe9atinine".encode("latin-1"), 1)
    good.write_bytes(data)
    out = tmp_path / "out"
    _assert_failed_cleanly(run_ingest("--input", str(good), "--out", str(out)), out, "latin.csv", "not valid UTF-8")


def test_previous_output_is_not_left_behind_or_replaced_on_failure(sample_rows, tmp_path):
    out = tmp_path / "out"
    good = _write_csv(tmp_path / "good.csv", sample_rows)
    assert run_ingest("--input", str(good), "--out", str(out)).exit_code == 0
    before = (out / "instances.parquet").read_bytes()
    bad = tmp_path / "empty.csv"
    bad.write_bytes(b"")
    assert run_ingest("--input", str(bad), "--out", str(out)).exit_code != 0
    assert (out / "instances.parquet").read_bytes() == before


def test_unparseable_rows_are_quarantined(sample_rows, tmp_path):
    sample_rows[0]["Relevant Entities"] = "__import__('os').system('echo pwned')"
    sample_rows[1]["Ground Truth Answer"] = "Multiple"
    bad = _write_csv(tmp_path / "rows.csv", sample_rows)
    out = tmp_path / "out"
    result = run_ingest("--input", str(bad), "--out", str(out))
    assert result.exit_code != 0
    assert "max_quarantine" in " ".join(result.output.split())
    q = pd.read_csv(out / "quarantine.csv")
    assert set(q["row_number"]) == {int(sample_rows[0]["Row Number"]), int(sample_rows[1]["Row Number"])}
    assert set(q["column"]) == {"Relevant Entities", "Ground Truth Answer"}
    assert not (out / "instances.parquet").exists()
    # with an allowance the good rows are written
    result = run_ingest("--input", str(bad), "--out", str(out), "--max-quarantine", "2")
    assert result.exit_code == 0, result.output
    assert len(pd.read_parquet(out / "instances.parquet")) == len(sample_rows) - 2


def test_params_driven_with_synthetic_train_split(sample_rows, tmp_path, monkeypatch, v1_test_csv):
    train_rows = [dict(r) for r in sample_rows]
    for i, r in enumerate(train_rows, start=1):
        r["Row Number"] = str(i)
    (tmp_path / "up").mkdir()
    _write_csv(tmp_path / "up" / "train.csv", train_rows)
    params = {
        "upstream": {"splits": {
            "test": {"path": str(v1_test_csv), "required": True},
            "train": {"path": "up/train.csv", "required": False},
            "extra": {"path": "up/absent.csv", "required": False},
        }},
        "ingest": {"out": "interim", "max_quarantine": 0},
    }
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MEDCALC_ROOT", raising=False)
    result = run_ingest()
    assert result.exit_code == 0, result.output
    assert "absent" in result.output
    df = pd.read_parquet(tmp_path / "interim" / "instances.parquet")
    counts = df["split"].value_counts().to_dict()
    assert counts["train"] == len(train_rows)
    assert counts["test"] > len(train_rows)
    # uid is unique per split, not across splits
    assert not df.duplicated(["split", "uid"]).any()
    assert not df["uid"].is_unique
