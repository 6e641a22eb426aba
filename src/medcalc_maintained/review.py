"""Single-blind physician review packets: export to ``.xlsx`` and import into ledger records.

A packet is what one reviewer sees: for each row routed to them by the triage queue, the calculator,
the expected answer format, the patient note and the question — never the original label, the
relabel label, an audit vote or the queue priority (rows are listed by row id, not in priority
order). Three sheets:

``Instructions``  how to answer, when to write ``N/A``, where to note the timepoint or guideline;
``Review``        one row per item; the input cells (answer, timepoint, guideline, comment) are the
                  only unlocked cells and carry data validation;
``Packet``        who the packet is for and which rows it holds (checked on import).

Import reads a filled packet into ledger records (``source: physician``, ``blinded: true``, the
reviewer's id/role/specialty, the answer, the comment as rationale). Adjudication
(``params.yaml`` ``triage.adjudication.agree_with``): the answer is ``accepted`` when it agrees, by
:func:`medcalc_maintained.core.answers.labels_agree`, with one of the references listed there —
``relabel`` (the independent relabel label), ``physician`` (an earlier, deferred physician answer
on the same row: two physicians agree) or ``current`` (the maintained label); an empty list accepts
every answer. Otherwise the record is written ``deferred`` with the physician's answer as
``new_value`` and the disagreeing relabel label as ``second_opinion``, and the triage queue routes
the row to a second reviewer. ``old_value`` is the maintained label at import time.

Every problem of a packet is reported with its sheet and cell, and nothing is written when there is
one; the records are checked against the schema and applied (in memory) to the instances with the
whole ledger before the file is written atomically.
"""

from __future__ import annotations

import datetime as dt
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

import pandas as pd

from medcalc_maintained import ledger
from medcalc_maintained.core.answers import Answer, format_answer, labels_agree, parse_answer
from medcalc_maintained.ledger.campaign import classify_error
from medcalc_maintained.core.labels import row_style
from medcalc_maintained.ledger.apply import check_and_apply
from medcalc_maintained.core.io import DataError, write_text_atomic
from medcalc_maintained.triage import Reviewer

PACKET_FORMAT = "medcalc-review-packet-v1"
REVIEW, INSTRUCTIONS, META = "Review", "Instructions", "Packet"
REFERENCES = ("relabel", "physician", "current")

# (key, header, width); the answer sits in column F.
COLUMNS = [
    ("row_id", "Row ID", 13),
    ("calculator", "Calculator", 30),
    ("answer_format", "Answer format", 26),
    ("note", "Patient note", 95),
    ("question", "Question", 45),
    ("answer", "Your answer", 18),
    ("timepoint", "Scoring timepoint used", 26),
    ("guideline", "Guideline or version used", 26),
    ("comment", "Comment", 45),
]
COL = {key: i + 1 for i, (key, _, _) in enumerate(COLUMNS)}
INPUTS = ("answer", "timepoint", "guideline", "comment")
MAX_TEXT = 2000
ROW_ID = re.compile(r"^(?P<split>[a-z]+)-(?P<uid>\d+)$")

