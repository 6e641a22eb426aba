"""The quantity a number of a quote belongs to, for one input of the evidence verifier (:mod:`.evidence_quantity` reads
the number; :mod:`medcalc_maintained.calculators.evidence` is the whole verifier): the quantity a term names right after
it or else the nearest term before it in its sentence (:mod:`.note_attribution`); with no term before it in its
sentence, a number whose unit is the input's is the one term's after it in its clause, ``at 2.3 mg/dL, his bilirubin
level has spiked``, where no other value, comparison or change comes between or after; a dose just printed is the next
drug's that takes it by reference (``DOPamine ran at 4 mcg/kg/min, DOBUTamine at the same dosage``); a length or a mass
alone names height or weight; a blood pressure given as the finding it shows (``hypotensive to 70/40 mmHg``) is the
blood pressure; an item of a list that a urine head leads, ``urine electrolytes were sodium 179 mmol/L, creatinine 37
mg/dL``, is the urine's quantity, not the serum one.
"""

from __future__ import annotations

import re
from typing import Any

from medcalc_maintained.calculators import evidence_units as EU
from medcalc_maintained.calculators import lexicon as L
from medcalc_maintained.calculators import note_attribution as NA
from medcalc_maintained.calculators import note_text as T
from medcalc_maintained.calculators.inputs import InputSpec
from medcalc_maintained.core import units as U

# a blood pressure reading given as the finding it shows ("hypotension (80/40 mm Hg)", "hypertensive at 180/100 mmHg")
PRESSURE_FINDINGS = frozenset({"hypotension", "hypertension", "hypertension history"})
BP_READING = re.compile(r"(?<![\d.])\d{2,3}\s*/\s*\d{2,3}\s*mm\s*Hg", re.I)


def number_owner(spec: InputSpec, quote: str, s: int, e: int, mentions: list[tuple[int, int, str]], keys: set[str]
                 ) -> tuple[str | None, int | None]:
    """The quantity the number at ``quote[s:e]`` belongs to and where it is named (:func:`.note_attribution.attributed`, else
    :func:`_named_after`); a name that is an item of a list led by a urine head ("urine electrolytes were sodium 179
    mmol/L") names the urine's quantity (:func:`_urine_quantity`), never the serum one."""
    owner, at = NA.attributed(quote, s, e, mentions, keys)
    if owner is None:
        return _named_after(spec, quote, s, e, mentions, keys)
    if at is None or owner.startswith("\x00"):
        return owner, at
    name = next(((a, b) for a, b, _ in mentions if a == at), None)
    if name is not None and NA.urine_item(quote, name[0], name[1], mentions):
        return _urine_quantity(owner), at
    return owner, at


# a drug dosed by reference to the dose just printed before it in its sentence ("DOBUTamine at the same dosage"); not a
# dose of another time ("at the same dose as before")
SAME_DOSE = re.compile(r"\s*(?:(?:was|is|were|ran|running|run|infused|infusing|given|continued|started)\s+)?(?:at|in)\s+"
                       r"(?:the\s+)?(?:same|identical)\s+(?:dosage|dose|rate)\b(?!\s+as\s+(?:before|previously|prior|earlier|"
                       r"yesterday|at\b|on\b|during\b|in\b))", re.I)


def _same_dose(spec: InputSpec, quote: str, s: int, e: int, mentions: list[tuple[int, int, str]], keys: set[str],
               owner: str | None, norm: str | None) -> tuple[str, int] | None:
    """The input's name and place where the number at ``quote[s:e]``, a dose of another drug ``owner`` in a unit of the
    input's kind, is the dose the next name of its sentence takes by reference ("DOPamine ran at 4 mcg/kg/min,
    DOBUTamine at the same dosage"): that name is the input's, comes next after the number with no number between, and
    :data:`SAME_DOSE` follows it. ``None`` otherwise."""
    if owner is None or owner.startswith("\x00") or spec.accessor != "quantity" or not spec.kind \
            or norm is None or norm not in U.known_units(spec.kind):
        return None
    sa, sb = T.sentence(quote, s)
    after = sorted(m for m in mentions if e <= m[0] < sb)
    if not after or after[0][2] not in keys or re.search(r"\d", quote[e:after[0][0]]):
        return None
    a, b, key = after[0]
    return (key, a) if SAME_DOSE.match(quote, b) else None


