"""Unit conversion for the quantities that appear in MedCalc-Bench ``Relevant Entities``.

One home for every conversion the calculators need. Each analyte has a canonical unit and a table
of factors *to* that unit; a unit that is not in the table raises :class:`UnknownUnit` — it is
never guessed. Unit spellings are normalised first (case, spaces, the ``µ``/``u``/``mc`` prefixes,
the misspellings the upstream data carries such as ``degrees fahreinheit``).

Molar masses used for mass <-> molar conversions (g/mol): creatinine 113.12 (88.4 µmol/L per
mg/dL), urea nitrogen 28.02 (BUN mmol/L x 2.801 = mg/dL), glucose 180.16, calcium 40.08,
cholesterol 386.65, triglycerides 885.7, bilirubin 584.66 (17.1 µmol/L per mg/dL), sodium 22.99,
potassium 39.10, chloride 35.45. Monovalent ions: 1 mEq/L = 1 mmol/L; calcium is divalent
(1 mmol/L = 2 mEq/L).
"""

from __future__ import annotations

import re
from functools import lru_cache


class UnknownUnit(ValueError):
    """Raised when a unit is not known for the analyte; the caller reports the input as invalid."""


def normalise_unit(unit: str) -> str:
    """Canonical spelling of a unit string: lower case, no spaces, ``u``/``mc`` for micro."""
    return _normalise(str(unit))


@lru_cache(maxsize=4096)  # keyed by the unit's spelling: a small vocabulary
def _normalise(unit: str) -> str:
    u = unit.strip().lower()
    u = u.replace("μ", "µ").replace("µ", "u").replace("×", "x").replace("⁹", "^9").replace("³", "^3")
    u = re.sub(r"\s+", " ", u)
    # spelled-out concentrations ("mg per deciliter", "micromoles per liter")
    for word, short in (("milligrams", "mg"), ("milligram", "mg"), ("micrograms", "ug"), ("grams", "g"), ("gram", "g"),
                        ("micromoles", "umol"), ("micromol", "umol"), ("millimoles", "mmol"), ("milliequivalents", "meq"),
                        ("deciliter", "dl"), ("decilitre", "dl"), ("liter", "l"), ("litre", "l")):
        u = re.sub(rf"\b{word}\b", short, u)
    u = re.sub(r"\s*per\s*", "/", u) if re.search(r"\b(?:mg|g|ug|umol|mmol|meq) per (?:dl|l)\b", u) else u
    # a count per 10^3 or 10^9: "x10^3/ul", "10^9/l", "109/l" (a superscript lost in a PDF), "k/mm3", "thousand/ul"
    u = re.sub(r"^x\s*", "", u)
    u = re.sub(r"^10\s*(?:\^|e|\*\*)\s*(3|4|6|9|12)\s*/", r"10^\1/", u)  # "10E9/L", "10**9/L": an exponent
    u = re.sub(r"^10\s*\^?\s*([39])\s*/", r"10^\1/", u)
    u = re.sub(r"^(?:thousands|thou)\b", "thousand", u)
    u = re.sub(r"^(?:lakhs?|lacs?)\b\s*", "lakh", u)  # South Asian notes: a lakh is 100,000
    u = re.sub(r"(^|\s|^k|^thousand|lakh|10\^\d+)\s*cells?\s*/", r"\1/", u)  # "cells/µL" is "/µL", "lakh cells/cu mm"
    u = re.sub(r"mm\s*\^?\s*3$|mm\^3$|cu\.?\s*mm$|cmm$", "mm^3", u)
    aliases = {
        "degrees fahreinheit": "degf",
        "degrees fahrenheit": "degf",
        "°f": "degf",
        "f": "degf",
        "degrees celsius": "degc",
        "degrees celsisus": "degc",
        "°c": "degc",
        "c": "degc",
        "mm hg": "mmhg",
        "beats per minute": "/min",
        "bpm": "/min",
        "breaths per minute": "/min",
        "kilograms": "kg",
        "kilogram": "kg",
        "kgs": "kg",
        "centimeters": "cm",
        "centimeter": "cm",
        "centimetres": "cm",
        "centimetre": "cm",
        "meters": "m",
        "meter": "m",
        "metres": "m",
        "metre": "m",
        "millimeters of mercury": "mmhg",
        "millimeters mercury": "mmhg",
        "mm of hg": "mmhg",
        "lbs": "lb",
        "pounds": "lb",
        "inches": "in",
        "feet": "ft",
        "mc/kg/min": "mcg/kg/min",
        "ug/kg/min": "mcg/kg/min",
        "mcg": "ug",
        "years": "years",
        "year": "years",
        "months": "months",
        "month": "months",
        "weeks": "weeks",
        "days": "days",
        "msec": "ms",
        "kg/m^2": "kg/m2",
    }
    u = aliases.get(u, u)
    return u.replace(" ", "")


