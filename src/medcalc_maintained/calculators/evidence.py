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
    recorded one; a value from another time (``two years ago``, ``baseline``, a date) needs a
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


def _str_list(value: Any, path: Path, key: str, fld: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise DataError(path, "expected a list of non-empty strings", row=f"input {key!r}", field=fld)
    return tuple(v.strip() for v in value)


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
                           _str_list(spec.get("units"), path, k, "units"))
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
    exact = len(term) <= 4 and term.upper() == term and any(c.isalpha() for c in term)
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
_NUMBER = re.compile(r"(?<![\w.,/])(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\d])|(?<=/)\d+(?:\.\d+)?(?![\d])")
_DATE = re.compile(r"\b\d{1,2}/\d{1,2}/\d{2,4}\b|\b\d{4}-\d{1,2}-\d{1,2}\b|\b\d{1,2}-\d{1,2}-\d{4}\b"
                   r"|(?i:\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d{1,2}(?:st|nd|rd|th)?"
                   r"(?:,?\s+\d{4})?)|(?i:\b\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct"
                   r"|nov|dec)[a-z]*\b(?:,?\s+\d{4})?)|\b(?:19|20)\d{2}\b")
_RANGE = re.compile(r"\d+(?:\.\d+)?\s*(?:-|–|—|to)\s*\d+(?:\.\d+)?")
_REFERENCE_CUE = re.compile(r"\b(?:normal|reference|ref|range|uln|upper limit|lower limit|nl)\b|[<>≤≥]", re.I)
_TIME_CUE = re.compile(r"\b(?:ago|baseline|previous(?:ly)?|prior to (?:this |the |her |his )?(?:admission|presentation"
                       r"|hospitali[sz]ation)|before (?:this |the |her |his )?(?:admission|presentation)|last (?:year|month|"
                       r"visit)|at (?:her|his|the) (?:last|previous|prior) (?:visit|admission)|earlier this year)\b", re.I)
_NEGATION_BEFORE = re.compile(r"\b(?:no|not|non|never|denie[sd]|deny|denying|without|negative for|free of|absence of|"
                              r"absent|ruled out|rules out|rule out|r/o|unremarkable for|did not have|does not have|"
                              r"had no|has no|nor|neither|lack of|lacks)\b", re.I)
_NEGATION_AFTER = re.compile(r"^\W{0,3}(?:\w+\W+){0,3}?(?:was|were|is|are|has been|had been|been)?\s*(?:ruled out|excluded|"
                             r"negative|absent|not (?:present|seen|found|detected|identified|noted|observed|reported)|"
                             r"denied|unlikely|none)\b", re.I)
_PLANNED = re.compile(r"\b(?:scheduled (?:for|to)|planned|planning|plan (?:for|to)|will (?:undergo|have|be)|to undergo|"
                      r"candidate for|considered for|consideration of|referred for|awaiting|pending|suspected|suspicion of|"
                      r"possible|probable|concern for|concerning for|risk of|at risk for|rule out|r/o|prophylaxis|"
                      r"evaluat(?:e|ed|ion) for|screen(?:ed|ing) for|if|unless)\b", re.I)
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
            yield m.start(), m.end(), float(m.group(0).replace(",", ""))
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
    for s, t, k in found:  # drop a term inside a longer one ("blood pressure" in "systolic blood pressure")
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


