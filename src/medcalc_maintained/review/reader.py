"""Reading a filled review packet: every answered row, checked, or every problem with its cell."""

from __future__ import annotations

import datetime as dt
import posixpath
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from medcalc_maintained.calculators.ranges import range_problem
from medcalc_maintained.core.answers import Answer, parse_answer
from medcalc_maintained.core.io import DataError
from medcalc_maintained.core.labels import GESTATIONAL_AGE, fit_problem
from medcalc_maintained.review.layout import (
    COL,
    COLUMNS,
    MAX_TEXT,
    META,
    META_ROWS,
    PACKET_FORMAT,
    REVIEW,
    ROW_ID,
    PacketError,
    PacketProblem,
)
from medcalc_maintained.review.packet import answer_kind, keyed, row_at


@dataclass
class Item:
    """One answered row of a packet."""

    split: str
    uid: int
    row: int  # spreadsheet row
    answer: Answer
    raw: Any
    timepoint: str | None
    guideline: str | None
    comment: str


@dataclass
class Packet:
    path: Path
    reviewer_id: str
    reviewer_role: str
    reviewer_specialty: str | None
    items: list[Item]
    skipped: list[str]  # row ids left empty (partial import)
    written: Path | None = None  # the ledger file the import wrote


def _text(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    return str(v).strip()


class _Problems:
    """The problems of one packet file, collected in reading order."""

    def __init__(self, path: Path):
        self.where = str(path)
        self.items: list[PacketProblem] = []

    def add(self, sheet: str | None, cell: str | None, msg: str) -> None:
        self.items.append(PacketProblem(self.where, sheet, cell, msg))

    def raise_any(self) -> None:
        if self.items:
            raise PacketError(self.items)


# Safety bounds on a returned packet, checked before openpyxl reads it (a packet of 50 rows is ~0.1 MB
# and unpacks to ~1 MB; its XML compresses about 10:1). Hostile-file limits, not tuning knobs.
MAX_PACKET_BYTES = 20 * 1024 * 1024      # the .xlsx file itself
MAX_UNPACKED_BYTES = 200 * 1024 * 1024   # all its members, unpacked
MAX_RATIO = 100                          # unpacked / packed size of any member over 1 MiB
MAX_ROWS = 5000                          # sheet rows when the export's row count is not known
MAX_PART_BYTES = 1 << 20                 # the package and workbook parts that name the sheets
OTHER_COLUMNS = 26                       # columns of a sheet other than Review and Packet (A..Z)
_SHEET_ROOTS = {"worksheet", "chartsheet", "dialogsheet", "macrosheet"}
_REF = re.compile(r"^\$?([A-Za-z]{0,3})\$?(\d{0,7})$")


def _check_archive(path: Path, max_rows: int) -> None:
    """Refuse a packet whose size, unpacked size or compression ratio is out of bounds, or any of
    whose sheets reaches beyond the rows and columns a packet is exported with (``max_rows`` rows
    and a header in Review), before it is loaded: every sheet's XML is streamed through a
    size-bounded parser, so a bomb or a far-away cell is refused without being unpacked or built."""
    size = path.stat().st_size
    if size > MAX_PACKET_BYTES:
        raise DataError(path, f"{size} bytes, over the {MAX_PACKET_BYTES}-byte limit for a review packet")
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise DataError(path, f"not a readable .xlsx workbook ({exc})") from None
    with zf:
        infos = zf.infolist()
        total = sum(i.file_size for i in infos)
        if total > MAX_UNPACKED_BYTES:
            raise DataError(path, f"unpacks to {total} bytes, over the {MAX_UNPACKED_BYTES}-byte limit (a zip bomb?)")
        for i in infos:
            if i.file_size > (1 << 20) and i.file_size > MAX_RATIO * max(i.compress_size, 1):
                raise DataError(path, f"member {i.filename} is compressed {i.file_size // max(i.compress_size, 1)}:1, "
                                      f"over the {MAX_RATIO}:1 limit (a zip bomb?)")
        names = _sheet_names(path, zf)
        for i in infos:
            if i.is_dir():
                continue
            name = names.get(i.filename)
            if name is None and not _is_sheet(path, zf, i):
                continue  # not a sheet, wherever it lives (checked by its root element, not by its folder)
            _scan_sheet(path, zf, i, name or i.filename, *_bounds(name, max_rows))


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


def _open(path: Path, max_rows: int = MAX_ROWS):
    from openpyxl import load_workbook

    if not path.is_file():
        raise DataError(path, "file not found")
    _check_archive(path, max_rows)
    try:
        # formulas are read as formulas (not their cached values) so that they can be refused
        return load_workbook(path, data_only=False)
    except Exception as exc:  # openpyxl raises many types for a broken file
        raise DataError(path, f"not a readable .xlsx workbook ({type(exc).__name__}: {exc})") from None


def _formulas(wb, bad: _Problems) -> None:
    """Refuse every formula cell of the packet's sheets: an answer must be what the reviewer typed,
    not what a formula computed (or would run) when the workbook was opened."""
    for name in (REVIEW, META):
        if name not in wb.sheetnames:
            continue
        for row in wb[name].iter_rows():
            for c in row:
                if c.data_type == "f" or (c.data_type != "s" and isinstance(c.value, str) and c.value.startswith("=")):
                    shown = str(c.value)[:60]
                    bad.add(name, c.coordinate, f"holds the formula {shown!r}; packets must hold typed values only "
                                                "(type the value itself)")
    bad.raise_any()


def _meta(wb, bad: _Problems) -> dict[str, Any]:
    """The ``Packet`` sheet's entries (name -> value cell), after checking the sheets and headers."""
    for name in (REVIEW, META):
        if name not in wb.sheetnames:
            bad.add(None, None, f"sheet {name!r} is missing (sheets: {wb.sheetnames}); is this a review packet?")
    bad.raise_any()
    meta_ws = wb[META]
    meta = {_text(meta_ws.cell(row=i, column=1).value): meta_ws.cell(row=i, column=2) for i in range(1, meta_ws.max_row + 1)}
    for k in ("format", "reviewer id", "reviewer role", "rows"):
        if k not in meta:
            bad.add(META, None, f"entry {k!r} is missing in column A")
    bad.raise_any()
    if _text(meta["format"].value) != PACKET_FORMAT:
        bad.add(META, meta["format"].coordinate, f"format {_text(meta['format'].value)!r} is not {PACKET_FORMAT!r}")
    if not _text(meta["reviewer id"].value):
        bad.add(META, meta["reviewer id"].coordinate, "reviewer id is empty")
    ws = wb[REVIEW]
    for j, (_, header, _) in enumerate(COLUMNS, start=1):
        got = _text(ws.cell(row=1, column=j).value)
        if got != header:
            bad.add(REVIEW, ws.cell(row=1, column=j).coordinate, f"expected the header {header!r}, found {got!r}")
    bad.raise_any()
    return meta


def _row_key(cells: dict[str, Any], seen: dict[str, int], exported: list[str], inst: pd.DataFrame, r: int,
             bad: _Problems) -> tuple[str, tuple[str, int]] | None:
    """The row id and key of a sheet row, or ``None`` (with a problem) when it is not a packet row."""
    rid = _text(cells["row_id"].value)
    where = cells["row_id"].coordinate
    m = ROW_ID.match(rid)
    if not m:
        bad.add(REVIEW, where, f"{rid!r} is not a row id (expected split-uid, e.g. test-00042)")
        return None
    if rid in seen:
        bad.add(REVIEW, where, f"row {rid} appears twice (first in row {seen[rid]})")
        return None
    seen[rid] = r
    if rid not in exported:
        bad.add(REVIEW, where, f"row {rid} was not exported in this packet")
        return None
    key = (m.group("split"), int(m.group("uid")))
    if key not in inst.index:
        bad.add(REVIEW, where, f"row {rid} is not in the instances")
        return None
    return rid, key


def _item(cells: dict[str, Any], rid: str, key: tuple[str, int], r: int, otype: str, kind: str,
          bad: _Problems, row: pd.Series) -> Item | None:
    """The answered item of a row, or ``None`` (with a problem) when its cells do not check."""
    raw = cells["answer"].value
    ans = parse_answer(raw, otype)
    shown = raw.strftime("%m/%d/%Y") if isinstance(raw, (dt.date, dt.datetime)) else raw
    problem = fit_problem(ans, otype, GESTATIONAL_AGE if kind == GESTATIONAL_AGE else None)
    if problem is None and (out := range_problem(row["calculator_id"], ans, row.get("Patient Note"), otype)):
        bad.add(REVIEW, cells["answer"].coordinate, f"row {rid}: {out}")
        return None
    if problem:
        what = "gestational age" if kind == GESTATIONAL_AGE else otype
        bad.add(REVIEW, cells["answer"].coordinate, f"{_text(shown)!r} is not a valid {what} answer ({problem})")
        return None
    texts = {k: _text(cells[k].value) for k in ("timepoint", "guideline", "comment")}
    for k, v in texts.items():
        if len(v) > MAX_TEXT:
            bad.add(REVIEW, cells[k].coordinate, f"text is longer than {MAX_TEXT} characters")
    if ans.is_abstain and not texts["comment"]:
        bad.add(REVIEW, cells["comment"].coordinate,
                f"row {rid} is answered N/A without a comment (say what the note lacks or why it does not apply)")
        return None
    return Item(key[0], key[1], r, ans, raw, texts["timepoint"] or None, texts["guideline"] or None, texts["comment"])


def _empty_answers(empty: list[tuple[str, str]], answered: int, bad: _Problems) -> None:
    """One problem for the rows left empty: the row and cell of a single one, a count and the rows of
    several; when other rows are answered, it points to ``--partial``."""
    if not empty:
        return
    hint = "; or import the answered rows with `review import --partial`" if answered > 0 else ""
    if len(empty) == 1:
        rid, cell = empty[0]
        bad.add(REVIEW, cell, f"the answer of row {rid} is empty (write the value, or N/A with a comment{hint})")
        return
    rows = ", ".join(f"{rid} ({cell})" for rid, cell in empty[:10]) + (f", ... ({len(empty) - 10} more)" if len(empty) > 10 else "")
    bad.add(REVIEW, None, f"the answers of {len(empty)} rows are empty: {rows} (write each value, or N/A with a "
                          f"comment{hint})")


def read_packet(path: Path, instances: pd.DataFrame, *, partial: bool = False, exports: Path | None = None) -> Packet:
    """Read and check a filled packet; raises :class:`PacketError` listing every problem. With
    ``exports`` (the export records' directory) the packet must match its export record."""
    from medcalc_maintained.review import export_record

    path = Path(path)
    wb = _open(path, (export_record.largest_export(exports) if exports is not None else None) or MAX_ROWS)
    bad = _Problems(path)
    _formulas(wb, bad)
    meta = _meta(wb, bad)
    exported = _text(meta["rows"].value).split()
    if exports is not None:
        export_record.check(wb, path, exports, _text(meta["reviewer id"].value), exported)
    ws = wb[REVIEW]
    inst = keyed(instances)
    kinds = answer_kind(instances)
    items: list[Item] = []
    skipped: list[tuple[str, str]] = []
    empty: list[tuple[str, str]] = []  # (row id, answer cell) of rows left empty
    seen: dict[str, int] = {}
    for r in range(2, ws.max_row + 1):
        cells = {k: ws.cell(row=r, column=COL[k]) for k, _, _ in COLUMNS}
        if all(_text(c.value) == "" for c in cells.values()):
            continue
        found = _row_key(cells, seen, exported, inst, r, bad)
        if found is None:
            continue
        rid, key = found
        raw = cells["answer"].value
        if raw is None or (isinstance(raw, str) and raw.strip() == ""):
            (skipped if partial else empty).append((rid, cells["answer"].coordinate))
            continue
        rec = row_at(inst, key)
        item = _item(cells, rid, key, r, str(rec["Output Type"]), kinds[int(rec["calculator_id"])], bad, rec)
        if item is not None:
            items.append(item)
    _empty_answers(empty, answered=len(seen) - len(empty), bad=bad)
    missing = [x for x in exported if x not in seen]
    if missing:
        bad.add(REVIEW, None, f"exported row(s) {missing} are missing from the sheet")
    if not items and not bad.items:
        bad.add(REVIEW, None, "no answered rows to import")
    bad.raise_any()
    return Packet(path, _text(meta["reviewer id"].value), _text(meta["reviewer role"].value),
                  _text(meta["reviewer specialty"].value) if "reviewer specialty" in meta else None, items,
                  [rid for rid, _ in skipped])
