"""Absent values and time windows as the evidence verifier reads them (:mod:`medcalc_maintained.calculators.evidence`
for the whole verifier, whose criterion reading calls these).

Time windows
    an input about a time window (``recent``, ``in the last month``, the RCRI's
    elevated-risk surgery, which is the surgery at hand) is not met by a mention dated in the past (``CABG eight years
    ago``), nor denied by one dated after the note's dated presentation (``On June 23th, ... wedge resection``) nor negated
    by a negation dated years back (``surgical treatment was not performed``, five years ago, is no recent surgery's
    absence), nor, for an event of a recent window, by an undated history (``a history of knee surgery``,
    ``Surgical history: cholecystectomy``) unless it is the presenting illness (``a 2-day history of fever``).
Absent values
    an absent criterion rests on a quote that negates it, or on
    silence where the definition decides an unmentioned criterion as absent (every ``flag`` input and
    every optional input of the calculators: ``Inputs.flag`` and ``required=False``) and the note
    names the criterion nowhere without negation; a criterion that is a finding's absence (``Cough Absent``) is unmet by
    silence, unless the note states the finding absent somewhere (left out of the entities, it is read as recorded unmet,
    as its calculator scores it).
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from medcalc_maintained.calculators import evidence_precision as EP
from medcalc_maintained.calculators import evidence_quantity as Q
from medcalc_maintained.calculators import evidence_readings as R
from medcalc_maintained.calculators import lexicon as L
from medcalc_maintained.calculators import note_text as T
from medcalc_maintained.calculators.inputs import InputSpec
from medcalc_maintained.calculators.verdict import Verdict, timepoint_stated
from medcalc_maintained.calculators.verdict import no as _no
from medcalc_maintained.calculators.verdict import ok as _ok


def window_cue(text: str, s: int, e: int) -> re.Match[str] | None:
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


def history_cue(text: str, s: int, e: int) -> re.Match[str] | None:
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


def absent_silent(spec: InputSpec, entry: L.Entry, inp: Mapping[str, Any], note: str | None, terms: tuple[str, ...],
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


def absence_unmet(spec: InputSpec, entry: L.Entry, note: str | None, terms: tuple[str, ...]) -> Verdict:
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


def absent_quoted(spec: InputSpec, entry: L.Entry, text: str, qs: int, qe: int, spans: list[tuple[int, int]],
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
    negated = [(s, c) for s, c in ((s, T.negation_cue(text, s, e) or EP.negation_after(text, s, e)) for s, e in spans) if c]
    if (kept := next((k for k in (EP.unexcluded(text, s, e) for s, e in spans) if k), None)) is not None:
        return _no("planned-or-suspected", f"{quote!r} keeps {spec.name} open ({kept!r}): neither present nor absent")
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
