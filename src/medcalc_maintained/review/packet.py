"""The review packet and its export to ``.xlsx`` (its layout and problems: :mod:`.layout`).

A packet is what one reviewer sees: for each row routed to them by the triage queue, the calculator,
the expected answer format, the patient note and the question — never the original label, the
relabel label, an audit vote or the queue priority (rows are listed by row id, not in priority
order). Three sheets:

``Instructions``  how to answer, when to write ``N/A``, where to note the timepoint or guideline;
``Review``        one row per item; the input cells (answer, timepoint, guideline, comment) are the
                  only unlocked cells and carry data validation;
``Packet``        who the packet is for and which rows it holds (checked on import).

Every cell the export writes is a string cell (:func:`text_cell`), so a note or question starting
with ``=``, ``+``, ``-`` or ``@`` is shown as text, never run as a formula; import refuses a packet
holding any formula cell.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Iterable, cast

import pandas as pd

from medcalc_maintained.core.atomic import write_atomic
from medcalc_maintained.core.errors import DataError
from medcalc_maintained.core.labels import GESTATIONAL_AGE, label_style
from medcalc_maintained.planning.triage import Reviewer
from medcalc_maintained.review import export_record
from medcalc_maintained.review.layout import (
    COL,
    COLUMNS,
    INPUTS,
    INSTRUCTIONS,
    MAX_TEXT,
    META,
    META_KEYS,
    PACKET_FORMAT,
    REVIEW,
    row_id,
    text_cell,
)

FORMATS = {
    "decimal": "A number (decimals allowed), or N/A",
    "integer": "A whole number, or N/A",
    "date": "A date as MM/DD/YYYY, or N/A",
    GESTATIONAL_AGE: "Weeks and days, as W weeks D days, or N/A",
}

INSTRUCTIONS_TEXT = """\
Physician review packet: how to fill it in

Each row of the Review sheet is one question about one patient note. Read the note, then compute
the requested value yourself, as you would in clinical practice with the calculator named in the
row. You are not shown any earlier answer for these rows, on purpose: work from the note alone.

Your answer (column F)
- Follow the format in the Answer format column: a number, a whole number, a date (MM/DD/YYYY), or
  weeks and days (for example "W weeks D days" with your numbers in place of W and D).
- Type only the value; a unit after a number is tolerated, but no ranges, no "about", no two values.
- Round as the calculator does; do not round a decimal result to a whole number yourself.

When to write N/A
- Write N/A when the note does not contain what the calculator needs and a reasonable clinician
  could not infer it, or when the question cannot be answered for this patient (for example the
  calculator does not apply to the patient described).
- Every N/A needs a comment (column I) naming what is missing or why the question does not apply.
- Do not write N/A because a value is merely uncertain: give your best clinical answer and say in
  the comment what you assumed.

Scoring timepoint and guideline (columns G and H)
- When the note describes several moments (admission, after treatment, discharge), write in
  column G which one you scored, for example "at presentation".
- When the calculator exists in several versions or guidelines, write in column H the one you used.
- Leave them empty when the question leaves no choice.

Comment (column I)
- Your reasoning in a sentence or two: which values you took from the note and any assumption.
  It becomes the rationale of the decision, so write it for a colleague who reads it later.

Only the white cells F to I can be edited; the other cells are locked so the packet stays intact.
Leave every row answered before you return the packet; an empty answer is reported, not guessed.
Return the file as it is (same name or a new one, but .xlsx); it is imported with
    medcalc-maintained review import <file>.xlsx
"""
HEADINGS = {"Your answer (column F)", "When to write N/A", "Scoring timepoint and guideline (columns G and H)",
            "Comment (column I)"}


def keyed(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` indexed by ``(split, uid)`` (split as text, uid as int)."""
    return df.assign(split=df["split"].astype(str), uid=df["uid"].astype(int)).set_index(["split", "uid"])


def row_at(df: pd.DataFrame, key: tuple[str, int]) -> pd.Series:
    """The row at ``key`` of a :func:`keyed` frame (``df.loc[key]``, typed as the one row it is)."""
    return cast(pd.Series, df.loc[key])  # one (split, uid) is one row


