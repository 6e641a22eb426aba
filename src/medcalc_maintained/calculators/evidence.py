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

Numbers (``quantity`` and ``number`` inputs; :mod:`.evidence_quantity`)
    the recorded value is printed in the quote (or spelled, "four drinks"; or printed in another unit
    that converts to it at the record's precision: creatinine 120 µmol/L is 1.4 mg/dL, 7.5 x 10^9/L is
    7,500 /µL, through ``core/units.py``); the number is attributed to the quantity a term names right
    after it (``74-year-old``, ``18 breaths per minute``) or else to the nearest term before it in its
    sentence (``temperature 36.8, HR 90``; a ``respectively`` list and a slash list, ``BUN/creatinine
    21.9/1.98``, pair names and numbers in order (:mod:`.note_lists`: a slash pair is one value, a parenthesised
    number none, an item the lexicon does not know keeps its place), as does a list whose values follow its names
    directly, ``systolic and diastolic pressures of 118 and 74``; a dose ``each`` is every listed drug's, a dose just printed the next drug's that takes it by
    reference (``DOPamine ran at 4 mcg/kg/min, DOBUTamine at the same dosage``); a length or a
    mass alone names height or weight; an item of a list that a urine head leads, ``urine electrolytes were sodium 179
    mmol/L, creatinine 37 mg/dL``, is the urine's quantity, not the serum one; with no term before it in its sentence, a
    number whose unit is the input's is the one term's after it in its clause, ``at 2.3 mg/dL, his bilirubin level has
    spiked``, where no other value, comparison or change comes between or after), and
    that quantity is the input; it is no bound of a reference range, no endpoint of a range, no bound
    (``below 10``), no change (``an increase of 2``, ``rose 8``, ``an 8 mEq/L rise``, ``(−26)``), no mass lost or gained
    (``a 30 lb. weight loss``) or of an object (``lift a 2.3 kg weight``), no denominator (``8/15``; a diastolic
    pressure is the denominator of a blood pressure), no relative's age and no part of a date; a
    printed unit fits the input's unit kind and is the recorded one (``/µL`` and ``µL``, mmol/L and
    mEq/L of sodium are one unit; K/µL is not /µL), or the record declares how it reads it
    (``unit_reading: {printed, why}``: "5.3 g/l" read as g/dL); a serum urea in mmol/L is the blood urea nitrogen in
    mmol/L, and a urea in mg/dL states the BUN in mg/dL times 28.01/60.06 (urea 18 mg/dL is BUN 8.4), never the same
    number; a value from another time (``two years
    ago``, ``baseline``, a date, at birth, an age at an event, a value after another one of the same
    paragraph, or of an earlier paragraph when a later time lies between them (``the following day``, ``repeated``,
    ``transferred to our hospital``), a value after a transfer to the reporting hospital that followed a stay of days
    in another (``admitted to a nearby hospital ... transferred to our hospital on day 27``)) needs a ``timepoint`` in
    the record saying which and why; ``N-year-old`` is the age now; a time cue dates its own item of a list, not
    another's (``creatinine 2.3 (baseline 1.1), albumin 1.5``; ``glucose 17, baseline insulin 0.4``; ``bilirubin 2.4 -
    later 5.1, albumin 3.8``), a day of the illness is no hospital day, the day of admission and a first visit are the
    presentation, and repeated attempts are no later time. A count per week is no count per day (``one beer a day``);
    a count of none is stated by a denial of its use (``denies any tobacco or alcohol consumption``, ``does not drink``),
    never of an excess, a consequence or a test (``denies heavy alcohol use``, ``no alcohol-related ...``). An absent
    measurement is one the note prints no value of, nor a range of (``creatinine 10–15``). A percentile or a z-score
    (``at the 25th percentile``, ``height SDS 2.5``), a value aimed at (``a target weight of 70 kg``, except for a
    calculator of a target), a bound written after the value (``2.0 mg/dL or higher``) and an age ``at N years`` or ``when
    she was N years old`` outside the presentation state no value now.
