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
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

from medcalc_maintained.calculators.inputs import InputSpec, declared_inputs
from medcalc_maintained.core import units as U
from medcalc_maintained.core.io import DataError, load_yaml

LEXICON_FILE = "lexicon.yaml"

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
    "absent-by-missing-keyword": "an absent value without a negating quote, for an input the definition does not "
                                 "decide when unmentioned",
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
# the lexicon


@dataclass(frozen=True)
class Entry:
    """The terms of one input (see the module docstring)."""

    names: tuple[str, ...]
    masks: tuple[str, ...]
    patterns: tuple[str, ...]
    options: tuple[tuple[str, tuple[str, ...]], ...]
    units: tuple[str, ...]
    negating: tuple[str, ...] = ()     # terms that state the criterion absent ("afebrile", "nonsmoker")
    broader: tuple[str, ...] = ()      # wider terms whose negation negates the criterion ("no surgery": no major surgery)
    absent_polarity: bool = False      # the input is true when the named finding is absent ("Cough Absent")


def _str_list(value: Any, path: Path, key: str, fld: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise DataError(path, "expected a list of non-empty strings", row=f"input {key!r}", field=fld)
    return tuple(v.strip() for v in value)


def _polarity(value: Any, path: Path, key: str) -> bool:
    if value in (None, "present"):
        return False
    if value == "absent":
        return True
    raise DataError(path, f"polarity {value!r} is not 'present' or 'absent'", row=f"input {key!r}", field="polarity")


@lru_cache(maxsize=1)
def _lexicon() -> tuple[dict[str, Entry], tuple[str, ...]]:
    res = resources.files("medcalc_maintained.calculators").joinpath(LEXICON_FILE)
    path = Path(str(res))
    try:
        data = load_yaml(res.read_text("utf-8"), where=str(path)) or {}
    except Exception as exc:  # a YAML error names its line
        raise DataError(path, f"not valid YAML: {exc}") from None
    raw = data.get("inputs") or {}
    if not isinstance(raw, dict):
        raise DataError(path, "expected a mapping", field="inputs")
    entries: dict[str, Entry] = {}
    aliases: dict[str, str] = {}
    for key, spec in raw.items():
        k = str(key).strip().lower()
        if not isinstance(spec, dict):
            raise DataError(path, "entry is not a mapping", row=f"input {key!r}")
        if spec.get("same_as") is not None:
            aliases[k] = str(spec["same_as"]).strip().lower()
            continue
        opts = spec.get("options") or {}
        if not isinstance(opts, dict):
            raise DataError(path, "expected a mapping of option -> phrases", row=f"input {key!r}", field="options")
        entries[k] = Entry(_str_list(spec.get("names"), path, k, "names"), _str_list(spec.get("not"), path, k, "not"),
                           _str_list(spec.get("patterns"), path, k, "patterns"),
                           tuple((str(o).strip().lower(), _str_list(p, path, k, f"options.{o}")) for o, p in opts.items()),
                           _str_list(spec.get("units"), path, k, "units"),
                           negating=_str_list(spec.get("negating"), path, k, "negating"),
                           broader=_str_list(spec.get("broader"), path, k, "broader"),
                           absent_polarity=_polarity(spec.get("polarity"), path, k))
    for k, target in aliases.items():
        if target not in entries:
            raise DataError(path, f"same_as names {target!r}, which has no entry", row=f"input {k!r}", field="same_as")
        entries[k] = entries[target]
    other = _str_list(data.get("other_quantities"), path, "other_quantities", "other_quantities")
    return entries, other


def lexicon_entry(name: str) -> Entry | None:
    """The lexicon entry of a declared input name (case-insensitive), or ``None``."""
    return _lexicon()[0].get(str(name).strip().lower())


def _term_pattern(term: str) -> str:
    esc = re.escape(term).replace(r"\ ", r"\s+")
    exact = len(term) <= 4 and any(c.isupper() for c in term)  # HR, Cr, Na, Mg: abbreviations keep their case
    body = esc if exact else "(?i:" + esc + ")"
    return r"(?<![\w])" + body + r"(?![\w])"


@lru_cache(maxsize=4096)
def _compiled(terms: tuple[str, ...], patterns: tuple[str, ...] = ()) -> re.Pattern[str] | None:
    parts = [_term_pattern(t) for t in sorted(set(terms), key=len, reverse=True)]
    parts += ["(?i:" + p + ")" for p in patterns]
    return re.compile("|".join(parts)) if parts else None


def _spans(text: str, terms: tuple[str, ...], masks: tuple[str, ...] = (), patterns: tuple[str, ...] = ()
           ) -> list[tuple[int, int]]:
    """Where ``terms`` (or ``patterns``) name something in ``text``, outside every ``masks`` phrase."""
    pat = _compiled(terms, patterns)
    if pat is None:
        return []
    mask = _compiled(masks) if masks else None
    masked = [(m.start(), m.end()) for m in mask.finditer(text)] if mask is not None else []
    return [(m.start(), m.end()) for m in pat.finditer(text)
            if not any(a <= m.start() and m.end() <= b for a, b in masked)]


# ------------------------------------------------------------------------------------------------
# text structure: sentences, clauses, numbers

_SENTENCE_END = re.compile(r"(?<!\d)\.(?=\s|$)|(?<=\d)\.(?=\s+[A-Z(])|[;!?\n]")
_CLAUSE_BREAK = re.compile(r"\b(?:but|however|although|though|except|whereas|while|yet|aside from|apart from)\b|[;:]",
                           re.I)
_NUMBER = re.compile(r"(?<![\w.,/])(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\d])|(?<![\w.,/])\d+,\d{1,2}(?![\d,])"
                     r"|(?<=/)\d+(?:\.\d+)?(?![\d])")
_DATE = re.compile(r"\b\d{1,2}/\d{1,2}/\d{2,4}\b|\b\d{4}-\d{1,2}-\d{1,2}\b|\b\d{1,2}-\d{1,2}-\d{4}\b"
                   r"|(?i:\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d{1,2}(?:st|nd|rd|th)?"
                   r"(?:,?\s+\d{4})?)|(?i:\b\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct"
                   r"|nov|dec)[a-z]*\b(?:,?\s+\d{4})?)|\b(?:19|20)\d{2}\b")
_RANGE = re.compile(r"(?<![A-Za-z\d.])\d+(?:\.\d+)?\s*(?:-|–|—|to)\s*\d+(?:\.\d+)?")
_REFERENCE_CUE = re.compile(r"\b(?:normal|reference|ref|range|uln|upper limit|lower limit|nl)\b|[<>≤≥]", re.I)
_TIME_CUE = re.compile(r"\b(?:ago|baseline|previous(?:ly)?(?! healthy)|prior to (?:this |the |her |his )?(?:admission|presentation"
                       r"|hospitali[sz]ation)|before (?:this |the |her |his )?(?:admission|presentation)|last (?:year|month|"
                       r"visit)|at (?:her|his|the) (?:last|previous|prior) (?:visit|admission)|earlier this year|last recorded)\b",
                       re.I)
_STRONG_TIME_CUE = re.compile(r"\b(?:(?:\d+|a|an|one|two|three|four|five|six|several|a few)\s+(?:years?|months?|weeks?|days?)"
                              r"\s+(?:ago|earlier|before|prior)|years? ago|months? ago|"
                              r"(?:prior to|before) (?:this |the |her |his )?(?:admission|presentation|"
                              r"hospitali[sz]ation)|last recorded|at discharge|on discharge)\b", re.I)
_ELSEWHERE_CUE = re.compile(r"\b(?:(?:at|from|in) (?:an?|another|the referring|an outside|a nearby|a local) (?:hospital|facility|"
                            r"clinic)|outside hospital|repeat(?:ed)? (?:blood |laboratory |lab )?(?:tests?|labs?|results|"
                            r"measurements?))\b", re.I)
# "initially X, but now Y": the first value is the earlier one
_INITIALLY_BUT = re.compile(r"\binitially\b", re.I)
# a finding that is the effect of a treatment given ("hypertension resulting from epinephrine administration")
_TREATMENT_EFFECT = re.compile(r"\b(?:resulting from|induced by|caused by|due to|secondary to)\b[^.;]{0,40}?\b(?:administration|"
                               r"infusion|injection|bolus|overdose)\b", re.I)
# a value measured later than the presentation the definition asks about
_DAY_CUE = re.compile(r"\b(?:on (?:hospital )?day[- ]\d+|hospital day[- ]\d+|(?:on|by) (?:the )?(?:end of )?(?:the )?"
                      r"(?:second|third|fourth|fifth|sixth|seventh|\d+(?:st|nd|rd|th)) (?:day|hospital day)|(?:on|by) "
                      r"(?:the end of )?day (?:two|three|four|five|six|seven|\d+)|day[- ]\d+ of (?:admission|"
                      r"hospitali[sz]ation))\b", re.I)
_LATER_CUE = re.compile(r"\b(?:later|subsequently|thereafter|afterwards?|repeat(?:ed)?|post-?operative(?:ly)?|(?:decreased|increased|dropped|rose|fell|improved|"
                        r"worsened|declined) to|transferred to|started developing|evolving|follow-?up|at discharge|"
                        r"on discharge|after (?:treatment|therapy|(?:\d+|several|a few|two|three) (?:days?|weeks?|"
                        r"hours?)))\b", re.I)
_PRESENTATION = re.compile(r"\b(?:on|at|upon) (?:admission|presentation|arrival)|in the (?:ED|emergency department|emergency room)"
                           r"|initial (?:labs?|laboratory|vital)", re.I)
_PAST_CUE = re.compile(r"\b(?:in the past|remote|(?<!-)old|PMH|past medical history|years? ago|months? ago|\d+ (?:years?|"
                       r"months?|weeks?) (?:ago|earlier|before)|previous(?:ly)?(?! healthy)|prior)\b|\b(?:19|20)\d{2}\b", re.I)
# inputs whose definition asks about a time window: a dated or past mention needs a stated timepoint
_WINDOW = re.compile(r"last month|within|recent|past 24 hours|previous 4 weeks|≤3 days|\bacute\b|\bcurrent\b|\bactive\b",
                     re.I)
_NEGATION_BEFORE = re.compile(r"\b(?:no|not|never|denie[sd]|deny|denying|without|negative for|free of|absence of|"
                              r"(?:do|does|did|has|have|had|could|would|can)(?:n't| not)|cannot|none of|nor|"
                              r"absent|ruled out|rules out|rule out|ruling out|r/o|unremarkable for|did not have|does not have|"
                              r"had no|has no|nor|neither|lack of|lacks)\b", re.I)
_NEGATION_AFTER = re.compile(r"^\W{0,3}(?:\w+\W+){0,3}?(?:was|were|is|are|has been|had been|been)?\s*(?:ruled out|excluded|"
                             r"negative|absent|not (?:present|seen|found|detected|identified|noted|observed|reported)|"
                             r"denied|unlikely|none)\b", re.I)
_PLANNED = re.compile(r"\b(?:scheduled (?:for|to)|planned|planning|plan (?:for|to)|will (?:undergo|have|be)|to undergo|"
                      r"candidate for|considered for|consideration of|referred for|awaiting|pending|suspected|suspicion of|"
                      r"suspicious (?:for|of)|suggestive (?:of|signs of)|suggests|presumed|presumptive|questionable|"
                      r"possible|possibly|probable|probably|likely|concern for|concerning for|risk of|at risk for|"
                      r"rule out|ruling out|r/o|prophylaxis|differential diagnosis)\b", re.I)
_FAMILY = re.compile(r"\b(?:family history|family member|mother|father|brother|sister|sibling|siblings|parent|parents|"
                     r"son|daughter|grandmother|grandfather|aunt|uncle|cousin|relative|relatives|maternal|paternal)\b",
                     re.I)
_RESPECTIVELY = re.compile(r"\brespectively\b", re.I)


def _sentence(text: str, pos: int) -> tuple[int, int]:
    """The sentence of ``text`` around ``pos`` (ends at ``.``+space, ``;``, ``!``, ``?``, a newline)."""
    start = 0
    for m in _SENTENCE_END.finditer(text, 0, pos):
        start = m.end()
    end = _SENTENCE_END.search(text, pos)
    return start, (end.start() if end else len(text))


CONTEXT_SENTENCES = 3  # sentences before a value whose time cues date it ("On day 3 ...; HR 94")


def _context_start(text: str, sentence_start: int) -> int:
    """Where the :data:`CONTEXT_SENTENCES` sentences before the one starting at ``sentence_start`` begin
    (never before the paragraph: a blank line ends the context)."""
    start = sentence_start
    for _ in range(CONTEXT_SENTENCES):
        if start <= 0 or text[max(0, start - 2):start].count("\n") >= 2:
            break
        start = _sentence(text, max(0, start - 2))[0]
    return start


def _context_cue(text: str, sa: int, s: int) -> re.Match[str] | None:
    """The time a value's sentence and the sentences before it set ("On day 3 of admission ...", "tested
    in another hospital. Blood tests: AST 444"): the last such cue before the value, unless a later
    one says the presentation ("On admission, ...", "Initial laboratory results")."""
    cues = [m for rx in (_DAY_CUE, _ELSEWHERE_CUE, _PRESENTATION) for m in rx.finditer(text, _context_start(text, sa), s)]
    if not cues:
        return None
    last = max(cues, key=lambda m: m.start())
    return None if _PRESENTATION.fullmatch(last.group(0)) else last


def _clause(text: str, pos: int) -> tuple[int, int]:
    """The clause of the sentence around ``pos``: the sentence cut at ``but``, ``however``, ``;``, ``:`` ..."""
    a, b = _sentence(text, pos)
    start, end = a, b
    for m in _CLAUSE_BREAK.finditer(text, a, b):
        if m.end() <= pos:
            start = m.end()
        elif m.start() >= pos:
            end = m.start()
            break
    return start, end


def _numbers(text: str) -> Iterator[tuple[int, int, float]]:
    for m in _NUMBER.finditer(text):
        try:
            raw = m.group(0)
            decimal_comma = re.fullmatch(r"\d+,\d{1,2}", raw) is not None  # "12,35 mg/dL"
            yield m.start(), m.end(), float(raw.replace(",", ".") if decimal_comma else raw.replace(",", ""))
        except ValueError:
            continue


def _same_number(printed: float, value: Any) -> bool:
    try:
        v = float(value)
    except (TypeError, ValueError):
        return False
    return abs(printed - v) <= 1e-9 * max(1.0, abs(v))


# ------------------------------------------------------------------------------------------------
# quantities named in a text


@lru_cache(maxsize=1)
def _all_quantities() -> tuple[tuple[str, Entry], ...]:
    """Every lexicon entry with names (inputs and the other quantities), as (key, entry)."""
    entries, other = _lexicon()
    out = [(k, e) for k, e in entries.items() if e.names or e.patterns]
    out += [(f"other:{t.lower()}", Entry((t,), (), (), (), ())) for t in other]
    return tuple(out)


def _mentions(text: str, a: int, b: int) -> list[tuple[int, int, str]]:
    """Every quantity term inside ``text[a:b]``: (start, end, entry key), longest match first at a place."""
    found: list[tuple[int, int, str]] = []
    piece = text[a:b]
    for key, e in _all_quantities():
        for s, t in _spans(piece, e.names, e.masks, e.patterns):
            found.append((a + s, a + t, key))
    found.sort(key=lambda x: (x[0], -(x[1] - x[0])))
    out: list[tuple[int, int, str]] = []
    for s, t, k in found:  # leftmost-longest: "urine sodium level" is the urine sodium, not a "sodium level"
        if any((s, t) != (s2, t2) and s < t2 and s2 < t for s2, t2, _ in out):
            continue
        if any(s >= s2 and t <= t2 and (t2 - s2) > (t - s) for s2, t2, _ in found):
            continue
        out.append((s, t, k))
    return out


def _keys_of(name: str) -> set[str]:
    """The lexicon keys that denote the same input as ``name`` (itself and its ``same_as`` aliases)."""
    entries, _ = _lexicon()
    mine = entries.get(name.lower())
    return {k for k, e in entries.items() if mine is not None and e is mine}


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


def _unit_after(text: str, end: int) -> tuple[str | None, str | None]:
    """(the unit printed right after a number as written, its normalised spelling when some unit kind
    knows it), longest known spelling first."""
    rest = text[end:end + 40]
    m = re.match(r"\s*(?:×|x)?\s*([^\s,;()]+(?:\s+[^\s,;()]+){0,2})", rest)
    if not m:
        return None, None
    words = m.group(1).split()
    known = _known_units()
    for n in range(len(words), 0, -1):
        cand = " ".join(words[:n]).rstrip(".,")
        norm = U.normalise_unit(cand)
        if norm in known:
            return cand, norm
    return words[0].rstrip(".,") if words else None, None


@lru_cache(maxsize=1)
def _known_units() -> frozenset[str]:
    return frozenset(u for kind in U.CANONICAL for u in U.known_units(kind))


RESPECTIVELY_UNPAIRED = "\x00respectively"


def _distinct_places(mentions: list[tuple[int, int, str]]) -> list[list[tuple[int, int, str]]]:
    """Mentions grouped by place (one place may be named by several entries), in text order."""
    groups: dict[tuple[int, int], list[tuple[int, int, str]]] = {}
    for m in sorted(mentions):
        groups.setdefault((m[0], m[1]), []).append(m)
    return list(groups.values())


def _respectively(text: str, sa: int, r: int, inside: list[tuple[int, int, str]], s: int
                  ) -> list[tuple[int, int, str]] | None:
    """The names paired with the number at ``s`` by "A and B were x and y, respectively" (``r``: where
    "respectively" is): the numbers after the last name before ``r`` pair in order with the run of
    names before them. ``None`` when the number is not in that list; ``[]`` when the list does not
    pair one to one."""
    before_r = [m for m in inside if m[1] <= r]
    if not before_r:
        return None
    last_name = max(m[1] for m in before_r)
    nums = [sa + a for a, _b, _v in _numbers(text[sa:r]) if sa + a >= last_name]
    if s not in nums:
        return None
    places = _distinct_places([m for m in before_r if m[1] <= nums[0]])
    run: list[list[tuple[int, int, str]]] = []
    for group in reversed(places):  # the names with no number between them, nearest first
        if run and any(group[0][1] <= sa + a < run[0][0][0] for a, _b, _v in _numbers(text[sa:r])):
            break
        run.insert(0, group)
    if len(run) != len(nums) or len(nums) < 2:
        return []
    return run[nums.index(s)]


def _attributed(text: str, s: int, e: int, mentions: list[tuple[int, int, str]],
                mine: set[str] = frozenset()) -> tuple[str | None, int | None]:  # type: ignore[assignment]
    """The quantity a number at ``text[s:e]`` belongs to: a term right after it (``74-year-old``,
    ``18 breaths per minute``, after its unit), a ``respectively`` pairing, else the nearest term
    before it in its sentence."""
    sa, sb = _sentence(text, s)
    inside = [m for m in mentions if sa <= m[0] and m[1] <= sb]
    around = [m for m in inside if m[0] <= s and e <= m[1]]  # a term that contains the number ("100% oxygen")
    if around:
        return _prefer(around, mine), around[0][0]
    after = [m for m in inside if m[0] >= e and m[0] - e <= 3 and re.fullmatch(r"[\s\-]*", text[e:m[0]])]
    unit, _ = _unit_after(text, e)
    if unit is not None:
        gap = text.find(unit, e)
        after += [m for m in inside if gap >= 0 and m[0] >= gap and m[0] - (gap + len(unit)) <= 1 and m not in after]
        after += [m for m in inside if gap >= 0 and gap <= m[0] < gap + len(unit) and m not in after]
    if after:
        start = min(m[0] for m in after)
        first = [m for m in after if m[0] == start]
        return _prefer(first, mine), start
    resp = _RESPECTIVELY.search(text, e, sb)
    if resp is not None:
        paired = _respectively(text, sa, resp.start(), inside, s)
        if paired is not None:
            return (_prefer(paired, mine), paired[0][0]) if paired else (RESPECTIVELY_UNPAIRED, None)
    before = [m for m in inside if m[1] <= s]
    if before:
        end = max(m[1] for m in before)
        last = [m for m in before if m[1] == end]
        return _prefer(last, mine), last[0][0]
    return None, None


def _prefer(tied: list[tuple[int, int, str]], mine: set[str]) -> str:
    """The key of tied mentions (one place named by several entries): the input's own when it is one."""
    return next((m[2] for m in tied if m[2] in mine), tied[0][2])


def _number_verdict(spec: InputSpec, keys: set[str], inp: Mapping[str, Any], text: str, qs: int, qe: int) -> Verdict:
    """``text[qs:qe]`` is the quote; ``text`` is the note (or the quote alone), read around it."""
    value, unit = inp.get("value"), inp.get("unit")
    quote = text[qs:qe]
    hits = [(qs + s, qs + e) for s, e, v in _numbers(quote) if _same_number(v, value)]
    if not hits:
        return _no("value-not-printed", f"{value!r} is not printed in {quote!r}")
    sa, _ = _sentence(text, qs)
    _, sb = _sentence(text, max(qs, qe - 1))
    mentions = _mentions(text, sa, sb)
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
    for m in _DATE.finditer(quote):
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
            in_range = any(r.start() <= s and e <= r.end() for r in _RANGE.finditer(quote, m.start(), m.end()))
            if in_range or _REFERENCE_CUE.search(lead):
                return _no("reference-bound", f"{printed} lies in the reference range {m.group(0)!r}")
    for m in _RANGE.finditer(quote):
        if m.start() <= s and e <= m.end():
            if _REFERENCE_CUE.search(quote[max(0, m.start() - 25):m.start()]):
                return _no("reference-bound", f"{printed} bounds the reference range {m.group(0)!r}")
            return _no("range-endpoint", f"{printed} is an endpoint of the range {m.group(0)!r}, not one value")
    owner, at = _attributed(quote, s, e, mentions, keys)
    if owner == RESPECTIVELY_UNPAIRED:
        return _no("wrong-quantity", f"{printed} is in a 'respectively' list whose names and numbers do not pair "
                                     f"one to one: {quote[slice(*_sentence(quote, s))].strip()[:160]!r}")
    if owner is None:
        return _no("bare-number", f"{printed} in {quote!r} is attributed to no named quantity")
    if owner not in keys:
        term = next((quote[a:b] for a, b, k in mentions if a == at), owner)
        return _no("wrong-quantity", f"{printed} is the {term!r} of {quote[slice(*_sentence(quote, s))].strip()[:160]!r}, "
                                     f"not {spec.name}")
    if at is None or not (qs <= at < qe):
        return _no("bare-number", f"{printed} is the {spec.name} of the note, but the quote "
                                  f"{quote[qs:qe]!r} does not name it")
    if dbp and re.search(r"\d\s*/\s*$", before) is None and re.search(r"^\s*/\s*\d", quote[e:e + 3]):
        return _no("wrong-quantity", f"{printed} is the systolic pressure of {quote[s:e + 6].strip()!r}, not {spec.name}")
    shown, norm = _unit_after(quote, e)
    if norm is not None and _unit_reading_declared(inp, norm):
        norm = None  # the record says how it reads this printed unit ("5.3 g/l" read as g/dL) and why
    if norm is not None:
        if spec.accessor == "quantity" and spec.kind and norm not in U.known_units(spec.kind) and spec.kind != "rate":
            return _no("unit-mismatch", f"{printed} {shown} is not a unit of {spec.kind} ({', '.join(spec.units)})")
        if unit is not None and str(unit).strip() and spec.kind and U.normalise_unit(str(unit)) in U.known_units(spec.kind) \
                and U.normalise_unit(str(unit)) != norm and spec.kind != "rate":
            return _no("unit-mismatch", f"the quote prints {printed} {shown}, the record says {unit}")
    a = max(0, min(at if at is not None else s, s) - 30)
    sa, sb = _sentence(quote, s)
    window = quote[max(a, sa):min(sb, e + 40)]
    but = re.compile(r"\bbut\b", re.I).search(quote, e, sb)
    initially = _INITIALLY_BUT.search(quote, sa, s) if but else None
    cue = _TIME_CUE.search(window) or _STRONG_TIME_CUE.search(quote, sa, sb) or _LATER_CUE.search(quote, sa, sb) or initially \
        or _context_cue(quote, sa, s) or next(
            (m for m in _DATE.finditer(window) if not (m.start() <= s - max(a, sa) < m.end())), None)
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


def _negated(text: str, s: int, e: int) -> bool:
    """Whether the term at ``text[s:e]`` is negated in its own clause (a cue before it, or
    ``was ruled out`` / ``negative`` right after it)."""
    ca, cb = _clause(text, s)
    if _NEGATION_BEFORE.search(text, ca, s):
        return True
    return bool(_NEGATION_AFTER.match(text[e:cb]))


def _criterion_verdict(spec: InputSpec, entry: Entry, inp: Mapping[str, Any], text: str, qs: int, qe: int,
                       note: str | None, terms: tuple[str, ...]) -> Verdict:
    value = inp.get("value")
    if entry.absent_polarity and isinstance(value, bool):  # "Cough Absent = true" states that cough is absent
        value = not value
        inp = {**inp, "value": value}
    family_input = any(w in spec.name.lower() for w in ("family", "parent or sibling"))
    spans = [(qs + a, qs + b) for a, b in _spans(text[qs:qe], terms, entry.masks, entry.patterns)]
    negating = [(qs + a, qs + b) for a, b in _spans(text[qs:qe], entry.negating)] if entry.negating else []
    spans = [sp for sp in spans if not any(a <= sp[0] and sp[1] <= b for a, b in negating)]  # "quit smoking" negates
    quote = text[qs:qe]
    if _is_absent(value) and negating and quote.strip():
        return _ok(f"{quote!r} states {text[negating[0][0]:negating[0][1]]!r}: {spec.name} absent")
    if _is_absent(value):
        if quote.strip():
            wider = [(qs + a, qs + b) for a, b in _spans(text[qs:qe], entry.broader)] if entry.broader else []
            if not spans and any(_negated(text, a, b) for a, b in wider):
                return _ok(f"{quote!r} negates {text[wider[0][0]:wider[0][1]]!r}, which includes {spec.name}")
            if not spans:
                return _no("not-named", f"{quote!r} names no term of {spec.name}")
            if any(_negated(text, s, e) for s, e in spans):
                return _ok(f"{quote!r} negates {spec.name}")
            return _no("asserted-not-negated", f"{quote!r} names {text[spans[0][0]:spans[0][1]]!r} without negating it")
        if not (spec.accessor == "flag" or not spec.required):
            return _no("absent-by-missing-keyword", f"{spec.name} is required by the definition: silence does not "
                                                    "make it absent")
        for s, e in _spans(note or "", terms, entry.masks, entry.patterns):
            if not _negated(note or "", s, e) and not _planned(note or "", s) and (family_input or not _family(note or "", s)):
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
    window = bool(_WINDOW.search(spec.name)) and not _timepoint_stated(inp)
    failure: Verdict | None = None
    for s, e in spans:
        term = text[s:e]
        clause = text[slice(*_clause(text, s))].strip()[:200]
        if _negated(text, s, e):
            failure = failure or _no("negated", f"{term!r} is negated in {clause!r}")
        elif _planned(text, s):
            failure = failure or _no("planned-or-suspected", f"{term!r} is planned or suspected in {clause!r}")
        elif not family_input and _family(text, s):
            failure = failure or _no("family-history", f"{term!r} is a relative's in {clause!r}")
        elif (effect := _TREATMENT_EFFECT.search(text, e, _clause(text, s)[1])) is not None:
            failure = failure or _no("treatment-effect", f"{term!r} is {effect.group(0)!r} in {clause!r}")
        elif (later := _LATER_CUE.search(text, *_clause(text, s))) and not _timepoint_stated(inp):
            failure = failure or _no("timepoint", f"{term!r} comes {later.group(0)!r} in {clause!r}, after the time the "
                                                  "definition asks about; the record does not say when and why")
        elif window and (cue := _PAST_CUE.search(text, *_near(text, s, e)) or _STRONG_TIME_CUE.search(text, *_near(text, s, e))):
            failure = failure or _no("timepoint", f"{spec.name} asks about a time window and {term!r} is dated "
                                                  f"{cue.group(0)!r} in {clause!r}; the record does not say when and why")
        else:
            return _ok(f"{quote!r} states {term!r}")
    assert failure is not None
    return failure


PLANNED_WINDOW = 45  # characters before a term in which "scheduled for", "suspected" ... qualify it


def _planned(text: str, s: int) -> bool:
    ca, _ = _clause(text, s)
    return bool(_PLANNED.search(text, max(ca, s - PLANNED_WINDOW), s))


def _near(text: str, s: int, e: int) -> tuple[int, int]:
    """A window of the term's sentence around it (60 characters before and after)."""
    sa, sb = _sentence(text, s)
    return max(sa, s - 60), min(sb, e + 60)


def _family(text: str, s: int) -> bool:
    ca, _ = _clause(text, s)
    return bool(_FAMILY.search(text, ca, s))


def _option_terms(spec: InputSpec, entry: Entry | None, value: Any) -> tuple[str, ...]:
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
    entry = lexicon_entry(spec.name) or next((lexicon_entry(a) for a in spec.aliases if lexicon_entry(a)), None)
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
        v = _number_verdict(spec, _keys_of(spec.name) | {a.lower() for a in spec.aliases}, inp, text, qs, qe)
        return _no("outside-population", outside) if v.supports and outside else v
    if spec.accessor == "choice" and not _is_absent(value):
        if not quote.strip():
            return _no("no-quote", f"{spec.name} = {value!r} quotes nothing")
        terms = _option_terms(spec, entry, value)
        fake = Entry(terms, entry.masks if entry else (), (), (), ())
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
    return any(parse_answer(m.group(0), "date").date == want.date for m in _DATE.finditer(quote)
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
    starts = [0] + [m.end() for m in _SENTENCE_END.finditer(note)]
    for a in starts:
        b_m = _SENTENCE_END.search(note, a)
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


__all__ = ["Entry", "RULES", "Verdict", "describe", "find_evidence", "lexicon_entry", "rejected", "verify",
           "verify_inputs"]
