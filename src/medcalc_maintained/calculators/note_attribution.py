"""Which named quantity a printed number of a patient note belongs to, as the evidence verifier reads it
(``calculators/evidence_quantity.py`` applies it; the sentences and the cues of the note are :mod:`.note_text`'s, lists
of names and values :mod:`.note_lists`'s).

A mention is ``(start, end, key)``: where a lexicon term (``calculators/lexicon.py``) names the
input or quantity ``key``.
"""

from __future__ import annotations

import re

from medcalc_maintained.calculators import note_lists as NL
from medcalc_maintained.calculators.note_numbers import unit_after
from medcalc_maintained.calculators.note_text import sentence

RESPECTIVELY = re.compile(r"\brespectively\b", re.I)
RESPECTIVELY_UNPAIRED = NL.UNPAIRED
NOT_A_UNIT = re.compile(r"(?:and|or|to|of|in|at|with|vs\.?|versus|while|but|was|were|is|are)", re.I)


def distinct_places(mentions: list[tuple[int, int, str]]) -> list[list[tuple[int, int, str]]]:
    """Mentions grouped by place (one place may be named by several entries), in text order."""
    groups: dict[tuple[int, int], list[tuple[int, int, str]]] = {}
    for m in sorted(mentions):
        groups.setdefault((m[0], m[1]), []).append(m)
    return list(groups.values())


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
    unit, unit_norm = unit_after(text, e)
    if unit is not None and (unit_norm is not None or not NOT_A_UNIT.fullmatch(unit)):  # "a systolic of 110 and diastolic of 78": "and" is no unit
        gap = text.find(unit, e)
        after += [m for m in inside if gap >= 0 and m[0] >= gap and m[0] - (gap + len(unit)) <= 1 and m not in after]
        after += [m for m in inside if gap >= 0 and gap <= m[0] < gap + len(unit) and m not in after]
    # "HR 70 RR 16": a name right before the number, and the name after it starts the next name-number pair
    right_before = [m for m in inside if m[1] <= s and re.fullmatch(r"[\s:=]{1,3}", text[m[1]:s])]
    if right_before and after and all(re.match(r"[\s:=]*\d", text[m[1]:m[1] + 4]) for m in after):
        after = []
    if after:
        start = min(m[0] for m in after)
        first = [m for m in after if m[0] == start]
        return prefer(first, mine), start
    unit_end = text.find(unit, e) + len(unit) if unit is not None and text.find(unit, e) >= 0 else e
    each = NL.each_names(text, sa, s, unit_end, inside)  # "norepinephrine and epinephrine at 0.1 mcg/kg/min each"
    if each and any(m[2] in mine for m in each):
        return prefer(each, mine), next(m[0] for m in each if m[2] in mine)
    resp = RESPECTIVELY.search(text, e, sb)
    paired = NL.paired(text, sa, resp.start() if resp else sb, s, inside, resp is not None)
    if paired is not None:
        return (prefer(paired, mine), paired[0][0]) if paired else (RESPECTIVELY_UNPAIRED, None)
    before = [m for m in inside if m[1] <= s]
    if before:
        end = max(m[1] for m in before)
        last = [m for m in before if m[1] == end]
        return prefer(last, mine), last[0][0]
    return None, None


# the head of a list of urine results ("urine electrolytes were", "the urine random studies revealed", "urinalysis showed"):
# every item of the list it leads is a urine quantity
URINE_HEAD = re.compile(r"\b(?:urine|urinary)\s+(?:[\w-]+\s+){0,2}?(?:stud(?:y|ies)|electrolytes|chemistr(?:y|ies)|indices|analysis|"
                        r"tests?|results|labs?|laboratory (?:studies|tests|results|values)|values|panel)\b|\burinalysis\b", re.I)
# what may stand between the head and the list's first name ("were", "revealed", ":")
URINE_LIST_LEAD = re.compile(r"(?:\s|[:,=-]|\([^()]*\)|\b(?:were|was|are|is|showed|shows?|revealed|reveals?|demonstrated|"
                             r"demonstrates|included|includes|including|with|of|as follows)\b)*", re.I)
# a word that names another fluid or ends the urine list before a name ("... and serum creatinine", "while ...")
NOT_URINE_ITEM = re.compile(r"\b(?:serum|plasma|blood|venous|arterial|capillary|while|whereas|but|however|although|"
                            r"though|yet)\b|;", re.I)


def urine_item(text: str, a: int, b: int, mentions: list[tuple[int, int, str]]) -> bool:
    """Whether the name at ``text[a:b]`` is an item of a list that a urine head leads in its sentence ("Urine electrolytes
    were sodium 179 mmol/L, potassium 14 mmol/L, creatinine 37 mg/dL": the sodium and the creatinine are the urine's):
    the head leads directly into a named item, and neither another fluid ("serum creatinine") nor a new clause ("while")
    comes between it and the name. A name that already says urine is no item to re-read."""
    if re.search(r"\burin", text[a:b], re.I):
        return False
    sa, _ = sentence(text, a)
    starts = {m[0] for m in mentions}
    for head in URINE_HEAD.finditer(text, sa, a):
        lead = URINE_LIST_LEAD.match(text, head.end())
        if lead is not None and lead.end() in starts and not NOT_URINE_ITEM.search(text, head.end(), b):
            return True
    return False


def prefer(tied: list[tuple[int, int, str]], mine: set[str]) -> str:
    """The key of tied mentions (one place named by several entries): the input's own when it is one."""
    return next((m[2] for m in tied if m[2] in mine), tied[0][2])


# slash lists: "sodium/potassium/chloride were 95/73.2/47", "blood urea nitrogen/creatinine were 21.9/1.98"
SLASH_NUMBERS = re.compile(r"(?<![\w./])\d+(?:\.\d+)?(?:\s*/\s*\d+(?:\.\d+)?)+")


def slash_pair(text: str, s: int, mentions: list[tuple[int, int, str]]) -> list[tuple[int, int, str]] | None:
    """The names paired with the number at ``s`` by a slash list of names and one of numbers of the same length
    in its sentence ("urea nitrogen/creatinine were 21.9/1.98"): the mentions at the number's place in the name
    list; ``None`` when the number is in no such pair of lists."""
    sa, sb = sentence(text, s)
    group = next((m for m in SLASH_NUMBERS.finditer(text, sa, sb) if m.start() <= s < m.end()), None)
    if group is None:
        return None
    nums = [m.start() + group.start() for m in re.finditer(r"\d+(?:\.\d+)?", group.group(0))]
    places = NL.places(text, sa, mentions, group.start())  # "sodium/potassium (Na/K) were": the abbreviations are the names
    chain: list[list[tuple[int, int, str]]] = []
    last_end = -1
    for place, place_end in places:
        if chain and re.fullmatch(r"\s*/\s*", NL.blank_parentheticals(text, last_end, place[0][0])):
            chain.append(place)  # "urea nitrogen (BUN)/creatinine"
        else:
            chain = [place]
        last_end = place_end
    if len(chain) != len(nums) or s not in nums:
        return None
    return chain[nums.index(s)]
