"""What ties a returned packet to its export: the export record.

``review export`` writes, beside the packet, a record ``<packet id>.json`` into the project's
``review.exports`` directory: the reviewer, the rows, and a digest of every protected cell (every cell
of the ``Packet`` sheet and every cell of the ``Review`` sheet outside the answer, timepoint,
guideline and comment columns). The packet id (the digest of all of them) is written into the
``Packet`` sheet. ``review import`` finds the record by that id and refuses a packet whose reviewer,
rows or any protected cell differ from the export, naming the sheet and cell; nothing is written.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from medcalc_maintained.core.atomic import write_json
from medcalc_maintained.core.errors import DataError
from medcalc_maintained.core.json_text import loads_json
from medcalc_maintained.review.layout import COL, INPUTS, META, REVIEW, PacketError, PacketProblem, text_cell

PACKET_ID = "packet id"
_PROTECTED = sorted(i for k, i in COL.items() if k not in INPUTS)


def _value(v: Any) -> str:
    return "" if v is None else str(v)


def protected_cells(wb) -> dict[str, str]:
    """``"Sheet!A1" -> sha256`` of each non-empty protected cell of the workbook (the packet id entry
    itself excluded)."""
    out = {}
    meta = wb[META]
    for row in meta.iter_rows():
        if row and _value(row[0].value) == PACKET_ID:
            continue
        for c in row:
            if c.value not in (None, ""):
                out[f"{META}!{c.coordinate}"] = hashlib.sha256(_value(c.value).encode()).hexdigest()[:16]
    ws = wb[REVIEW]
    for row in ws.iter_rows():
        for c in row:
            if c.column in _PROTECTED and c.value not in (None, ""):
                out[f"{REVIEW}!{c.coordinate}"] = hashlib.sha256(_value(c.value).encode()).hexdigest()[:16]
    return out


def packet_id(cells: dict[str, str]) -> str:
    return hashlib.sha256(json.dumps(cells, sort_keys=True).encode()).hexdigest()[:20]


def stamp(wb, reviewer_id: str, rows: list[str]) -> dict[str, Any]:
    """Write the packet id into the ``Packet`` sheet and return the export record."""
    cells = protected_cells(wb)
    pid = packet_id(cells)
    meta = wb[META]
    r = meta.max_row + 1
    text_cell(meta, r, 1, PACKET_ID)
    text_cell(meta, r, 2, pid)
    return {"packet_id": pid, "reviewer": reviewer_id, "rows": rows, "cells": cells}


def save(record: dict[str, Any], directory: Path, packet: Path) -> Path:
    return write_json(Path(directory) / f"{record['packet_id']}.json", dict(record, packet=str(packet)))


def largest_export(directory: Path) -> int | None:
    """The most rows any recorded export holds (the row cap before a packet is loaded), if any."""
    sizes = []
    for p in Path(directory).glob("*.json") if Path(directory).is_dir() else []:
        try:
            sizes.append(len(loads_json(p.read_text(encoding="utf-8"), p)["rows"]))
        except (OSError, ValueError, KeyError, TypeError, DataError):
            continue
    return max(sizes) if sizes else None


def check(wb, path: Path, directory: Path, reviewer_id: str, rows: list[str]) -> dict[str, Any]:
    """The export record of the workbook ``wb`` read from ``path``; a :class:`PacketError` naming sheet
    and cell when the packet is unknown or its reviewer, rows or protected cells changed."""
    where = str(path)
    meta = wb[META]
    entry = next((row for row in meta.iter_rows() if row and _value(row[0].value) == PACKET_ID), None)
    if entry is None or len(entry) < 2 or not _value(entry[1].value):
        raise PacketError([PacketProblem(where, META, None, f"has no {PACKET_ID!r} entry: export packets with "
                                         "`medcalc-maintained review export` and return them as they are")])
    pid = _value(entry[1].value).strip()
    rec_path = Path(directory) / f"{pid}.json"
    if not rec_path.name == f"{pid}.json" or "/" in pid or not rec_path.is_file():
        raise PacketError([PacketProblem(where, META, entry[1].coordinate, f"packet id {pid[:40]!r} was not exported "
                                         f"from this project (no export record in {directory})")])
    record = loads_json(rec_path.read_text(encoding="utf-8"), rec_path)
    problems = []
    if reviewer_id != record["reviewer"]:
        problems.append(PacketProblem(where, META, "B2", f"reviewer {reviewer_id!r} differs from the export "
                                      f"(the packet was exported for {record['reviewer']!r})"))
    if rows != record["rows"]:
        problems.append(PacketProblem(where, META, None, "the 'rows' entry differs from the export "
                                      f"({len(rows)} rows listed, {len(record['rows'])} exported)"))
    found, expected = protected_cells(wb), record["cells"]
    for key in sorted(set(found) | set(expected), key=lambda k: (k.split("!")[0], len(k), k)):
        if found.get(key) != expected.get(key):
            sheet, cell = key.split("!")
            what = "was added" if key not in expected else ("was emptied" if key not in found else "was changed")
            problems.append(PacketProblem(where, sheet, cell, f"protected cell {what} after export; return the "
                                          "packet as exported (only the answer, timepoint, guideline and comment "
                                          "cells may be filled)"))
            if len(problems) >= 20:
                break
    if problems:
        raise PacketError(problems)
    return record
