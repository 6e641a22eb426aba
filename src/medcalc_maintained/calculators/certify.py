"""Every input of a row read against its note: the quote that certifies it, the note's other value, or silence.

A verified label is the declared definition applied to its row's inputs: the upstream ``Relevant
Entities`` (GPT-4's extraction), patched by the inputs a ledger record recorded. :func:`certify_row`
gives each declared input of the calculator one of three verdicts, as VeriFact does for claims:

``supports``
    a quote of the note that the evidence verifier (:func:`evidence.verify`) accepts for the value the
    derivation uses (an absent criterion or measurement is supported by a quote that negates it, or by
    the note's silence where the definition scores an unmentioned input as absent: ``convention``);
``contradicts``
    the note states another value of the input at the time the definition asks for: the verifier
    accepts a quote of that other value (``note_value``), or a criterion the derivation counts present
    is one the note never states (absent by the same convention);
``not_addressed``
    neither: no quote the verifier accepts states the value or another one.

An input the row's question states rather than its note (:data:`QUESTION_INPUTS`: the steroid conversion's
``target steroid``, "what is the equivalent dosage in mg of PrednisoLONE PO?") is read in the question, when
:func:`certify_row` is given it: its quote then indexes the question, not the note (``quote_in``: ``question``;
every other quote is the note's, ``note``). No other input is read in the question: what the note must state
(a dose, a finding) is never certified from the question's wording. Dosed drugs (the steroid conversion's
``input steroid``, the MME's ``opioids``, assembled from the ``<Opioid> Dose`` and ``... Dose Per Day``
entities) are read by :mod:`.evidence_dose`; a list of opioids may span sentences, so the span from the first
to the last sentence naming one is proposed too.

The search only proposes: sentences that name the input (a term of its lexicon entry or one of its
options) or print its value (for a grade a serum level states, :data:`evidence_options.LEVEL_GRADES`, also those that
name the quantity); only :func:`evidence.verify` certifies. A row is *derived from evidence*
when every input its derivation uses is supported (:func:`derived_from_evidence`), and at least one is.

An ``N/A`` label (``abstains``) uses only what makes the definition give no value. Where its ledger record
records inputs (a required measurement the note never prints, recorded absent), those are the inputs it
uses; where it records none and the definition gives no value from upstream's entities, it uses them; where
it records none and the entities give a value, the abstention rests on its written justification alone and
uses no input the verifier can read. Every input is still read and listed; one the derivation does not use
says so (``used: false``) and decides nothing (:func:`row_verdict`).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, replace
from typing import Any, Iterable, Mapping

from medcalc_maintained.calculators import compute
from medcalc_maintained.calculators import evidence_dose as D
from medcalc_maintained.calculators import lexicon as L
from medcalc_maintained.calculators import note_text as T
from medcalc_maintained.calculators.evidence import verify
from medcalc_maintained.calculators.evidence_options import LEVEL_GRADES, silence_option
from medcalc_maintained.calculators.evidence_readings import PRONOUNS
from medcalc_maintained.calculators.inputs import InputSpec, declared_inputs

VERDICTS = ("supports", "contradicts", "not_addressed")
READABLE = ("quantity", "number", "flag", "choice", "date", *D.ACCESSORS)  # the accessors the verifier reads
QUESTION_INPUTS = frozenset({"target steroid"})  # inputs the question states, not the note
MAX_NUMBERS = 12  # numbers of one sentence tried as the note's other value
MAX_PRONOUNS = 3  # sentences with a pronoun proposed for a sex


@dataclass(frozen=True)
class InputEvidence:
    """One input of a row: the value its derivation uses, where it came from, and what the note says of it."""

    name: str
    value: Any
    unit: str | None
    source: str                       # upstream | recorded | default (absent from the entities)
    verdict: str                      # one of VERDICTS
    quote: dict[str, Any] | None      # {start, end, text}: the certifying or the contradicting quote
    note_value: Any = None            # the note's value, for contradicts
    convention: bool = False          # decided by the definition's convention for an unmentioned input
    rule: str = ""                    # the verifier's rule for the value (supports, or why not)
    reason: str = ""
    note_entity: Any = None           # the note's value as an entity value ([number, unit], a flag, an option)
    quote_in: str = "note"            # what the quote indexes: note | question (QUESTION_INPUTS)
    declared: dict[str, Any] | None = None  # the timepoint or unit reading a recorded input declares, which it needed
    used: bool = True                 # whether the label's derivation uses it (False: an abstention's other inputs)

    def document(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"name": self.name, "value": self.value, "unit": self.unit, "source": self.source,
                               "verdict": self.verdict, "quote": self.quote, "rule": self.rule, "reason": self.reason,
                               "quote_in": self.quote_in if self.quote is not None else None}
        if self.verdict == "contradicts":
            doc["note_value"] = self.note_value
        if self.convention:
            doc["convention"] = True
        if self.declared:
            doc.update(self.declared)
        if not self.used:
            doc["used"] = False
        return doc


class Note:
    """A note read once: its sentences, and where a term or a number falls among them."""

    def __init__(self, text: str):
        self.text = text
        self.spans: list[tuple[int, int]] = []
        a = 0
        for m in list(T.SENTENCE_END.finditer(text)) + [None]:
            b = m.start() if m else len(text)
            piece = text[a:b]
            s, e = a + len(piece) - len(piece.lstrip()), a + len(piece.rstrip())
            if e > s:
                self.spans.append((s, e))
            a = m.end() if m else len(text)
        self.starts = [s for s, _ in self.spans]
        self.numbers = list(T.numbers(text))

    def sentence_of(self, pos: int) -> int:
        return max(0, bisect_right(self.starts, pos) - 1)

    def candidates(self, positions: Iterable[int]) -> list[tuple[int, int]]:
        """The sentences holding ``positions``, once each, in note order."""
        return [self.spans[i] for i in sorted({self.sentence_of(p) for p in positions}) if self.spans]


def _terms(spec: InputSpec) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """(names, masks, patterns, option phrases) of the input's lexicon entry."""
    entry = L.lexicon_entry(spec.name) or next((L.lexicon_entry(a) for a in spec.aliases if L.lexicon_entry(a)), None)
    if entry is None:
        return (), (), (), tuple(spec.options)
    phrases = tuple(p for _, ps in entry.options for p in ps) + tuple(spec.options)
    return entry.names, entry.masks, entry.patterns, phrases