def answer_kind(instances: pd.DataFrame) -> dict[int, str]:
    """Per calculator id, the answer format: its output type, or ``gestational_age`` for the
    calculator whose labels are written as weeks and days (a property of the calculator)."""
    out: dict[int, str] = {}
    for cid, g in instances.groupby("calculator_id"):
        otype = str(g["Output Type"].iloc[0])
        ga = any(label_style(v, otype) == GESTATIONAL_AGE for v in g["Ground Truth Answer"].head(20))
        out[int(cast(int, cid))] = GESTATIONAL_AGE if ga else otype  # a calculator_id: a whole number
    return out


def select_rows(queue: pd.DataFrame, reviewer_id: str, max_rows: int | None = None) -> pd.DataFrame:
    """The queue rows routed to ``reviewer_id`` (inside the budget), at most ``max_rows`` of them
    in queue order."""
    mine = queue[queue["in_budget"] & (queue["reviewer"].astype(str) == reviewer_id)]
    if max_rows is not None:
        mine = mine.head(max_rows)
    return mine


def export_packet(instances: pd.DataFrame, rows: Iterable[tuple[str, int]], reviewer: Reviewer, out: Path,
                  evidence: dict[tuple[str, int], list[str]] | None = None, exports: Path | None = None) -> Path:
    """Write the packet for ``rows`` ((split, uid) pairs) to ``out`` (atomically). ``evidence``: per
    row, the note sentences that the offline checks quote (only note text: the packet stays blind).
    ``exports``: the directory of export records (:mod:`medcalc_maintained.review.export_record`)."""
    from openpyxl import Workbook

    keys = sorted({(str(s), int(u)) for s, u in rows})
    if not keys:
        raise DataError(out, f"no rows to export for reviewer {reviewer.id!r}")
    inst = keyed(instances)
    missing = [k for k in keys if k not in inst.index]
    if missing:
        raise DataError("instances", f"rows {missing[:5]} are not in the instances")
    wb = Workbook()
    _instructions_sheet(wb.active)
    ws = wb.create_sheet(REVIEW)
    _review_sheet(ws, inst, keys, answer_kind(instances), evidence or {})
    _meta_sheet(wb.create_sheet(META), reviewer, keys)
    wb.active = wb.index(ws)
    record = export_record.stamp(wb, reviewer.id, [row_id(*k) for k in keys]) if exports is not None else None
    # The workbook is packed in memory (a zip left open by a failed write would still flush itself from
    # ZipFile.__del__, a second traceback), then written atomically; its export record is saved only
    # once the packet is complete, and no packet is left without its record.
    buf = io.BytesIO()
    wb.save(buf)

    def write(path: Path) -> None:
        path.write_bytes(buf.getvalue())
        if record is not None and exports is not None:
            export_record.save(record, exports, Path(out))

    return write_atomic(Path(out), write)


def _instructions_sheet(ins) -> None:
    from openpyxl.styles import Font

    ins.title = INSTRUCTIONS
    ins.column_dimensions["A"].width = 110
    for i, line in enumerate(INSTRUCTIONS_TEXT.splitlines(), start=1):
        c = text_cell(ins, i, 1, line if line else None)
        if i == 1:
            c.font = Font(bold=True, size=13)
        elif line in HEADINGS:
            c.font = Font(bold=True)
    ins.protection.sheet = True


def _review_header(ws) -> None:
    from openpyxl.styles import Alignment, Font, PatternFill

    head_fill = PatternFill("solid", fgColor="DDE6F0")
    for j, (_, header, width) in enumerate(COLUMNS, start=1):
        c = text_cell(ws, 1, j, header)
        c.font = Font(bold=True)
        c.fill = head_fill
        c.alignment = Alignment(wrap_text=True, vertical="top")
        ws.column_dimensions[c.column_letter].width = width
    ws.freeze_panes = "B2"


