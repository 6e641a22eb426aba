"""Lists of names and lists of numbers that a note pairs in order, as the evidence verifier reads them (used by
:func:`.note_attribution.attributed`): "height, weight and blood pressure were 165 cm, 66 kg and 120/73 mmHg,
respectively", "systolic and diastolic pressures of 118 and 74 mm Hg", "norepinephrine and epinephrine at 0.1
mcg/kg/min each".

The names are a run of quantity terms joined by list separators (a comma, ``and``, ``or``, a slash), an
abbreviation in parentheses after a name being the same name ("peripheral oxygen saturation (SpO2)"); the list's
items are the pieces between the separators, one of which may name a quantity the lexicon does not know ("waist
circumference"). The values are the numbers after the last name, a slash group ("120/73") being one value when
that pairs one to one, a number in parentheses (a reference range) none. A number pairs with the item at its
place; a list that does not pair one to one pairs nothing.
"""

from __future__ import annotations

import re

from medcalc_maintained.calculators.note_numbers import numbers

UNPAIRED = "\x00respectively"
UNNAMED = "\x00an unnamed item of the list"

PARENTHETICAL = re.compile(r"\([^()]*\)|\[[^\[\]]*\]")
# what joins two names of one list ("height, body weight, and", "systolic and diastolic", "sodium/potassium")
JOIN = re.compile(r"[\s,]*(?:(?:\band\b|\bor\b|&|/)[\s,]*)?", re.I)
SEPARATOR = re.compile(r",|/|&|\band\b|\bor\b", re.I)
# what may stand between two values of one list: a unit (at most two words), commas, "and"
VALUE_GAP = re.compile(r"\s*(?:[^\s\d,]+\s*){0,2}?[\s,]*(?:(?:and|or)\s+)?", re.I)
POWER_BEFORE = re.compile(r"(?:[×xX*]|\^)\s*$")
EACH = re.compile(r"^\s*(?:each|apiece|for (?:both|each))\b", re.I)

Mention = tuple[int, int, str]


def blank_parentheticals(text: str, a: int, b: int) -> str:
    """``text[a:b]`` with every parenthesised piece blanked (same length, so offsets hold)."""
    piece = text[a:b]
    return PARENTHETICAL.sub(lambda m: " " * len(m.group(0)), piece)


def places(text: str, sa: int, mentions: list[Mention], end: int) -> list[tuple[list[Mention], int]]:
    """The places named before ``end`` in the sentence from ``sa``, outside parentheses, in text order, each with
    where its name ends: a term joined to the one before it by a hyphen ("lipoprotein-cholesterol") is part of that
    name, a unit's term right after a value ("76 beats/min") is none."""
    flat = blank_parentheticals(text, sa, end)
    groups: dict[tuple[int, int], list[Mention]] = {}
    for m in sorted(mentions):
        if sa <= m[0] and m[1] <= end and flat[m[0] - sa:m[1] - sa].strip():
            groups.setdefault((m[0], m[1]), []).append(m)
    out: list[tuple[list[Mention], int]] = []
    for g in groups.values():
        if out and out[-1][1] <= g[0][0] and re.fullmatch(r"-", text[out[-1][1]:g[0][0]]):
            out[-1] = (out[-1][0], g[0][1])  # "high density lipoprotein-cholesterol": one name
            continue
        if (out and g[0][0] < out[-1][1]) or re.search(r"\d\s*$", text[max(sa, g[0][0] - 12):g[0][0]]):
            continue
        out.append((g, g[0][1]))
    return out


def name_run(text: str, found: list[tuple[list[Mention], int]], joined: bool = True) -> list[tuple[list[Mention], int]]:
    """The last run of places joined by list separators (parenthesised pieces between them read as blank); not
    ``joined``: the last run of places with no number between them ("norepinephrine along with epinephrine")."""
    run: list[tuple[list[Mention], int]] = []
    for g, g_end in reversed(found):
        raw = text[g_end:run[0][0][0][0]] if run else ""
        if run and (any(True for _ in numbers(raw)) or (joined and not JOIN.fullmatch(blank_parentheticals(raw, 0, len(raw))))):
            break  # a number between two names ("hemoglobin (10.1 g/dL), platelet count") ends the list of names
        run.insert(0, (g, g_end))
    return run


