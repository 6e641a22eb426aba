"""The units of a number the evidence verifier reads (:mod:`.evidence_quantity`; :mod:`medcalc_maintained.calculators.evidence`
for the whole verifier): a number printed in another unit that converts to the recorded one at the record's precision
(creatinine 120 µmol/L is 1.4 mg/dL, 7.5 x 10^9/L is 7,500 /µL, through ``core/units.py``, never further than
:data:`CONVERSION_BAND`); a serum urea in mmol/L is the blood urea nitrogen in mmol/L, and a urea in mg/dL states the BUN
in mg/dL times 28.01/60.06 (urea 18 mg/dL is BUN 8.4), never the same number; a list of values in bare milligrams whose
last value closes its sentence "mg per deciliter" is in mg/dL; a length or a mass alone names height or weight; and
the record may declare how it reads a printed unit (``unit_reading: {printed, why}``: "5.3 g/l" read as g/dL).
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from medcalc_maintained.calculators import note_text as T
from medcalc_maintained.calculators.inputs import InputSpec
from medcalc_maintained.core import units as U


def converts_to(spec: InputSpec, printed: float, shown: str | None, value: Any, unit: Any) -> bool:
    """Whether ``printed`` in the unit ``shown`` after it is ``value`` in the recorded ``unit`` (creatinine 120 µmol/L
    is 1.4 mg/dL; 7.5 x 10^9/L is 7,500 /µL), to the precision the record gives, and never further from it than
    :data:`CONVERSION_BAND` (150 µmol/L is 1.7 mg/dL, not 2). A value printed in the recorded unit converts to
    nothing: 12.35 mg/dL states 12.35, not 12."""
    if spec.accessor != "quantity" or not spec.kind or not shown or not unit or isinstance(value, bool):
        return False
    try:
        want = float(value)
        got = U.from_canonical(spec.kind, U.to_canonical(spec.kind, printed, shown), str(unit))
    except (U.UnknownUnit, KeyError, TypeError, ValueError, ZeroDivisionError):
        return False
    if U.same_unit(spec.kind, shown, str(unit)):
        return False
    return _close(got, want)


def _close(got: float, want: float) -> bool:
    """Whether a converted ``got`` is the recorded ``want``: to the precision the record gives (or within 0.5%), and
    never further than :data:`CONVERSION_BAND`."""
    text = repr(want).rstrip("0").rstrip(".") if "." in repr(want) else repr(want)
    decimals = len(text.split(".")[1]) if "." in text else 0
    close = abs(got - want) <= CONVERSION_BAND * max(abs(got), abs(want))
    return close and (round(got, decimals) == round(want, decimals) or abs(got - want) <= 0.005 * max(abs(got), abs(want)))


CONVERSION_BAND = 0.05  # a converted value within 5% of the record (MedCalc-Bench's band for decimals)


# a serum urea printed in mmol/L is the blood urea nitrogen in mmol/L; a urea in mg/dL states the BUN in mg/dL times
# UREA_TO_BUN (the mass of a urea molecule's two nitrogen atoms over its own), never the same number
UREA_KEYS = frozenset({"other:urea", "other:serum urea", "other:blood urea", "other:plasma urea"})
MOLAR = frozenset({"mmol/l"})
UREA_TO_BUN = 28.0134 / 60.056


def urea_states_bun(spec: InputSpec, printed: float, shown: str | None, value: Any, unit: Any) -> bool:
    """Whether a urea of ``printed`` mg/dL is the recorded BUN ``value`` mg/dL (urea 18 mg/dL is BUN 8.4 mg/dL), to the
    precision the record gives and within :data:`CONVERSION_BAND`; the number must be named urea (:func:`.evidence_quantity._one_number`)."""
    mgdl = U.normalise_unit("mg/dL")
    if "urea nitrogen" not in spec.name.lower() or not shown or not unit or isinstance(value, bool) \
            or U.normalise_unit(shown) != mgdl or U.normalise_unit(str(unit)) != mgdl:
        return False
    try:
        want = float(value)
    except (TypeError, ValueError):
        return False
    return _close(printed * UREA_TO_BUN, want)


# a list of values in milligrams whose last value carries the volume for all ("The total cholesterol was 250 mg, the
# triglyceride 99 mg, and the HDL-cholesterol 59 mg per deciliter."): the last unit, then the sentence's end
BARE_MG = re.compile(r"\s*mg\b(?!\s*(?:per\b|/))", re.I)
MG_PER_DL_LAST = re.compile(r"\s*mg\s*(?:per\s+(?:deciliter|decilitre|dl)|/\s*dl)\b\s*[.;]?\s*$", re.I)
SHARED_GAP = re.compile(r"\s*,?\s*(?:and\s+)?(?:the\s+)?[A-Za-z][\w-]*(?:\s+[A-Za-z][\w-]*){0,3}\s*(?:was|of|at|:)?\s*", re.I)


def per_deciliter_shared(quote: str, e: int) -> bool:
    """Whether the number ending at ``e``, printed in bare milligrams, is an item of a list of named values in
    milligrams whose last value closes its sentence "mg per deciliter" (:data:`MG_PER_DL_LAST`): every value after it
    in bare mg, only a name between two values (:data:`SHARED_GAP`), so the volume is the list's. Never a dose
    ("250 mg of aspirin" is followed by no such list), nor a list whose last value is in another unit."""
    _, sb = T.sentence(quote, max(0, e - 1))
    m = BARE_MG.match(quote, e)
    if m is None:
        return False
    pos = m.end()
    for a, b, _ in T.numbers(quote, pos, sb):
        if not SHARED_GAP.fullmatch(quote, pos, a):
            return False
        if MG_PER_DL_LAST.match(quote[b:sb]):
            return True
        m = BARE_MG.match(quote, b)
        if m is None:
            return False
        pos = m.end()
    return False


def unit_names(spec: InputSpec, norm: str | None, owner: str | None, value: Any) -> bool:
    """Whether the unit printed after a number names the input by itself: a length is the height and a mass the
    weight (``178 cm in height and 69.2 kg in weight``), within the input's plausible range, where the number is
    attributed to no quantity, to the patient's sex or age (``a 45-year-old, 58 kg, 156 cm woman``: a mass is no
    age), or to the other of the two."""
    if spec.accessor != "quantity" or spec.kind not in ("length", "mass") or norm not in U.known_units(spec.kind):
        return False
    if owner is not None and owner not in ("sex", "age") and not (spec.kind == "mass" and "height" in owner) \
            and not (spec.kind == "length" and "weight" in owner):
        return False
    lo, hi = spec.plausible or (None, None)
    try:
        v = U.to_canonical(spec.kind, float(value), norm)
    except (TypeError, ValueError, U.UnknownUnit):
        return False
    return (lo is None or v >= lo) and (hi is None or v <= hi)


def unit_reading_declared(inp: Mapping[str, Any], printed: str) -> bool:
    """Whether the record declares how it reads the printed unit (``unit_reading: {printed, why}``)."""
    ur = inp.get("unit_reading")
    return isinstance(ur, Mapping) and U.normalise_unit(str(ur.get("printed") or "")) == printed \
        and bool(str(ur.get("why") or "").strip())
