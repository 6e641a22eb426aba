"""Review packets are tied to their export and bounded: a tampered packet (reviewer, rows, protected
cells), a zip bomb and a sheet of a million rows are refused naming the file (and sheet and cell),
exit 2 with a short message and write nothing; `review export` never overwrites a packet by accident.
Hostile YAML in the ledger (an alias bomb) is refused the same way."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
import yaml
from openpyxl import load_workbook
from typer.testing import CliRunner

from medcalc_maintained.cli import app
from medcalc_maintained.core.io import DataError
from medcalc_maintained.review import packet as pkt
from medcalc_maintained.review.reader import read_packet
from triage_support import REVIEWER, fill

runner = CliRunner()
SRC = Path(__file__).resolve().parents[1] / "src"
ROWS = [("test", 41), ("test", 146), ("test", 928)]


@pytest.fixture
def root(tmp_path, real_instances) -> Path:
    """A small project (real instances, empty hand-written ledger) and a filled packet of 3 rows
    exported with its export record."""
    root = tmp_path / "p"
    (root / "data" / "interim").mkdir(parents=True)
    real_instances.to_parquet(root / "data" / "interim" / "instances.parquet", index=False)
    (root / "data" / "corrections").mkdir(parents=True)
    (root / "params.yaml").write_text(yaml.safe_dump({
        "apply": {"ledger": ["data/corrections"], "out": "data/maintained"},
        "triage": {"reviewers": [{"id": "md-im-1", "role": "physician", "specialty": "internal medicine"},
                                 {"id": "md-im-2", "role": "physician", "specialty": "internal medicine"}],
                   "adjudication": {"agree_with": [], "id_prefix": "review"}}}))
    blank = pkt.export_packet(real_instances, ROWS, REVIEWER, root / "blank.xlsx",
                              exports=root / "data" / "review" / "exports")
    fill(blank, {pkt.row_id(s, u): {"answer": "N/A", "comment": "The note lacks an input."} for s, u in ROWS},
         root / "filled.xlsx")
    return root


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


def review_member(path: Path) -> str:
    from medcalc_maintained.review.archive import _sheet_names

    with zipfile.ZipFile(path) as zf:
        return next(m for m, name in _sheet_names(path, zf).items() if name == "Review")


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


# The tests that run the CLI in a new process (a second or more each to import the package, and a
# million-row sheet to write) are left out of `make test-fast`; `make test` runs them.
SLOW_CLI = pytest.mark.slow


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


@SLOW_CLI
def test_a_zip_bomb_is_refused_before_it_is_unpacked(root, real_instances):
    member = review_member(root / "filled.xlsx")
    zeros = b" " * (1 << 20)
    bomb = rezip(root / "filled.xlsx", root / "bomb.xlsx", member, lambda fh: [fh.write(zeros) for _ in range(64)])
    assert bomb.stat().st_size < 1 << 20  # 64 MiB of XML packed into well under 1 MiB
    t0 = time.monotonic()
    with pytest.raises(DataError, match=r"member xl/worksheets/sheet\d\.xml is compressed \d+:1, over the 100:1 limit"):
        read_packet(bomb, real_instances)
    assert time.monotonic() - t0 < 5
    code, out, _, peak = run_cli(root, "review", "import", str(bomb))
    assert code == 2 and "bomb.xlsx" in out and "over the 100:1 limit" in out, out
    assert len(out.encode()) <= 1024 and peak < 500, (len(out), peak)
    assert ledger_files(root) == []


@SLOW_CLI
def test_a_million_row_sheet_is_refused_at_the_exported_row_count(root, real_instances):
    member = review_member(root / "filled.xlsx")
    with zipfile.ZipFile(root / "filled.xlsx") as zf:
        head = zf.read(member).split(b"<sheetData>")[0] + b"<sheetData>"

    def rows(fh):
        fh.write(head)
        for start in range(1, 1_000_001, 10_000):
            fh.write(b"".join(b'<row r="%d"><c r="A%d" t="inlineStr"><is><t>x</t></is></c></row>' % (n, n)
                              for n in range(start, start + 10_000)))
        fh.write(b"</sheetData></worksheet>")

    big = rezip(root / "filled.xlsx", root / "big.xlsx", member, rows)
    t0 = time.monotonic()
    with pytest.raises(DataError, match="sheet Review holds more than 4 rows"):
        read_packet(big, real_instances, exports=root / "data" / "review" / "exports")
    assert time.monotonic() - t0 < 5
    code, out, _, peak = run_cli(root, "review", "import", str(big))
    assert code == 2 and "sheet Review holds more than 4 rows" in " ".join(out.split()), out
    assert len(out.encode()) <= 1024 and peak < 500
    assert ledger_files(root) == []


BOMB = ("corrections:\n- &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"- &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(9)))


@SLOW_CLI
def test_a_yaml_alias_bomb_is_refused_fast_and_quietly(root):
    bomb = root / "data" / "corrections" / "bomb.yaml"
    bomb.write_text(BOMB)
    assert len(BOMB) < 1024
    before = bomb.read_bytes()
    code, out, _, peak = run_cli(root, "propose", "--uid", "41", "--new-value", "N/A", "--error-type",
                                 "unanswerable", "--rationale", "x", "--date", "2026-03-02")
    assert code == 2 and f"{bomb}: malformed YAML at line 2" in " ".join(out.split()), out
    assert "aliases (*name) are not allowed" in out
    assert len(out.encode()) <= 1024 and peak < 500, (len(out), peak)
    assert ledger_files(root) == ["bomb.yaml"] and bomb.read_bytes() == before
    from medcalc_maintained import ledger

    t0 = time.monotonic()
    _, problems = ledger.collect([root / "data" / "corrections"])
    assert time.monotonic() - t0 < 5 and len(problems) == 1


# -- cells and rows far outside the export, refused before openpyxl builds them (issue 27) ----------

def sheet_member(path: Path, sheet: str) -> str:
    from medcalc_maintained.review.archive import _sheet_names

    with zipfile.ZipFile(path) as zf:
        return next(m for m, name in _sheet_names(path, zf).items() if name == sheet)


def rewrite(src: Path, dst: Path, member: str, change, rename: dict[str, str] | None = None) -> Path:
    """``src`` with ``member``'s XML replaced by ``change(xml)``; ``rename`` moves members (old -> new
    name) and rewrites every reference to them in the other members."""
    rename = rename or {}
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            data = zin.read(info)
            if info.filename == member:
                data = change(data)
            for old, new in rename.items():
                data = data.replace(old.encode(), new.encode()).replace(old.split("xl/", 1)[1].encode(),
                                                                          new.split("xl/", 1)[1].encode())
            zout.writestr(rename.get(info.filename, info.filename), data)
    return dst


def cpu_seconds() -> float:
    import resource

    use = resource.getrusage(resource.RUSAGE_CHILDREN)
    return use.ru_utime + use.ru_stime


def refused_quickly(root: Path, packet: Path, words: str) -> str:
    """Run ``review import`` on ``packet`` and check it is refused with ``words`` in one line, in under
    2 s of CPU time (the CPU time of the child, not the wall clock of a shared machine) and 300 MB."""
    t0 = cpu_seconds()
    code, out, _, peak = run_cli(root, "review", "import", str(packet), "--decided-at", "2026-02-02")
    seconds = cpu_seconds() - t0
    flat = " ".join(out.split())
    assert code == 2 and words in flat, out
    assert str(packet) in flat and "Traceback" not in out and len(out.strip().splitlines()) <= 2, out
    assert seconds < 2 and peak < 300, (seconds, peak)
    assert ledger_files(root) == []
    return flat


@SLOW_CLI
def test_a_row_renumbered_far_down_is_refused_before_loading(root):
    member = sheet_member(root / "filled.xlsx", "Review")
    bad = rewrite(root / "filled.xlsx", root / "far.xlsx", member,
                  lambda xml: xml.replace(b'<row r="4"', b'<row r="1000000"'))
    assert bad.stat().st_size < 64 * 1024
    refused_quickly(root, bad, "sheet Review holds more than 4 rows (a packet is exported with at most 3 rows "
                               "and a header; rows and columns are never added): row 1000000")


@SLOW_CLI
@pytest.mark.parametrize("row, words", [
    (b'<row r="1048576"><c r="XFD1048576" t="inlineStr"><is><t>x</t></is></c></row>',
     "sheet Packet holds more than 6 rows (a packet is exported with at most 6 entries in columns A and B; "
     "rows and columns are never added): row 1048576"),
    (b'<row r="3"><c r="XFD3" t="inlineStr"><is><t>x</t></is></c></row>',
     "sheet Packet holds more than 2 columns (A to B) (a packet is exported with at most 6 entries in "
     "columns A and B; rows and columns are never added): cell XFD3"),
])
def test_one_far_cell_in_the_packet_sheet_is_refused_before_loading(root, row, words):
    member = sheet_member(root / "filled.xlsx", "Packet")

    def add(xml: bytes) -> bytes:
        if row.startswith(b'<row r="3"'):  # a cell added to an existing row
            return xml.replace(b'</c></row><row r="4"', b"</c>" + row[len(b'<row r="3">'):-len(b"</row>")]
                               + b'</row><row r="4"', 1)
        return xml.replace(b"</sheetData>", row + b"</sheetData>")

    bad = rewrite(root / "filled.xlsx", root / "far.xlsx", member, add)
    assert bad.read_bytes() != (root / "filled.xlsx").read_bytes()
    refused_quickly(root, bad, words)


@SLOW_CLI
def test_a_declared_range_beyond_the_export_is_refused(root):
    member = sheet_member(root / "filled.xlsx", "Review")
    bad = rewrite(root / "filled.xlsx", root / "dim.xlsx", member,
                  lambda xml: re.sub(rb'<dimension ref="[^"]*"', b'<dimension ref="A1:XFD1048576"', xml))
    refused_quickly(root, bad, "sheet Review holds more than 4 rows (a packet is exported with at most 3 rows "
                               "and a header; rows and columns are never added): declared range (<dimension>) "
                               "A1:XFD1048576")


@SLOW_CLI
def test_a_million_row_review_sheet_moved_out_of_worksheets_is_refused(root):
    member = sheet_member(root / "filled.xlsx", "Review")
    with zipfile.ZipFile(root / "filled.xlsx") as zf:
        head = zf.read(member).split(b"<sheetData>")[0] + b"<sheetData>"
    body = b"".join(b'<row r="%d"><c r="A%d" t="inlineStr"><is><t>x</t></is></c></row>' % (n, n)
                    for n in range(1, 1_000_001))
    moved = "xl/elsewhere/review.xml"
    bad = rewrite(root / "filled.xlsx", root / "moved.xlsx", member,
                  lambda xml: head + body + b"</sheetData></worksheet>", rename={member: moved})
    with zipfile.ZipFile(bad) as zf:
        assert moved in zf.namelist() and member not in zf.namelist()
        assert sheet_member(bad, "Review") == moved  # resolved through the workbook's relations
    refused_quickly(root, bad, "sheet Review holds more than 4 rows")
