"""Possible outputs of each calculator (``output_ranges.yaml`` beside this module).

:func:`range_problem` says why a value cannot be a label of a calculator's row: outside the
scale's points, outside the formula's or the quantity's bounds, or (for a date) outside the window
around the dates printed in the row's note. Together with :func:`medcalc_maintained.core.labels.fit_problem`
(does the value have the row's type) it is the rule of "is this value a possible label of this
row"; :func:`label_problem` runs both. Nothing is rounded or coerced: ``9.5`` is not a GCS.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from medcalc_maintained.core.answers import Answer, parse_answer
from medcalc_maintained.core.labels import fit_problem
from medcalc_maintained.core.yaml_text import safe_load

RANGES_FILE = "output_ranges.yaml"
_NOTE_DATES = (re.compile(r"\b(\d{1,2})/(\d{1,2})/(\d{4})\b"), re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b"))


@dataclass(frozen=True)
class OutputRange:
    calculator_id: int
    name: str
    kind: str
    source: str
    min: float | None = None
    max: float | None = None
    unit: str = ""
    days_after: tuple[int, int] | None = None

    def describe(self) -> str:
        if self.days_after is not None:
            lo, hi = self.days_after
            return f"{lo} to {hi} days after a date printed in the note"
        unit = f" {self.unit}" if self.unit else ""
        return f"{_num(self.min)} to {_num(self.max)}{unit}"


def _num(x: float | None) -> str:
    return "?" if x is None else (str(int(x)) if float(x).is_integer() else str(x))


@lru_cache(maxsize=1)
def output_ranges() -> dict[int, OutputRange]:
    """Every entry of ``output_ranges.yaml`` by calculator id."""
    text = resources.files("medcalc_maintained.calculators").joinpath(RANGES_FILE).read_text("utf-8")
    out: dict[int, OutputRange] = {}
    for cid, e in (safe_load(text) or {})["ranges"].items():
        window = e.get("days_after")
        out[int(cid)] = OutputRange(int(cid), str(e["name"]), str(e["kind"]), str(e["source"]),
                                    e.get("min"), e.get("max"), str(e.get("unit") or ""),
                                    tuple(window) if window is not None else None)
    return out


def note_dates(note: Any) -> list[dt.date]:
    """The dates printed in a note (``MM/DD/YYYY`` or ``YYYY-MM-DD``), impossible ones skipped."""
    found = []
    text = "" if note is None else str(note)
    for i, pat in enumerate(_NOTE_DATES):
        for m in pat.finditer(text):
            a, b, c = (int(g) for g in m.groups())
            y, mo, d = (c, a, b) if i == 0 else (a, b, c)
            try:
                found.append(dt.date(y, mo, d))
            except ValueError:
                continue
    return sorted(set(found))


def range_problem(calculator_id: Any, answer: Answer | Any, note: Any = None, output_type: str | None = None) -> str | None:
    """Why ``answer`` is outside its calculator's range (``None`` when inside, for ``N/A``, for a
    value that does not parse — that is :func:`fit_problem`'s to say — and for a date when the
    note prints no date). Raises ``KeyError`` for a calculator without a range."""
    rng = output_ranges()[int(calculator_id)]
    if not isinstance(answer, Answer):
        answer = parse_answer(answer, output_type or ("date" if rng.days_after else "decimal"))
    if answer.is_abstain or not answer.is_valid:
        return None
    if rng.days_after is not None:
        if answer.kind != "date":
            return None
        dates = note_dates(note)
        lo, hi = rng.days_after
        if not dates or any(lo <= (answer.date - d).days <= hi for d in dates):
            return None
        shown = ", ".join(d.strftime("%m/%d/%Y") for d in dates[:3])
        return (f"{answer.date.strftime('%m/%d/%Y')} is outside the range of {rng.name} "
                f"({rng.describe()}: {shown})")
    if not answer.is_number:
        return None
    x = answer.number
    if (rng.min is not None and x < rng.min) or (rng.max is not None and x > rng.max):
        return f"{answer.text.strip()} is outside the range of {rng.name} ({rng.describe()})"
    return None


def label_problem(calculator_id: Any, raw: Any, output_type: str, style: str | None = None, note: Any = None) -> str | None:
    """The one rule of "is ``raw`` a possible label of this row": text present (``N/A`` written
    out, never an empty value), the row's type (:func:`fit_problem`) and the calculator's range."""
    if raw is None or not str(raw).strip() or (isinstance(raw, float) and raw != raw):
        return "empty value (write N/A for an abstention)"
    answer = raw if isinstance(raw, Answer) else parse_answer(raw, output_type)
    return fit_problem(answer, output_type, style) or range_problem(calculator_id, answer, note, output_type)
