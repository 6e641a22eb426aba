"""`dvc metrics show` prints a readable table: every file declared under `metrics:` in dvc.yaml
holds only a few headline scalars (flat or one level nested); the lists and tables are in the
stages' plain JSON outputs. Runs the real DVC on the committed outputs of this checkout
(`metrics show` only reads).

The end-to-end tests of this subject; the fast ones are in tests/architecture/test_metrics_show.py."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.architecture.test_metrics_show import _declared, _problems
from tests.support.paths import ROOT

MAX_FILE_WIDTH = 200  # one stage's table: `dvc metrics show <file>`


MAX_WIDTH = 800  # the whole table (ten stages side by side): was 10,735 with the full reports


def _dvc(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dvc", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, check=False)


def test_dvc_metrics_show_loads_every_file_and_prints_a_readable_table():
    shown = _dvc("metrics", "show", "--json")
    assert shown.returncode == 0, shown.stderr
    assert "failed to load" not in shown.stderr
    by_rev = json.loads(shown.stdout)
    assert len(by_rev) == 1  # the workspace only
    (workspace,) = by_rev.values()
    assert "error" not in workspace
    files = workspace["data"]
    assert set(files) == set(_declared())
    bad = []
    for path, entry in files.items():
        assert "error" not in entry, f"{path}: {entry['error']}"
        bad += _problems(entry["data"], path)
    assert bad == []

    table = _dvc("metrics", "show")
    assert table.returncode == 0 and "failed to load" not in table.stderr, table.stderr
    lines = table.stdout.splitlines()
    assert len(lines) == 1 + len(files)  # the header and one row per file
    assert max(map(len, lines)) <= MAX_WIDTH
    for path in files:
        one = _dvc("metrics", "show", path)
        assert one.returncode == 0 and "failed" not in one.stderr, one.stderr
        assert max(map(len, one.stdout.splitlines())) <= MAX_FILE_WIDTH, path