Flags (criteria), categories and absent values
    a present criterion is named by a term, not negated in its own clause (``no``, ``denies``,
    ``without``, ``negative for``, ``void of``, ``was ruled out``, ``... is normal``, ``... were
    negative``, ``... was not performed``, ``... unremarkable``, ``... had resolved`` (before the admission), a list that ends
    in ``were ruled out`` ...; a term named as the exception, ``apart from X, the exam was unremarkable``, is not negated; a negation's scope ends at a relative clause that describes
    another noun: ``never prescribed any medication known to accelerate bleeding`` negates no bleeding), not planned,
    suspected or a generic risk (``scheduled for``, ``rule out``, ``suspected``, ``known to cause``) or one of two diagnoses
    (``admitted with diagnosis of NSTEMI or myocarditis``), not an event
    before the onset of the illness (``one day before the onset of symptoms``) or after the time asked (``later``,
    ``the following day``, ``and discharged``), and not a relative's (``family history of``, ``mother``; a relative who
    only brings or accompanies the patient is not one), unless the input is itself a family history; a
    previously documented condition is named in a historical context, and a history is not negated by a
    test of now (``PE was ruled out``); an input about a time window is not met by a mention dated outside it, and an
    absent criterion rests on a quote that negates it or on the note's silence (:mod:`.evidence_absence`); a finding
    named new at this visit (``a new pulmonary embolism``) is no previously documented one; a category is named by its
    option's phrase, a true or false of a choice the calculator also scores as a boolean by the options it is scored as,
    and a choice the definition takes for an unstated input rests on silence (:mod:`.evidence_options`, with the best
    responses of the GCS); the HEART initial troponin is stated also by its value over the reference limit printed
    right after it, in one unit (``911 ng/L (cut off <24ng/L)``: more than three times); a sex also by the patient's
    pronouns (``her evaluation``) where the note names no sex by a word and uses no pronoun of the other sex
    (:mod:`.evidence_readings`).

Dosed drugs (the steroid conversion's ``input steroid`` and ``target steroid``, the MME's ``opioids``; :mod:`.evidence_dose`)
    the quote names the drug (generic or brand) and prints its dose with its unit (for an opioid also how
    many times a day); a route the quote states is the input's, and one it does not state is read only
    where the conversion does not depend on it. ``target steroid`` is the steroid the quote converts
    to, which the row's question states.

Narrow near-miss readings (:mod:`.evidence_precision`)
    another person as partner, donor, roommate, contact or plural relative, ``ran in the family``, ``FH:``;
    ``X (-)``, ``X - denies``, ``X? No``, ``X was disproved``, ``X was never reported``, ``A, X and B: negative``; a
    double negation (``X could not be ruled out``) states X neither present nor absent; ``to screen for X``; a multiple
    of a limit, an amount given and a level of another fluid are no level; ``at a prior visit`` is another encounter.