def _input(spec: InputSpec, value: Any, unit: Any, span: tuple[int, int] | None, note: str) -> dict[str, Any]:
    ev = {"start": span[0], "end": span[1], "text": note[span[0]:span[1]]} if span else {"start": None, "end": None, "text": ""}
    return {"name": spec.name, "value": value, "unit": unit, "evidence": ev}


def entity_of(spec: InputSpec, entities: Mapping[str, Any]) -> tuple[bool, Any, str | None]:
    """(found, value, unit) of the input in the entities (``[number, unit]`` or a plain value)."""
    names = {spec.name.lower(), *(a.lower() for a in spec.aliases)}
    for key, raw in entities.items():
        if str(key).strip().lower() in names:
            if isinstance(raw, (list, tuple)) and raw and not isinstance(raw[0], bool) and isinstance(raw[0], (int, float)):
                return True, raw[0], (str(raw[1]) if len(raw) > 1 else None)
            return True, raw, None
    return False, None, None


def _absent(value: Any) -> bool:
    return value is None or value is False


def certify_input(calculator_id: int, spec: InputSpec, value: Any, unit: Any, source: str, note: Note,
                  recorded_quote: Mapping[str, Any] | None = None, *, quote_in: str = "note",
                  reading: Mapping[str, Any] | None = None) -> InputEvidence:
    """The verdict of one input (see the module docstring); ``note`` is the row's question where ``quote_in``
    is ``question`` (only for :data:`QUESTION_INPUTS`)."""
    cid, text = int(calculator_id), note.text
    names, masks, patterns, phrases = _terms(spec)
    if spec.accessor not in READABLE:
        return InputEvidence(spec.name, value, unit, source, "not_addressed", None,
                             rule="not-read", reason=f"the verifier does not read a {spec.accessor} input")
    if (spec.name.lower() in QUESTION_INPUTS) != (quote_in == "question"):
        if quote_in == "question":
            raise ValueError(f"{spec.name} is stated by the note, never read in the question")
        return InputEvidence(spec.name, value, unit, source, "not_addressed", None,
                             rule="question-input", reason="the question states this input, not the note")
    named = [s for s, _ in L.term_spans(text, names + ((str(value),) if isinstance(value, str) else ()), masks, patterns)]
    if spec.accessor == "choice":
        named += [s for s, _ in L.term_spans(text, phrases)]
    level = L.lexicon_entry(LEVEL_GRADES[spec.name.lower()][0]) if spec.name.lower() in LEVEL_GRADES else None
    if level is not None:  # a grade stated by a serum level: the sentences that name the quantity
        named += [s for s, _ in L.term_spans(text, level.names, level.masks, level.patterns)]
    if spec.name.lower() == "sex":  # a note that names no sex may refer to the patient by pronouns only
        named += [m.start() for rx in PRONOUNS.values() for m in rx.finditer(text)][:MAX_PRONOUNS]
    printed = [s for s, _, v in note.numbers if T.same_number(v, value)] \
        if not isinstance(value, (bool, str, list, tuple)) else []
    proposals = _proposals(spec, note, named + printed)
    tried: list[dict[str, Any]] = []
    declared = {k: reading[k] for k in ("timepoint", "unit_reading") if reading and reading.get(k)}
    if recorded_quote and recorded_quote.get("start") is not None:  # with the timepoint or unit reading it declares
        tried.append({"name": spec.name, "value": value, "unit": unit, "evidence": dict(recorded_quote), **declared})
    tried += [_input(spec, value, unit, span, text) for span in proposals]
    if _absent(value) or silence_option(cid, spec, value):
        tried.append({**_input(spec, value, unit, None, text), **declared})  # the note's silence, last
    first = None
    for inp in tried:
        v = verify(cid, inp, text)
        first = first or v
        if v.supports:
            quote = dict(inp["evidence"]) if inp["evidence"].get("start") is not None else None
            used: dict[str, Any] = {k: inp[k] for k in ("timepoint", "unit_reading") if k in inp}
            return InputEvidence(spec.name, value, unit, source, "supports", quote, convention=quote is None,
                                 rule=v.rule, reason=v.reason, quote_in=quote_in, declared=used or None)
    assert first is not None or not tried
    rule, reason = (first.rule, first.reason) if first else ("not-named", "the note names no term of the input")
    other = _other_value(cid, spec, value, unit, note, _proposals(spec, note, named))
    if other is not None:
        note_value, patched, quote, convention = other
        return InputEvidence(spec.name, value, unit, source, "contradicts", quote, note_value, convention, rule, reason,
                             patched, quote_in)
    return InputEvidence(spec.name, value, unit, source, "not_addressed", None, rule=rule, reason=reason)