def _attributed(text: str, s: int, e: int, mentions: list[tuple[int, int, str]]) -> tuple[str | None, int | None]:
    """The quantity a number at ``text[s:e]`` belongs to: a term right after it (``74-year-old``,
    ``18 breaths per minute``, after its unit), a ``respectively`` pairing, else the nearest term
    before it in its sentence."""
    sa, sb = _sentence(text, s)
    inside = [m for m in mentions if sa <= m[0] and m[1] <= sb]
    after = [m for m in inside if m[0] >= e and m[0] - e <= 3]
    unit, _ = _unit_after(text, e)
    if unit is not None:
        gap = text.find(unit, e)
        after += [m for m in inside if gap >= 0 and m[0] >= gap and m[0] - (gap + len(unit)) <= 1 and m not in after]
        after += [m for m in inside if gap >= 0 and gap <= m[0] < gap + len(unit) and m not in after]
    if after:
        first = min(after, key=lambda m: m[0])
        return first[2], first[0]
    if _RESPECTIVELY.search(text, sa, sb):
        nums = [n for n in _numbers(text[sa:sb])]
        names = [m for m in inside if m[1] <= sa + nums[-1][0]] if nums else []
        names = [m for m in names if not any(m2[0] > m[1] and m2[2] == m[2] for m2 in names)] if names else []
        before_first = [m for m in names if m[1] <= sa + nums[0][0]] if nums else []
        if nums and len(before_first) == len(nums) >= 2:
            order = [sa + n[0] for n in nums]
            if s in order:
                k = before_first[order.index(s)]
                return k[2], k[0]
    before = [m for m in inside if m[1] <= s]
    if before:
        last = max(before, key=lambda m: m[1])
        return last[2], last[0]
    return None, None


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
        if m.start() < s and e <= m.end() and (_RANGE.search(m.group(0)) or _REFERENCE_CUE.search(m.group(0))):
            return _no("reference-bound", f"{printed} lies in the reference range {m.group(0)!r}")
    for m in _RANGE.finditer(quote):
        if m.start() <= s and e <= m.end():
            if _REFERENCE_CUE.search(quote[max(0, m.start() - 25):m.start()]):
                return _no("reference-bound", f"{printed} bounds the reference range {m.group(0)!r}")
            return _no("range-endpoint", f"{printed} is an endpoint of the range {m.group(0)!r}, not one value")
    owner, at = _attributed(quote, s, e, mentions)
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
    if norm is not None:
        if spec.accessor == "quantity" and spec.kind and norm not in U.known_units(spec.kind) and spec.kind != "rate":
            return _no("unit-mismatch", f"{printed} {shown} is not a unit of {spec.kind} ({', '.join(spec.units)})")
        if unit is not None and str(unit).strip() and spec.kind and U.normalise_unit(str(unit)) in U.known_units(spec.kind) \
                and U.normalise_unit(str(unit)) != norm and spec.kind != "rate":
            return _no("unit-mismatch", f"the quote prints {printed} {shown}, the record says {unit}")
    a = max(0, min(at if at is not None else s, s) - 30)
    sa, sb = _sentence(quote, s)
    window = quote[max(a, sa):min(sb, e + 40)]
    cue = _TIME_CUE.search(window) or next((m for m in _DATE.finditer(window)
                                            if not (m.start() <= s - max(a, sa) < m.end())), None)
    if cue is not None and not _timepoint_stated(inp):
        return _no("timepoint", f"{printed} is dated {cue.group(0)!r}; the record does not say which time the "
                                "definition asks for and why this one")
    return _ok(f"{spec.name} {printed}{(' ' + str(shown)) if norm else ''} is named and printed in {quote[qs:qe]!r}")


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
    family_input = any(w in spec.name.lower() for w in ("family", "parent or sibling"))
    spans = [(qs + a, qs + b) for a, b in _spans(text[qs:qe], terms, entry.masks, entry.patterns)]
    quote = text[qs:qe]
    if _is_absent(value):
        if quote.strip():
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
        return _no("not-named", f"{quote!r} names no term of {spec.name} = {value!r}")
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
        else:
            return _ok(f"{quote!r} states {term!r}")
    assert failure is not None
    return failure


def _planned(text: str, s: int) -> bool:
    ca, _ = _clause(text, s)
    return bool(_PLANNED.search(text, ca, s))


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
    if spec.accessor in ("quantity", "number") and not _is_absent(value):
        if not quote.strip():
            return _no("no-quote", f"{spec.name} = {value!r} quotes nothing")
        if entry is None or not (entry.names or entry.patterns):
            return _no("not-named", f"the lexicon has no terms for {spec.name}")
        return _number_verdict(spec, _keys_of(spec.name) | {a.lower() for a in spec.aliases}, inp, text, qs, qe)
    if spec.accessor == "choice" and not _is_absent(value):
        if not quote.strip():
            return _no("no-quote", f"{spec.name} = {value!r} quotes nothing")
        terms = _option_terms(spec, entry, value)
        fake = Entry(terms, entry.masks if entry else (), (), (), ())
        return _criterion_verdict(spec, fake, {**inp, "value": True}, text, qs, qe, note, terms)
    if spec.accessor == "date" and not _is_absent(value):
        return _ok(f"{value} is printed in {quote!r}") if str(value) in quote or _date_in(quote, value) else \
            _no("value-not-printed", f"the date {value!r} is not printed in {quote!r}")
    if entry is None or not (entry.names or entry.patterns):
        return _no("not-named", f"the lexicon has no terms for {spec.name}")
    return _criterion_verdict(spec, entry, inp, text, qs, qe, note, entry.names)


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
