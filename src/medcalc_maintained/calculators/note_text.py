"""The text of a patient note as the evidence verifier reads it: sentences and clauses, the numbers
printed and the units after them, the cues that negate, qualify or date a mention, and which named
quantity a printed number belongs to (``calculators/evidence.py`` applies them).

A mention is ``(start, end, key)``: where a lexicon term (``calculators/lexicon.py``) names the
input or quantity ``key``.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Iterator

from medcalc_maintained.core import units as U

SENTENCE_END = re.compile(r"(?<!\d)\.(?=\s|$)|(?<=\d)\.(?=\s+[A-Z(])|[;!?\n]")
CLAUSE_BREAK = re.compile(r"\b(?:but|however|although|though|except|whereas|while|yet|aside from|apart from)\b|[;:]",
                           re.I)
NUMBER = re.compile(r"(?<![\w.,/])(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\d])|(?<![\w.,/])\d+,\d{1,2}(?![\d,])"
                     r"|(?<=/)\d+(?:\.\d+)?(?![\d])")
DATE = re.compile(r"\b\d{1,2}/\d{1,2}/\d{2,4}\b|\b\d{4}-\d{1,2}-\d{1,2}\b|\b\d{1,2}-\d{1,2}-\d{4}\b"
                   r"|(?i:\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d{1,2}(?:st|nd|rd|th)?"
                   r"(?:,?\s+\d{4})?)|(?i:\b\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct"
                   r"|nov|dec)[a-z]*\b(?:,?\s+\d{4})?)|\b(?:19|20)\d{2}\b")
RANGE = re.compile(r"(?<![A-Za-z\d.])\d+(?:\.\d+)?\s*(?:-|–|—|to)\s*\d+(?:\.\d+)?")
REFERENCE_CUE = re.compile(r"\b(?:normal|reference|ref|range|uln|upper limit|lower limit|nl)\b|[<>≤≥]", re.I)
TIME_CUE = re.compile(r"\b(?:ago|baseline|previous(?:ly)?(?! healthy)|prior to (?:this |the |her |his )?(?:admission|presentation"
                       r"|hospitali[sz]ation)|before (?:this |the |her |his )?(?:admission|presentation)|last (?:year|month|"
                       r"visit)|at (?:her|his|the) (?:last|previous|prior) (?:visit|admission)|earlier this year|last recorded)\b",
                       re.I)
STRONG_TIME_CUE = re.compile(r"\b(?:(?:\d+|a|an|one|two|three|four|five|six|several|a few)\s+(?:years?|months?|weeks?|days?)"
                              r"\s+(?:ago|earlier|before|prior)|years? ago|months? ago|"
                              r"(?:prior to|before) (?:this |the |her |his )?(?:admission|presentation|"
                              r"hospitali[sz]ation)|last recorded|at discharge|on discharge)\b", re.I)
ELSEWHERE_CUE = re.compile(r"\b(?:(?:at|from|in) (?:an?|another|the referring|an outside|a nearby|a local) (?:hospital|facility|"
                            r"clinic)|outside hospital|repeat(?:ed)? (?:blood |laboratory |lab )?(?:tests?|labs?|results|"
                            r"measurements?))\b", re.I)
# "initially X, but now Y": the first value is the earlier one
INITIALLY_BUT = re.compile(r"\binitially\b", re.I)
# a finding that is the effect of a treatment given ("hypertension resulting from epinephrine administration")
TREATMENT_EFFECT = re.compile(r"\b(?:resulting from|induced by|caused by|due to|secondary to)\b[^.;]{0,40}?\b(?:administration|"
                               r"infusion|injection|bolus|overdose)\b", re.I)
# a value measured later than the presentation the definition asks about
DAY_CUE = re.compile(r"\b(?:on (?:hospital )?day[- ]\d+|hospital day[- ]\d+|(?:on|by) (?:the )?(?:end of )?(?:the )?"
                      r"(?:second|third|fourth|fifth|sixth|seventh|\d+(?:st|nd|rd|th)) (?:day|hospital day)|(?:on|by) "
                      r"(?:the end of )?day (?:two|three|four|five|six|seven|\d+)|day[- ]\d+ of (?:admission|"
                      r"hospitali[sz]ation))\b", re.I)
LATER_CUE = re.compile(r"\b(?:later|subsequently|thereafter|afterwards?|repeat(?:ed)?|post-?operative(?:ly)?|(?:decreased|increased|dropped|rose|fell|improved|"
                        r"worsened|declined) to|transferred to|started developing|evolving|follow-?up|at discharge|"
                        r"on discharge|after (?:treatment|therapy|(?:\d+|several|a few|two|three) (?:days?|weeks?|"
                        r"hours?)))\b", re.I)
PRESENTATION = re.compile(r"\b(?:on|at|upon) (?:admission|presentation|arrival)|in the (?:ED|emergency department|emergency room)"
                           r"|initial (?:labs?|laboratory|vital)", re.I)
PAST_CUE = re.compile(r"\b(?:in the past|remote|(?<!-)old|PMH|past medical history|years? ago|months? ago|\d+ (?:years?|"
                       r"months?|weeks?) (?:ago|earlier|before)|previous(?:ly)?(?! healthy)|prior)\b|\b(?:19|20)\d{2}\b", re.I)
# inputs whose definition asks about a time window: a dated or past mention needs a stated timepoint
WINDOW = re.compile(r"last month|within|recent|past 24 hours|previous 4 weeks|≤3 days|\bacute\b|\bcurrent\b|\bactive\b",
                     re.I)
NEGATION_BEFORE = re.compile(r"\b(?:no|not|never|denie[sd]|deny|denying|without|negative for|free of|absence of|"
                              r"(?:do|does|did|has|have|had|could|would|can)(?:n't| not)|cannot|none of|nor|"
                              r"absent|ruled out|rules out|rule out|ruling out|r/o|unremarkable for|did not have|does not have|"
                              r"had no|has no|nor|neither|lack of|lacks)\b", re.I)
NEGATION_AFTER = re.compile(r"^\W{0,3}(?:\w+\W+){0,3}?(?:was|were|is|are|has been|had been|been)?\s*(?:ruled out|excluded|"
                             r"negative|absent|not (?:present|seen|found|detected|identified|noted|observed|reported)|"
                             r"denied|unlikely|none)\b", re.I)
PLANNED = re.compile(r"\b(?:scheduled (?:for|to)|planned|planning|plan (?:for|to)|will (?:undergo|have|be)|to undergo|"
                      r"candidate for|considered for|consideration of|referred for|awaiting|pending|suspected|suspicion of|"
                      r"suspicious (?:for|of)|suggestive (?:of|signs of)|suggests|presumed|presumptive|questionable|"
                      r"possible|possibly|probable|probably|likely|concern for|concerning for|risk of|at risk for|"
                      r"rule out|ruling out|r/o|prophylaxis|differential diagnosis)\b", re.I)
FAMILY = re.compile(r"\b(?:family history|family member|mother|father|brother|sister|sibling|siblings|parent|parents|"
                     r"son|daughter|grandmother|grandfather|aunt|uncle|cousin|relative|relatives|maternal|paternal)\b",
                     re.I)
RESPECTIVELY = re.compile(r"\brespectively\b", re.I)


def sentence(text: str, pos: int) -> tuple[int, int]:
    """The sentence of ``text`` around ``pos`` (ends at ``.``+space, ``;``, ``!``, ``?``, a newline)."""
    start = 0
    for m in SENTENCE_END.finditer(text, 0, pos):
        start = m.end()
    end = SENTENCE_END.search(text, pos)
    return start, (end.start() if end else len(text))


CONTEXT_SENTENCES = 3  # sentences before a value whose time cues date it ("On day 3 ...; HR 94")


def context_start(text: str, sentence_start: int) -> int:
    """Where the :data:`CONTEXT_SENTENCES` sentences before the one starting at ``sentence_start`` begin
    (never before the paragraph: a blank line ends the context)."""
    start = sentence_start
    for _ in range(CONTEXT_SENTENCES):
        if start <= 0 or text[max(0, start - 2):start].count("\n") >= 2:
            break
        start = sentence(text, max(0, start - 2))[0]
    return start


def context_cue(text: str, sa: int, s: int) -> re.Match[str] | None:
    """The time a value's sentence and the sentences before it set ("On day 3 of admission ...", "tested
    in another hospital. Blood tests: AST 444"): the last such cue before the value, unless a later
    one says the presentation ("On admission, ...", "Initial laboratory results")."""
    cues = [m for rx in (DAY_CUE, ELSEWHERE_CUE, PRESENTATION) for m in rx.finditer(text, context_start(text, sa), s)]
    if not cues:
        return None
    last = max(cues, key=lambda m: m.start())
    return None if PRESENTATION.fullmatch(last.group(0)) else last


def clause(text: str, pos: int) -> tuple[int, int]:
    """The clause of the sentence around ``pos``: the sentence cut at ``but``, ``however``, ``;``, ``:`` ..."""
    a, b = sentence(text, pos)
    start, end = a, b
    for m in CLAUSE_BREAK.finditer(text, a, b):
        if m.end() <= pos:
            start = m.end()
        elif m.start() >= pos:
            end = m.start()
            break
    return start, end


def numbers(text: str) -> Iterator[tuple[int, int, float]]:
    for m in NUMBER.finditer(text):
        try:
            raw = m.group(0)
            decimal_comma = re.fullmatch(r"\d+,\d{1,2}", raw) is not None  # "12,35 mg/dL"
            yield m.start(), m.end(), float(raw.replace(",", ".") if decimal_comma else raw.replace(",", ""))
        except ValueError:
            continue


def same_number(printed: float, value: Any) -> bool:
    try:
        v = float(value)
    except (TypeError, ValueError):
        return False
    return abs(printed - v) <= 1e-9 * max(1.0, abs(v))



def unit_after(text: str, end: int) -> tuple[str | None, str | None]:
    """(the unit printed right after a number as written, its normalised spelling when some unit kind
    knows it), longest known spelling first."""
    rest = text[end:end + 40]
    m = re.match(r"\s*(?:×|x)?\s*([^\s,;()]+(?:\s+[^\s,;()]+){0,2})", rest)
    if not m:
        return None, None
    words = m.group(1).split()
    known = known_units()
    for n in range(len(words), 0, -1):
        cand = " ".join(words[:n]).rstrip(".,")
        norm = U.normalise_unit(cand)
        if norm in known:
            return cand, norm
    return words[0].rstrip(".,") if words else None, None


@lru_cache(maxsize=1)
def known_units() -> frozenset[str]:
    return frozenset(u for kind in U.CANONICAL for u in U.known_units(kind))


RESPECTIVELY_UNPAIRED = "\x00respectively"


def distinct_places(mentions: list[tuple[int, int, str]]) -> list[list[tuple[int, int, str]]]:
    """Mentions grouped by place (one place may be named by several entries), in text order."""
    groups: dict[tuple[int, int], list[tuple[int, int, str]]] = {}
    for m in sorted(mentions):
        groups.setdefault((m[0], m[1]), []).append(m)
    return list(groups.values())


def respectively(text: str, sa: int, r: int, inside: list[tuple[int, int, str]], s: int
                  ) -> list[tuple[int, int, str]] | None:
    """The names paired with the number at ``s`` by "A and B were x and y, respectively" (``r``: where
    "respectively" is): the numbers after the last name before ``r`` pair in order with the run of
    names before them. ``None`` when the number is not in that list; ``[]`` when the list does not
    pair one to one."""
    before_r = [m for m in inside if m[1] <= r]
    if not before_r:
        return None
    last_name = max(m[1] for m in before_r)
    nums = [sa + a for a, _b, _v in numbers(text[sa:r]) if sa + a >= last_name]
    if s not in nums:
        return None
    places = distinct_places([m for m in before_r if m[1] <= nums[0]])
    run: list[list[tuple[int, int, str]]] = []
    for group in reversed(places):  # the names with no number between them, nearest first
        if run and any(group[0][1] <= sa + a < run[0][0][0] for a, _b, _v in numbers(text[sa:r])):
            break
        run.insert(0, group)
    if len(run) != len(nums) or len(nums) < 2:
        return []
    return run[nums.index(s)]


def attributed(text: str, s: int, e: int, mentions: list[tuple[int, int, str]],
                mine: set[str] = frozenset()) -> tuple[str | None, int | None]:  # type: ignore[assignment]
    """The quantity a number at ``text[s:e]`` belongs to: a term right after it (``74-year-old``,
    ``18 breaths per minute``, after its unit), a ``respectively`` pairing, else the nearest term
    before it in its sentence."""
    sa, sb = sentence(text, s)
    inside = [m for m in mentions if sa <= m[0] and m[1] <= sb]
    around = [m for m in inside if m[0] <= s and e <= m[1]]  # a term that contains the number ("100% oxygen")
    if around:
        return prefer(around, mine), around[0][0]
    after = [m for m in inside if m[0] >= e and m[0] - e <= 3 and re.fullmatch(r"[\s\-]*", text[e:m[0]])]
    unit, _ = unit_after(text, e)
    if unit is not None:
        gap = text.find(unit, e)
        after += [m for m in inside if gap >= 0 and m[0] >= gap and m[0] - (gap + len(unit)) <= 1 and m not in after]
        after += [m for m in inside if gap >= 0 and gap <= m[0] < gap + len(unit) and m not in after]
    if after:
        start = min(m[0] for m in after)
        first = [m for m in after if m[0] == start]
        return prefer(first, mine), start
    resp = RESPECTIVELY.search(text, e, sb)
    if resp is not None:
        paired = respectively(text, sa, resp.start(), inside, s)
        if paired is not None:
            return (prefer(paired, mine), paired[0][0]) if paired else (RESPECTIVELY_UNPAIRED, None)
    before = [m for m in inside if m[1] <= s]
    if before:
        end = max(m[1] for m in before)
        last = [m for m in before if m[1] == end]
        return prefer(last, mine), last[0][0]
    return None, None


def prefer(tied: list[tuple[int, int, str]], mine: set[str]) -> str:
    """The key of tied mentions (one place named by several entries): the input's own when it is one."""
    return next((m[2] for m in tied if m[2] in mine), tied[0][2])


def negated(text: str, s: int, e: int) -> bool:
    """Whether the term at ``text[s:e]`` is negated in its own clause (a cue before it, or
    ``was ruled out`` / ``negative`` right after it)."""
    ca, cb = clause(text, s)
    if NEGATION_BEFORE.search(text, ca, s):
        return True
    return bool(NEGATION_AFTER.match(text[e:cb]))


PLANNED_WINDOW = 45  # characters before a term in which "scheduled for", "suspected" ... qualify it


def planned(text: str, s: int) -> bool:
    ca, _ = clause(text, s)
    return bool(PLANNED.search(text, max(ca, s - PLANNED_WINDOW), s))


def near(text: str, s: int, e: int) -> tuple[int, int]:
    """A window of the term's sentence around it (60 characters before and after)."""
    sa, sb = sentence(text, s)
    return max(sa, s - 60), min(sb, e + 60)


def family(text: str, s: int) -> bool:
    ca, _ = clause(text, s)
    return bool(FAMILY.search(text, ca, s))