def _proposals(spec: InputSpec, note: Note, positions: list[int]) -> list[tuple[int, int]]:
    """The sentences holding ``positions``; for a dosed drug also the span from the first to the last of them (a
    list of drugs over several sentences)."""
    spans = note.candidates(positions)
    if spec.accessor in D.ACCESSORS and len(spans) > 1:
        spans.append((spans[0][0], spans[-1][1]))
    return spans


def _other_value(cid: int, spec: InputSpec, value: Any, unit: Any, note: Note, proposals: list[tuple[int, int]]
                 ) -> tuple[Any, Any, dict[str, Any] | None, bool] | None:
    """Another value of the input the verifier accepts from the note: (value shown, as an entity value, quote, by
    convention), or ``None``."""
    text = note.text
    if spec.accessor == "flag" or (spec.accessor == "choice" and isinstance(value, bool)):
        flipped = not bool(value)
        for span in proposals:
            if verify(cid, _input(spec, flipped, None, span, text), text).supports:
                return flipped, flipped, {"start": span[0], "end": span[1], "text": text[span[0]:span[1]]}, False
        if value is True and verify(cid, _input(spec, False, None, None, text), text).supports:
            return False, False, None, True  # a present criterion the note never states: absent by the convention
        return None
    if spec.accessor == "choice":
        want = str(value).strip().lower() if value is not None else None
        names, masks, patterns, _ = _terms(spec)
        named = [span for span in proposals if L.term_spans(text[span[0]:span[1]], names, masks, patterns)]
        for opt in spec.options:  # another option, in a sentence that names the input ("within normal limits" alone names nothing)
            if opt.lower() == want:
                continue
            for span in named:
                if verify(cid, _input(spec, opt, None, span, text), text).supports:
                    return opt, opt, {"start": span[0], "end": span[1], "text": text[span[0]:span[1]]}, False
        return None
    if spec.accessor in D.ACCESSORS:  # the widest reading first: a list of drugs over several sentences is one value
        for span in sorted(proposals, key=lambda sp: sp[0] - sp[1]):
            shown = D.read_value(spec, text, *span)
            if shown is not None and verify(cid, _input(spec, shown, None, span, text), text).supports:
                return shown, shown, {"start": span[0], "end": span[1], "text": text[span[0]:span[1]]}, False
        return None
    if spec.accessor in ("quantity", "number"):
        for span in proposals:
            for a, b, v in [n for n in note.numbers if span[0] <= n[0] < span[1]
                            and not T.flat_exponent(text, n[0], n[1])][:MAX_NUMBERS]:
                if not isinstance(value, bool) and value is not None and T.same_number(v, value):
                    continue
                shown, norm = T.unit_after(text, b)
                if norm is None and shown and not re.search(r"[^\W\d_]|%", shown):
                    shown = None  # no unit ("93/62": "/62", the diastolic); "beats/min" stays as printed
                for u in dict.fromkeys([x for x in (shown, unit) if x] or [None]):
                    if verify(cid, _input(spec, v, u, span, text), text).supports:
                        return (f"{v:g} {u}" if u else f"{v:g}"), ([v, u] if u else v), \
                            {"start": span[0], "end": span[1], "text": text[span[0]:span[1]]}, False
    return None


