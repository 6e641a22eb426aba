"""The lm-eval task directory writer (``harness lm-eval --out DIR``): whole or nothing, never over
a directory it did not write unless asked."""

from __future__ import annotations

import pytest

from medcalc_maintained.core.errors import DataError
from medcalc_maintained.harnesses.lm_eval_task import write_task_dir


def test_task_dir_is_written_whole_and_replaced_only_with_force(tmp_path):
    out = tmp_path / "tasks"
    files = write_task_dir(out, "v2.1")
    assert sorted(p.name for p in out.iterdir()) == sorted(p.name for p in files)
    assert {"utils.py", "medcalc_maintained.yaml"} <= {p.name for p in files}
    assert "revision: v2.1" in (out / "medcalc_maintained.yaml").read_text()
    with pytest.raises(DataError, match="not empty"):
        write_task_dir(out, "v2.0")
    assert "revision: v2.1" in (out / "medcalc_maintained.yaml").read_text()  # untouched
    (out / "__pycache__").mkdir()  # what lm_eval leaves after importing utils.py
    (out / "__pycache__" / "utils.cpython-312.pyc").write_bytes(b"\0")
    (out / "stale.yaml").write_text("x")  # a file it did not write: --force refuses the directory
    with pytest.raises(DataError, match=r"is not an earlier output of `harness lm-eval` .*'stale.yaml'"):
        write_task_dir(out, "v2.0", force=True)
    (out / "stale.yaml").unlink()
    write_task_dir(out, "v2.0", force=True)
    assert sorted(p.name for p in out.iterdir()) == sorted(p.name for p in files)  # replaced as a whole
    assert "revision: v2.0" in (out / "medcalc_maintained.yaml").read_text()
    assert [p.name for p in tmp_path.iterdir()] == ["tasks"]  # no scratch directory left beside it


def test_a_directory_with_sub_directories_is_never_replaced(tmp_path):
    out = tmp_path / "mine"
    (out / "data").mkdir(parents=True)
    (out / "data" / "keep.txt").write_text("keep")
    with pytest.raises(DataError, match="is not an earlier output"):
        write_task_dir(out, "v2.1", force=True)
    assert (out / "data" / "keep.txt").read_text() == "keep"
    assert [p.name for p in tmp_path.iterdir()] == ["mine"]
