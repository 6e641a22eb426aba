"""A returned review packet's zip, bounded before openpyxl loads it: the file's size, unpacked size and
compression ratio; every sheet streamed and held to the rows and columns it was exported with; every
other part held to what it may hold (the shared strings to the exported rows, the rest to a small part
and a bounded count of elements). A bomb, a far-away cell or a million cell formats is refused in about
a second, naming the file (and the part or sheet)."""

from __future__ import annotations

import posixpath
import re
import zipfile
from pathlib import Path

from medcalc_maintained.core.errors import DataError
from medcalc_maintained.core.zip_bounds import ZipBounds, open_bounded
from medcalc_maintained.review.layout import COLUMNS, META, META_ROWS, REVIEW

# Safety bounds on a returned packet, checked before openpyxl reads it (a packet of 50 rows is ~0.1 MB
# and unpacks to ~1 MB; its XML compresses about 10:1). Hostile-file limits, not tuning knobs.
MAX_PACKET_BYTES = 20 * 1024 * 1024      # the .xlsx file itself
MAX_UNPACKED_BYTES = 200 * 1024 * 1024   # all its members, unpacked
MAX_RATIO = 100                          # unpacked / packed size of any member over 1 MiB
MAX_MEMBERS = 10_000                     # parts (a packet has about 10)
PACKET = ZipBounds("a review packet", MAX_PACKET_BYTES, MAX_UNPACKED_BYTES, max_members=MAX_MEMBERS, max_ratio=MAX_RATIO)
MAX_ROWS = 5000                          # sheet rows when the export's row count is not known
MAX_PART_BYTES = 1 << 20                 # the package and workbook parts that name the sheets
OTHER_COLUMNS = 26                       # columns of a sheet other than Review and Packet (A..Z)
# Every other member is bounded by what it may hold (a zip member declares its unpacked size, and no
# reader gets more bytes than declared): the shared-strings table by the exported rows (a row's texts
# are at most a note of ~11,000 characters and a few short cells; Excel's cell limit is 32,767), every
# other part (styles, theme, relations, properties) by MAX_PART_BYTES; and no XML part but a sheet may
# hold more than MAX_PART_ELEMENTS elements (a real packet's styles hold ~100: openpyxl spends ~50 us
# and ~2 KB on each cell format, so a million of them cost 47 s and 2 GB).
STRINGS_BYTES_PER_ROW = 256 * 1024
MAX_PART_ELEMENTS = 20_000
_SHEET_ROOTS = {"worksheet", "chartsheet", "dialogsheet", "macrosheet"}
_REF = re.compile(r"^\$?([A-Za-z]{0,3})\$?(\d{0,7})$")


def _check_archive(path: Path, max_rows: int) -> None:
    """Refuse a packet whose size, unpacked size or compression ratio is out of bounds, or any of
    whose sheets reaches beyond the rows and columns a packet is exported with (``max_rows`` rows
    and a header in Review), before it is loaded: every sheet's XML is streamed through a
    size-bounded parser, so a bomb or a far-away cell is refused without being unpacked or built."""
    with open_bounded(path, PACKET, "not a readable .xlsx workbook") as zf:
        infos = zf.infolist()
        names = _sheet_names(path, zf)
        for i in infos:
            if i.is_dir():
                continue
            name = names.get(i.filename)
            if name is None and not _is_sheet(path, zf, i):
                _check_part(path, zf, i, max_rows)  # not a sheet, wherever it lives (by its root element)
                continue
            _scan_sheet(path, zf, i, name or i.filename, *_bounds(name, max_rows))


def _check_part(path: Path, zf: zipfile.ZipFile, info: zipfile.ZipInfo, max_rows: int) -> None:
    """Refuse a member other than a sheet that is larger than what it may hold (the shared strings:
    :data:`STRINGS_BYTES_PER_ROW` per exported row; any other part :data:`MAX_PART_BYTES`), or an XML
    part with more than :data:`MAX_PART_ELEMENTS` elements (per exported row more for the strings)."""
    strings = posixpath.basename(info.filename).lower() == "sharedstrings.xml"
    limit = MAX_PART_BYTES + (max_rows + 1) * STRINGS_BYTES_PER_ROW if strings else MAX_PART_BYTES
    what = "the shared-strings table" if strings else "a part other than a sheet"
    if info.file_size > limit:
        raise DataError(path, f"member {info.filename[:80]} unpacks to {info.file_size} bytes, over the {limit}-byte "
                              f"limit of {what} (a packet is exported with at most {max_rows} rows)")
    elements = MAX_PART_ELEMENTS + ((max_rows + 1) * len(COLUMNS) * 8 if strings else 0)
    count = [0]

    def on(tag, attrs):
        count[0] += 1
        if count[0] > elements:
            raise _Refused(f"holds more than {elements} XML elements, over the limit of {what}")

    try:
        _stream(path, zf, info, on, f"member {info.filename[:80]}")
    except DataError as exc:
        if "is not readable XML" not in str(exc):
            raise
        # not XML (an image, printer settings): openpyxl reads it as bytes, bounded by its size


