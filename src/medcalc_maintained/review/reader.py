"""Reading a filled review packet: every answered row, checked, or every problem with its cell."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from medcalc_maintained.calculators.ranges import range_problem
from medcalc_maintained.core.answers import Answer, parse_answer
from medcalc_maintained.core.errors import DataError
from medcalc_maintained.core.labels import GESTATIONAL_AGE, fit_problem
from medcalc_maintained.review.archive import MAX_ROWS, _check_archive
from medcalc_maintained.review.layout import (
    COL,
    COLUMNS,
    MAX_TEXT,
    META,
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
