"""The numbers a patient note prints and the units after them, as the evidence verifier reads them (re-exported
by :mod:`.note_text`): plain numbers (``1,200`` is 1200; signs are never read), the two European spellings a
plain reading splits (a decimal comma before a unit, groups of three digits split by a space before a count's
per-volume unit), numbers spelled as words, and the unit after a number (with a power of ten whose superscript
a copy flattened, read only after a multiplication sign and before a per-volume unit)."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Iterator

from medcalc_maintained.core import units as U

NUMBER = re.compile(r"(?<![\w.,/])(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\d])|(?<=/)\d+(?:\.\d+)?(?![\d])")
# a number written in one of two European ways, read as one number only where its unit says so (:func:`numbers`):
# a decimal comma ("12,35 mg/dL", never "12,350" nor a list "3,4,5") and a space between groups of three digits
# ("186 000/µL", a count)
DECIMAL_COMMA = re.compile(r"(?<![\w.,/])(\d{1,3}),(\d{1,2})(?!\d)(?!,\d)")
# a height in metres whose decimal comma a copy followed by a space ("a height of 1, 65 m"): one digit 1 or 2, two
# digits after, and the unit metres right after; never "1, 65 cm", "1, 6 m" nor a list "1, 65 and 80 m"
SPACED_COMMA_METRES = re.compile(r"(?<![\w.,/])([12]), (\d{2})(?=\s*m\b(?!\s*/))")
SPACED_THOUSANDS = re.compile(r"(?<![\w.,/])\d{1,3}(?: \d{3})+(?![\d.,]\d|\d)")
# a flattened exponent as a last group is a power of ten ("183 103/uL" is 183 x 10^3/uL), never a thousands group
FLAT_EXPONENT_GROUP = re.compile(r" 10[34569]$")
UNIT_WORDS = frozenset({"in"})  # known unit spellings that are also words of a sentence ("3,4 in ...")


def numbers(text: str, start: int = 0, end: int | None = None) -> Iterator[tuple[int, int, float]]:
    """``(start, end, value)`` of each number printed in ``text`` (or in ``text[start:end]``, offsets
    into ``text``): ``1,200`` is 1200; ``12,35 mg/dL`` is 12.35 and ``186 000/µL`` is 186000 where the unit
    after them says so (:func:`european_numbers`); signs are never read."""
    stop = len(text) if end is None else end
    merged = european_numbers(text, start, stop) if ("," in text or " " in text) else {}
    skip = -1
    for m in NUMBER.finditer(text, start, stop):
        if m.start() < skip:
            continue
        one = merged.get(m.start())
        if one is not None:
            skip = one[0]
            yield m.start(), one[0], one[1]
            continue
        try:
            yield m.start(), m.end(), float(m.group(0).replace(",", ""))
        except ValueError:
            continue


def european_numbers(text: str, start: int, end: int) -> dict[int, tuple[int, float]]:
    """``{start: (end, value)}`` of the numbers a European note prints that the plain reading splits: a decimal
    comma followed by a unit ("12,35 mg/dL", "1,6 mmol/l"; not "12,350", "3,4 and 5", "1,25-dihydroxy") and
    groups of three digits split by a space followed by a count's per-volume unit ("186 000/µL"; not "12 021 ml",
    nor "183 103/uL", a power of ten whose sign was lost), and a height in metres whose decimal comma a space follows
    ("1, 65 m": :data:`SPACED_COMMA_METRES`)."""
    out: dict[int, tuple[int, float]] = {}
    for m in DECIMAL_COMMA.finditer(text, start, end):
        shown, norm = unit_after(text, m.end())
        if norm is not None and shown is not None and shown.lower() not in UNIT_WORDS:
            out[m.start()] = (m.end(), float(f"{m.group(1)}.{m.group(2)}"))
    for m in SPACED_COMMA_METRES.finditer(text, start, end):
        if unit_after(text, m.end())[1] == "m":
            out[m.start()] = (m.end(), float(f"{m.group(1)}.{m.group(2)}"))
    for m in SPACED_THOUSANDS.finditer(text, start, end):
        if not FLAT_EXPONENT_GROUP.search(m.group(0)) and per_volume_count(unit_after(text, m.end())[1]):
            out[m.start()] = (m.end(), float(m.group(0).replace(" ", "")))
    return out


def per_volume_count(norm: str | None) -> bool:
    """Whether a normalised unit is a count per volume ("/µL", "/mm^3", "10^9/L", "K/µL")."""
    return norm is not None and norm in U.known_units("count_per_ul") and ("/" in norm or norm == "mm^3")


NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
                "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen")
TENS_WORDS = ("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
# a whole number spelled from 0 to 99: "fifty-two" and "seventy three" are one number each, never a "two" or a "fifty"
SPELLED = re.compile(rf"\b(?:(?P<tens>{'|'.join(TENS_WORDS)})(?:[\s-](?P<unit>{'|'.join(NUMBER_WORDS[1:10])})\b)?"
                     rf"|(?P<small>{'|'.join(NUMBER_WORDS)}))\b", re.I)
# a spelled number that is a part of a larger one ("two hundred", "one hundred and fifty") or a fraction ("two-thirds")
SPELLED_PART_BEFORE = re.compile(r"\b(?:hundred|thousand|million)\s+(?:and\s+)?$", re.I)
SPELLED_PART_AFTER = re.compile(r"^[\s-]*(?:hundred|thousand|million|half|halves|thirds?|quarters?|fourths?|fifths?|"
                                r"sixths?|eighths?|tenths?)\b", re.I)


A_SINGLE = re.compile(r"\ba\s+(single)\b", re.I)  # "a single drink": one


def spelled_numbers(text: str, value: Any) -> list[tuple[int, int]]:
    """Where ``text`` spells the whole number ``value`` (0 to 99) as words ("four alcoholic drinks", "a fifty-two-year-old",
    one as "a single drink"), the whole of a compound only (the "two" of "fifty-two" is no two) and never a part of a
    larger number or a fraction ("two hundred", "one hundred and fifty", "two-thirds")."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        return []
    if isinstance(value, bool) or not v.is_integer() or not 0 <= v <= 99:
        return []
    out = []
    for m in SPELLED.finditer(text):
        if m.group("small"):
            n = NUMBER_WORDS.index(m.group("small").lower())
        else:
            n = 20 + 10 * TENS_WORDS.index(m.group("tens").lower())
            n += NUMBER_WORDS.index(m.group("unit").lower()) if m.group("unit") else 0
        if n == int(v) and not SPELLED_PART_BEFORE.search(text, max(0, m.start() - 20), m.start()) \
                and not SPELLED_PART_AFTER.match(text[m.end():m.end() + 12]):
            out.append((m.start(), m.end()))
    if int(v) == 1:
        out += [(m.start(1), m.end(1)) for m in A_SINGLE.finditer(text)]
    return sorted(out)


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
    m = re.match(r"\s*(×|x|X|\*)?\s*([^\s,;()]+(?:\s+[^\s,;()]+){0,2})", rest)
    if not m:
        return None, None
    words = m.group(2).split()
    known = known_units()
    for n in range(len(words), 0, -1):
        cand = " ".join(words[:n]).rstrip(".,")
        power = FLAT_POWER.match(cand) if m.group(1) else None
        norm = U.normalise_unit(f"10^{power.group(1)}{cand[power.end():]}" if power else cand)
        if norm in known:
            return cand, norm
    return words[0].rstrip(".,") if words else None, None


# a power of ten whose superscript a copy flattened, read only right after a multiplication sign and before a
# per volume unit: "16.5 × 104/µL" is 16.5 x 10^4/µL (and "× 106/mm3", "× 1012/L")
FLAT_POWER = re.compile(r"10\s?(3|4|6|9|12)\s*(?=/)")


# the times sign before a flattened power read as a number of its own ("283 × 103/dL": the 103)
TIMES_BEFORE = re.compile(r"\d\s*[×xX*]\s*$")


def flat_exponent(text: str, start: int, end: int) -> bool:
    """Whether the number at ``text[start:end]`` is the flattened power of ten of the number before it ("103" in
    "283 × 103/dL"), not a value of its own."""
    m = FLAT_POWER.match(text, start)
    return m is not None and m.end() >= end and TIMES_BEFORE.search(text, max(0, start - 8), start) is not None


@lru_cache(maxsize=1)
def known_units() -> frozenset[str]:
    return frozenset(u for kind in U.CANONICAL for u in U.known_units(kind))