FORMATS = {
    "decimal": "A number (decimals allowed), or N/A",
    "integer": "A whole number, or N/A",
    "date": "A date as MM/DD/YYYY, or N/A",
    "gestational_age": "Weeks and days, as W weeks D days, or N/A",
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


@dataclass
class PacketProblem:
    path: str
    sheet: str | None
    cell: str | None
    problem: str

    def __str__(self) -> str:
        where = self.path
        if self.sheet:
            where += f", sheet {self.sheet}"
        if self.cell:
            where += f", cell {self.cell}"
        return f"{where}: {self.problem}"


class PacketError(DataError):
    """Every problem found in a review packet (each names its sheet and cell)."""

    def __init__(self, problems: list[PacketProblem]):
        self.problems = problems
        first = problems[0]
        super().__init__(first.path, first.problem)
        self.args = ("\n".join(str(p) for p in problems),)

    def __str__(self) -> str:
        return "\n".join(str(p) for p in self.problems)


def row_id(split: str, uid: int) -> str:
    return f"{split}-{int(uid):05d}"


def answer_kind(instances: pd.DataFrame) -> dict[int, str]:
    """Per calculator id, the answer format: its output type, or ``gestational_age`` for the
    calculator whose labels are written as weeks and days (a property of the calculator)."""
    out: dict[int, str] = {}
    for cid, g in instances.groupby("calculator_id"):
        otype = str(g["Output Type"].iloc[0])
        ga = any(parse_answer(v, otype).kind == "gestational_age" for v in g["Ground Truth Answer"].head(20))
        out[int(cid)] = "gestational_age" if ga else otype
    return out


# ------------------------------------------------------------------ export


def select_rows(queue: pd.DataFrame, reviewer_id: str, max_rows: int | None = None) -> pd.DataFrame:
    """The queue rows routed to ``reviewer_id`` (inside the budget), at most ``max_rows`` of them
    in queue order."""
    mine = queue[queue["in_budget"] & (queue["reviewer"].astype(str) == reviewer_id)]
    if max_rows is not None:
        mine = mine.head(max_rows)
    return mine


def export_packet(instances: pd.DataFrame, rows: Iterable[tuple[str, int]], reviewer: Reviewer, out: Path) -> Path:
    """Write the packet for ``rows`` ((split, uid) pairs) to ``out`` (atomically)."""
    from openpyxl import Workbook
    from openpyxl.styles import Alignment, Font, PatternFill, Protection
    from openpyxl.worksheet.datavalidation import DataValidation

    from medcalc_maintained.core.io import write_atomic

    keys = sorted({(str(s), int(u)) for s, u in rows})
    if not keys:
        raise DataError(out, f"no rows to export for reviewer {reviewer.id!r}")
    inst = instances.assign(split=instances["split"].astype(str), uid=instances["uid"].astype(int)).set_index(["split", "uid"])
    missing = [k for k in keys if k not in inst.index]
    if missing:
        raise DataError("instances", f"rows {missing[:5]} are not in the instances")
    kinds = answer_kind(instances)

    wb = Workbook()
    ins = wb.active
    ins.title = INSTRUCTIONS
    ins.column_dimensions["A"].width = 110
    headings = {"Your answer (column F)", "When to write N/A", "Scoring timepoint and guideline (columns G and H)",
                "Comment (column I)"}
    for i, line in enumerate(INSTRUCTIONS_TEXT.splitlines(), start=1):
        c = ins.cell(row=i, column=1, value=line if line else None)
        if i == 1:
            c.font = Font(bold=True, size=13)
        elif line in headings:
            c.font = Font(bold=True)
    ins.protection.sheet = True

    ws = wb.create_sheet(REVIEW)
    head_fill = PatternFill("solid", fgColor="DDE6F0")
    input_fill = PatternFill("solid", fgColor="FFFFFF")
    locked_fill = PatternFill("solid", fgColor="F2F2F2")
    for j, (_, header, width) in enumerate(COLUMNS, start=1):
        c = ws.cell(row=1, column=j, value=header)
        c.font = Font(bold=True)
        c.fill = head_fill
        c.alignment = Alignment(wrap_text=True, vertical="top")
        ws.column_dimensions[c.column_letter].width = width
    ws.freeze_panes = "B2"
    text_dv = DataValidation(type="textLength", operator="lessThanOrEqual", formula1=str(MAX_TEXT), allow_blank=True,
                             showErrorMessage=True, errorTitle="Too long",
                             error="Please keep this cell under the length limit.")
    ws.add_data_validation(text_dv)
    for r, key in enumerate(keys, start=2):
        rec = inst.loc[key]
        kind = kinds[int(rec["calculator_id"])]
        values = {"row_id": row_id(*key), "calculator": str(rec["Calculator Name"]), "answer_format": FORMATS[kind],
                  "note": str(rec["Patient Note"]), "question": str(rec["Question"])}
        for k, v in values.items():
            c = ws.cell(row=r, column=COL[k], value=v)
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

    meta = wb.create_sheet(META)
    meta.column_dimensions["A"].width = 22
    meta.column_dimensions["B"].width = 60
    entries = [("format", PACKET_FORMAT), ("reviewer id", reviewer.id), ("reviewer role", reviewer.role),
               ("reviewer specialty", reviewer.specialty or ""), ("rows", " ".join(row_id(*k) for k in keys))]
    for i, (k, v) in enumerate(entries, start=1):
        meta.cell(row=i, column=1, value=k).font = Font(bold=True)
        c = meta.cell(row=i, column=2, value=v)
        c.number_format = "@"
        c.alignment = Alignment(wrap_text=True)
    meta.protection.sheet = True
    wb.active = wb.index(ws)
    out = Path(out)
    return write_atomic(out, lambda p: wb.save(p))


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
        "gestational_age": f'OR({na},ISNUMBER(SEARCH("week",{cell})))',
    }[kind]
    return DataValidation(type="custom", formula1=formula, allow_blank=True, showErrorMessage=True,
                          showInputMessage=True, errorStyle="stop", promptTitle="Your answer",
                          prompt=FORMATS[kind], errorTitle="Not a valid answer", error=FORMATS[kind])