A search may propose inputs; only this verifier certifies them (``ledger/reconstruct.py``,
``ledger/derivation.py``, the release contract ``evidence_supports_inputs``).
"""

from __future__ import annotations

import hashlib
import pickle
from typing import Any, Iterable, Mapping

from medcalc_maintained.calculators import evidence_absence as A
from medcalc_maintained.calculators import evidence_dose as D
from medcalc_maintained.calculators import evidence_options as O
from medcalc_maintained.calculators import evidence_precision as EP
from medcalc_maintained.calculators import evidence_quantity as Q
from medcalc_maintained.calculators import evidence_readings as R
from medcalc_maintained.calculators import lexicon as L
from medcalc_maintained.calculators import note_text as T
from medcalc_maintained.calculators.evidence_options import SILENCE_OPTIONS, silence_option
from medcalc_maintained.calculators.inputs import InputSpec, declared_inputs
from medcalc_maintained.calculators.verdict import RULES, Verdict, timepoint_stated
from medcalc_maintained.calculators.verdict import no as _no
from medcalc_maintained.calculators.verdict import ok as _ok

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

def _criterion_verdict(spec: InputSpec, entry: L.Entry, inp: Mapping[str, Any], text: str, qs: int, qe: int,
                       note: str | None, terms: tuple[str, ...]) -> Verdict:
    value = inp.get("value")
    if entry.absent_polarity and value is None:
        # a finding's absence left out of the entities is scored unmet (Centor, FeverPAIN: ``_any`` of a missing key
        # is False): read it as recorded False, never as the finding absent
        value = False
        inp = {**inp, "value": False}
    absence_claimed = entry.absent_polarity and value is True  # "Cough Absent = true" states that cough is absent
    if entry.absent_polarity and isinstance(value, bool):
        value = not value
        inp = {**inp, "value": value}
    family_input = any(w in spec.name.lower() for w in ("family", "parent or sibling"))
    history = bool(T.HISTORY_INPUT.search(spec.name))
    timeless = history or spec.name.lower() == "sex"
    previously = spec.name.lower().startswith(("previously documented", "previous "))
    spans = [(qs + a, qs + b) for a, b in L.term_spans(text[qs:qe], terms, entry.masks, entry.patterns)]
    negating = [(qs + a, qs + b) for a, b in L.term_spans(text[qs:qe], entry.negating)] if entry.negating else []
    spans = [sp for sp in spans if not any(a <= sp[0] and sp[1] <= b for a, b in negating)]  # "quit smoking" negates
    quote = text[qs:qe]
    if _is_absent(value) and negating and quote.strip():
        return _ok(f"{quote!r} states {text[negating[0][0]:negating[0][1]]!r}: {spec.name} absent")
    if _is_absent(value):
        if quote.strip():
            window = bool(T.WINDOW.search(spec.name)) and not timepoint_stated(inp)
            return A.absent_quoted(spec, entry, text, qs, qe, spans, history, window)
        return A.absent_silent(spec, entry, inp, note, terms, absence_claimed, family_input, timeless)
    if not quote.strip() and entry.absent_polarity and not absence_claimed:
        return A.absence_unmet(spec, entry, note, terms)
    if not quote.strip():
        return _no("no-quote", f"{spec.name} = {value!r} quotes nothing")
    if not spans:
        if negating:
            return _no("negated", f"{text[negating[0][0]:negating[0][1]]!r} states {spec.name} absent")
        return _no("not-named", f"{quote!r} names no term of {spec.name} = {value!r}")
    window = bool(T.WINDOW.search(spec.name)) and not timepoint_stated(inp)
    failure: Verdict | None = None
    for s, e in spans:
        term = text[s:e]
        clause = text[slice(*T.clause(text, s))].strip()[:200]
        if T.negated(text, s, e) or EP.negation_after(text, s, e):
            failure = failure or _no("negated", f"{term!r} is negated in {clause!r}")
        elif T.planned(text, s, e) or EP.screened_for(text, s):
            failure = failure or _no("planned-or-suspected", f"{term!r} is planned or suspected in {clause!r}")
        elif not family_input and (T.family(text, s, e) or EP.other_person(text, s, e)):
            failure = failure or _no("family-history", f"{term!r} is a relative's in {clause!r}")
        elif (effect := T.TREATMENT_EFFECT.search(text, e, T.clause(text, s)[1])) is not None:
            failure = failure or _no("treatment-effect", f"{term!r} is {effect.group(0)!r} in {clause!r}")
        elif not timeless and (later := T.LATER_CUE.search(text, *T.clause(text, s))
                               or T.PRE_ONSET.search(text, *T.clause(text, s))) and not timepoint_stated(inp):
            failure = failure or _no("timepoint", f"{term!r} comes {later.group(0)!r} in {clause!r}, at another time than "
                                                  "the definition asks about; the record does not say when and why")
        elif window and (cue := A.window_cue(text, s, e) or (None if A.CURRENT_STATE.search(spec.name) else A.history_cue(text, s, e))):
            failure = failure or _no("timepoint", f"{spec.name} asks about a time window and {term!r} is dated "
                                                  f"{cue.group(0)!r} in {clause!r}; the record does not say when and why")
        elif previously and (fresh := A.NEW_FINDING.search(text[max(T.clause(text, s)[0], s - 30):s])) \
                and not (T.YEARS_AGO.search(text, *T.sentence(text, s)) or T.FAR_PAST.search(text, *T.sentence(text, s))):
            failure = failure or _no("timepoint", f"{spec.name} asks for a previously documented condition and {term!r} "
                                                  f"is {fresh.group(0).strip()!r} in {clause!r}: this visit's finding")
        elif previously and not T.HISTORICAL.search(text, *T.sentence(text, s)):
            failure = failure or _no("timepoint", f"{spec.name} asks for a previously documented condition and "
                                                  f"{clause!r} states {term!r} with no word of its history")
        else:
            return _ok(f"{quote!r} states {term!r}")
    assert failure is not None
    return failure


VERDICTS_REMEMBERED = 100_000  # verdicts one process keeps (each a few hundred bytes)
_verdicts: dict[bytes, Verdict] = {}  # a call's digest -> its verdict


def verify(calculator_id: int, inp: Mapping[str, Any], note: str | None) -> Verdict:
    """Whether the quote of one recorded input states its value (see the module docstring).

    A verdict is a function of the arguments alone (and of the lexicon, read once per process), so a
    call this process made before is answered from its memo: every release of ``release-tables``
    re-reads the same recorded inputs of the same notes."""
    try:
        key = hashlib.sha256(pickle.dumps((calculator_id, _canonical(inp), note),
                                          protocol=pickle.HIGHEST_PROTOCOL)).digest()
    except (pickle.PicklingError, TypeError, AttributeError):  # an argument pickle cannot write: read it anew
        return _verdict(calculator_id, inp, note)
    known = _verdicts.get(key)
    if known is None:
        known = _verdict(calculator_id, inp, note)
        if len(_verdicts) >= VERDICTS_REMEMBERED:
            _verdicts.clear()
        _verdicts[key] = known
    return known


def forget() -> None:
    """Forget every verdict this process gave and the lexicon's cached scans: for a caller that replaces the
    verifier's rules at run time (``benchmarks/evidence_context.py``), whose verdicts the memo would otherwise
    answer with the rules' of before."""
    _verdicts.clear()
    L.forget_scans()


