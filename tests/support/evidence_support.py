"""A recorded input quoting a piece of a note, and the evidence verifier's verdict on it: the shape the
verifier's tests build their cases with."""

from __future__ import annotations

from typing import Any

from medcalc_maintained.calculators.evidence import Verdict, verify


def quoted(note: str, text: str, name: str, value: Any, unit: Any = None, **extra: Any) -> dict:
    """The input ``name = value unit`` whose evidence is the first ``text`` of ``note`` (``extra``: a timepoint,
    a unit reading, a source)."""
    start = note.index(text)
    return {"name": name, "value": value, "unit": unit,
            "evidence": {"start": start, "end": start + len(text), "text": text}, **extra}


def judge(cid: int, note: str, text: str, name: str, value: Any, unit: Any = None) -> Verdict:
    """The verifier's verdict on :func:`quoted`."""
    return verify(cid, quoted(note, text, name, value, unit), note)