def _bounds(sheet: str | None, max_rows: int) -> tuple[int, int, str]:
    """(rows, columns, what the packet holds there) that a sheet of a packet may use."""
    if sheet == REVIEW:
        return max_rows + 1, len(COLUMNS), f"at most {max_rows} rows and a header"
    if sheet == META:
        return META_ROWS, 2, f"at most {META_ROWS} entries in columns A and B"
    return MAX_ROWS, OTHER_COLUMNS, f"at most {MAX_ROWS} rows in columns A to Z"


def _expat(handler, stop_on_doctype: bool = True):
    import xml.parsers.expat

    parser = xml.parsers.expat.ParserCreate(namespace_separator=" ")
    parser.StartElementHandler = handler

    def doctype(*_):
        raise _Refused("holds a DOCTYPE declaration (entities are not allowed in a workbook)")

    if stop_on_doctype:
        parser.StartDoctypeDeclHandler = doctype
    return parser


class _Refused(Exception):
    """A problem found while streaming one part (the caller adds the file and sheet)."""


class _Done(Exception):
    """Stop streaming: what was needed has been read."""


def _stream(path: Path, zf: zipfile.ZipFile, info: zipfile.ZipInfo, handler, where: str) -> None:
    """Feed the member ``info`` to a fresh expat parser calling ``handler(tag, attrs)`` per start
    tag (local names; attributes by ``namespace local`` or plain name), in 64 KiB chunks."""
    parser = _expat(lambda tag, attrs: handler(tag.rsplit(" ", 1)[-1], attrs))
    try:
        with zf.open(info) as fh:
            for chunk in iter(lambda: fh.read(1 << 16), b""):
                parser.Parse(chunk, False)
            parser.Parse(b"", True)
    except _Done:
        return
    except _Refused as exc:
        raise DataError(path, f"{where} {exc}") from None
    except Exception as exc:  # expat's ExpatError, zlib and zip errors of a broken member
        raise DataError(path, f"{where} is not readable XML ({type(exc).__name__}: {exc})") from None


def _part(path: Path, zf: zipfile.ZipFile, name: str):
    try:
        info = zf.getinfo(name)
    except KeyError:
        return None
    if info.file_size > MAX_PART_BYTES:
        raise DataError(path, f"member {name} is {info.file_size} bytes, over the {MAX_PART_BYTES}-byte limit")
    return info


def _relations(path: Path, zf: zipfile.ZipFile, source: str) -> list[tuple[str, str, str]]:
    """(id, type, target member) of every relationship of the part ``source`` ("" = the package)."""
    folder, base = posixpath.split(source)
    rels = posixpath.join(folder, "_rels", f"{base}.rels")
    info = _part(path, zf, rels)
    if info is None:
        return []
    out = []

    def on(tag, attrs):
        if tag == "Relationship" and attrs.get("TargetMode") != "External" and attrs.get("Target"):
            target = attrs["Target"]
            member = target.lstrip("/") if target.startswith("/") else posixpath.join(folder, target)
            out.append((attrs.get("Id", ""), attrs.get("Type", ""), posixpath.normpath(member)))

    _stream(path, zf, info, on, f"member {rels}")
    return out


def _sheet_names(path: Path, zf: zipfile.ZipFile) -> dict[str, str]:
    """Sheet part -> sheet name, resolved as a reader does wherever the parts live: the workbook part
    from the package relations (or ``xl/workbook.xml``), its ``<sheet>`` entries through its own
    relations. Parts that name the sheets are size-checked and streamed."""
    book = next((t for _, kind, t in _relations(path, zf, "") if kind.endswith("/officeDocument")), "xl/workbook.xml")
    info = _part(path, zf, book)
    if info is None:
        raise DataError(path, f"not an .xlsx workbook (no {book})")
    sheets: list[tuple[str, str]] = []

    def on(tag, attrs):
        if tag == "sheet":
            rid = next((v for k, v in attrs.items() if k.endswith(" id") and "relationships" in k), None)
            sheets.append((attrs.get("name", ""), rid or ""))

    _stream(path, zf, info, on, f"member {book}")
    targets = {rid: target for rid, _, target in _relations(path, zf, book)}
    return {targets[rid]: name for name, rid in sheets if rid in targets}