# between a number and a name after it: a comparison or a change, not a reading ("2.3 mg/dL above the limit of bilirubin")
COMPARED_AFTER = re.compile(r"\b(?:above|below|higher|lower|more|less|than|over|under|exceed\w*|increase\w*|decrease\w*|"
                            r"ris(?:e|es|ing)|rose|drop\w*|fell|fall\w*|change\w*|from|to|in|by|limit|normal|range)\b", re.I)


def _named_after(spec: InputSpec, quote: str, s: int, e: int, mentions: list[tuple[int, int, str]], keys: set[str]
                 ) -> tuple[str | None, int | None]:
    """The quantity a number that no name precedes in its sentence belongs to by its unit and the one name after it in
    its clause ("Also, at 2.3 mg/dL, his bilirubin level has spiked"): the unit is one of the input's kind, no other
    number, comparison or change stands between (:data:`COMPARED_AFTER`), the clause names one quantity after the number
    and prints no other value after that name ("At 2.3 mg/dL, his bilirubin rose to 5.1 mg/dL" is no reading of 2.3).
    ``(None, None)`` otherwise."""
    shown, norm = T.unit_after(quote, e)
    if spec.accessor != "quantity" or not spec.kind or norm is None or norm not in U.known_units(spec.kind):
        return None, None
    _, cb = T.clause(quote, s)
    end = quote.find(shown, e) + len(shown) if shown else e
    places = NA.distinct_places([m for m in mentions if end <= m[0] and m[1] <= cb])
    if len(places) != 1 or any(True for _ in T.numbers(quote, end, places[0][0][0])) \
            or any(True for _ in T.numbers(quote, places[0][0][1], cb)) or COMPARED_AFTER.search(quote, end, places[0][0][0]):
        return None, None
    return NA.prefer(places[0], keys), places[0][0][0]


URINE_ITEM = "\x00urine "  # a urine quantity the lexicon does not know (a urine glucose): no input


def _urine_quantity(key: str) -> str:
    """The lexicon key of the urine's quantity of ``key`` ("sodium" -> "urine sodium", "chloride" -> "other:urine
    chloride"), or a key of no input where the lexicon knows none."""
    name = key.removeprefix("other:")
    known = {k for k, _ in L.all_quantities()}
    return next((c for c in (f"urine {name}", f"other:urine {name}", f"urinary {name}", f"other:urinary {name}") if c in known),
                URINE_ITEM + name)


def reread_owner(spec: InputSpec, quote: str, s: int, e: int, mentions: list[tuple[int, int, str]], keys: set[str],
                 owner: str | None, at: int | None, norm: str | None, value: Any) -> tuple[str | None, int | None]:
    """The quantity the number at ``quote[s:e]`` belongs to (and where it is named) once read again for the input: a
    dose taken by reference, a length or a mass that names height or weight, a blood pressure read as a finding's."""
    if owner not in keys and (same := _same_dose(spec, quote, s, e, mentions, keys, owner, norm)) is not None:
        owner, at = same  # "DOPamine ran at 4 mcg/kg/min, DOBUTamine at the same dosage": 4 is the DOBUTamine's too
    if owner not in keys and EU.unit_names(spec, norm, owner, value):
        owner, at = next(iter(keys)), s  # "170 cm and 70 kg": the unit says which of height and weight
    if owner in PRESSURE_FINDINGS and spec.kind == "pressure" and "blood pressure" in spec.name.lower() \
            and any(m.start() <= s < m.end() for m in BP_READING.finditer(quote, *T.sentence(quote, s))):
        owner = next(iter(keys))  # "hypotensive to 70/40 mmHg": the blood pressure read as a finding's
    return owner, at
