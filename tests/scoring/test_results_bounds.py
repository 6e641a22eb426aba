"""Every reader of `regrade` and `evaluate --against` is bounded by what a real file needs, checked before
a byte is read (issue 46): an Inspect .eval by its zip directory (members, total, ratio), an Inspect JSON
log, HELM's and verifiers' JSON and lm-eval's results JSON by their size, a label file by its size (a
parquet file also by the rows and bytes its footer declares). Each is refused with exit 2, naming the
file, the bound and the measured size, nothing written. The same refusals in a new process, measured
for time and memory, are in tests/e2e/cli/test_hostile_readers.py."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from medcalc_maintained.cli import app
from medcalc_maintained.harnesses.helm_harness.reader import HELM_STATE_MAX_BYTES, HELM_STATS_MAX_BYTES
from medcalc_maintained.harnesses.inspect_harness.reader import INSPECT_LOG
from medcalc_maintained.harnesses.results import SUMMARY_MAX_BYTES
from medcalc_maintained.scoring.labels import LABEL_FILE_MAX_BYTES, LABEL_MAX_ROWS
from tests.core.test_zip_bounds import MEMBER, declare
from tests.scoring.test_evaluate import ORIGINAL, PREDICTIONS, frame, write_jsonl

runner = CliRunner()


def sparse(path: Path, size: int) -> Path:
    """A file of ``size`` bytes that takes no room on disk (read, it is all NUL bytes)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as fh:
        fh.truncate(size)
    return path


@pytest.fixture
def root(tmp_path) -> Path:
    frame(ORIGINAL).to_parquet(tmp_path / "labels.parquet")
    write_jsonl(tmp_path / "preds.jsonl", PREDICTIONS)
    return tmp_path


def refused(root: Path, *args: str) -> str:
    out = root / "never"
    r = runner.invoke(app, [*args, "--out", str(out)])
    assert r.exit_code == 2 and "Traceback" not in r.output, r.output
    assert not out.exists()
    return " ".join(r.output.split())


def regrade(root: Path, results: Path) -> str:
    return refused(root, "regrade", str(results), "--against", str(root / "labels.parquet"))


def test_an_eval_log_declaring_a_gibibyte_member_is_refused_from_its_directory(root):
    log = root / "bomb.eval"
    with zipfile.ZipFile(log, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("header.json", "{}")
        zf.writestr(MEMBER, "{}")
    declare(log, MEMBER, 1 << 30)  # what the directory says is all that is read
    assert (f"{log}: unpacks to {(1 << 30) + 2} bytes, over the {INSPECT_LOG.max_unpacked}-byte limit for an "
            "Inspect log (a zip bomb?)") in regrade(root, log)
    member = root / "member.eval"
    with zipfile.ZipFile(member, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(MEMBER, "{}")
    declare(member, MEMBER, (64 << 20) + 1)
    assert (f"{member}: member {MEMBER} unpacks to {(64 << 20) + 1} bytes, over the {64 << 20}-byte limit of one "
            "member of an Inspect log") in regrade(root, member)
    json_log = sparse(root / "log.json", INSPECT_LOG.max_unpacked + 1)
    assert (f"{json_log}: an Inspect log (JSON): {INSPECT_LOG.max_unpacked + 1} bytes, over the "
            f"{INSPECT_LOG.max_unpacked}-byte limit; refused unread") in regrade(root, json_log)


@pytest.mark.parametrize("name, limit", [("scenario_state", HELM_STATE_MAX_BYTES),
                                         ("per_instance_stats", HELM_STATS_MAX_BYTES), ("stats", HELM_STATS_MAX_BYTES)])
def test_a_helm_run_file_over_its_bound_is_refused_before_any_is_read(root, name, limit):
    run = root / "helm"
    run.mkdir()
    for part in ("scenario_state", "per_instance_stats", "stats"):
        sparse(run / f"{part}.json", limit + 1) if part == name else (run / f"{part}.json").write_text("[")
    assert (f"{run / (name + '.json')}: HELM {name}.json: {limit + 1} bytes, over the {limit}-byte limit; "
            "refused unread") in regrade(root, run)


def test_verifiers_and_lm_eval_summaries_over_their_bound_are_refused(root):
    run = root / "vf"
    sparse(run / "metadata.json", SUMMARY_MAX_BYTES + 1)
    write_jsonl(run / "results.jsonl", [json.dumps({"info": {"uid": 1}, "completion": "1", "metrics": {"correct": 1}})])
    assert (f"{run / 'metadata.json'}: verifiers metadata: {SUMMARY_MAX_BYTES + 1} bytes, over the "
            f"{SUMMARY_MAX_BYTES}-byte limit; refused unread") in regrade(root, run)
    samples = root / "lm" / "samples_medcalc_2026-01-02T03-04-05.678901.jsonl"
    samples.parent.mkdir()
    write_jsonl(samples, [json.dumps({"doc": {"uid": 1}, "filtered_resps": ["1"], "acc": 1.0})])
    agg = sparse(samples.with_name("results_2026-01-02T03-04-05.678901.json"), SUMMARY_MAX_BYTES + 1)
    assert (f"{agg}: lm-eval results: {SUMMARY_MAX_BYTES + 1} bytes, over the {SUMMARY_MAX_BYTES}-byte limit; "
            "refused unread") in regrade(root, samples)


def test_a_label_file_over_its_bound_is_refused_before_it_is_read(root):
    csv = sparse(root / "labels.csv", LABEL_FILE_MAX_BYTES + 1)
    assert (f"{csv}: label file: {LABEL_FILE_MAX_BYTES + 1} bytes, over the {LABEL_FILE_MAX_BYTES}-byte limit; "
            "refused unread") in refused(root, "evaluate", str(root / "preds.jsonl"), "--against", str(csv))
    many = root / "many.parquet"
    pd.DataFrame({"uid": range(LABEL_MAX_ROWS + 1)}).to_parquet(many)  # ~0.4 MB, rows its footer declares
    assert (f"{many}: label file: {LABEL_MAX_ROWS + 1} rows, over the {LABEL_MAX_ROWS}-row limit; refused unread"
            in refused(root, "evaluate", str(root / "preds.jsonl"), "--against", str(many)))
    ok = root / "labels.csv"
    frame(ORIGINAL).to_csv(ok, index=False)  # a real label file is read as before
    r = runner.invoke(app, ["evaluate", str(root / "preds.jsonl"), "--against", str(ok), "--out", str(root / "o"),
                            "--n-boot", "100"])
    assert r.exit_code == 0, r.output