def is_packet(path: Path) -> bool:
    """Whether ``path`` is a review packet (what ``review export --force`` may replace): a regular
    file within :data:`MAX_PACKET_BYTES`, a workbook whose sheets include Review and Packet."""
    path = Path(path)
    if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_PACKET_BYTES:
        return False
    try:
        with zipfile.ZipFile(path) as zf:
            return {REVIEW, META} <= set(_sheet_names(path, zf).values())
    except (zipfile.BadZipFile, OSError, DataError):
        return False


def _is_sheet(path: Path, zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> bool:
    """Whether the member's root element is a sheet (read up to the root element only)."""
    found = []

    def on(tag, attrs):
        found.append(tag in _SHEET_ROOTS)
        raise _Done

    try:
        _stream(path, zf, info, on, f"member {info.filename}")
    except DataError:
        return False  # not XML: openpyxl never reads it as a sheet
    return bool(found and found[0])


def _cell(ref: str) -> tuple[int, int] | None:
    """(row, column) of a reference such as ``XFD1048576`` (a missing part counts as the largest)."""
    m = _REF.match(ref.strip())
    if not m or not (m.group(1) or m.group(2)):
        return None
    col = 0
    for ch in m.group(1).upper():
        col = col * 26 + ord(ch) - 64
    return (int(m.group(2)) if m.group(2) else 1_048_576), (col or 16_384)


def _scan_sheet(path: Path, zf: zipfile.ZipFile, info: zipfile.ZipInfo, sheet: str, max_r: int, max_c: int,
                holds: str) -> None:
    """Refuse the sheet when its ``<dimension>``, a row number, a cell reference or a range that a
    reader expands (merged cells, hyperlinks) lies beyond ``max_r`` rows or ``max_c`` columns; stops
    at the first such place."""
    state = {"rows": 0, "row": 0, "cells": 0}

    def outside(what: str, ref: str, row: int) -> _Refused:
        much = f"more than {max_r} rows" if row > max_r else f"more than {max_c} columns (A to {_letters(max_c)})"
        return _Refused(f"holds {much} (a packet is exported with {holds}; rows and columns are never added): "
                        f"{what} {ref[:40]}")

    def check_ref(what: str, ref: str) -> None:
        for part in ref.replace(":", " ").split():
            rc = _cell(part)
            if rc is None:
                raise _Refused(f"{what} {ref[:40]!r} is not a cell reference")
            if rc[0] > max_r or rc[1] > max_c:
                raise outside(what, ref, rc[0])

    def on(tag, attrs):
        if tag == "row":
            state["rows"] += 1
            state["cells"] = 0
            r = attrs.get("r")
            if r is not None:
                if not r.isdigit():
                    raise _Refused(f"row number {r[:40]!r} is not a number")
                state["row"] = int(r)
            else:
                state["row"] += 1
            if state["row"] > max_r or state["rows"] > max_r:
                raise outside("row", str(state["row"]), max_r + 1)
        elif tag == "c":
            state["cells"] += 1
            ref = attrs.get("r")
            if ref is not None:
                rc = _cell(ref)
                if rc is None or not ref[:1].isalpha() or not ref[-1:].isdigit():
                    raise _Refused(f"cell reference {ref[:40]!r} is not a cell reference")
                if rc[0] > max_r or rc[1] > max_c:
                    raise outside("cell", ref, rc[0])
            elif state["cells"] > max_c:
                raise _Refused(f"row {state['row']} holds more than {max_c} cells (a packet is exported with {holds})")
        elif tag == "dimension" and "ref" in attrs:
            check_ref("declared range (<dimension>)", attrs["ref"])
        elif tag in ("mergeCell", "hyperlink") and "ref" in attrs:
            check_ref(f"{tag} range", attrs["ref"])

    _stream(path, zf, info, on, f"sheet {sheet}")


def _letters(col: int) -> str:
    out = ""
    while col:
        col, rem = divmod(col - 1, 26)
        out = chr(65 + rem) + out
    return out
