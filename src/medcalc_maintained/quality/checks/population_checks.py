"""The patient is outside the population the calculator's source publication derived it for.

The limits are declared once, in ``calculators/populations.yaml``
(:mod:`medcalc_maintained.calculators.population`); this check reports each one the row's patient
is outside of. The age is the row's ``age`` entity; when the entities carry none (calculators whose
formula does not use age, such as SIRS or the RCRI) it is the note's first "N-year-old" (the same
reading as the other note checks, :func:`.note_checks.age_years`), and the finding quotes that
sentence. Severity ``info``: a calculator applied outside its derivation population is worth a
look, not evidence on its own that the label is wrong (physicians confirmed adult SIRS counts for
young children in the audit campaign).
"""

from __future__ import annotations

from typing import Iterator

from medcalc_maintained.calculators.base import Inputs
from medcalc_maintained.calculators.population import population_problems, populations
from medcalc_maintained.quality.checks.note_checks import age_years
from medcalc_maintained.quality.checks.registry import Check, Finding, Instance, register

CHECK = "outside_population"


@register(CHECK, "info", calculators=sorted(populations().limits))
def outside_population(inst: Instance, check: Check) -> Iterator[Finding]:
    """The patient's age or sex is outside the population the calculator's source publication states."""
    entities = inst.entities
    age, match = age_years(inst)
    x = Inputs(entities)
    if age is not None and not x.has(x.key("age")):
        entities = {**entities, "age": [age, "years"]}
    for problem in population_problems(inst.calculator_id, entities):
        yield inst.finding(check, problem, match)
