"""Readings of the evidence verifier that need more than a term and a clause (:mod:`.evidence` decides with them).

- the HEART initial troponin as a multiple of the reference upper limit printed with its value
  (``911 ng/L (cut off <24ng/L)``): :func:`troponin_readings`;
- a patient's sex by pronouns alone, where the note names no sex by a word: :func:`sex_by_pronouns`;
- a mention dated by a later day than the note's dated presentation: :func:`dated_after_presentation`.
"""

from __future__ import annotations

import re
from typing import Any, Iterator

from medcalc_maintained.calculators import lexicon as L
from medcalc_maintained.calculators import note_text as T
from medcalc_maintained.calculators.verdict import Verdict
from medcalc_maintained.calculators.verdict import ok as _ok

# ------------------------------------------------------------------------------------------------
# the HEART troponin against its printed reference

# a troponin printed with the upper limit of its reference right after it: "11.17 (normal less than 0.05 ng/ml)", "911 ng/L
# (cut off <24ng/L)", "0.3 ng/ml (0.0-0.4)"; group 1 the value, 2 its unit, 3 or 4 the upper limit, 5 the limit's unit
_TROP_UNIT = r"(?:ng|pg|[µμu]g|mcg)\s*/\s*(?:ml|l|dl)\b"
TROPONIN_WITH_LIMIT = re.compile(
    rf"(\d+(?:\.\d+)?)\s*({_TROP_UNIT})?\s*\(\s*(?:(?:normal(?: value| range)?|reference(?: range| value| limit)?|"
    rf"cut[- ]?off|upper (?:reference )?limit(?: of normal)?|ULN|URL|99th percentile)\s*[:,]?\s*(?:(?:is|of)\s+)?)?"
    rf"(?:(?:less than|lower than|below|under|up to|<|≤|<=)\s*(\d+(?:\.\d+)?)|0(?:\.0+)?\s*[-–]\s*(\d+(?:\.\d+)?))"
    rf"\s*({_TROP_UNIT})?\s*\)", re.I)


def troponin_level(option: str) -> int:
    """The HEART troponin level an option states: 0 (<= the normal limit), 1 (1-3 times) or 2 (> 3 times)."""
    low = option.strip().lower()
    return 0 if low.startswith("less than or equal") else 2 if low.startswith(("greater", "more")) else 1


def _unit(u: str | None) -> str | None:
    return re.sub(r"\s+", "", u.lower()).replace("μ", "µ").replace("mcg", "µg").replace("ug", "µg") if u else None


def troponin_readings(entry: L.Entry, option: str, options: tuple[str, ...], text: str, qs: int, qe: int
                      ) -> Iterator[tuple[int, int, int, int, float, str]]:
    """Where the quote ``text[qs:qe]`` prints a troponin at the level of ``option``: the first number after a troponin
    term in its sentence, no other quantity named between, followed by its reference ("normal less than 0.05", "cut off
    <24", "0.0-0.4") in one unit (a unit printed on both must be the same; none is converted). Yields (term start, term
    end, sentence end, reading end, ratio, the text with the reference blanked: "(normal less than ...)" negates
    nothing)."""
    if option.strip().lower() not in {p.lower() for p in options}:
        return  # not an option of the input
    for s, e in ((qs + a, qs + b) for a, b in L.term_spans(text[qs:qe], entry.names, entry.masks)):
        sb = min(T.sentence(text, s)[1], qe)
        first = T.NUMBER.search(text, e, sb)
        m = TROPONIN_WITH_LIMIT.match(text, first.start(), sb) if first else None
        if m is None or any(not L.term_spans(text[a:b], entry.names, entry.masks) for a, b, _ in L.mentions(text, e, m.start())):
            continue  # no number with a reference, or another quantity named before it ("troponin and CK-MB: CK-MB 40 (<5)")
        limit = float(m.group(3) or m.group(4))
        if limit <= 0 or (m.group(2) and m.group(5) and _unit(m.group(2)) != _unit(m.group(5))):
            continue
        ratio = float(m.group(1)) / limit
        if (0 if ratio <= 1 else 1 if ratio <= 3 else 2) != troponin_level(option):
            continue
        paren = text.index("(", m.start(), m.end())
        yield s, e, sb, m.end(), ratio, text[:paren] + " " * (m.end() - paren) + text[m.end():]