# ------------------------------------------------------------------ import


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


def _text(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    return str(v).strip()


def read_packet(path: Path, instances: pd.DataFrame, *, partial: bool = False) -> Packet:
    """Read and check a filled packet; raises :class:`PacketError` listing every problem."""
    from openpyxl import load_workbook

    path = Path(path)
    where = str(path)
    if not path.is_file():
        raise DataError(path, "file not found")
    try:
        wb = load_workbook(path, data_only=True)
    except Exception as exc:  # openpyxl raises many types for a broken file
        raise DataError(path, f"not a readable .xlsx workbook ({type(exc).__name__}: {exc})") from None
    problems: list[PacketProblem] = []

    def bad(sheet: str | None, cell: str | None, msg: str) -> None:
        problems.append(PacketProblem(where, sheet, cell, msg))

    for name in (REVIEW, META):
        if name not in wb.sheetnames:
            bad(None, None, f"sheet {name!r} is missing (sheets: {wb.sheetnames}); is this a review packet?")
    if problems:
        raise PacketError(problems)
    meta_ws = wb[META]
    meta = {_text(meta_ws.cell(row=i, column=1).value): (meta_ws.cell(row=i, column=2)) for i in range(1, meta_ws.max_row + 1)}
    for k in ("format", "reviewer id", "reviewer role", "rows"):
        if k not in meta:
            bad(META, None, f"entry {k!r} is missing in column A")
    if problems:
        raise PacketError(problems)
    if _text(meta["format"].value) != PACKET_FORMAT:
        bad(META, meta["format"].coordinate, f"format {_text(meta['format'].value)!r} is not {PACKET_FORMAT!r}")
    rid_cell = meta["reviewer id"]
    reviewer_id = _text(rid_cell.value)
    if not reviewer_id:
        bad(META, rid_cell.coordinate, "reviewer id is empty")
    exported = _text(meta["rows"].value).split()

    ws = wb[REVIEW]
    for j, (_, header, _) in enumerate(COLUMNS, start=1):
        got = _text(ws.cell(row=1, column=j).value)
        if got != header:
            bad(REVIEW, ws.cell(row=1, column=j).coordinate, f"expected the header {header!r}, found {got!r}")
    if problems:
        raise PacketError(problems)

    inst = instances.assign(split=instances["split"].astype(str), uid=instances["uid"].astype(int)).set_index(["split", "uid"])
    kinds = answer_kind(instances)
    items: list[Item] = []
    skipped: list[str] = []
    seen: dict[str, int] = {}
    for r in range(2, ws.max_row + 1):
        cells = {k: ws.cell(row=r, column=COL[k]) for k, _, _ in COLUMNS}
        if all(_text(c.value) == "" for c in cells.values()):
            continue
        rid = _text(cells["row_id"].value)
        m = ROW_ID.match(rid)
        if not m:
            bad(REVIEW, cells["row_id"].coordinate, f"{rid!r} is not a row id (expected split-uid, e.g. test-00042)")
            continue
        if rid in seen:
            bad(REVIEW, cells["row_id"].coordinate, f"row {rid} appears twice (first in row {seen[rid]})")
            continue
        seen[rid] = r
        if rid not in exported:
            bad(REVIEW, cells["row_id"].coordinate, f"row {rid} was not exported in this packet")
            continue
        key = (m.group("split"), int(m.group("uid")))
        if key not in inst.index:
            bad(REVIEW, cells["row_id"].coordinate, f"row {rid} is not in the instances")
            continue
        rec = inst.loc[key]
        otype = str(rec["Output Type"])
        kind = kinds[int(rec["calculator_id"])]
        raw = cells["answer"].value
        acell = cells["answer"].coordinate
        if raw is None or (isinstance(raw, str) and raw.strip() == ""):
            if partial:
                skipped.append(rid)
            else:
                bad(REVIEW, acell, f"the answer of row {rid} is empty (write the value, or N/A with a comment)")
            continue
        ans = parse_answer(raw, otype)
        shown = raw.strftime("%m/%d/%Y") if isinstance(raw, (dt.date, dt.datetime)) else raw
        problem = _answer_problem(ans, kind)
        if problem:
            what = "gestational age" if kind == "gestational_age" else otype
            bad(REVIEW, acell, f"{_text(shown)!r} is not a valid {what} answer ({problem})")
            continue
        comment = _text(cells["comment"].value)
        texts = {k: _text(cells[k].value) for k in ("timepoint", "guideline", "comment")}
        for k, v in texts.items():
            if len(v) > MAX_TEXT:
                bad(REVIEW, cells[k].coordinate, f"text is longer than {MAX_TEXT} characters")
        if ans.is_abstain and not comment:
            bad(REVIEW, cells["comment"].coordinate,
                f"row {rid} is answered N/A without a comment (say what the note lacks or why it does not apply)")
            continue
        items.append(Item(key[0], key[1], r, ans, raw, texts["timepoint"] or None, texts["guideline"] or None, comment))
    missing = [x for x in exported if x not in seen]
    if missing:
        bad(REVIEW, None, f"exported row(s) {missing} are missing from the sheet")
    if not items and not problems:
        bad(REVIEW, None, "no answered rows to import")
    if problems:
        raise PacketError(problems)
    return Packet(path, reviewer_id, _text(meta["reviewer role"].value),
                  _text(meta["reviewer specialty"].value) if "reviewer specialty" in meta else None, items, skipped)


def _answer_problem(ans: Answer, kind: str) -> str | None:
    if ans.kind == "invalid":
        return ans.reason
    if ans.is_abstain:
        return None
    if kind == "gestational_age":
        return None if ans.kind == "gestational_age" else "write weeks and days, as W weeks D days"
    if kind == "date":
        return None if ans.kind == "date" else "expected MM/DD/YYYY"
    if ans.kind == "gestational_age":
        return "weeks and days are not a number"
    if kind == "integer" and ans.kind != "integer":
        return "not a whole number"
    return None


@dataclass
class Adjudication:
    agree_with: tuple[str, ...] = ("relabel", "physician")

    @classmethod
    def from_params(cls, section: dict[str, Any]) -> "Adjudication":
        refs = tuple((section.get("adjudication") or {}).get("agree_with", ["relabel", "physician"]) or ())
        bad = [r for r in refs if r not in REFERENCES]
        if bad:
            raise DataError("params.yaml", f"unknown adjudication reference(s) {bad}; known: {list(REFERENCES)}",
                            field="triage.adjudication.agree_with")
        return cls(refs)


def build_records(packet: Packet, reviewer: Reviewer, instances: pd.DataFrame, maintained: pd.DataFrame,
                  relabel: pd.DataFrame | None, recompute: pd.DataFrame | None,
                  prior: dict[tuple[str, int], list[dict[str, Any]]], adjudication: Adjudication,
                  *, decided_at: str, id_prefix: str = "review") -> list[dict[str, Any]]:
    """One ledger record per answered packet row, adjudicated (see the module docstring)."""
    cur = maintained.assign(split=maintained["split"].astype(str), uid=maintained["uid"].astype(int)).set_index(["split", "uid"])
    rl = None
    if relabel is not None:
        rl = relabel.copy()
        if "split" not in rl.columns:
            rl["split"] = str(instances["split"].iloc[0])
        rl = rl.assign(split=rl["split"].astype(str), uid=rl["uid"].astype(int)).set_index(["split", "uid"])
    rc = None
    if recompute is not None:
        rc = recompute.assign(split=recompute["split"].astype(str), uid=recompute["uid"].astype(int)).set_index(["split", "uid"])
    records = []
    for it in packet.items:
        key = (it.split, it.uid)
        row = cur.loc[key]
        otype = str(row["Output Type"])
        old = str(row["Ground Truth Answer"])
        style = row_style(row)
        new_value = format_answer(it.answer, otype, style)
        if it.answer.is_abstain:
            status = "abstain"
        elif labels_agree(it.answer, old, otype):
            status = "confirmed"
        else:
            status = "corrected"
        refs: list[tuple[str, str]] = []
        relabel_text = "relabel: no label for this row"
        relabel_value = None
        if rl is not None and key in rl.index:
            r = rl.loc[key]
            prov = "/".join(str(r[c]) for c in ("backend", "model") if c in r.index and str(r[c]) not in ("", "None", "nan"))
            if str(r["status"]) == "labeled":
                relabel_value = str(r["label"])
                relabel_text = f"relabel ({prov}): {relabel_value}" if prov else f"relabel: {relabel_value}"
            else:
                relabel_text = f"relabel ({prov}): deferred, no supermajority" if prov else "relabel: deferred"
        if "relabel" in adjudication.agree_with and relabel_value is not None:
            refs.append(("the relabel label", relabel_value))
        earlier = prior.get(key, [])
        if "physician" in adjudication.agree_with:
            refs.extend((f"physician {p['reviewer']} ({p['id']})", str(p["value"])) for p in earlier)
        if "current" in adjudication.agree_with:
            refs.append(("the maintained label", old))
        agreeing = [name for name, value in refs if _agree(it.answer, value, otype)]
        accepted = bool(agreeing) or not adjudication.agree_with
        finding = str(rc.loc[key, "finding"]) if rc is not None and key in rc.index else None
        etype = classify_error(status, it.comment, finding, None)
        evidence = [f"review packet {packet.path.name}, sheet {REVIEW}, row {it.row} ({row_id(*key)})", relabel_text]
        if finding:
            evidence.append(f"recompute audit finding: {finding}")
        evidence.extend(f"earlier deferred physician review {p['id']} by {p['reviewer']}: {p['value']}" for p in earlier)
        if accepted:
            evidence.append("accepted: agrees with " + (", ".join(agreeing) if agreeing else "no reference required"))
        else:
            names = ", ".join(n for n, _ in refs) or "no reference available"
            evidence.append(f"deferred: disagrees with {names}; a second reviewer is needed")
        rationale = it.comment or f"Blinded recomputation by {reviewer.id} gave {new_value} (no comment)."
        rec: dict[str, Any] = {
            "id": f"{id_prefix}-{reviewer.id}-{it.split}-{it.uid:05d}",
            "uid": it.uid,
            "split": it.split,
            "old_value": old,
            "new_value": new_value,
            "decision": "accepted" if accepted else "deferred",
            "label_status": status,
            "error_type": etype,
            "rationale": rationale,
            "evidence": evidence,
            "source": "physician",
            "reviewer": reviewer.as_record(),
            "blinded": True,
            "decided_at": decided_at,
        }
        if it.timepoint:
            rec["scoring_timepoint"] = it.timepoint
        if it.guideline:
            rec["guideline_version"] = it.guideline
        if not accepted:
            second = relabel_value if relabel_value is not None else (str(earlier[-1]["value"]) if earlier else None)
            rec["second_opinion"] = second
        records.append(rec)
    return records


def _agree(answer: Answer, reference: str, otype: str) -> bool:
    ref = parse_answer(reference, otype)
    if ref.kind == "invalid":
        return False
    return labels_agree(answer, ref, otype)


def import_packet(path: Path, *, instances: pd.DataFrame, ledger_paths: list[Path], relabel: pd.DataFrame | None,
                  recompute: pd.DataFrame | None, reviewers: list[Reviewer], adjudication: Adjudication,
                  out: Path, decided_at: str, id_prefix: str = "review", partial: bool = False,
                  ) -> tuple[list[dict[str, Any]], Packet]:
    """Read, adjudicate, check and write a packet's records to ``out``; nothing is written on error."""
    from medcalc_maintained.triage import deferred_reviews

    out = Path(out)
    if out.exists():
        raise DataError(out, "already exists; choose another --out (ledger files are never overwritten)")
    packet = read_packet(path, instances, partial=partial)
    where = str(path)
    by_id = {r.id: r for r in reviewers}
    if packet.reviewer_id not in by_id:
        raise PacketError([PacketProblem(where, META, "B2", f"reviewer {packet.reviewer_id!r} is not in params.yaml "
                                         f"triage.reviewers ({', '.join(by_id) or 'none'})")])
    reviewer = by_id[packet.reviewer_id]
    existing, problems = ledger.collect(ledger_paths)
    if problems:
        raise ledger.LedgerError(problems)
    prior = deferred_reviews(existing)
    maintained = check_and_apply(instances, existing)
    records = build_records(packet, reviewer, instances, maintained, relabel, recompute, prior, adjudication,
                            decided_at=decided_at, id_prefix=id_prefix)
    taken = {r.id: r.path for r in existing}
    clash = [PacketProblem(where, REVIEW, f"A{it.row}", f"row {row_id(it.split, it.uid)} was already imported "
                           f"for reviewer {reviewer.id} (record {rec['id']} in {taken[rec['id']]})")
             for it, rec in zip(packet.items, records) if rec["id"] in taken]
    if clash:
        raise PacketError(clash)
    batch = {"name": out.stem, "description": f"Single-blind physician review by {reviewer.id}"
             + (f" ({reviewer.specialty})" if reviewer.specialty else ""), "source_files": [packet.path.name]}
    header = (f"Imported by `medcalc-maintained review import {packet.path.name}`.\n"
              "Physician answers from a single-blind review packet; accepted records change the maintained label,\n"
              "deferred ones wait for a second reviewer.")
    text = ledger.dump(records, out, batch=batch, header=header)
    with tempfile.TemporaryDirectory() as tmp:
        trial = Path(tmp) / out.name
        trial.write_text(text, encoding="utf-8")
        try:
            new_records = ledger.load([trial])
            check_and_apply(instances, existing + new_records)  # the whole ledger must still apply
        except ledger.LedgerError as exc:
            rows = {rec["id"]: it.row for it, rec in zip(packet.items, records)}
            raise PacketError([
                PacketProblem(where, REVIEW, f"A{rows[p.record]}", f"record {p.record}"
                              + (f", field {p.field!r}" if p.field else "") + f": {p.problem}")
                if p.path == str(trial) and p.record in rows else p
                for p in exc.problems]) from None
    write_text_atomic(out, text)
    try:
        ledger.load([out])
    except ledger.LedgerError:
        out.unlink(missing_ok=True)
        raise
    return records, packet


__all__ = ["export_packet", "select_rows", "read_packet", "build_records", "import_packet", "Adjudication",
           "PacketError", "PacketProblem", "PACKET_FORMAT", "COLUMNS", "INSTRUCTIONS_TEXT", "row_id"]
