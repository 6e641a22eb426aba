"""The root conftest.py imports only the package modules that hold a doctest: collecting the package
still finds a doctest in every module with a ``>>>`` prompt line, and only there."""

from __future__ import annotations

import json


def test_longest_first_sorts_files_by_seconds_and_keeps_each_file_s_order():
    from tests.support.schedule import longest_first

    ids = ["tests/a.py::t1", "tests/b.py::t1", "tests/a.py::t2", "tests/c.py::t1", "tests/b.py::t2"]
    order = [ids[i] for i in longest_first(ids, {"tests/b.py": 30.0, "tests/a.py": 5.0})]
    assert order == ["tests/b.py::t1", "tests/b.py::t2", "tests/a.py::t1", "tests/a.py::t2", "tests/c.py::t1"]


def test_file_seconds_reads_the_json_and_tolerates_a_missing_or_broken_one(tmp_path):
    from tests.support.schedule import DURATIONS, file_seconds

    assert file_seconds(tmp_path / "absent.json") == {}
    (tmp_path / "bad.json").write_text("{not json", encoding="utf-8")
    assert file_seconds(tmp_path / "bad.json") == {}
    real = file_seconds(DURATIONS)
    assert real and all(k.startswith("tests/") and k.endswith(".py") for k in real)
    both = tmp_path / "both.json"
    both.write_text(json.dumps({"seconds": {"tests/a.py": 30.0}, "fast_seconds": {"tests/a.py": 2.5}}), encoding="utf-8")
    assert file_seconds(both) == {"tests/a.py": 30.0} and file_seconds(both, "fast_seconds") == {"tests/a.py": 2.5}
    assert file_seconds(tmp_path / "bad.json", "fast_seconds") == {} and file_seconds(both, "other") == {}
