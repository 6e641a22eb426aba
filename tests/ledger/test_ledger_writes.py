"""Ledger writes: one writer at a time (the directory lock), only ``*.yaml``/``*.yml`` directly in the
hand-written ledger directory, never the generated campaign ledger, comments kept on append, and
strict YAML (aliases, duplicate keys, impossible dates, size) refused naming file and line."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from medcalc_maintained import ledger
from medcalc_maintained.cli import app
from tests.support.ledger_support import minimal_project

runner = CliRunner()
PROPOSE = ["propose", "--uid", "41", "--new-value", "N/A", "--error-type", "unanswerable",
           "--rationale", "The note lacks an input.", "--date", "2026-03-02"]


@pytest.fixture
def root(tmp_path, real_instances) -> Path:
    return minimal_project(tmp_path / "p", real_instances)


def invoke(root: Path, *args: str):
    return runner.invoke(app, list(args), env={"MEDCALC_ROOT": str(root)})


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted((root / "data").rglob("*")) if p.is_file()
            and p.suffix != ".parquet"}


@pytest.mark.parametrize("file, words", [
    ("data/corrections/notes.txt", "must end in .yaml or .yml"),
    ("data/campaign/audit-2025.yaml", "is not directly in the hand-written ledger directory"),
    ("data/corrections/sub/x.yaml", "is not directly in the hand-written ledger directory"),
    ("elsewhere.yaml", "is not directly in the hand-written ledger directory"),
])
def test_propose_writes_only_into_the_hand_written_ledger(root, file, words):
    (root / "data" / "corrections" / "sub").mkdir()
    before = snapshot(root)
    r = invoke(root, *PROPOSE, "--file", file)
    assert r.exit_code == 2 and words in " ".join(r.output.split()), r.output
    assert file.split("/")[-1] in r.output
    assert snapshot(root) == before


def test_the_generated_campaign_ledger_is_never_written_by_hand(tmp_path, root):
    # even when it lives in the hand-written directory
    (root / "params.yaml").write_text(yaml.safe_dump({
        "campaign": {"out": "data/corrections/audit-2025.yaml"},
        "apply": {"ledger": ["data/corrections"], "out": "data/maintained"}}))
    (root / "data" / "corrections" / "audit-2025.yaml").write_text("corrections: []\n")
    before = snapshot(root)
    r = invoke(root, *PROPOSE, "--file", "data/corrections/audit-2025.yaml")
    assert r.exit_code == 2 and "is a generated ledger file" in r.output, r.output
    assert snapshot(root) == before


def test_append_keeps_every_comment(root):
    target = root / "data" / "corrections" / "mine.yaml"
    text = ("# My proposals\n# (hand-written)\nbatch:\n  name: mine  # the batch\ncorrections:\n"
            "  # the first one\n  - id: C-0001\n    uid: 146\n    split: test\n    old_value: N/A\n    new_value: '38'\n"
            "    decision: deferred  # waiting\n    label_status: corrected\n    error_type: extraction\n"
            "    rationale: Temperature in the note.\n    evidence: []\n    source: contributor\n"
            "    reviewer: {id: me, role: contributor}\n    blinded: false\n    decided_at: 2026-03-01\n")
    target.write_text(text)
    r = invoke(root, *PROPOSE, "--file", "data/corrections/mine.yaml")
    assert r.exit_code == 0, r.output
    after = target.read_text()
    assert after.startswith(text)  # every line kept, comments included
    assert [(x.id, x["uid"]) for x in ledger.load([target])] == [("C-0001", 146), ("C-0002", 41)]


def test_an_existing_ledger_file_is_not_replaced_if_it_changed_meanwhile(root, real_instances):
    from medcalc_maintained.core.errors import DataError
    from medcalc_maintained.ledger.write import write_checked

    target = root / "data" / "corrections" / "x.yaml"
    target.write_text("corrections: []\n")
    with pytest.raises(DataError, match="changed while this command ran"):
        write_checked(target, "corrections: []\n# new\n", others=[], instances=real_instances, expected="other\n")
    with pytest.raises(DataError, match="changed while this command ran"):
        write_checked(target, "corrections: []\n# new\n", others=[], instances=real_instances, expected=None)
    assert target.read_text() == "corrections: []\n"


BOMB = ("corrections:\n- &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"- &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(9)))


@pytest.mark.parametrize("text, words", [
    (BOMB, "line 2, column 3: aliases (*name) are not allowed"),
    ("corrections:\n- id: C-1\n  uid: 41\n  uid: 42\n", "line 4, column 3: duplicate key 'uid' (first at line 3)"),
    ("corrections:\n- id: C-1\n  decided_at: 2026-02-30\n", "line 3, column 15: '2026-02-30' is not a valid date"),
    ("base: &b {uid: 1}\ncorrections:\n- {<<: *b, id: C-1}\n", "line 3, column 4: merge keys (<<) are not allowed"),
    # 200 KB nested 100,000 deep: the parser recursed once per level and the process died (exit 139, no message)
    ("corrections:\n- " + "[" * 100_000 + "]" * 100_000 + "\n", "line 2, column 102: nesting deeper than 100 levels"),
])
def test_hostile_yaml_is_refused_naming_file_and_line(root, text, words):
    bad = root / "data" / "corrections" / "bad.yaml"
    bad.write_text(text)
    before = snapshot(root)
    t0 = time.monotonic()
    r = invoke(root, *PROPOSE)
    took = time.monotonic() - t0
    assert r.exit_code == 2, r.output
    assert f"{bad}: malformed YAML at {words}" in " ".join(r.output.split()), r.output
    assert len(r.output.encode()) <= 1024 and took < 5
    assert snapshot(root) == before


def test_apply_out_onto_an_existing_file_is_refused_without_a_traceback(root):
    existing = root / "somefile"
    existing.write_text("keep me\n")
    r = invoke(root, "apply", "--out", str(existing))
    assert r.exit_code == 2 and r.exception is None or isinstance(r.exception, SystemExit), r.exception
    assert f"{existing}: exists and is not a directory" in " ".join(r.output.split()), r.output
    assert existing.read_text() == "keep me\n"


def test_scratch_left_by_a_killed_writer_is_removed_by_the_next(root):
    import subprocess
    import tempfile

    from medcalc_maintained.ledger.write import SCRATCH_PREFIX

    gone = subprocess.Popen(["true"])
    gone.wait()  # a pid that no longer runs
    left = Path(tempfile.gettempdir()) / f"{SCRATCH_PREFIX}{gone.pid}-abc"
    left.mkdir()
    (left / "x.yaml").write_text("corrections: []\n")
    r = invoke(root, *PROPOSE)
    assert r.exit_code == 0, r.output
    assert not left.exists()
