"""Work a stage does once instead of repeatedly: a ledger file read again with the same bytes is not
parsed again (``ledger.records.read_file``), and a checkpoint with the same files as one already
evaluated is not asked again (``stages.compare_report.model_digest``). Both must stay invisible:
the second reading is a fresh, equal copy, and a changed file is read anew."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

from medcalc_maintained.ledger.records import read_file
from medcalc_maintained.stages.compare_report import model_digest
from tests.support.ledger_support import record


def _ledger(path: Path, *records: dict) -> Path:
    path.write_text(yaml.safe_dump({"corrections": list(records)}, sort_keys=False), encoding="utf-8")
    return path


def test_reading_a_ledger_file_again_gives_an_equal_fresh_copy(tmp_path):
    path = _ledger(tmp_path / "batch.yaml", record(), record(id="T-0002", uid=3, rationale=7))
    first, first_problems = read_file(path)
    assert [r.id for r in first] == ["T-0001", "T-0002"]
    assert [r.valid for r in first] == [True, False]  # rationale must be text
    assert [p.record for p in first_problems] == ["T-0002"]
    first[0].data["new_value"] = "changed by a caller"
    first[0].data["reviewer"]["id"] = "someone else"
    first_problems.clear()
    again, again_problems = read_file(path)
    assert again is not first and again[0] is not first[0]
    assert again[0]["new_value"] == "30" and again[0]["reviewer"]["id"] == "md-1"
    assert [p.record for p in again_problems] == ["T-0002"]


def test_a_changed_ledger_file_is_read_anew(tmp_path):
    path = _ledger(tmp_path / "batch.yaml", record())
    assert read_file(path)[0][0]["new_value"] == "30"
    _ledger(path, record(new_value="31"))
    assert read_file(path)[0][0]["new_value"] == "31"
    # the same bytes under another name are records of that file
    other = tmp_path / "other.yaml"
    shutil.copy(path, other)
    assert read_file(other)[0][0].path == str(other)


def test_crlf_ledger_reads_as_its_lf_twin(tmp_path):
    lf = _ledger(tmp_path / "lf.yaml", record(rationale="line one\nline two"))
    crlf = tmp_path / "crlf.yaml"
    crlf.write_bytes(lf.read_bytes().replace(b"\n", b"\r\n"))
    assert [r.data for r in read_file(crlf)[0]] == [r.data for r in read_file(lf)[0]]


def test_not_utf8_ledger_is_named(tmp_path):
    path = tmp_path / "latin1.yaml"
    path.write_bytes("corrections: []\n# caf\xe9\n".encode("latin-1"))
    records, problems = read_file(path)
    assert records == [] and [(p.path, p.problem) for p in problems] == [(str(path), "file is not UTF-8 text")]


def _checkpoint(root: Path, weights: bytes, trainer_state: str) -> Path:
    root.mkdir(parents=True)
    (root / "model.safetensors").write_bytes(weights)
    (root / "config.json").write_text('{"n_layer": 2}', encoding="utf-8")
    (root / "tokenizer.json").write_text("{}", encoding="utf-8")
    for name in ("optimizer.pt", "scheduler.pt", "rng_state.pth", "training_args.bin"):
        (root / name).write_text(trainer_state, encoding="utf-8")
    (root / "trainer_state.json").write_text(f'{{"log": "{trainer_state}"}}', encoding="utf-8")
    return root


def test_checkpoints_with_the_same_model_files_share_a_digest(tmp_path):
    a = _checkpoint(tmp_path / "original" / "checkpoint-1", b"w1", "run a")
    b = _checkpoint(tmp_path / "maintained" / "checkpoint-1", b"w1", "run b")  # other trainer state only
    c = _checkpoint(tmp_path / "maintained" / "checkpoint-2", b"w2", "run b")  # other weights
    assert model_digest(a) == model_digest(b)
    assert model_digest(c) != model_digest(a)
    (b / "tokenizer.json").write_text('{"x": 1}', encoding="utf-8")  # a file generation reads
    assert model_digest(b) != model_digest(a)
    (b / "tokenizer.json").write_text("{}", encoding="utf-8")
    (b / "extra.json").write_text("{}", encoding="utf-8")  # an extra file generation may read
    assert model_digest(b) != model_digest(a)
    # a model name that is no directory is a key of its own, never the digest of an empty directory
    assert model_digest(tmp_path / "org-model-a") != model_digest(tmp_path / "org-model-b")
