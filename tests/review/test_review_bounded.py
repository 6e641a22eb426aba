"""Review packets are tied to their export and bounded: a tampered packet (reviewer, rows, protected
cells), a zip bomb and a sheet of a million rows are refused naming the file (and sheet and cell),
exit 2 with a short message and write nothing; `review export` never overwrites a packet by accident.
Hostile YAML in the ledger (an alias bomb) is refused the same way."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
from openpyxl import load_workbook
from typer.testing import CliRunner

from medcalc_maintained.cli import app
from tests.support.paths import ROOT
from tests.support.triage_support import packet_project

runner = CliRunner()
SRC = ROOT / "src"


@pytest.fixture
def root(tmp_path, real_instances) -> Path:
    """A small project (real instances, empty hand-written ledger, two reviewers) and a filled packet
    of 3 rows exported with its export record."""
    return packet_project(tmp_path / "p", real_instances, reviewers=2)


def invoke(root: Path, *args: str):
    return runner.invoke(app, list(args), env={"MEDCALC_ROOT": str(root)})


def ledger_files(root: Path) -> list[str]:
    return sorted(p.name for p in (root / "data" / "corrections").iterdir())


def test_the_untouched_packet_imports(root):
    r = invoke(root, "review", "import", str(root / "filled.xlsx"), "--decided-at", "2026-02-02")
    assert r.exit_code == 0, r.output
    assert ledger_files(root) == ["review-filled.yaml"]


def edit(src: Path, dst: Path, **cells: str) -> Path:
    wb = load_workbook(src)
    for ref, value in cells.items():
        sheet, cell = ref.split("_")
        wb[sheet][cell] = value
    wb.save(dst)
    return dst


@pytest.mark.parametrize("cells, words", [
    ({"Packet_B2": "md-im-2"}, "sheet Packet, cell B2: reviewer 'md-im-2' differs from the export"),
    ({"Packet_B5": "test-00041 test-00146"}, "sheet Packet: the 'rows' entry differs from the export"),
    ({"Review_D3": "An edited patient note."}, "sheet Review, cell D3: protected cell was changed after export"),
    ({"Review_E2": ""}, "sheet Review, cell E2: protected cell was emptied after export"),
    ({"Review_J2": "a sentence"}, "sheet Review, cell J2: protected cell was added after export"),
    ({"Packet_B6": "0123456789abcdef0123"}, "sheet Packet, cell B6: packet id '0123456789abcdef0123' was not exported"),
])
def test_a_tampered_packet_is_refused_naming_sheet_and_cell(root, cells, words):
    bad = edit(root / "filled.xlsx", root / "bad.xlsx", **cells)
    r = invoke(root, "review", "import", str(bad), "--decided-at", "2026-02-02")
    assert r.exit_code == 2, r.output
    assert words in " ".join(r.output.split()), r.output
    assert ledger_files(root) == []


def test_a_row_added_to_a_packet_is_refused(root):
    wb = load_workbook(root / "filled.xlsx")
    ws = wb["Review"]
    for col in range(1, 10):
        ws.cell(row=5, column=col, value=ws.cell(row=4, column=col).value)
    ws["A5"] = "test-00015"
    wb.save(root / "bad.xlsx")
    r = invoke(root, "review", "import", str(root / "bad.xlsx"))
    assert r.exit_code == 2
    out = " ".join(r.output.split())
    assert "bad.xlsx: sheet Review holds more than 4 rows (a packet is exported with at most 3 rows" in out, r.output
    assert ledger_files(root) == []


def test_export_refuses_an_existing_packet_unless_forced(root):
    queue = root / "queue.csv"
    queue.write_text("split,uid,in_budget,reviewer,rank\ntest,41,True,md-im-1,1\n")
    before = (root / "filled.xlsx").read_bytes()
    r = invoke(root, "review", "export", "--reviewer", "md-im-1", "--out", str(root / "filled.xlsx"),
               "--queue", str(queue))
    assert r.exit_code == 2 and "already exists" in r.output and "--force" in r.output, r.output
    assert (root / "filled.xlsx").read_bytes() == before
    r = invoke(root, "review", "export", "--reviewer", "md-im-1", "--out", str(root / "filled.xlsx"),
               "--queue", str(queue), "--force")
    assert r.exit_code == 0, r.output
    assert load_workbook(root / "filled.xlsx")["Review"]["A2"].value == "test-00041"


def rezip(src: Path, dst: Path, member: str, write) -> Path:
    """``src`` with ``member`` replaced by what ``write(file)`` writes (deflated, streamed)."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            if info.filename == member:
                with zout.open(member, "w", force_zip64=True) as fh:
                    write(fh)
            else:
                zout.writestr(info, zin.read(info))
    return dst


# Runs the CLI and, as it exits, records the peak resident memory of its own address space (VmHWM).
# The rusage of a child (wait4) is no use here: Linux starts an exec'd child's maxrss at the RSS of
# the process that spawned it, and the pytest process holds hundreds of MB by the end of a full run.
_LAUNCH = """
import atexit, os, runpy, sys

def _peak():
    with open("/proc/self/status") as fh:
        kb = next(line.split()[1] for line in fh if line.startswith("VmHWM:"))
    with open(os.environ["MEDCALC_TEST_PEAK"], "w") as out:
        out.write(kb)

atexit.register(_peak)
sys.argv = ["medcalc-maintained", *sys.argv[1:]]
runpy.run_module("medcalc_maintained.cli", run_name="__main__", alter_sys=True)
"""


def run_cli(root: Path, *args: str) -> tuple[int, str, float, float]:
    """(exit code, output, seconds, peak memory in MB) of a real run of the CLI in a new process."""
    peak_file = root / ".peak-kb"
    env = dict(os.environ, MEDCALC_ROOT=str(root), PYTHONPATH=str(SRC), MEDCALC_TEST_PEAK=str(peak_file))
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, "-c", _LAUNCH, *args], env=env, cwd=root,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    seconds = time.monotonic() - t0
    peak = int(peak_file.read_text()) / 1024
    peak_file.unlink()
    return p.returncode, p.stdout.decode(), seconds, peak


# -- cells and rows far outside the export, refused before openpyxl builds them (issue 27) ----------


def cpu_seconds() -> float:
    import resource

    use = resource.getrusage(resource.RUSAGE_CHILDREN)
    return use.ru_utime + use.ru_stime
