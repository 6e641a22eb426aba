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
    test of now (``PE was ruled out``); an input about a time window (``recent``, ``in the last month``, the RCRI's
    elevated-risk surgery, which is the surgery at hand) is not met by a mention dated in the past (``CABG eight years
    ago``), nor denied by one dated after the note's dated presentation (``On June 23th, ... wedge resection``) nor negated
    by a negation dated years back (``surgical treatment was not performed``, five years ago, is no recent surgery's
    absence), nor, for an event of a recent window, by an undated history (``a history of knee surgery``,
    ``Surgical history: cholecystectomy``) unless it is the presenting illness (``a 2-day history of fever``); a finding
    named new at this visit (``a new pulmonary embolism``) is no previously documented one; an absent criterion rests on a quote that negates it, or on
    silence where the definition decides an unmentioned criterion as absent (every ``flag`` input and
    every optional input of the calculators: ``Inputs.flag`` and ``required=False``) and the note
    names the criterion nowhere without negation; a criterion that is a finding's absence (``Cough Absent``) is unmet by
    silence, unless the note states the finding absent somewhere (left out of the entities, it is read as recorded unmet,
    as its calculator scores it); a choice the definition takes for an unstated input (:data:`SILENCE_OPTIONS`: APACHE
    II's nonoperative admission) rests on silence as an absent criterion does, where the note names no
    operation (a surgery term or a procedure, ``laparotomy``); a category is named by its option's phrase, not inside a longer
    phrase of another option that negates it (``non-exertional chest pain`` states no ``exertional chest pain``), an
    option that states the finding absent, such as ``absent`` ascites, also by the finding negated; a true or false of a
    choice the calculator also scores as a boolean (:data:`BOOLEAN_CHOICES`: ``Solid tumor = true`` is a localized one) is
    stated by the phrases of the options it is scored as, a true also by a term that names the input and no higher grade;
    the HEART initial troponin also by its value over the reference limit printed right after it, in one unit
    (``911 ng/L (cut off <24ng/L)``: more than three times); a sex also by the patient's pronouns (``her evaluation``)
    where the note names no sex by a word and uses no pronoun of the other sex; a best response (a
    GCS component) is not stated by a sentence that also states, unnegated, a more specific reading of it or a better
    response (``speech was disjointed and included inappropriate words`` is inappropriate words, not confused;
    ``unresponsive to verbal stimuli but moaned`` makes sounds), and ``not testable`` is not stated by an examination
    that could not be done unless the quote names the component; a failed response (``unresponsive to painful stimuli``)
    states no response to it, and an eye response is stated only where the eyes are named.

Dosed drugs (the steroid conversion's ``input steroid`` and ``target steroid``, the MME's ``opioids``; :mod:`.evidence_dose`)
    the quote names the drug (generic or brand) and prints its dose with its unit (for an opioid also how
    many times a day); a route the quote states is the input's, and one it does not state is read only
    where the conversion does not depend on it. ``target steroid`` is the steroid the quote converts
    to, which the row's question states.

A search may propose inputs; only this verifier certifies them (``ledger/reconstruct.py``,
``ledger/derivation.py``, the release contract ``evidence_supports_inputs``).
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Mapping

from medcalc_maintained.calculators import evidence_dose as D
from medcalc_maintained.calculators import evidence_quantity as Q
from medcalc_maintained.calculators import evidence_readings as R
from medcalc_maintained.calculators import lexicon as L
from medcalc_maintained.calculators import note_text as T
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
            return _absent_quoted(spec, entry, text, qs, qe, spans, history, window)
        return _absent_silent(spec, entry, inp, note, terms, absence_claimed, family_input, timeless)
    if not quote.strip() and entry.absent_polarity and not absence_claimed:
        return _absence_unmet(spec, entry, note, terms)
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
        if T.negated(text, s, e):
            failure = failure or _no("negated", f"{term!r} is negated in {clause!r}")
        elif T.planned(text, s, e):
            failure = failure or _no("planned-or-suspected", f"{term!r} is planned or suspected in {clause!r}")
        elif not family_input and T.family(text, s, e):
            failure = failure or _no("family-history", f"{term!r} is a relative's in {clause!r}")
        elif (effect := T.TREATMENT_EFFECT.search(text, e, T.clause(text, s)[1])) is not None:
            failure = failure or _no("treatment-effect", f"{term!r} is {effect.group(0)!r} in {clause!r}")
        elif not timeless and (later := T.LATER_CUE.search(text, *T.clause(text, s))
                               or T.PRE_ONSET.search(text, *T.clause(text, s))) and not timepoint_stated(inp):
            failure = failure or _no("timepoint", f"{term!r} comes {later.group(0)!r} in {clause!r}, at another time than "
                                                  "the definition asks about; the record does not say when and why")
        elif window and (cue := _window_cue(text, s, e) or (None if CURRENT_STATE.search(spec.name) else _history_cue(text, s, e))):
            failure = failure or _no("timepoint", f"{spec.name} asks about a time window and {term!r} is dated "
                                                  f"{cue.group(0)!r} in {clause!r}; the record does not say when and why")
        elif previously and (fresh := NEW_FINDING.search(text[max(T.clause(text, s)[0], s - 30):s])) \
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

def _window_cue(text: str, s: int, e: int) -> re.Match[str] | None:
    """The cue that dates a mention at ``text[s:e]`` outside a recent window (``in the past``, ``8 years ago``, a hospital
    day, a year or a date in a sentence that does not state the presentation), or ``None``."""
    return T.PAST_CUE.search(text, *T.near(text, s, e)) or T.STRONG_TIME_CUE.search(text, *T.near(text, s, e)) \
        or T.DAY_CUE.search(text, *T.sentence(text, s)) \
        or (T.YEAR_OR_DATE.search(text, *T.sentence(text, s)) if not T.PRESENTED.search(text, *T.sentence(text, s)) else None)


# a finding named as new at this visit: no previously documented one ("a new pulmonary embolism", "newly diagnosed DVT")
NEW_FINDING = re.compile(r"\b(?:new|newly (?:diagnosed|detected|found|identified)|new-onset|acute|fresh)\s+(?:[\w-]+\s+){0,2}$", re.I)
# a mention as the patient's history, with no date: no event of a recent window ("a history of knee surgery", "past
# surgical history includes", "as a child")
HISTORY_OF = re.compile(r"\b(?:history of|h/o|(?:past )?(?:medical|surgical) history|PMH|PSH|as a child|in (?:his|her) childhood)\b",
                        re.I)
# a time in days or weeks, or a recent word, near a mention: the history is dated inside a window ("a history of surgery
# two weeks ago")
DATED_RECENTLY = re.compile(r"\b(?:\d+|a|one|two|three|four|five|six|seven|several|a few)[\s-]+(?:hours?|days?|weeks?)\b|\blast week\b|"
                            r"\bthis (?:week|month)\b", re.I)


# "presented with a history of", "a 2-day history of": the presenting illness, not the patient's past
PRESENTING_HISTORY = re.compile(r"(?:\b(?:present(?:ed|s|ing)|admitted|came|complain(?:ed|s|ing)?|reported|reports)\s+(?:\w+\s+)?"
                                r"(?:with|of)\s+(?:an?\s+)?(?:\w+\s+)?|[\s-](?:hours?|days?|weeks?)[\s-]*)$", re.I)


def _history_cue(text: str, s: int, e: int) -> re.Match[str] | None:
    """For an input about an event of a recent window (not a current state): the words that name a mention as the
    patient's undated history (:data:`HISTORY_OF`), unless its clause places it in a window (``recent``, ``two weeks
    ago``); ``None`` otherwise."""
    ca, cb = T.clause(text, s)
    sa, _ = T.sentence(text, s)
    heading = HISTORY_OF.match(text, sa + len(text[sa:s]) - len(text[sa:s].lstrip()))  # "Surgical history: cholecystectomy"
    heading = heading if heading and re.match(r"\s*:", text[heading.end():heading.end() + 3]) else None
    cue = HISTORY_OF.search(text, max(ca, s - 60), s) or HISTORY_OF.search(text, e, min(cb, e + 30)) or heading
    if cue is None or T.RECENT.search(text, ca, cb) or DATED_RECENTLY.search(text, ca, cb) \
            or PRESENTING_HISTORY.search(text[max(ca, cue.start() - 40):cue.start()]):
        return None
    return cue


def _outside_window(text: str, s: int, e: int, current: bool = False) -> bool:
    """Whether a mention is dated outside every recent window an input asks about: years back (``20 years ago``, ``in
    the past``, ``remote``, a year two or more before the latest the note prints) or after the time asked (``later``,
    ``the following day``); a mention placed in the window (``recent``) or dated in weeks or months is not. For an input
    about a current state (``active cancer``), also a condition named as a former one (``prior breast cancer``)."""
    ca, cb = T.clause(text, s)
    if T.RECENT.search(text, ca, cb):
        return False
    sa, sb = T.sentence(text, s)
    years = [int(y) for y in re.findall(r"\b(?:19|20)\d{2}\b", text)]
    old = [int(y) for y in re.findall(r"\b(?:19|20)\d{2}\b", text[T.sentence(text, max(0, sa - 2))[0]:sb])]
    former = current and re.search(r"\b(?:prior|previous|former|past)\s+(?:\w+\s+){0,2}$", text[max(sa, s - 40):s], re.I)
    return bool(former or T.YEARS_AGO.search(text, *T.near(text, s, e)) or T.FAR_PAST.search(text, *T.near(text, s, e))
                or (old and years and max(old) <= max(years) - 2) or T.LATER_CUE.search(text, ca, cb)
                or R.dated_after_presentation(text, s))


def _absent_silent(spec: InputSpec, entry: L.Entry, inp: Mapping[str, Any], note: str | None, terms: tuple[str, ...],
                   absence_claimed: bool, family_input: bool, timeless: bool) -> Verdict:
    """An absent input that quotes nothing: a measurement the note never prints (or prints only at a
    stated other time), a criterion the note never names unnegated (or names only at a stated other
    time), a required category recorded ``null`` (not stated) that the note never names at all; a required
    input recorded absent or a finding's absence is never met by silence."""
    if spec.accessor in ("quantity", "number") and note is not None:
        stated = Q.stated_value(spec, note)
        if stated is not None and timepoint_stated(inp):
            tp = inp["timepoint"]
            return _ok(f"the note prints {spec.name} {note[stated[0]:stated[1]]!r} only at another time than the "
                       f"definition asks ({tp['when']}: {tp['why']})")
        if stated is not None:
            return _no("absent-but-named", f"the note states {spec.name} {note[stated[0]:stated[1]]!r} at "
                                           f"{stated[0]}..{stated[1]}")
        return _ok(f"the note prints no value of {spec.name}: the measurement is absent")
    if not (spec.accessor == "flag" or not spec.required):
        if spec.accessor == "choice" and inp.get("value") is None and note is not None:
            return _not_stated(spec, entry, note)
        return _no("absent-by-missing-keyword", f"{spec.name} is required by the definition: silence does not "
                                                "make it absent")
    if absence_claimed:  # the criterion is a finding's absence: silence leaves it unmet, never met
        return _no("absent-by-missing-keyword", f"{spec.name} is met only where the note states the finding "
                                                "absent; silence states neither")
    window = bool(T.WINDOW.search(spec.name))
    for s, e in L.term_spans(note or "", terms, entry.masks, entry.patterns):
        if window and _outside_window(note or "", s, e, bool(CURRENT_STATE.search(spec.name))):
            continue  # "cholecystectomy in 1959" names no surgery of the last four weeks
        if not T.negated(note or "", s, e) and not T.planned(note or "", s, e) and (family_input or not T.family(note or "", s)):
            if timepoint_stated(inp) and not timeless:  # as for a measurement printed only at another time
                tp = inp["timepoint"]
                return _ok(f"the note names {note[s:e]!r} only at another time than the definition asks "
                           f"({tp['when']}: {tp['why']})" if note else f"{spec.name} at another time")
            return _no("absent-but-named", f"the note names {note[s:e]!r} at {s}..{e} without negating it"
                                           if note else f"the note names {spec.name}")
    return _ok(f"the note does not name {spec.name} without negation; the definition scores an unmentioned "
               f"criterion as absent")


def _not_stated(spec: InputSpec, entry: L.Entry, note: str) -> Verdict:
    """A required category recorded ``null`` (not stated: the definition gives no value, the reason of an N/A):
    met only where the note names neither the input nor any of its options anywhere, even negated ("no ECG was
    done" is a quote to record, not silence)."""
    terms = entry.names + tuple(p for _, ps in entry.options for p in ps)
    named = L.term_spans(note, terms, entry.masks, entry.patterns)
    if named:
        s, e = named[0]
        return _no("absent-but-named", f"the note names {note[s:e]!r} at {s}..{e}: {spec.name} is not unstated")
    return _ok(f"the note never names {spec.name} nor any of its options: a required input it does not state")


def _absence_unmet(spec: InputSpec, entry: L.Entry, note: str | None, terms: tuple[str, ...]) -> Verdict:
    """A criterion that is a finding's absence ("Cough Absent") recorded unmet with no quote: met only where the note
    states the finding absent, so silence leaves it unmet unless the note negates the finding somewhere."""
    text = note or ""
    for s, e in L.term_spans(text, terms, entry.masks, entry.patterns):
        if T.negated(text, s, e) and not T.family(text, s):
            return _no("negated", f"the note states {text[s:e]!r} absent at {s}..{e} "
                                  f"({text[slice(*T.clause(text, s))].strip()[:120]!r}): {spec.name} is met")
    if entry.negating and L.term_spans(text, entry.negating):
        a, b = L.term_spans(text, entry.negating)[0]
        return _no("negated", f"the note states {text[a:b]!r} at {a}..{b}: {spec.name} is met")
    return _ok(f"the note never states the finding of {spec.name} absent: the criterion is unmet")


def _absent_quoted(spec: InputSpec, entry: L.Entry, text: str, qs: int, qe: int, spans: list[tuple[int, int]],
                   history: bool, window: bool = False) -> Verdict:
    """An absent criterion with a quote: the quote negates it (or a wider term that includes it); for an input about
    a recent window, a negation of years ago ("surgery was not performed" in a paragraph dated five years ago) says
    nothing of the window."""
    quote = text[qs:qe]
    wider = [(qs + a, qs + b) for a, b in L.term_spans(quote, entry.broader)] if entry.broader else []
    if not spans and any(T.negated(text, a, b) for a, b in wider):
        return _ok(f"{quote!r} negates {text[wider[0][0]:wider[0][1]]!r}, which includes {spec.name}")
    if not spans:
        return _no("not-named", f"{quote!r} names no term of {spec.name}")
    negated = [(s, c) for s, c in ((s, T.negation_cue(text, s, e)) for s, e in spans) if c]
    cues = [c for _, c in negated]
    if cues and history and all(T.TEST_NEGATION.search(c) or T.TEST_CONTEXT.search(text, T.clause(text, s)[0], s)
                                for s, c in negated):
        return _no("asserted-not-negated", f"{quote!r} negates {spec.name} now ({cues[0]!r}), which says nothing "
                                           "of the history the input asks about")
    if cues and window and (old := _dated_years_ago(text, [s for s, _ in negated])) is not None:
        return _no("timepoint", f"{quote!r} negates {spec.name} at a time dated {old!r}, outside the recent window the "
                                "input asks about; the record does not say when and why")
    if cues:
        return _ok(f"{quote!r} negates {spec.name}")
    return _no("asserted-not-negated", f"{quote!r} names {text[spans[0][0]:spans[0][1]]!r} without negating it")


def _dated_years_ago(text: str, starts: list[int]) -> str | None:
    """The cue dating every one of these negated mentions years back (in its sentence or the sentences before it in
    its paragraph), unless its clause places it in a recent window ("no recent surgery"); ``None`` otherwise."""
    found = None
    for s in starts:
        ca, cb = T.clause(text, s)
        sa, sb = T.sentence(text, s)
        cue = ([None] + list(T.YEARS_AGO.finditer(text, T.context_start(text, sa), sb)))[-1]
        if cue is None or T.RECENT.search(text, ca, cb) or (cue.end() <= s and any(
                rx.search(text, cue.end(), s) for rx in (T.PRESENTATION, T.PRESENTED, T.RECENT))):
            return None
        found = cue.group(0)
    return found


CURRENT_STATE = re.compile(r"\bactive\b|\bcurrent\b|^neoplastic disease$", re.I)  # inputs about a state now


ABSENT_OPTIONS = frozenset({"absent", "none", "no", "no encephalopathy", "grade 0"})  # the options that state a finding absent


# option values too common to name anything by themselves ("no", "mild"): only the lexicon's phrases state them
GENERIC_OPTIONS = frozenset({"no", "none", "yes", "mild", "slight", "moderate", "severe", "absent", "present", "normal",
                             "nt", "grade 0", "spontaneous", "to pain", "to speech"})


NOT_TESTABLE = frozenset({"not testable", "nt"})
# a phrase that says an examination could not be done, of whatever it is said: the component needs naming
UNTESTED = re.compile(r"(?:not testable|untestable|could not be (?:tested|assessed|evaluated)|not assessable|unable to be "
                      r"assessed|unable to assess|not possible to assess|was not possible)", re.I)


# a response that failed: "unresponsive to painful stimuli" states no response to pain
NO_RESPONSE_TO = re.compile(r"(?:\b(?:un|non-?)responsive|\bnot responsive|\b(?:no|without|absent) (?:\w+ )?response|"
                            r"\b(?:does|did|do) not respond|\bfail(?:s|ed)? to respond)\s*$", re.I)
EYE_WORD = re.compile(r"\beyes?\b|\bopen", re.I)  # a phrase of an eye response that names the eyes itself


def _option_problem(spec: InputSpec, entry: L.Entry | None, value: Any, text: str, qs: int, qe: int,
                    terms: tuple[str, ...]) -> Verdict | None:
    """Why a quote that names a category's option does not state it: for a best response (a GCS component, one
    observed response) the sentence states, unnegated, another option's phrase that contains the option's own (the
    more specific reading: "speech was disjointed and included inappropriate words" is inappropriate words, not
    confused) or a better response than the recorded one (the best is what it records: "unresponsive to verbal
    stimuli but moaned" makes sounds); or the option is "not testable" and the phrase ("could not be assessed") is
    said of an examination the quote does not name as the component. ``None`` when neither."""
    if entry is None:
        return None
    low = str(value).strip().lower()
    own = [(qs + a, qs + b) for a, b in L.term_spans(text[qs:qe], terms, entry.masks)]
    own = [sp for sp in own if not T.negated(text, *sp)]
    if own and all(NO_RESPONSE_TO.search(text[max(T.clause(text, a)[0], a - 40):a]) for a, _ in own):
        return _no("negated", f"{text[own[0][0]:own[0][1]]!r} follows a failed response in "
                              f"{text[slice(*T.clause(text, own[0][0]))].strip()[:160]!r}: no response to it")
    if spec.name.lower() == "best eye response" and low not in ABSENT_OPTIONS | NOT_TESTABLE and own and not any(
            EYE_WORD.search(text[a:b]) or L.term_spans(text[slice(*T.sentence(text, a))], entry.names, entry.masks)
            for a, b in own):
        return _no("not-named", f"{text[own[0][0]:own[0][1]]!r} is said in {text[slice(*T.sentence(text, own[0][0]))].strip()[:160]!r}, "
                                "which names no eye opening")
    if low in NOT_TESTABLE and own and all(UNTESTED.fullmatch(text[a:b]) and not L.term_spans(
            text[slice(*T.clause(text, a))], entry.names, entry.masks, entry.patterns) for a, b in own):
        return _no("not-named", f"{text[own[0][0]:own[0][1]]!r} is said of an examination in "
                                f"{text[slice(*T.clause(text, own[0][0]))].strip()[:160]!r}, which names no term of {spec.name}")
    if not spec.name.lower().startswith("best "):  # one observed response (a GCS component), not a worst-of list
        return None
    groups = list(dict.fromkeys(ps for _, ps in entry.options))  # options that share their phrases are one response
    rank = {opt: groups.index(ps) for opt, ps in entry.options}
    mine = {p.lower() for p in terms}
    for opt, ps in entry.options:
        others = tuple(p for p in ps if p.lower() not in mine)
        for sa, sb in sorted({T.sentence(text, a) for a, _ in own}) if others and opt != low else ():
            for a, b in ((sa + x, sa + y) for x, y in L.term_spans(text[sa:sb], others, entry.masks)):
                inside = any(x <= a and b <= y for x, y in own)
                wider = any(a <= x and y <= b for x, y in own)
                better = opt not in NOT_TESTABLE and rank[opt] < rank.get(low, len(groups))
                if not inside and (wider or better) and not T.negated(text, a, b):
                    return _no("other-option", f"{text[a:b]!r} in {text[sa:sb].strip()[:160]!r} states {opt!r}, "
                                               f"{'a more specific reading' if wider else 'a better response'} than {value!r}")
    return None


def _option_terms(spec: InputSpec, entry: L.Entry | None, value: Any) -> tuple[str, ...]:
    low = str(value).strip().lower()
    phrases: list[str] = [] if low in GENERIC_OPTIONS else [str(value).strip()]
    if entry is not None:
        for opt, ps in entry.options:
            if opt == low:
                phrases += list(ps)
    return tuple(p for p in phrases if p)


def _other_options(entry: L.Entry, terms: tuple[str, ...]) -> tuple[str, ...]:
    """The negated phrases of the other options ("non-", "not ", "un-"), which mask a phrase of this one they
    contain: "non-exertional chest pain" states a slightly suspicious history, not the "exertional chest pain" of
    a highly suspicious one (a longer phrase that does not negate it, "confined to bed rest", masks nothing)."""
    mine = {t.lower() for t in terms}
    return tuple(dict.fromkeys(p for _, ps in entry.options for p in ps
                               if p.lower() not in mine and NEGATED_PHRASE.match(p)))


NEGATED_PHRASE = re.compile(r"(?:non|not\s|un)", re.I)


# choices a calculator also reads as true/false (``scores_misc._graded``'s ``true_means``): per input, the options it
# scores true as, those it scores false as, and those it scores higher than true. A true is stated where a term names
# the input, unnegated, and the same quote states one of the first options ("stage III colon cancer": a solid tumor,
# localized) and none of the third ("metastatic"); a false where the quote negates the input or states one of the
# second ("kidney function is within normal limits"). Kept equal to the scorer by
# tests/calculators/test_evidence_recall_recall_g2.py.
BOOLEAN_CHOICES: dict[str, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = {
    "solid tumor": (("localized",), ("none",), ("metastatic",)),
    "moderate to severe chronic kidney disease": (("moderate to severe", "moderate", "severe"), ("none", "mild"), ()),
    "diabetes mellitus criteria for cci rule": (("uncomplicated",), ("none or diet-controlled",), ("end-organ damage",)),
}


# a grade the definition states by a serum level (MDCalc's Charlson: moderate chronic kidney disease is a creatinine
# above 3 mg/dL): per input (quantity, level it must exceed, unit, the values that grade states). The quote must print
# that quantity as the patient's now, above the level, in that unit, and the note name no acute kidney injury.
LEVEL_GRADES: dict[str, tuple[str, float, str, tuple[Any, ...]]] = {
    "moderate to severe chronic kidney disease": ("creatinine", 3.0, "mg/dL", (True, "moderate", "moderate to severe")),
}
ACUTE_KIDNEY = re.compile(r"\b(?:acute (?:kidney|renal) (?:injury|failure|insufficiency)|AKI|ARF|acute tubular necrosis)\b")


def _level_grade(spec: InputSpec, inp: Mapping[str, Any], note: str | None) -> Verdict | None:
    """The verdict of a grade stated by a serum level above its bound (:data:`LEVEL_GRADES`), or ``None``."""
    quantity, above, unit, values = LEVEL_GRADES[spec.name.lower()]
    value = inp.get("value")
    if not any(value is w if isinstance(w, bool) else (isinstance(value, str) and value.strip().lower() == w)
               for w in values):
        return None
    raw = inp.get("evidence")
    ev: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    start, end, quote = ev.get("start"), ev.get("end"), str(ev.get("text") or "")
    if not quote.strip() or ACUTE_KIDNEY.search(note if note is not None else quote):
        return None  # a level in a note that names an acute kidney injury anywhere may be the injury's
    text, qs, qe = quote, 0, len(quote)
    if note is not None and isinstance(start, int) and isinstance(end, int):
        text, qs, qe = note, start, end
    qspec = InputSpec(quantity, "quantity", quantity, quantity)
    for a, _, level in T.numbers(quote):
        if level is None or level <= above or T.family(text, qs + a):
            continue
        w = Q.number_verdict(qspec, L.keys_of(quantity), {**inp, "name": quantity, "value": level, "unit": unit},
                             text, qs, qe)
        if w.supports:
            return _ok(f"{w.reason}: a {quantity} above {above:g} {unit} is {spec.name}")
    return None


def verify(calculator_id: int, inp: Mapping[str, Any], note: str | None) -> Verdict:
    """Whether the quote of one recorded input states its value (see the module docstring)."""
    v = _verify(calculator_id, inp, note)
    value = inp.get("value")
    if not v.supports and (lspec := _spec(calculator_id, str(inp.get("name") or ""))) is not None \
            and lspec.name.lower() in LEVEL_GRADES and (level := _level_grade(lspec, inp, note)) is not None:
        return level
    spec = _spec(calculator_id, str(inp.get("name") or "")) if isinstance(value, bool) and not v.supports else None
    if spec is None or spec.accessor != "choice" or spec.name.lower() not in BOOLEAN_CHOICES:
        return v
    present, absent, higher = BOOLEAN_CHOICES[spec.name.lower()]
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
            done = next((m for m in PROCEDURE.finditer(note or "") if not T.negated(note or "", m.start(), m.end())), None)
            if v.supports and done is not None:
                return _no("absent-but-named", f"the note names the procedure {done.group(0)!r} at {done.start()}..{done.end()}: "
                                               f"{spec.name} is not left unstated")
            return _ok(f"the note names no {spec.name} without negation: the definition takes an unstated "
                       f"{spec.name} as {str(value).strip()!r}") if v.supports else v
        if not quote.strip():
            return _no("no-quote", f"{spec.name} = {value!r} quotes nothing")
        terms = _option_terms(spec, entry, value)
        fake = L.Entry(terms, (entry.masks + _other_options(entry, terms)) if entry else (), (), (), ())
        v = _criterion_verdict(spec, fake, {**inp, "value": True}, text, qs, qe, note, terms)
        v = (_option_problem(spec, entry, value, text, qs, qe, terms) or v) if v.supports else v
        if not v.supports and entry is not None and spec.name.lower() == "initial troponin":
            v = _troponin_against_limit(spec, entry, inp, value, text, qs, qe, note) or v
        if not v.supports and entry is not None and spec.name.lower() == "sex" and note is not None:
            v = R.sex_by_pronouns(entry, value, text, qs, qe, note) or v
        if not v.supports and entry is not None and entry.names and str(value).strip().lower() in ABSENT_OPTIONS:
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


# The option a definition takes for a choice input the note leaves unstated (the value it scores when the entity is
# missing), per (calculator, input): such a value rests on the note's silence, as an absent criterion does. APACHE II
# (definitions.yaml 28, apache-ii-1985-unstated-admission-nonoperative; scores_critical: ``default=5``) scores an
# unstated admission type as nonoperative; "emergency postoperative" (also 5 points) must be stated.
SILENCE_OPTIONS: dict[tuple[int, str], frozenset[str]] = {
    (28, "surgery type"): frozenset({"nonoperative", "non-operative", "none"}),
}


# an operation named by its procedure rather than as surgery ("underwent an emergency laparotomy"): an admission type
# is not left unstated where the note names one
PROCEDURE = re.compile(r"\b(?:\w+(?:ectomy|ectomies|otomy|otomies|ostomy|plasty|pexy|rrhaphy)|resection|excision|amputation|"
                       r"transplant(?:ation)?|bypass graft\w*|operated)\b", re.I)


def silence_option(calculator_id: int, spec: InputSpec, value: Any) -> bool:
    """Whether ``value`` of the choice ``spec`` is the option the definition takes when the note leaves it unstated."""
    options = SILENCE_OPTIONS.get((int(calculator_id), spec.name.strip().lower()))
    return bool(options) and isinstance(value, str) and value.strip().lower() in options


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


__all__ = ["RULES", "SILENCE_OPTIONS", "Verdict", "describe", "find_evidence", "rejected", "silence_option", "verify",
           "verify_inputs"]
