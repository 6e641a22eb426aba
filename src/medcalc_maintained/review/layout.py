"""The review packet's layout, shared by its export, its export record and its import: the sheet
names, the columns of the ``Review`` sheet (which of them the reviewer fills), the entries of the
``Packet`` sheet, the row id, the string cell every export writes, and the problems import reports
(each naming its sheet and cell)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from medcalc_maintained.core.errors import ProblemsError, located

PACKET_FORMAT = "medcalc-review-packet-v1"
REVIEW, INSTRUCTIONS, META = "Review", "Instructions", "Packet"

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
    ("evidence", "Note sentences the offline checks point at", 60),
]
COL = {key: i + 1 for i, (key, _, _) in enumerate(COLUMNS)}
INPUTS = ("answer", "timepoint", "guideline", "comment")
MAX_TEXT = 2000
META_KEYS = ("format", "reviewer id", "reviewer role", "reviewer specialty", "rows")
META_ROWS = len(META_KEYS) + 1  # the entries, then the packet id of the export record
ROW_ID = re.compile(r"^(?P<split>[a-z]+)-(?P<uid>\d+)$")


@dataclass
class PacketProblem:
    path: str
    sheet: str | None
    cell: str | None
    problem: str

    def __str__(self) -> str:
        return f"{located(self.path, ('sheet', self.sheet), ('cell', self.cell))}: {self.problem}"


class PacketError(ProblemsError):
    """Every problem found in a review packet (each names its sheet and cell)."""

    def __str__(self) -> str:
        return "\n".join(str(p) for p in self.problems)


def text_cell(ws, row: int, column: int, value: str | None):
    """Write ``value`` as a string cell: text from upstream notes or contributors is shown, never run
    as a formula (openpyxl would store text starting with ``=`` as one). The text is not altered."""
    c = ws.cell(row=row, column=column, value=value)
    if value is not None:
        c.data_type = "s"
    return c


def row_id(split: str, uid: int) -> str:
    return f"{split}-{int(uid):05d}"
