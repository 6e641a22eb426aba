"""The hostile files of issue 46's readers, refused by the real CLI in a new process in one line, exit
2, under 2 s of CPU and 300 MB (tests/e2e/cli/test_hostile_probes.py: refused): an Inspect .eval of a
few MB hiding a 1 GiB member (regraded at 4.4 GB before), a 400 MB HELM scenario_state.json (a
traceback at a 6 GB cap before), a 1 GiB verifiers metadata.json and a 1 GiB label CSV given to
`evaluate --against` (7.4 GB before). The fast tests of the bounds are in tests/scoring/test_results_bounds.py."""

from __future__ import annotations

import json
import zipfile

from tests.cli import test_hostile_probes as fast_tests
from tests.core.test_zip_bounds import MEMBER
from tests.e2e.cli.test_hostile_probes import refused
from tests.scoring.test_evaluate import write_jsonl
from tests.scoring.test_results_bounds import sparse

eval_project = fast_tests.eval_project  # labels.parquet and preds.jsonl in a project


# the CLI in a new process
def test_an_eval_log_hiding_a_gibibyte_member_is_refused_in_little_memory(eval_project):
    log = eval_project / "bomb.eval"
    with zipfile.ZipFile(log, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        zf.writestr("header.json", "{}")
        with zf.open(MEMBER, "w", force_zip64=True) as out:  # 1 GiB of spaces, ~1 s to write
            for _ in range(256):
                out.write(b" " * (4 << 20))
    assert log.stat().st_size < 8 << 20
    out = refused(eval_project, "regrade", "bomb.eval", "--against", "labels.parquet", "--out", "o")
    assert f"bomb.eval: unpacks to {(1 << 30) + 2} bytes, over the 268435456-byte limit for an Inspect log" in out, out


# the CLI in a new process
def test_helm_and_verifiers_json_and_a_label_csv_of_a_gibibyte_are_refused_unread(eval_project):
    run = eval_project / "helm"
    sparse(run / "scenario_state.json", 400 << 20)
    for part in ("per_instance_stats", "stats"):
        (run / f"{part}.json").write_text("[]")
    out = refused(eval_project, "regrade", "helm", "--against", "labels.parquet", "--out", "o")
    assert "scenario_state.json: HELM scenario_state.json: 419430400 bytes, over the 134217728-byte limit" in out, out
    vf = eval_project / "vf"
    sparse(vf / "metadata.json", 1 << 30)
    write_jsonl(vf / "results.jsonl", [json.dumps({"info": {"uid": 1}, "completion": "1"})])
    out = refused(eval_project, "regrade", "vf", "--against", "labels.parquet", "--out", "o")
    assert "metadata.json: verifiers metadata: 1073741824 bytes, over the 16777216-byte limit" in out, out
    sparse(eval_project / "labels.csv", 1 << 30)
    out = refused(eval_project, "evaluate", "preds.jsonl", "--against", "labels.csv", "--out", "o")
    assert "labels.csv: label file: 1073741824 bytes, over the 67108864-byte limit; refused unread" in out, out