def _review_sheet(ws, inst: pd.DataFrame, keys: list[tuple[str, int]], kinds: dict[int, str],
                  evidence: dict[tuple[str, int], list[str]]) -> None:
    from openpyxl.styles import Alignment, PatternFill, Protection
    from openpyxl.worksheet.datavalidation import DataValidation

    _review_header(ws)
    input_fill = PatternFill("solid", fgColor="FFFFFF")
    locked_fill = PatternFill("solid", fgColor="F2F2F2")
    text_dv = DataValidation(type="textLength", operator="lessThanOrEqual", formula1=str(MAX_TEXT), allow_blank=True,
                             showErrorMessage=True, errorTitle="Too long",
                             error="Please keep this cell under the length limit.")
    ws.add_data_validation(text_dv)
    for r, key in enumerate(keys, start=2):
        rec = row_at(inst, key)
        kind = kinds[int(rec["calculator_id"])]
        values = {"row_id": row_id(*key), "calculator": str(rec["Calculator Name"]), "answer_format": FORMATS[kind],
                  "note": str(rec["Patient Note"]), "question": str(rec["Question"]),
                  "evidence": "\n".join(f"- {s}" for s in evidence.get(key, []))}
        for k, v in values.items():
            c = text_cell(ws, r, COL[k], v)
            c.alignment = Alignment(wrap_text=True, vertical="top")
            c.fill = locked_fill
            c.number_format = "@"
        for k in INPUTS:
            c = ws.cell(row=r, column=COL[k])
            c.protection = Protection(locked=False)
            c.fill = input_fill
            c.alignment = Alignment(wrap_text=True, vertical="top")
        ans = ws.cell(row=r, column=COL["answer"])
        if kind == "date":
            ans.number_format = "mm/dd/yyyy"
        dv = _answer_validation(kind, ans.coordinate)
        ws.add_data_validation(dv)
        dv.add(ans.coordinate)
        for k in ("timepoint", "guideline", "comment"):
            text_dv.add(ws.cell(row=r, column=COL[k]).coordinate)
        lines = sum(max(1, len(p) // 100 + 1) for p in values["note"].splitlines() or [""])
        ws.row_dimensions[r].height = min(409, max(45, 15 * lines))
    ws.protection = _protection()


def _meta_sheet(meta, reviewer: Reviewer, keys: list[tuple[str, int]]) -> None:
    from openpyxl.styles import Alignment, Font

    meta.column_dimensions["A"].width = 22
    meta.column_dimensions["B"].width = 60
    entries = list(zip(META_KEYS, (PACKET_FORMAT, reviewer.id, reviewer.role, reviewer.specialty or "",
                                   " ".join(row_id(*k) for k in keys))))
    for i, (k, v) in enumerate(entries, start=1):
        text_cell(meta, i, 1, k).font = Font(bold=True)
        c = text_cell(meta, i, 2, v)
        c.number_format = "@"
        c.alignment = Alignment(wrap_text=True)
    meta.protection.sheet = True


def _protection():
    from openpyxl.worksheet.protection import SheetProtection

    # locked cells stay read-only; rows and columns may be resized so long notes can be read
    return SheetProtection(sheet=True, formatRows=False, formatColumns=False, formatCells=True)


def _answer_validation(kind: str, cell: str):
    from openpyxl.worksheet.datavalidation import DataValidation

    na = f'UPPER(TRIM({cell}))="N/A"'
    formula = {
        "decimal": f"OR(ISNUMBER({cell}),{na})",
        "integer": f"OR(AND(ISNUMBER({cell}),{cell}=INT({cell})),{na})",
        "date": f"OR(ISNUMBER({cell}),{na},ISNUMBER(DATEVALUE({cell})))",
        GESTATIONAL_AGE: f'OR({na},ISNUMBER(SEARCH("week",{cell})))',
    }[kind]
    return DataValidation(type="custom", formula1=formula, allow_blank=True, showErrorMessage=True,
                          showInputMessage=True, errorStyle="stop", promptTitle="Your answer",
                          prompt=FORMATS[kind], errorTitle="Not a valid answer", error=FORMATS[kind])