def certify_row(calculator_id: int, entities: Mapping[str, Any] | None, note: str,
                recorded: Iterable[Mapping[str, Any]] = (), question: str | None = None, *,
                abstains: bool = False) -> list[InputEvidence]:
    """Every declared input of the calculator on one row: the value its derivation uses (a recorded input
    over the upstream entity; an input in neither is absent) and its verdict; an input of
    :data:`QUESTION_INPUTS` is read in ``question`` (left not addressed without one). ``abstains``: the
    row's label is ``N/A`` (the inputs its derivation uses: the module docstring)."""
    reader, asked = Note(note), (Note(question) if question and question.strip() else None)
    by_name = {str(i.get("name") or "").strip().lower(): i for i in recorded if isinstance(i, Mapping)}
    upstream_used = uses_upstream(calculator_id, entities, bool(by_name), abstains)
    out = []
    for spec in declared_inputs(int(calculator_id)):
        rec = next((by_name[n] for n in (spec.name.lower(), *(a.lower() for a in spec.aliases)) if n in by_name), None)
        if rec is not None:
            ev = rec.get("evidence") if isinstance(rec.get("evidence"), Mapping) else None
            out.append(certify_input(calculator_id, spec, rec.get("value"), rec.get("unit"), "recorded", reader, ev,
                                     reading=rec))
            continue
        found, value, unit = entity_of(spec, entities or {})
        if spec.accessor == "opioid_list":
            value = D.opioid_value(entities or {})
            found = value is not None
        if spec.name.lower() in QUESTION_INPUTS and asked is not None:
            item = certify_input(calculator_id, spec, value, unit, "upstream" if found else "default", asked,
                                 quote_in="question")
        else:
            item = certify_input(calculator_id, spec, value, unit, "upstream" if found else "default", reader)
        if not found and item.verdict == "contradicts" and not _changes(calculator_id, entities or {}, spec, item):
            continue  # the derivation does not use it (another name of it is in the entities, or it decides nothing)
        out.append(item if upstream_used else replace(item, used=False))
    return out


def uses_upstream(calculator_id: int, entities: Mapping[str, Any] | None, records_inputs: bool, abstains: bool) -> bool:
    """Whether a row's derivation uses upstream's entities: always for a number; for an ``N/A``, only where its record
    records no input and the definition gives no value from the entities (the module docstring)."""
    return not abstains or (not records_inputs and compute(int(calculator_id), dict(entities or {})).value is None)


def _changes(calculator_id: int, entities: Mapping[str, Any], spec: InputSpec, item: InputEvidence) -> bool:
    """Whether the note's value of an input absent from the entities changes what the definition gives."""
    base = compute(int(calculator_id), dict(entities)).value
    return compute(int(calculator_id), {**entities, spec.name: item.note_entity}).value != base


def derived_from_evidence(items: Iterable[InputEvidence]) -> bool:
    """Whether every input the derivation uses is supported (by a quote or by the definition's convention for
    silence), and it uses one."""
    return row_verdict(items) == "certified"


def row_verdict(items: Iterable[InputEvidence | Mapping[str, Any]]) -> str:
    """``certified`` (every input the derivation uses supported, and it uses one), ``contradicted`` (such an
    input contradicted) or ``not_addressed``, of a row's inputs (:class:`InputEvidence` or their documents); an
    input its derivation does not use (``used`` false) decides nothing, and a row that uses none (an abstention
    resting on its justification alone) is ``not_addressed``."""
    used = [i for i in items if (i.get("used", True) if isinstance(i, Mapping) else i.used)]
    verdicts = {i["verdict"] if isinstance(i, Mapping) else i.verdict for i in used}
    if verdicts and verdicts <= {"supports"}:
        return "certified"
    return "contradicted" if "contradicts" in verdicts else "not_addressed"


__all__ = ["READABLE", "VERDICTS", "InputEvidence", "Note", "entity_of", "certify_input", "certify_row", "derived_from_evidence",
           "row_verdict", "uses_upstream"]