# ------------------------------------------------------------------------------------------------
# a sex by pronouns

PRONOUNS = {"female": re.compile(r"\b(?:she|her|hers|herself)\b", re.I), "male": re.compile(r"\b(?:he|him|his|himself)\b", re.I)}
SEX_OF_OPTION = {"female": "female", "f": "female", "woman": "female", "girl": "female",
                 "male": "male", "m": "male", "man": "male", "boy": "male"}


def sex_by_pronouns(entry: L.Entry, value: Any, text: str, qs: int, qe: int, note: str) -> Verdict | None:
    """The sex of a patient the note never names by a word of sex ("woman", "male", "Mrs." ...) but refers to only by
    the pronouns of one sex: "A patient came in for her evaluation ... She was noticeably agitated" is a woman. A note
    with a pronoun of the other sex anywhere (a husband, a son, a doctor) or a word of sex anywhere states nothing
    this way; the quote itself must hold the pronoun. ``None`` when the rule does not apply."""
    sex = SEX_OF_OPTION.get(str(value).strip().lower())
    if sex is None or L.term_spans(note, entry.names + tuple(p for _, ps in entry.options for p in ps), entry.masks):
        return None
    other = "male" if sex == "female" else "female"
    if PRONOUNS[other].search(note) or not PRONOUNS[sex].search(note):
        return None
    m = PRONOUNS[sex].search(text, qs, qe)
    if m is None:
        return None
    return _ok(f"{text[qs:qe]!r} refers to the patient as {m.group(0)!r}, and the note names no sex and uses no "
               f"pronoun of the other: {value}")


# ------------------------------------------------------------------------------------------------
# a mention dated after the presentation

_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MONTH = r"(?:january|jan|february|feb|march|mar|april|apr|may|june|jun|july|jul|august|aug|september|sept|sep|october|oct|" \
         r"november|nov|december|dec)"
MONTH_DATE = re.compile(rf"\b(?:(?P<m1>{_MONTH})\.?\s+(?P<d1>\d{{1,2}})(?:st|nd|rd|th)?(?!\d)(?:,?\s+(?P<y1>(?:19|20)\d{{2}}))?"
                        rf"|(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m2>{_MONTH})\b\.?(?:,?\s+(?P<y2>(?:19|20)\d{{2}}))?)",
                        re.I)


def month_date(m: re.Match[str]) -> tuple[int | None, int, int]:
    """(year or None, month, day) of a :data:`MONTH_DATE` match."""
    month = _MONTHS.index((m.group("m1") or m.group("m2")).lower()[:3]) + 1
    year = m.group("y1") or m.group("y2")
    return (int(year) if year else None), month, int(m.group("d1") or m.group("d2"))


def dated_after_presentation(text: str, s: int) -> bool:
    """Whether the mention at ``s`` is dated after the presentation: the note dates the presentation ("On 29 May 2013,
    he presented"; every dated presentation comes before the mention, the last one counts) and a later sentence dates
    the mention by a later day ("On June 23th, ... wedge resection was performed": a day without a year is of the
    presentation's year)."""
    sa, sb = T.sentence(text, s)
    own = [month_date(m) for m in MONTH_DATE.finditer(text, sa, sb)]
    if len(own) != 1:
        return False
    anchor = None
    for pa, pb in T.sentences(text):
        dates = [month_date(m) for m in MONTH_DATE.finditer(text, pa, pb)]
        if pa != sa and T.PRESENTED.search(text, pa, pb) and dates:
            if pa > sa or len(dates) != 1 or dates[0][0] is None:
                return False  # a later presentation (the one scored may be it), or one not dated plainly
            anchor = dates[0]
    year, month, day = own[0]
    return anchor is not None and ((year or anchor[0]), month, day) > anchor


__all__ = ["MONTH_DATE", "PRONOUNS", "SEX_OF_OPTION", "TROPONIN_WITH_LIMIT", "dated_after_presentation", "month_date",
           "sex_by_pronouns", "troponin_level", "troponin_readings"]