def _canonical(value: Any) -> Any:
    """``value`` with every mapping's items in key order (a mapping is read by key, so two that differ only in
    order are one input); lists and tuples stay apart, as does every other value pickle writes."""
    if isinstance(value, Mapping):
        return ("mapping", tuple(sorted(((k, _canonical(v)) for k, v in value.items()), key=lambda kv: repr(kv[0]))))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(_canonical(v) for v in value))
    return value


def _verdict(calculator_id: int, inp: Mapping[str, Any], note: str | None) -> Verdict:
    v = _verify(calculator_id, inp, note)
    value = inp.get("value")
    if not v.supports and (lspec := _spec(calculator_id, str(inp.get("name") or ""))) is not None \
            and lspec.name.lower() in O.LEVEL_GRADES and (level := O.level_grade(lspec, inp, note)) is not None:
        return level
    spec = _spec(calculator_id, str(inp.get("name") or "")) if isinstance(value, bool) and not v.supports else None
    if spec is None or spec.accessor != "choice" or spec.name.lower() not in O.BOOLEAN_CHOICES:
        return v
    present, absent, higher = O.BOOLEAN_CHOICES[spec.name.lower()]
    if value is True:  # a term names the input, unnegated, in the quote that states the option true is scored as
        entry = L.lexicon_entry(spec.name)
        raw = inp.get("evidence")
        ev: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
        start, end, quote = ev.get("start"), ev.get("end"), str(ev.get("text") or "")
        if entry is None or not quote.strip():
            return v
        text, qs, qe = quote, 0, len(quote)
        if note is not None and isinstance(start, int) and isinstance(end, int):
            text, qs, qe = note, start, end
        named = _criterion_verdict(spec, entry, inp, text, qs, qe, note, entry.names)
        if not named.supports:
            return named
        for opt in higher:
            if _verify(calculator_id, {**inp, "value": opt}, note).supports:
                return _no("other-option", f"{quote[:160]!r} states {opt!r}, which {spec.name} = true does not score")
    for opt in present if value is True else absent:
        w = _verify(calculator_id, {**inp, "value": opt}, note)
        if w.supports:
            return _ok(f"{w.reason}; {spec.name} = {value} is scored as {opt!r}")
    return v


