"""Nothing a user types deletes their work, hangs, ships wrong data or ends in a traceback (issue 37):
one test per probe of the issue. `--force` replaces only what the command wrote before; masking is
linear in the text; drafts and tampered releases are refused by their content; duplicate JSON keys,
packet and input bombs are refused in one line; `repair-lock` checks the lock as DVC does; a draft
never goes into the pipeline's release. The tests that run the CLI in a new process measure CPU time
and peak memory (test_review_bounded.run_cli) and are here.

The end-to-end tests of this subject; the fast ones are in tests/cli/test_hostile_probes.py."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.cli import test_hostile_probes as fast_tests
from tests.cli.test_hostile_probes import a_user_directory, bombed, cell_formats, one_line, shared_strings, snapshot
from tests.review.test_review_bounded import cpu_seconds, run_cli
from tests.scoring.test_evaluate import write_jsonl
from tests.support.ledger_support import minimal_project

# shared with the fast tests
derive_project = fast_tests.derive_project
eval_project = fast_tests.eval_project
packet_root = fast_tests.packet_root


def refused(root: Path, *args: str) -> str:
    """The one-line refusal of a real CLI run: exit 2, no traceback, < 2 s CPU, < 300 MB."""
    t0 = cpu_seconds()
    code, out, _, peak = run_cli(root, *args)
    seconds = cpu_seconds() - t0
    flat = one_line(code, out)
    assert seconds < 2 and peak < 300, (seconds, peak, flat)
    return flat


# the CLI in a new process
def test_evaluate_and_lm_eval_force_over_git_src_and_a_folder_are_one_line(eval_project, tmp_path):
    outside = a_user_directory(tmp_path / "outside")
    git = a_user_directory(eval_project / ".git")
    before = {d: snapshot(d) for d in (outside, git)}
    out = refused(eval_project, "evaluate", "preds.jsonl", "--against", "labels.parquet", "--out", ".git", "--force")
    assert "--out .git: is not an earlier output of `evaluate`" in out, out
    out = refused(eval_project, "harness", "lm-eval", "--revision", "v2.0", "--out", str(outside), "--force")
    assert f"--out {outside}: is not an earlier output of `harness lm-eval`" in out, out
    assert {d: snapshot(d) for d in (outside, git)} == before


# the CLI in a new process
def test_a_one_megabyte_prediction_line_is_refused_in_under_two_seconds(eval_project):
    write_jsonl(eval_project / "big.jsonl", ['{"uid": "' + "x" * 1_000_000 + '", "output": "1"}'])
    out = refused(eval_project, "evaluate", "big.jsonl", "--against", "labels.parquet", "--out", "o")
    assert "big.jsonl, line 1: uid must be a JSON integer" in out, out


# the CLI in a new process
def test_a_packet_with_a_huge_string_table_or_a_million_formats_is_refused_quickly(packet_root):
    filled = packet_root / "filled.xlsx"
    for name, write in (("xl/sharedStrings.xml", shared_strings(1_500_000)), ("xl/styles.xml", cell_formats(1_000_000))):
        bomb = bombed(filled, packet_root / "bomb.xlsx", name, write)
        out = refused(packet_root, "review", "import", str(bomb), "--decided-at", "2026-02-02")
        assert "bomb.xlsx" in out and "limit of" in out, out
        assert sorted(p.name for p in (packet_root / "data" / "corrections").iterdir()) == []


# the CLI in a new process
def test_ledger_derive_with_a_gibibyte_file_is_refused_in_little_memory(derive_project):
    f = derive_project / "huge.yaml"
    with f.open("wb") as fh:
        fh.truncate(1 << 30)
    out = refused(derive_project, "ledger", "derive", "--uid", "41", "--inputs", str(f))
    assert "over the 1048576-byte limit" in out, out


# the CLI in a new process
def test_a_full_disk_during_review_export_leaves_no_record(tmp_path, real_instances):
    from tests.e2e.cli.test_disk_full import _namespaces_work, run_on_full_disk

    if not _namespaces_work():
        pytest.skip("needs unshare -rm (user + mount namespaces) for a tmpfs")
    root = minimal_project(tmp_path / "p", real_instances)
    (root / "params.yaml").write_text(yaml.safe_dump({
        "apply": {"ledger": ["data/corrections"], "out": "data/maintained"},
        "triage": {"reviewers": [{"id": "md-im-1", "role": "physician", "specialty": "internal medicine"}]}}))
    queue = root / "queue.csv"
    queue.write_text("split,uid,in_budget,reviewer,rank\ntest,41,True,md-im-1,1\ntest,146,True,md-im-1,2\n")
    full = root / "packets"
    full.mkdir()
    proc = run_on_full_disk(full, root, "review", "export", "--reviewer", "md-im-1", "--queue", str(queue),
                            "--out", str(full / "md-im-1.xlsx"))
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1 and "Traceback" not in out and "Exception ignored" not in out, out
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "md-im-1.xlsx" in lines[0] and "no space left on device" in lines[0], out
    assert not list((root / "data" / "review" / "exports").glob("*.json"))  # no record of a packet never written
    assert (root / ".seen").read_text().split() == []  # nothing left in the full directory