def values(text: str, a: int, b: int, merge: bool) -> list[list[int]]:
    """The values printed in ``text[a:b]`` outside parentheses, each as the starts of its numbers (a slash group one
    value where ``merge``)."""
    flat = blank_parentheticals(text, a, b)
    out: list[list[int]] = []
    prev_end = None
    for s, e, _ in numbers(flat):
        if POWER_BEFORE.search(flat[max(0, s - 4):s]):
            continue  # "3.3 × 106/mm3": a power of ten of the value before it
        if merge and out and prev_end is not None and re.fullmatch(r"\s*/\s*", flat[prev_end:s]):
            out[-1].append(a + s)
        else:
            out.append([a + s])
        prev_end = e
    return out


def items(text: str, a: int, b: int) -> list[tuple[int, int]]:
    """The items of a list of names ``text[a:b]``: the pieces between its separators, parentheses blanked."""
    flat = blank_parentheticals(text, a, b)
    cuts = [0] + [x for m in SEPARATOR.finditer(flat) for x in (m.start(), m.end())] + [len(flat)]
    spans = [(a + cuts[i], a + cuts[i + 1]) for i in range(0, len(cuts), 2)]
    return [(x, y) for x, y in spans if text[x:y].strip(" ,")]


def paired(text: str, sa: int, end: int, s: int, mentions: list[Mention], explicit: bool) -> list[Mention] | None:
    """The names a list pairs with the number at ``s`` (the list's values end at ``end``: "respectively" or the
    sentence's end): ``None`` when the number is in no such list, ``[]`` when the list does not pair one to one
    (only said where ``explicit``: a "respectively", whose values follow the last name before it; a list without
    one pairs only where its values follow its names directly, "systolic and diastolic pressures of 118 and 74")."""
    found = places(text, sa, mentions, end if explicit else s)
    if any(g[0][0] > s for g, _ in found):
        return None  # a name between the number and "respectively": another list's
    for joined in (True, False):
        run = name_run(text, found, joined)
        if not run:
            return None
        first_at, last_end = run[0][0][0][0], run[-1][1]
        after = values(text, last_end, end, False)
        if not any(s in v for v in after):
            return None
        pieces = items(text, first_at, after[0][0]) if joined else [(g[0][0], g_end) for g, g_end in run]
        for merge in (True, False):
            vals = values(text, after[0][0], end, merge)
            vals = vals if explicit else _contiguous(text, vals)
            if len(vals) == len(pieces) >= 2 and any(s in v for v in vals):
                x, y = pieces[next(i for i, v in enumerate(vals) if s in v)]
                head = next((g for g, _ in run if x <= g[0][0] < y), None)
                return head if head is not None else [(x, y, UNNAMED)]
        if not explicit:
            return None
    return []


def _contiguous(text: str, vals: list[list[int]]) -> list[list[int]]:
    """The values from the first on that follow one another with only units and separators between them ("118 and
    74 mm Hg"): a list without "respectively" ends where anything else comes between two values."""
    out = vals[:1]
    for v, w in zip(vals, vals[1:]):
        gap = re.sub(r"^[\d.,]+", "", text[v[-1]:w[0]])
        if not VALUE_GAP.fullmatch(gap):
            break
        out.append(w)
    return out


def each_names(text: str, sa: int, s: int, unit_end: int, mentions: list[Mention]) -> list[Mention] | None:
    """The names a number dosed "each" belongs to ("norepinephrine and epinephrine at 0.1 mcg/kg/min each"): every
    name of the list run right before it; ``None`` when no "each" follows its unit."""
    if not EACH.match(text[unit_end:unit_end + 16]):
        return None
    run = name_run(text, places(text, sa, mentions, s))
    if len(run) < 2 or re.search(r"\d", text[run[-1][1]:s]):
        return None
    return [m for g, _ in run for m in g]
