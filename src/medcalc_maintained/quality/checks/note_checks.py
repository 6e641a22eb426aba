"""Checks that read the note against per-calculator rules (``rules.yaml``): required inputs absent,
an examination shown only in a figure, a calculator that does not fit the patient, body weight."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Iterator

from medcalc_maintained.quality.checks.registry import Check, Finding, Instance, key_matches, register
from medcalc_maintained.quality.checks.rules import Rule, rules

_AGE_NOTE = re.compile(r"\b(\d+(?:\.\d+)?)[- ](year|yr|month|mo|week|wk|day)s?[- ]old\b", re.I)
_AGE_UNITS = {"year": 1.0, "yr": 1.0, "years": 1.0, "month": 1 / 12, "mo": 1 / 12, "months": 1 / 12,
              "week": 7 / 365.25, "wk": 7 / 365.25, "weeks": 7 / 365.25, "day": 1 / 365.25, "days": 1 / 365.25}
_WEIGHT_TO_KG = {"kg": 1.0, "g": 0.001, "lb": 0.45359237, "lbs": 0.45359237, "pounds": 0.45359237, "oz": 0.0283495}


@lru_cache(maxsize=None)
def _rules_for(section: str, calculator_id: int) -> tuple[Rule, ...]:
    return tuple(rules().for_calculator(section, calculator_id))


def _calcs(section: str) -> set[int]:
    return {c for r in getattr(rules(), section) for c in r.calculators}


def age_years(inst: Instance) -> tuple[float | None, re.Match | None]:
    """The patient's age in years: from the ``age`` entity, else the note's "N-year-old" (and the
    note's match, quoted as evidence). Worked out once per instance."""
    got = inst.memo.get("age")
    if got is None:
        got = inst.memo["age"] = _age_years(inst)
    return got


def _age_years(inst: Instance) -> tuple[float | None, re.Match | None]:
    m = inst.search(_AGE_NOTE)
    age = inst.entities.get("age")
    if isinstance(age, (list, tuple)) and len(age) == 2 and isinstance(age[0], (int, float)):
        factor = _AGE_UNITS.get(str(age[1]).lower().rstrip("s") if str(age[1]).lower() != "years" else "year", 1.0)
        return float(age[0]) * factor, m
    if m:
        return float(m.group(1)) * _AGE_UNITS[m.group(2).lower()], m
    return None, None


def weight_kg(entities: dict[str, Any]) -> float | None:
    w = entities.get("weight")
    if isinstance(w, (list, tuple)) and len(w) == 2 and isinstance(w[0], (int, float)):
        factor = _WEIGHT_TO_KG.get(str(w[1]).strip().lower())
        return float(w[0]) * factor if factor else None
    return None


@register("required_input_absent", "error", calculators=_calcs("required_inputs"))
def required_input_absent(inst: Instance, check: Check) -> Iterator[Finding]:
    """A required input of the calculator is never mentioned in the note (keyword rules); the
    finding carries the input's name as a value (``unmentioned``)."""
    for rule in _rules_for("required_inputs", inst.calculator_id):
        if not any(inst.search(p) for p in rule.patterns):
            yield inst.finding(check, f"the note never mentions the {rule.input}: {rule.rationale}",
                               unmentioned=(rule.input,))


@register("exam_in_figure_only", "error", calculators=_calcs("figure_only"))
def exam_in_figure_only(inst: Instance, check: Check) -> Iterator[Finding]:
    """A required examination is shown only in a figure or photograph the benchmark does not ship."""
    for rule in _rules_for("figure_only", inst.calculator_id):
        for p in rule.patterns:
            m = inst.search(p)
            if m:
                yield inst.finding(check, f"the {rule.input} is given only in a figure: {rule.rationale}", m)
                break


@register("not_applicable", "error", calculators=_calcs("not_applicable"))
def not_applicable(inst: Instance, check: Check) -> Iterator[Finding]:
    """The calculator does not fit the patient (species, treatment, another diagnosis, size); age and
    sex limits are the check ``outside_population`` (calculators/populations.yaml)."""
    for rule in _rules_for("not_applicable", inst.calculator_id):
        if rule.min_weight_kg is not None:
            w = weight_kg(inst.entities)
            if w is not None and w < rule.min_weight_kg:
                yield inst.finding(check, f"body weight {w:.3g} kg: {rule.rationale}", _number_span(inst, inst.entities["weight"][0]))
        for p in rule.patterns:
            m = inst.search(p)
            if m:
                yield inst.finding(check, f"the note says {inst.note[m.start():m.end()]!r}: {rule.rationale}", m)
                break


def _number_span(inst: Instance, value: Any) -> tuple[int, int] | None:
    try:
        spans = inst.occurrences(float(value))
    except (TypeError, ValueError, OverflowError):
        return None
    return spans[0] if spans else None


_CHANGE_WINDOW = 120  # characters before a printed weight searched for "lost ... 7 kg"


@register("body_weight", "error", calculators=None)
def body_weight(inst: Instance, check: Check) -> Iterator[Finding]:
    """The "weight" entity is a weight change ("lost 7 kg"), or an adult weighs under the minimum."""
    w = inst.entities.get("weight")
    if not (isinstance(w, (list, tuple)) and len(w) == 2 and isinstance(w[0], (int, float))):
        return
    r = rules()
    for a, b in inst.occurrences(float(w[0])):
        lo = max(0, a - _CHANGE_WINDOW)
        for pat in r.weight_change:
            for m in inst.finditer(pat, lo, b + 20):
                if m.start("value") + lo == a:
                    yield inst.finding(check, f"the weight {w[0]} {w[1]} is a weight change, not a body weight",
                                       (m.start() + lo, m.end() + lo))
                    return
    kg = weight_kg(inst.entities)
    if kg is None or kg >= r.weight_adult_min_kg:
        return
    age, _ = age_years(inst)
    if age is not None and age >= 18 and not any(inst.search(p) for p in r.pediatric):
        yield inst.finding(check, f"an adult ({age:.3g} years) weighing {kg:.3g} kg: {r.weight_rationale}",
                           _number_span(inst, w[0]))


@register("foreign_entity_keys", "error", calculators=None)
def foreign_entity_keys(inst: Instance, check: Check) -> Iterator[Finding]:
    """An extracted entity key belongs to another calculator's rule (wrong feature set)."""
    for pat, allowed, why in rules().foreign_keys:
        if inst.calculator_id in allowed:
            continue
        bad = [k for k in inst.entities if key_matches(pat, str(k))]
        if bad:
            yield inst.finding(check, f"entity key(s) {', '.join(repr(k[:60]) for k in bad)}: {why}")


@register("expected_keys_missing", "error", calculators={c for e in rules().expected_keys for c in e[0]})
def expected_keys_missing(inst: Instance, check: Check) -> Iterator[Finding]:
    """More of the calculator's criteria are absent from the extracted entities than the rule allows."""
    for calcs, keys, max_missing, why in rules().expected_keys:
        if inst.calculator_id in calcs:
            missing = [k for k in keys if k not in inst.entities]
            if len(missing) > max_missing:
                yield inst.finding(check, f"{len(missing)} of {len(keys)} criteria were never extracted ({', '.join(missing)}): {why}")
