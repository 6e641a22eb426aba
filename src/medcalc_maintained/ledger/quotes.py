"""Quotes of a patient note located by their text: the character offsets a contributor would
otherwise count by hand.

``propose --quote TEXT`` records each quote among the record's ``evidence`` with its offsets
(:func:`evidence_line`), and an input of a derivation file (``propose --inputs``, ``ledger derive
--inputs``) may give its evidence as text only (``evidence: {text: ...}`` or ``evidence: "..."``):
:func:`locate_inputs` fills in ``start`` and ``end``. One rule (:data:`QUOTE_RULE`): the text must
occur exactly once in the row's note, as printed (case, spaces and line breaks included); else it is
refused, naming the text and, when it occurs more than once, how many times.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from medcalc_maintained.core.errors import DataError, shown

QUOTE_RULE = "a quote located by its text must occur exactly once in the row's note"


class QuoteError(ValueError):
    """A text that locates no single passage of the note (the message says why)."""


def _starts(note: str, text: str) -> list[int]:
    """Every offset where ``text`` starts in ``note``, overlapping occurrences included."""
    out, at = [], note.find(text)
    while at != -1:
        out.append(at)
        at = note.find(text, at + 1)
    return out


def locate(note: str, text: str) -> tuple[int, int]:
    """``(start, end)`` of the one occurrence of ``text`` in ``note``; :class:`QuoteError` when it
    is empty, absent or occurs more than once.

    >>> locate("Na 137, K 4.1, Cl 101", "K 4.1")
    (8, 13)
    """
    if not text.strip():
        raise QuoteError("an empty quote locates nothing")
    starts = _starts(note, text)
    if not starts:
        raise QuoteError(f"{shown(text)} does not occur in the note (copy the note's own characters: case, spaces "
                         "and line breaks as printed)")
    if len(starts) > 1:
        at = ", ".join(str(s) for s in starts[:5]) + (", ..." if len(starts) > 5 else "")
        raise QuoteError(f"{shown(text)} occurs {len(starts)} times in the note (at characters {at}); quote a longer "
                         "passage around it that occurs once")
    return starts[0], starts[0] + len(text)


def evidence_line(note: str, text: str) -> str:
    """The record's ``evidence`` entry of a quote: ``note[START:END] 'TEXT'`` (:class:`QuoteError` as
    :func:`locate`).

    >>> evidence_line("pulse rate was 108/min", "108/min")
    "note[15:22] '108/min'"
    """
    start, end = locate(note, text)
    return f"note[{start}:{end}] {text!r}"


def text_only(evidence: Any) -> str | None:
    """The quote of an input's evidence given as text only (a string, or a mapping with ``text`` and
    neither ``start`` nor ``end``); ``None`` for any other form (left to the schema)."""
    if isinstance(evidence, str):
        return evidence
    if isinstance(evidence, Mapping) and set(evidence) == {"text"} and isinstance(evidence["text"], str):
        return evidence["text"]
    return None


def locate_inputs(inputs: Any, note_of: Callable[[], str | None], path: Any) -> Any:
    """``inputs`` (a derivation file's list) with every text-only evidence given its offsets in the
    row's note (``note_of()``, asked for only when one needs it); an empty text is the form of an input
    absent from the note (``{start: null, end: null, text: ""}``). Raises :class:`DataError` naming the
    file, the input, the text and :data:`QUOTE_RULE`; any other value is returned unchanged."""
    if not isinstance(inputs, list):
        return inputs
    out: list[Any] = []
    note: str | None = None
    for n, inp in enumerate(inputs):
        text = text_only(inp.get("evidence")) if isinstance(inp, Mapping) else None
        if text is None:
            out.append(inp)
            continue
        if not text.strip():
            out.append({**inp, "evidence": {"start": None, "end": None, "text": ""}})
            continue
        note = note_of() if note is None else note
        where = f"inputs[{n}] ({inp.get('name')})"
        if not isinstance(note, str):
            raise DataError(path, f"{where}: the row has no note to locate {shown(text)} in; give start and end",
                            field=f"inputs.{n}.evidence")
        try:
            start, end = locate(note, text)
        except QuoteError as exc:
            raise DataError(path, f"{where}: evidence text {exc}; rule: {QUOTE_RULE} (or give start and end)",
                            field=f"inputs.{n}.evidence") from None
        out.append({**inp, "evidence": {"start": start, "end": end, "text": text}})
    return out


__all__ = ["QUOTE_RULE", "QuoteError", "evidence_line", "locate", "locate_inputs", "text_only"]