# Factor that multiplies a value in the listed unit to give the canonical unit (first key).
_LINEAR: dict[str, dict[str, float]] = {
    # mass and length
    "mass": {"kg": 1.0, "g": 1e-3, "lb": 0.45359237, "oz": 0.028349523125},
    "length": {"cm": 1.0, "m": 100.0, "mm": 0.1, "in": 2.54, "ft": 30.48},
    "age": {"years": 1.0, "months": 1.0 / 12.0, "weeks": 7.0 / 365.25, "days": 1.0 / 365.25},
    "time_ms": {"ms": 1.0, "s": 1000.0},
    "rate": {"/min": 1.0},
    "pressure": {"mmhg": 1.0, "kpa": 7.50062},
    "percent": {"%": 1.0},
    "bmi": {"kg/m2": 1.0},
    "enzyme": {"u/l": 1.0, "iu/l": 1.0},
    "insulin": {"uiu/ml": 1.0, "mu/l": 1.0, "pmol/l": 1.0 / 6.0},
    "vasopressor": {"mcg/kg/min": 1.0},
    "urine_output": {"ml/day": 1.0, "l/day": 1000.0},
    "drug_mass": {"mg": 1.0, "ug": 1e-3, "g": 1000.0},
    "per_day": {"perday": 1.0, "/day": 1.0},
    "patch_rate": {"ug/hr": 1.0, "mcg/hr": 1.0, "ug/h": 1.0, "mcg/h": 1.0, "mg/hr": 1000.0},
    # cell counts: canonical is count per µL (= per mm^3)
    "count_per_ul": {"ul": 1.0, "/ul": 1.0, "mm^3": 1.0, "m^3": 1.0, "/mm^3": 1.0, "l": 1e-6, "/l": 1e-6,
                     "k": 1e3, "k/ul": 1e3, "k/mm^3": 1e3, "thousand/ul": 1e3, "thousand/mm^3": 1e3, "10^3/ul": 1e3,
                     "10^3/mm^3": 1e3, "10^9/l": 1e3, "/nl": 1e3, "10^4/ul": 1e4, "10^4/mm^3": 1e4, "10^6/ul": 1e6,
                     "10^6/mm^3": 1e6, "10^12/l": 1e6, "lakh/ul": 1e5, "lakh/mm^3": 1e5},
    # concentrations, canonical unit first
    "creatinine": {"mg/dl": 1.0, "umol/l": 1.0 / 88.4, "mmol/l": 1000.0 / 88.4},
    "bun": {"mg/dl": 1.0, "mmol/l": 2.801},
    "glucose": {"mg/dl": 1.0, "mmol/l": 18.016},
    "calcium": {"mg/dl": 1.0, "mmol/l": 4.008, "meq/l": 2.004},
    "albumin": {"g/dl": 1.0, "g/l": 0.1, "mg/dl": 1e-3},
    "protein_g_dl": {"g/dl": 1.0, "g/l": 0.1},
    "bilirubin": {"mg/dl": 1.0, "umol/l": 1.0 / 17.1},
    "cholesterol": {"mg/dl": 1.0, "mmol/l": 38.67},
    "triglycerides": {"mg/dl": 1.0, "mmol/l": 88.57},
    # monovalent electrolytes: canonical mmol/L (= mEq/L); mg/dL via molar mass
    "sodium": {"mmol/l": 1.0, "meq/l": 1.0, "mg/dl": 10.0 / 22.99},
    "potassium": {"mmol/l": 1.0, "meq/l": 1.0, "mg/dl": 10.0 / 39.10},
    "chloride": {"mmol/l": 1.0, "meq/l": 1.0, "mg/dl": 10.0 / 35.45},
    "bicarbonate": {"mmol/l": 1.0, "meq/l": 1.0},
    "hemoglobin": {"g/dl": 1.0, "g/l": 0.1, "mmol/l": 1.611},
}

CANONICAL: dict[str, str] = {kind: next(iter(table)) for kind, table in _LINEAR.items()}
CANONICAL["temperature"] = "degc"


def to_canonical(kind: str, value: float, unit: str) -> float:
    """Convert ``value`` in ``unit`` to the canonical unit of ``kind`` (see :data:`CANONICAL`).

    >>> round(to_canonical("creatinine", 88.4, "µmol/L"), 6)
    1.0
    >>> to_canonical("temperature", 212, "degrees fahrenheit")
    100.0
    """
    u = normalise_unit(unit)
    if kind == "temperature":
        if u == "degc":
            return float(value)
        if u == "degf":
            return (float(value) - 32.0) * 5.0 / 9.0
        if u == "k":
            return float(value) - 273.15
        raise UnknownUnit(f"unknown temperature unit {unit!r}")
    try:
        table = _LINEAR[kind]
    except KeyError as exc:
        raise KeyError(f"no conversion table for quantity kind {kind!r}") from exc
    if u not in table:
        raise UnknownUnit(f"unknown unit {unit!r} for {kind} (known: {', '.join(sorted(table))})")
    return float(value) * table[u]


def from_canonical(kind: str, value: float, unit: str) -> float:
    """The canonical ``value`` of ``kind`` in ``unit`` (the inverse of :func:`to_canonical`).

    >>> round(from_canonical("creatinine", 1.0, "umol/L"), 6)
    88.4
    """
    if kind == "temperature":
        u = normalise_unit(unit)
        if u == "degf":
            return float(value) * 9.0 / 5.0 + 32.0
        if u == "k":
            return float(value) + 273.15
    return float(value) / to_canonical(kind, 1.0, unit) if kind != "temperature" else to_canonical(kind, value, unit)


def same_unit(kind: str, a: str, b: str) -> bool:
    """Whether two spellings name the same unit of ``kind`` (``/µL`` and ``µL``; ``mmol/L`` and ``mEq/L`` of sodium).

    >>> same_unit("sodium", "mmol/L", "mEq/L"), same_unit("count_per_ul", "K/µL", "/µL")
    (True, False)
    """
    try:
        return abs(to_canonical(kind, 1.0, a) - to_canonical(kind, 1.0, b)) <= 1e-12 and \
            (kind != "temperature" or normalise_unit(a) == normalise_unit(b))
    except (UnknownUnit, KeyError):
        return False


def known_units(kind: str) -> list[str]:
    """The normalised unit spellings accepted for ``kind``."""
    if kind == "temperature":
        return ["degc", "degf", "k"]
    return sorted(_LINEAR[kind])
