"""Population limits of the calculators: whom each source publication derived or validated it for.

>>> from medcalc_maintained.calculators.population import population, population_problems
>>> population(19).age_min
18.0
>>> population_problems(19, {"age": [40, "years"]})
[]
>>> population_problems(19, {"age": [30, "months"]})[0].startswith("the patient is 2.5 years old")
True

The limits are data, in ``populations.yaml`` beside this module (read strictly with
:func:`medcalc_maintained.core.yaml_text.load_yaml`): per calculator an inclusive ``age_min``/``age_max`` in
years and an optional ``sex``, each with the ``source`` that states it; the calculators whose source
states no limit the inputs can check are listed under ``no_stated_limit`` with a note. The patient's
age and sex are read from a row's ``Relevant Entities`` with the accessors the calculators use
(:class:`~medcalc_maintained.calculators.base.Inputs`; an age in months, weeks or days is converted
by :mod:`medcalc_maintained.core.units`). A limit the row does not state (no age, an unreadable unit,
no sex) is never a problem.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping

import yaml

from medcalc_maintained.calculators.base import Inputs
from medcalc_maintained.core.errors import DataError
from medcalc_maintained.core.yaml_text import load_yaml

POPULATIONS_FILE = Path(__file__).with_name("populations.yaml")
SEXES = ("female", "male")
_FIELDS = {"age_min", "age_max", "sex", "source"}
_SEX = {"male": "male", "m": "male", "man": "male", "female": "female", "f": "female", "woman": "female"}


@dataclass(frozen=True)
class Population:
    """The declared population of one calculator (``None``: no limit of that kind)."""

    calculator_id: int
    source: str
    age_min: float | None = None
    age_max: float | None = None
    sex: str | None = None


@dataclass(frozen=True)
class Populations:
    limits: dict[int, Population]
    no_stated_limit: dict[int, str]  # calculator id -> the note saying why none is declared


def _years(path: Path, where: str, field: str, value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 125:
        raise DataError(path, f"{field} must be a number of years from 0 to 125, got {value!r}", row=where, field=field)
    return float(value)


def _calculator_id(path: Path, where: str, key: Any) -> int:
    if isinstance(key, bool) or not isinstance(key, int):
        raise DataError(path, f"a calculator id is a whole number, got {key!r}", row=where)
    return key


def parse(text: str, path: Path = POPULATIONS_FILE) -> Populations:
    """The populations file's text, checked: known fields only, a non-empty source for every entry,
    at least one limit per entry, ``age_min`` below ``age_max``, ``sex`` one of :data:`SEXES`, a note
    for every ``no_stated_limit`` entry, and no calculator listed twice. Problems raise
    :class:`~medcalc_maintained.core.errors.DataError` naming the file, the calculator and the field."""
    try:
        data = load_yaml(text, where=str(path)) or {}
    except yaml.YAMLError as exc:
        raise DataError(path, f"not valid YAML: {exc}") from None
    if not isinstance(data, dict) or set(data) - {"populations", "no_stated_limit"}:
        raise DataError(path, "the file holds two sections, populations and no_stated_limit")
    limits: dict[int, Population] = {}
    for key, entry in (data.get("populations") or {}).items():
        cid = _calculator_id(path, f"populations.{key}", key)
        where = f"calculator {cid}"
        if not isinstance(entry, dict):
            raise DataError(path, "entry is not a mapping", row=where)
        unknown = set(entry) - _FIELDS
        if unknown:
            raise DataError(path, f"unknown field(s) {sorted(unknown)} (known: {sorted(_FIELDS)})", row=where)
        source = entry.get("source")
        if not isinstance(source, str) or not source.strip():
            raise DataError(path, "every limit names the source that states it", row=where, field="source")
        lo = _years(path, where, "age_min", entry.get("age_min"))
        hi = _years(path, where, "age_max", entry.get("age_max"))
        if lo is not None and hi is not None and lo >= hi:
            raise DataError(path, f"age_min {lo:g} is not below age_max {hi:g}", row=where, field="age_min")
        sex = entry.get("sex")
        if sex is not None and sex not in SEXES:
            raise DataError(path, f"sex must be one of {list(SEXES)}, got {sex!r}", row=where, field="sex")
        if lo is None and hi is None and sex is None:
            raise DataError(path, "an entry without a limit belongs in no_stated_limit", row=where)
        limits[cid] = Population(cid, source.strip(), lo, hi, sex)
    none: dict[int, str] = {}
    for i, item in enumerate(data.get("no_stated_limit") or []):
        where = f"no_stated_limit[{i}]"
        if not isinstance(item, dict) or set(item) != {"id", "note"}:
            raise DataError(path, "each entry is {id: <calculator id>, note: <why no limit is declared>}", row=where)
        cid = _calculator_id(path, where, item["id"])
        note = item["note"]
        if not isinstance(note, str) or not note.strip():
            raise DataError(path, "the note is empty", row=where, field="note")
        if cid in none or cid in limits:
            raise DataError(path, f"calculator {cid} is listed twice", row=where, field="id")
        none[cid] = note.strip()
    return Populations(limits, none)


@lru_cache(maxsize=1)
def populations() -> Populations:
    """The shipped ``populations.yaml``, parsed once."""
    return parse(POPULATIONS_FILE.read_text(encoding="utf-8"), POPULATIONS_FILE)


def population(calculator_id: int) -> Population | None:
    """The declared population of a calculator, or ``None`` when its source states no limit."""
    return populations().limits.get(int(calculator_id))


def _age_text(years: float) -> str:
    return f"{round(years, 2):g}"


def population_problems(calculator_id: int, entities: Mapping[str, Any] | None) -> list[str]:
    """One sentence per declared limit the row's patient is outside of, each naming the limit and
    its source; empty when the calculator declares none, the row states no age (or sex), or the
    patient is within the limits."""
    pop = population(calculator_id)
    if pop is None:
        return []
    x = Inputs(dict(entities or {}))
    out: list[str] = []
    if pop.age_min is not None or pop.age_max is not None:
        age = x.quantity(x.key("age"), "age", required=False)
        if age is not None and pop.age_min is not None and age < pop.age_min:
            out.append(f"the patient is {_age_text(age)} years old, below the minimum age of the calculator's "
                       f"population ({pop.age_min:g} years; source: {pop.source})")
        if age is not None and pop.age_max is not None and age > pop.age_max:
            out.append(f"the patient is {_age_text(age)} years old, above the maximum age of the calculator's "
                       f"population ({pop.age_max:g} years; source: {pop.source})")
    if pop.sex is not None:
        sex = x.choice(x.key("sex", "gender"), _SEX, required=False)
        if sex is not None and sex != pop.sex:
            out.append(f"the patient is {sex}, outside the calculator's population "
                       f"({pop.sex} patients only; source: {pop.source})")
    return out
