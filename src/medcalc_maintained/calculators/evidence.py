"""Does a quote of the patient note state a recorded input? The one evidence verifier.

A derivation is only as good as the inputs it is applied to, and an input counts only where the
note states it. :func:`verify` reads one recorded input (``{name, value, unit, evidence: {start,
end, text}}``, optionally ``timepoint: {when, why}``) against the note and returns a
:class:`Verdict`: whether the quote supports the value, the rule that decided, and a reason a
reviewer can check. Every rule is listed in :data:`RULES`.

Names come from the lexicon beside this module (``lexicon.yaml``): per declared input the terms a
note uses for it (``names``), longer phrases that contain a term but mean something else
(``not``), word patterns (``patterns``) and, for choices, the phrases that state each option. Terms
match whole words (case-insensitive; a capitalised abbreviation of at most four characters, such as
``HR`` or ``Cr``, matches case-sensitively); nothing matches by word stem.

Numbers (``quantity`` and ``number`` inputs)
    the recorded value is printed in the quote; the number is attributed to the quantity a term
    names right after it (``74-year-old``, ``18 breaths per minute``) or else to the nearest term
    before it in its sentence (``temperature 36.8, HR 90``; a ``respectively`` list pairs names and
    numbers in order), and that quantity is the input; it is no bound of a reference range, no
    endpoint of a range, no denominator (``8/15``; a diastolic pressure is the denominator of a
    blood pressure) and no part of a date; a printed unit fits the input's unit kind and equals the
    recorded one, or the record declares how it reads it (``unit_reading: {printed, why}``: "5.3 g/l"
    read as g/dL); a value from another time (``two years ago``, ``baseline``, a date) needs a
    ``timepoint`` in the record saying which and why.
Flags (criteria), categories and absent values
    a present criterion is named by a term, not negated in its own clause (``no``, ``denies``,
    ``without``, ``negative for``, ``was ruled out`` ...), not planned or suspected (``scheduled for``,
    ``rule out``, ``suspected``) and not a relative's (``family history of``, ``mother``), unless the
    input is itself a family history; an absent criterion rests on a quote that negates it, or on
    silence where the definition decides an unmentioned criterion as absent (every ``flag`` input and
    every optional input of the calculators: ``Inputs.flag`` and ``required=False``) and the note
    names the criterion nowhere without negation; a category is named by its option's phrase.

A search may propose inputs; only this verifier certifies them (``ledger/reconstruct.py``,
``ledger/derivation.py``, the release contract ``evidence_supports_inputs``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from medcalc_maintained.calculators import lexicon as L
from medcalc_maintained.calculators import note_text as T
from medcalc_maintained.calculators.inputs import InputSpec, declared_inputs
from medcalc_maintained.core import units as U

RULES: dict[str, str] = {
    "supports": "the quote states the input's value",
    "quote-mismatch": "the quoted text is not the note's text at its offsets",
    "unknown-input": "the name is not a declared input of the calculator",
    "no-quote": "a value without a quote (only an absent criterion may quote nothing)",
    "not-named": "the quote names no term of the input's lexicon entry",
    "value-not-printed": "the recorded value is not printed in the quote",
    "bare-number": "the number is not attributed to any named quantity",
    "wrong-quantity": "the number belongs to another quantity named in its sentence",
    "reference-bound": "the number bounds a reference range",
    "range-endpoint": "the number is an endpoint of a range, not one value",
    "denominator": "the number is the denominator of a fraction (8/15)",
    "date-part": "the number is part of a date or a year",
    "unit-mismatch": "the printed unit does not fit the quantity or differs from the recorded unit",
    "timepoint": "the value is from another time and the record does not say which and why",
    "negated": "the criterion is negated in its own clause",
    "planned-or-suspected": "the criterion is planned, suspected or being ruled out, not established",
    "family-history": "the criterion is a relative's, not the patient's",
    "asserted-not-negated": "an absent value whose quote asserts the criterion",
    "absent-but-named": "an absent value the note names without negation elsewhere",
    "absent-by-missing-keyword": "an absent value without a negating quote, for a criterion or category the "
                                 "definition does not decide when unmentioned",
    "treatment-effect": "the finding is the effect of a treatment given, not the patient's condition",
    "outside-population": "the recorded age or sex puts the patient outside the population the calculator's source "
                          "publication states (calculators/populations.yaml)",
}


@dataclass(frozen=True)
class Verdict:
    """Whether a quote supports one recorded input, the rule of :data:`RULES` that decided, and why."""

    supports: bool
    rule: str
    reason: str

    def document(self) -> dict[str, Any]:
        return {"supports": self.supports, "rule": self.rule, "reason": self.reason}


def _ok(reason: str) -> Verdict:
    return Verdict(True, "supports", reason)


def _no(rule: str, reason: str) -> Verdict:
    return Verdict(False, rule, reason)


# ------------------------------------------------------------------------------------------------
# the verifier


def _spec(calculator_id: int, name: str) -> InputSpec | None:
    low = str(name).strip().lower()
    for spec in declared_inputs(int(calculator_id)):
        if spec.name.lower() == low or any(a.lower() == low for a in spec.aliases):
            return spec
    return None


def _is_absent(value: Any) -> bool:
    return value is None or value is False


def _number_verdict(spec: InputSpec, keys: set[str], inp: Mapping[str, Any], text: str, qs: int, qe: int) -> Verdict:
    """``text[qs:qe]`` is the quote; ``text`` is the note (or the quote alone), read around it."""
    value, unit = inp.get("value"), inp.get("unit")
    quote = text[qs:qe]
    hits = [(qs + s, qs + e) for s, e, v in T.numbers(quote) if T.same_number(v, value)]
    if not hits:
        return _no("value-not-printed", f"{value!r} is not printed in {quote!r}")
    sa, _ = T.sentence(text, qs)
    _, sb = T.sentence(text, max(qs, qe - 1))
    mentions = L.mentions(text, sa, sb)
    first_failure: Verdict | None = None
    for s, e in hits:
        v = _one_number(spec, keys, inp, text, qs, qe, s, e, mentions, value, unit)
        if v.supports:
            return v
        first_failure = first_failure or v
    assert first_failure is not None
    return first_failure


def _one_number(spec: InputSpec, keys: set[str], inp: Mapping[str, Any], quote: str, qs: int, qe: int, s: int, e: int,
                mentions: list[tuple[int, int, str]], value: Any, unit: Any) -> Verdict:
    printed = quote[s:e]
    for m in T.DATE.finditer(quote):
        if m.start() <= s and e <= m.end():
            return _no("date-part", f"{printed} is part of the date {m.group(0)!r}")
    dbp = spec.kind == "pressure" and "diastolic" in spec.name.lower()
    before = quote[max(0, s - 3):s]
    if re.search(r"\d\s*/\s*$", before) and not dbp:
        return _no("denominator", f"{printed} is the denominator of {quote[max(0, s - 8):e].strip()!r}")
    if re.search(r"\bout of\s*$", quote[max(0, s - 8):s], re.I):
        return _no("denominator", f"{printed} is the denominator of {quote[max(0, s - 12):e].strip()!r}")
    for m in re.finditer(r"[(\[][^()\[\]]*[)\]]", quote):
        if m.start() < s and e <= m.end():
            lead = quote[m.start():s]
            in_range = any(r.start() <= s and e <= r.end() for r in T.RANGE.finditer(quote, m.start(), m.end()))
            if in_range or T.REFERENCE_CUE.search(lead):
                return _no("reference-bound", f"{printed} lies in the reference range {m.group(0)!r}")
    for m in T.RANGE.finditer(quote):
        if m.start() <= s and e <= m.end():
            if T.REFERENCE_CUE.search(quote[max(0, m.start() - 25):m.start()]):
                return _no("reference-bound", f"{printed} bounds the reference range {m.group(0)!r}")
            return _no("range-endpoint", f"{printed} is an endpoint of the range {m.group(0)!r}, not one value")
    owner, at = T.attributed(quote, s, e, mentions, keys)
    if owner == T.RESPECTIVELY_UNPAIRED:
        return _no("wrong-quantity", f"{printed} is in a 'respectively' list whose names and numbers do not pair "
                                     f"one to one: {quote[slice(*T.sentence(quote, s))].strip()[:160]!r}")
    if owner is None:
        return _no("bare-number", f"{printed} in {quote!r} is attributed to no named quantity")
    if owner not in keys:
        term = next((quote[a:b] for a, b, k in mentions if a == at), owner)
        return _no("wrong-quantity", f"{printed} is the {term!r} of {quote[slice(*T.sentence(quote, s))].strip()[:160]!r}, "
                                     f"not {spec.name}")
    if at is None or not (qs <= at < qe):
        return _no("bare-number", f"{printed} is the {spec.name} of the note, but the quote "
                                  f"{quote[qs:qe]!r} does not name it")
    if dbp and re.search(r"\d\s*/\s*$", before) is None and re.search(r"^\s*/\s*\d", quote[e:e + 3]):
        return _no("wrong-quantity", f"{printed} is the systolic pressure of {quote[s:e + 6].strip()!r}, not {spec.name}")
    shown, norm = T.unit_after(quote, e)
    if norm is not None and _unit_reading_declared(inp, norm):
        norm = None  # the record says how it reads this printed unit ("5.3 g/l" read as g/dL) and why
    if norm is not None:
        if spec.accessor == "quantity" and spec.kind and norm not in U.known_units(spec.kind) and spec.kind != "rate":
            return _no("unit-mismatch", f"{printed} {shown} is not a unit of {spec.kind} ({', '.join(spec.units)})")
        if unit is not None and str(unit).strip() and spec.kind and U.normalise_unit(str(unit)) in U.known_units(spec.kind) \
                and U.normalise_unit(str(unit)) != norm and spec.kind != "rate":
            return _no("unit-mismatch", f"the quote prints {printed} {shown}, the record says {unit}")
    a = max(0, min(at if at is not None else s, s) - 30)
    sa, sb = T.sentence(quote, s)
    window = quote[max(a, sa):min(sb, e + 40)]
    but = re.compile(r"\bbut\b", re.I).search(quote, e, sb)
    initially = T.INITIALLY_BUT.search(quote, sa, s) if but else None
    cue = T.TIME_CUE.search(window) or T.STRONG_TIME_CUE.search(quote, sa, sb) or T.LATER_CUE.search(quote, sa, sb) or initially \
        or T.context_cue(quote, sa, s) or next(
            (m for m in T.DATE.finditer(window) if not (m.start() <= s - max(a, sa) < m.end())), None)
    if cue is not None and not _timepoint_stated(inp):
        return _no("timepoint", f"{printed} is dated {cue.group(0)!r}; the record does not say which time the "
                                "definition asks for and why this one")
    return _ok(f"{spec.name} {printed}{(' ' + str(shown)) if norm else ''} is named and printed in {quote[qs:qe]!r}")


def _unit_reading_declared(inp: Mapping[str, Any], printed: str) -> bool:
    """Whether the record declares how it reads the printed unit (``unit_reading: {printed, why}``)."""
    ur = inp.get("unit_reading")
    return isinstance(ur, Mapping) and U.normalise_unit(str(ur.get("printed") or "")) == printed \
        and bool(str(ur.get("why") or "").strip())


def _timepoint_stated(inp: Mapping[str, Any]) -> bool:
    tp = inp.get("timepoint")
    return isinstance(tp, Mapping) and bool(str(tp.get("when") or "").strip()) and bool(str(tp.get("why") or "").strip())


def _criterion_verdict(spec: InputSpec, entry: L.Entry, inp: Mapping[str, Any], text: str, qs: int, qe: int,
                       note: str | None, terms: tuple[str, ...]) -> Verdict:
    value = inp.get("value")
    if entry.absent_polarity and isinstance(value, bool):  # "Cough Absent = true" states that cough is absent
        value = not value
        inp = {**inp, "value": value}
    family_input = any(w in spec.name.lower() for w in ("family", "parent or sibling"))
    spans = [(qs + a, qs + b) for a, b in L.term_spans(text[qs:qe], terms, entry.masks, entry.patterns)]
    negating = [(qs + a, qs + b) for a, b in L.term_spans(text[qs:qe], entry.negating)] if entry.negating else []
    spans = [sp for sp in spans if not any(a <= sp[0] and sp[1] <= b for a, b in negating)]  # "quit smoking" negates
    quote = text[qs:qe]
    if _is_absent(value) and negating and quote.strip():
        return _ok(f"{quote!r} states {text[negating[0][0]:negating[0][1]]!r}: {spec.name} absent")
    if _is_absent(value):
        if quote.strip():
            wider = [(qs + a, qs + b) for a, b in L.term_spans(text[qs:qe], entry.broader)] if entry.broader else []
            if not spans and any(T.negated(text, a, b) for a, b in wider):
                return _ok(f"{quote!r} negates {text[wider[0][0]:wider[0][1]]!r}, which includes {spec.name}")
            if not spans:
                return _no("not-named", f"{quote!r} names no term of {spec.name}")
            if any(T.negated(text, s, e) for s, e in spans):
                return _ok(f"{quote!r} negates {spec.name}")
            return _no("asserted-not-negated", f"{quote!r} names {text[spans[0][0]:spans[0][1]]!r} without negating it")
        if spec.accessor in ("quantity", "number") and note is not None:
            stated = _stated_value(spec, note)
            if stated is not None and _timepoint_stated(inp):
                tp = inp["timepoint"]
                return _ok(f"the note prints {spec.name} {note[stated[0]:stated[1]]!r} only at another time than the "
                           f"definition asks ({tp['when']}: {tp['why']})")
            if stated is not None:
                return _no("absent-but-named", f"the note states {spec.name} {note[stated[0]:stated[1]]!r} at "
                                               f"{stated[0]}..{stated[1]}")
            return _ok(f"the note prints no value of {spec.name}: the measurement is absent")
        if not (spec.accessor == "flag" or not spec.required):
            return _no("absent-by-missing-keyword", f"{spec.name} is required by the definition: silence does not "
                                                    "make it absent")
        for s, e in L.term_spans(note or "", terms, entry.masks, entry.patterns):
            if not T.negated(note or "", s, e) and not T.planned(note or "", s) and (family_input or not T.family(note or "", s)):
                return _no("absent-but-named", f"the note names {note[s:e]!r} at {s}..{e} without negating it"
                                               if note else f"the note names {spec.name}")
        return _ok(f"the note does not name {spec.name} without negation; the definition scores an unmentioned "
                   f"criterion as absent")
    if not quote.strip():
        return _no("no-quote", f"{spec.name} = {value!r} quotes nothing")
    if not spans:
        if negating:
            return _no("negated", f"{text[negating[0][0]:negating[0][1]]!r} states {spec.name} absent")
        return _no("not-named", f"{quote!r} names no term of {spec.name} = {value!r}")
    window = bool(T.WINDOW.search(spec.name)) and not _timepoint_stated(inp)
    failure: Verdict | None = None
    for s, e in spans:
        term = text[s:e]
        clause = text[slice(*T.clause(text, s))].strip()[:200]
        if T.negated(text, s, e):
            failure = failure or _no("negated", f"{term!r} is negated in {clause!r}")
        elif T.planned(text, s):
            failure = failure or _no("planned-or-suspected", f"{term!r} is planned or suspected in {clause!r}")
        elif not family_input and T.family(text, s):
            failure = failure or _no("family-history", f"{term!r} is a relative's in {clause!r}")
        elif (effect := T.TREATMENT_EFFECT.search(text, e, T.clause(text, s)[1])) is not None:
            failure = failure or _no("treatment-effect", f"{term!r} is {effect.group(0)!r} in {clause!r}")
        elif (later := T.LATER_CUE.search(text, *T.clause(text, s))) and not _timepoint_stated(inp):
            failure = failure or _no("timepoint", f"{term!r} comes {later.group(0)!r} in {clause!r}, after the time the "
                                                  "definition asks about; the record does not say when and why")
        elif window and (cue := T.PAST_CUE.search(text, *T.near(text, s, e)) or T.STRONG_TIME_CUE.search(text, *T.near(text, s, e))):
            failure = failure or _no("timepoint", f"{spec.name} asks about a time window and {term!r} is dated "
                                                  f"{cue.group(0)!r} in {clause!r}; the record does not say when and why")
        else:
            return _ok(f"{quote!r} states {term!r}")
    assert failure is not None
    return failure


def _stated_value(spec: InputSpec, note: str) -> tuple[int, int] | None:
    """Where the note prints a value of a quantity (a number attributed to the input), or ``None``."""
    keys = L.keys_of(spec.name) | {a.lower() for a in spec.aliases}
    by_sentence: dict[tuple[int, int], list[tuple[int, int, str]]] = {}  # the mentions of each sentence, once
    for s, e, v in T.numbers(note):
        span = T.sentence(note, s)
        if span not in by_sentence:
            by_sentence[span] = L.mentions(note, *span)
        mentions = by_sentence[span]
        stub = {"name": spec.name, "value": v, "unit": None}
        if _one_number(spec, keys, stub, note, 0, len(note), s, e, mentions, v, None).supports:
            return s, e
    return None


def _option_terms(spec: InputSpec, entry: L.Entry | None, value: Any) -> tuple[str, ...]:
    low = str(value).strip().lower()
    phrases: list[str] = [str(value).strip()]
    if entry is not None:
        for opt, ps in entry.options:
            if opt == low:
                phrases += list(ps)
    return tuple(p for p in phrases if p)


def verify(calculator_id: int, inp: Mapping[str, Any], note: str | None) -> Verdict:
    """Whether the quote of one recorded input states its value (see the module docstring)."""
    name = str(inp.get("name") or "")
    spec = _spec(calculator_id, name)
    if spec is None:
        return _no("unknown-input", f"{name!r} is not a declared input of calculator {calculator_id}")
    raw = inp.get("evidence")
    ev: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    start, end, quote = ev.get("start"), ev.get("end"), str(ev.get("text") or "")
    if quote and note is not None and not (isinstance(start, int) and isinstance(end, int) and note[start:end] == quote):
        return _no("quote-mismatch", f"{quote[:60]!r} is not the note's text at {start}..{end}")
    entry = L.lexicon_entry(spec.name) or next((L.lexicon_entry(a) for a in spec.aliases if L.lexicon_entry(a)), None)
    value = inp.get("value")
    text, qs, qe = quote, 0, len(quote)
    if quote and note is not None and isinstance(start, int) and isinstance(end, int):
        text, qs, qe = note, start, end
    outside = _population_problem(calculator_id, spec, value, inp.get("unit"))
    if spec.accessor in ("quantity", "number") and not _is_absent(value):
        if not quote.strip():
            return _no("no-quote", f"{spec.name} = {value!r} quotes nothing")
        if entry is None or not (entry.names or entry.patterns):
            return _no("not-named", f"the lexicon has no terms for {spec.name}")
        v = _number_verdict(spec, L.keys_of(spec.name) | {a.lower() for a in spec.aliases}, inp, text, qs, qe)
        return _no("outside-population", outside) if v.supports and outside else v
    if spec.accessor == "choice" and not _is_absent(value):
        if not quote.strip():
            return _no("no-quote", f"{spec.name} = {value!r} quotes nothing")
        terms = _option_terms(spec, entry, value)
        fake = L.Entry(terms, entry.masks if entry else (), (), (), ())
        v = _criterion_verdict(spec, fake, {**inp, "value": True}, text, qs, qe, note, terms)
        return _no("outside-population", outside) if v.supports and outside else v
    if spec.accessor == "date" and not _is_absent(value):
        return _ok(f"{value} is printed in {quote!r}") if str(value) in quote or _date_in(quote, value) else \
            _no("value-not-printed", f"the date {value!r} is not printed in {quote!r}")
    if entry is None or not (entry.names or entry.patterns):
        return _no("not-named", f"the lexicon has no terms for {spec.name}")
    return _criterion_verdict(spec, entry, inp, text, qs, qe, note, entry.names)


def _population_problem(calculator_id: int, spec: InputSpec, value: Any, unit: Any) -> str | None:
    """Why a recorded age or sex puts the patient outside the calculator's declared population."""
    if spec.name.lower() not in ("age", "sex") or _is_absent(value):
        return None
    from medcalc_maintained.calculators.population import population_problems

    entity = [value, str(unit)] if unit and spec.name.lower() == "age" else value
    problems = population_problems(int(calculator_id), {spec.name: entity})
    return "; ".join(problems) or None


