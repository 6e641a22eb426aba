"""Review packets are tied to their export and bounded: a tampered packet (reviewer, rows, protected
cells), a zip bomb and a sheet of a million rows are refused naming the file (and sheet and cell),
exit 2 with a short message and write nothing; `review export` never overwrites a packet by accident.
Hostile YAML in the ledger (an alias bomb) is refused the same way.

The end-to-end tests of this subject; the fast ones are in tests/review/test_review_bounded.py."""

from __future__ import annotations

import re
import time
import zipfile
from pathlib import Path

import pytest

from medcalc_maintained.core.errors import DataError
from medcalc_maintained.review.reader import read_packet
from tests.review import test_review_bounded as fast_tests
from tests.review.test_review_bounded import cpu_seconds, ledger_files, rezip, run_cli

# shared with the fast tests
root = fast_tests.root


def review_member(path: Path) -> str:
    from medcalc_maintained.review.archive import _sheet_names

    with zipfile.ZipFile(path) as zf:
        return next(m for m, name in _sheet_names(path, zf).items() if name == "Review")


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


def test_a_row_renumbered_far_down_is_refused_before_loading(root):
    member = sheet_member(root / "filled.xlsx", "Review")
    bad = rewrite(root / "filled.xlsx", root / "far.xlsx", member,
                  lambda xml: xml.replace(b'<row r="4"', b'<row r="1000000"'))
    assert bad.stat().st_size < 64 * 1024
    refused_quickly(root, bad, "sheet Review holds more than 4 rows (a packet is exported with at most 3 rows "
                               "and a header; rows and columns are never added): row 1000000")


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


def test_a_declared_range_beyond_the_export_is_refused(root):
    member = sheet_member(root / "filled.xlsx", "Review")
    bad = rewrite(root / "filled.xlsx", root / "dim.xlsx", member,
                  lambda xml: re.sub(rb'<dimension ref="[^"]*"', b'<dimension ref="A1:XFD1048576"', xml))
    refused_quickly(root, bad, "sheet Review holds more than 4 rows (a packet is exported with at most 3 rows "
                               "and a header; rows and columns are never added): declared range (<dimension>) "
                               "A1:XFD1048576")


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