def _verify(calculator_id: int, inp: Mapping[str, Any], note: str | None) -> Verdict:
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
    if (spec.accessor in D.ACCESSORS or spec.name.lower() in D.TARGET_INPUTS) and not _is_absent(value):
        if not quote.strip():
            return _no("no-quote", f"{spec.name} = {value!r} quotes nothing")
        return D.dose_verdict(spec, value, text, qs, qe)
    if spec.accessor in ("quantity", "number") and not _is_absent(value):
        if not quote.strip():
            return _no("no-quote", f"{spec.name} = {value!r} quotes nothing")
        if entry is None or not (entry.names or entry.patterns):
            return _no("not-named", f"the lexicon has no terms for {spec.name}")
        v = Q.number_verdict(spec, L.keys_of(spec.name) | {a.lower() for a in spec.aliases}, inp, text, qs, qe,
                             aimed=_asks_for_a_target(calculator_id))
        return _no("outside-population", outside) if v.supports and outside else v
    if spec.accessor == "choice" and not _is_absent(value):
        if not quote.strip() and silence_option(calculator_id, spec, value) and entry is not None:
            v = _criterion_verdict(spec, entry, {**inp, "value": None}, text, qs, qe, note, entry.names)
            done = next((m for m in O.PROCEDURE.finditer(note or "") if not T.negated(note or "", m.start(), m.end())), None)
            if v.supports and done is not None:
                return _no("absent-but-named", f"the note names the procedure {done.group(0)!r} at {done.start()}..{done.end()}: "
                                               f"{spec.name} is not left unstated")
            return _ok(f"the note names no {spec.name} without negation: the definition takes an unstated "
                       f"{spec.name} as {str(value).strip()!r}") if v.supports else v
        if not quote.strip():
            return _no("no-quote", f"{spec.name} = {value!r} quotes nothing")
        terms = O.option_terms(spec, entry, value)
        fake = L.Entry(terms, (entry.masks + O.other_options(entry, terms)) if entry else (), (), (), ())
        v = _criterion_verdict(spec, fake, {**inp, "value": True}, text, qs, qe, note, terms)
        v = (O.option_problem(spec, entry, value, text, qs, qe, terms) or v) if v.supports else v
        if not v.supports and entry is not None and spec.name.lower() == "initial troponin":
            v = _troponin_against_limit(spec, entry, inp, value, text, qs, qe, note) or v
        if not v.supports and entry is not None and spec.name.lower() == "sex" and note is not None:
            v = R.sex_by_pronouns(entry, value, text, qs, qe, note) or v
        if not v.supports and entry is not None and entry.names and str(value).strip().lower() in O.ABSENT_OPTIONS:
            # "no notable ascites": the option that states the finding absent, read as the finding negated
            negation = _criterion_verdict(spec, entry, {**inp, "value": False}, text, qs, qe, note, entry.names)
            v = negation if negation.supports else v
        return _no("outside-population", outside) if v.supports and outside else v
    if spec.accessor == "date" and not _is_absent(value):
        return _ok(f"{value} is printed in {quote!r}") if str(value) in quote or _date_in(quote, value) else \
            _no("value-not-printed", f"the date {value!r} is not printed in {quote!r}")
    if entry is None or not (entry.names or entry.patterns):
        return _no("not-named", f"the lexicon has no terms for {spec.name}")
    return _criterion_verdict(spec, entry, inp, text, qs, qe, note, entry.names)


def _asks_for_a_target(calculator_id: int) -> bool:
    """Whether the calculator computes from a value aimed at (the target weight, from a target BMI)."""
    from medcalc_maintained.calculators.policy import load_policy

    return "target" in str((load_policy().get(int(calculator_id)) or {}).get("name") or "").lower()


def _troponin_against_limit(spec: InputSpec, entry: L.Entry, inp: Mapping[str, Any], value: Any, text: str, qs: int,
                            qe: int, note: str | None) -> Verdict | None:
    """The HEART troponin as a multiple of its printed reference limit (``R.troponin_readings``), its term read as any
    criterion is (not negated, planned, a relative's or later)."""
    for s, e, sb, end, ratio, bare in R.troponin_readings(entry, str(value), spec.options, text, qs, qe):
        if _criterion_verdict(spec, L.Entry((text[s:e],), entry.masks, (), (), ()), {**inp, "value": True}, bare, s, sb,
                              note, (text[s:e],)).supports:
            return _ok(f"{text[s:end]!r} prints the troponin at {ratio:.3g} times the upper limit of its reference: {value}")
    return None


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


__all__ = ["RULES", "SILENCE_OPTIONS", "Verdict", "describe", "find_evidence", "forget", "rejected", "silence_option", "verify",
           "verify_inputs"]