def _date_in(quote: str, value: Any) -> bool:
    from medcalc_maintained.core.answers import parse_answer

    want = parse_answer(str(value), "date")
    return any(parse_answer(m.group(0), "date").date == want.date for m in T.DATE.finditer(quote)
               if want.is_valid and not want.is_abstain)


def verify_inputs(calculator_id: int, inputs: Iterable[Mapping[str, Any]] | None, note: str | None) -> list[Verdict]:
    """The verdict of every recorded input, in order."""
    return [verify(calculator_id, i, note) for i in inputs or () if isinstance(i, Mapping)]


def rejected(calculator_id: int, inputs: Iterable[Mapping[str, Any]] | None, note: str | None
             ) -> list[tuple[Mapping[str, Any], Verdict]]:
    """The inputs the verifier does not accept, with their verdicts."""
    items = [i for i in inputs or () if isinstance(i, Mapping)]
    return [(i, v) for i, v in zip(items, verify_inputs(calculator_id, items, note)) if not v.supports]


def find_evidence(calculator_id: int, name: str, value: Any, unit: Any, note: str) -> dict[str, Any] | None:
    """A quote of ``note`` that the verifier accepts for ``name = value`` (the first sentence, or the
    first clause of one, that supports it), as an input; ``None`` when no sentence states it. A
    search that proposes: the verifier certifies."""
    starts = [0] + [m.end() for m in T.SENTENCE_END.finditer(note)]
    for a in starts:
        b_m = T.SENTENCE_END.search(note, a)
        b = b_m.start() if b_m else len(note)
        text = note[a:b]
        lead = len(text) - len(text.lstrip())
        a2, b2 = a + lead, a + len(text.rstrip())
        if b2 <= a2:
            continue
        inp = {"name": name, "value": value, "unit": unit, "evidence": {"start": a2, "end": b2, "text": note[a2:b2]}}
        if verify(calculator_id, inp, note).supports:
            return inp
    return None


def describe(inp: Mapping[str, Any], verdict: Verdict) -> str:
    """One line naming the input, its quote and the rule: what a reviewer reads."""
    raw = inp.get("evidence")
    ev: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    return (f"{inp.get('name')} = {inp.get('value')!r}{(' ' + str(inp['unit'])) if inp.get('unit') else ''} "
            f"quoting {str(ev.get('text') or '')[:120]!r}: {verdict.rule} ({verdict.reason})")


__all__ = ["RULES", "Verdict", "describe", "find_evidence", "rejected", "verify", "verify_inputs"]
