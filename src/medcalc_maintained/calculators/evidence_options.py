"""Categories as the evidence verifier reads them (:mod:`medcalc_maintained.calculators.evidence` for the whole
verifier, which reads an option's phrase as a criterion's term).

Categories
    a choice the definition takes for an unstated input (:data:`SILENCE_OPTIONS`: APACHE
    II's nonoperative admission) rests on silence as an absent criterion does, where the note names no
    operation (a surgery term or a procedure, ``laparotomy``); a category is named by its option's phrase, not inside a longer
    phrase of another option that negates it (``non-exertional chest pain`` states no ``exertional chest pain``), an
    option that states the finding absent, such as ``absent`` ascites, also by the finding negated; a true or false of a
    choice the calculator also scores as a boolean (:data:`BOOLEAN_CHOICES`: ``Solid tumor = true`` is a localized one) is
    stated by the phrases of the options it is scored as, a true also by a term that names the input and no higher grade;
    a grade the definition states by a serum level (:data:`LEVEL_GRADES`) also by that level above its bound; a best response (a
    GCS component) is not stated by a sentence that also states, unnegated, a more specific reading of it or a better
    response (``speech was disjointed and included inappropriate words`` is inappropriate words, not confused;
    ``unresponsive to verbal stimuli but moaned`` makes sounds), and ``not testable`` is not stated by an examination
    that could not be done unless the quote names the component; a failed response (``unresponsive to painful stimuli``)
    states no response to it, and an eye response is stated only where the eyes are named.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from medcalc_maintained.calculators import evidence_quantity as Q
from medcalc_maintained.calculators import lexicon as L
from medcalc_maintained.calculators import note_text as T
from medcalc_maintained.calculators.inputs import InputSpec
from medcalc_maintained.calculators.verdict import Verdict
from medcalc_maintained.calculators.verdict import no as _no
from medcalc_maintained.calculators.verdict import ok as _ok

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


def option_problem(spec: InputSpec, entry: L.Entry | None, value: Any, text: str, qs: int, qe: int,
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


def option_terms(spec: InputSpec, entry: L.Entry | None, value: Any) -> tuple[str, ...]:
    low = str(value).strip().lower()
    phrases: list[str] = [] if low in GENERIC_OPTIONS else [str(value).strip()]
    if entry is not None:
        for opt, ps in entry.options:
            if opt == low:
                phrases += list(ps)
    return tuple(p for p in phrases if p)


def other_options(entry: L.Entry, terms: tuple[str, ...]) -> tuple[str, ...]:
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


def level_grade(spec: InputSpec, inp: Mapping[str, Any], note: str | None) -> Verdict | None:
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
    if not options:
        return False
    return isinstance(value, str) and value.strip().lower() in options
