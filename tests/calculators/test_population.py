"""Population limits (issue 36 item 7): every calculator either declares the population its source
publication states (``calculators/populations.yaml``) or says why it has none; a patient outside it
is a sentence naming the limit and its source, a finding of the check ``outside_population`` and a
remark of the ``rules`` verifier; on v1.0, the rows outside their calculator's population."""

from __future__ import annotations

import asyncio

import pytest

from medcalc_maintained.calculators import load_all
from medcalc_maintained.calculators.population import (
    POPULATIONS_FILE,
    SEXES,
    parse,
    population,
    population_problems,
    populations,
)
from medcalc_maintained.core.errors import DataError
from medcalc_maintained.core.rows import rows_of
from medcalc_maintained.quality.checks import REGISTRY, Instance, run
from medcalc_maintained.verifiers.base import Task
from medcalc_maintained.verifiers.rules import RulesBackend

# -- the declaration ---------------------------------------------------------------------------


def test_every_calculator_is_declared_once_with_limits_or_under_no_stated_limit():
    pops = populations()
    ids = set(load_all())
    assert len(ids) == 55
    assert set(pops.limits) | set(pops.no_stated_limit) == ids
    assert not set(pops.limits) & set(pops.no_stated_limit)


def test_every_limit_names_a_source_and_every_unlimited_calculator_a_note():
    pops = populations()
    for cid, pop in pops.limits.items():
        assert pop.source.strip() and len(pop.source) > 20, cid
        assert pop.age_min is not None or pop.age_max is not None or pop.sex in SEXES, cid
    assert all(note.strip() for note in pops.no_stated_limit.values())


def test_the_declared_limits_of_the_issue():
    # worked out from the sources quoted in populations.yaml, not from the code
    assert (population(19).age_min, population(19).age_max) == (18, None)          # FIB-4: adults
    assert "Sterling" in population(19).source
    assert (population(20).age_min, population(20).age_max) == (3, 76)            # McIsaac 1998
    assert (population(9).age_min, population(9).age_max) == (18, 70)              # MDRD Study
    assert (population(2).age_min, population(2).age_max) == (18, 92)              # Cockcroft-Gault
    assert population(17).age_min == 50                                            # RCRI, Lee 1999
    assert population(51).age_min == 18 and "Goldstein" in population(51).source  # adult SIRS
    assert population(23).age_min == 12                                           # MELD; PELD under 12
    assert {c for c in (13, 68, 69) if population(c).sex == "female"} == {13, 68, 69}
    assert population(5) is None and population(22) is None and population(21) is None


# -- the problems of a row (one synthetic row per rule) ------------------------------------------


def test_fib4_for_a_2_year_old_is_outside_naming_the_limit_and_its_source():
    [problem] = population_problems(19, {"age": [2, "years"], "Platelet count": [101000, "µL"]})
    assert problem.startswith("the patient is 2 years old, below the minimum age")
    assert "(18 years; source: Sterling RK et al. Hepatology 2006" in problem


def test_fib4_for_a_40_year_old_is_within():
    assert population_problems(19, {"age": [40, "years"]}) == []
    assert population_problems(19, {"age": [18, "years"]}) == []   # limits are inclusive


@pytest.mark.parametrize("age,flagged", [
    ([14, "months"], True),       # 14 / 12 = 1.17 years < 3 (uid 301's patient)
    ([36, "months"], False),      # exactly 3 years
    ([150, "weeks"], True),       # 150 x 7 / 365.25 = 2.87 years < 3
    ([1100, "days"], False),      # 1100 / 365.25 = 3.01 years
])
def test_an_age_in_months_weeks_or_days_is_converted(age, flagged):
    assert bool(population_problems(20, {"age": age})) is flagged


def test_months_are_named_in_years():
    [problem] = population_problems(20, {"age": [14, "months"]})
    assert problem.startswith("the patient is 1.17 years old") and "McIsaac" in problem
    assert population_problems(19, {"age": [200, "months"]})        # 16.7 years
    assert not population_problems(19, {"age": [216, "months"]})    # 18 years


@pytest.mark.parametrize("entities", [
    {},                                        # no age stated
    {"age": None},
    {"age": [2, "fortnights"]},                # a unit units.py does not know: not read, not guessed
    {"age": ["two", "years"]},
    {"sex": "Female", "creatinine": [1, "mg/dL"]},
])
def test_a_missing_or_unreadable_age_is_never_a_problem(entities):
    assert population_problems(19, entities) == []


def test_an_upper_limit_is_checked_and_inclusive():
    [problem] = population_problems(9, {"age": [71, "years"], "sex": "Female"})
    assert problem.startswith("the patient is 71 years old, above the maximum age")
    assert "(70 years; source: Levey AS" in problem
    assert population_problems(9, {"age": [70, "years"]}) == []


def test_a_bare_number_is_years_as_for_the_calculators():
    assert population_problems(17, {"age": 45}) and not population_problems(17, {"age": 50})


def test_sex_limits_of_the_pregnancy_calculators():
    [problem] = population_problems(13, {"sex": "Male"})
    assert problem.startswith("the patient is male, outside the calculator's population (female patients only")
    assert "ACOG" in problem
    assert population_problems(13, {"sex": "F"}) == [] and population_problems(69, {}) == []


def test_a_calculator_without_a_stated_limit_has_no_problems():
    assert population_problems(5, {"age": [1, "days"]}) == []


def test_every_declared_limit_fires_just_outside_and_not_just_inside():
    for cid, pop in populations().limits.items():
        if pop.age_min is not None:
            assert population_problems(cid, {"age": [pop.age_min - 0.5, "years"]}), cid
            assert not population_problems(cid, {"age": [pop.age_min, "years"]}), cid
        if pop.age_max is not None:
            assert population_problems(cid, {"age": [pop.age_max + 0.5, "years"]}), cid
            assert not population_problems(cid, {"age": [pop.age_max, "years"]}), cid
        if pop.sex is not None:
            other = "Male" if pop.sex == "female" else "Female"
            assert population_problems(cid, {"sex": other}), cid
            assert not population_problems(cid, {"sex": pop.sex.title()}), cid


# -- the file is read strictly -------------------------------------------------------------------

GOOD = "populations:\n  19:\n    age_min: 18\n    source: a source that states it\nno_stated_limit:\n  - {id: 5, note: none}\n"


@pytest.mark.parametrize("text,message", [
    (GOOD.replace("    age_min: 18\n", "    age_min: 18\n    age_min: 20\n"), "duplicate"),
    ("x: &a {age_min: 1, source: s}\npopulations:\n  19: *a\n", "alias"),
    (GOOD.replace("age_min: 18", "age_minimum: 18"), "unknown field"),
    (GOOD.replace("    source: a source that states it\n", "    source: ''\n"), "names the source"),
    (GOOD.replace("    age_min: 18\n", "    age_min: 18\n    age_max: 18\n"), "not below age_max"),
    (GOOD.replace("    age_min: 18\n", "    age_min: '18'\n"), "number of years"),
    (GOOD.replace("    age_min: 18\n", "    sex: woman\n"), "sex must be one of"),
    (GOOD.replace("    age_min: 18\n", ""), "belongs in no_stated_limit"),
    (GOOD + "  - {id: 19, note: also here}\n", "listed twice"),
    (GOOD.replace("{id: 5, note: none}", "{id: 5}"), "each entry is"),
    (GOOD + "extra: 1\n", "two sections"),
])
def test_a_malformed_populations_file_is_refused_naming_the_problem(text, message):
    with pytest.raises(DataError, match=message):
        parse(text, POPULATIONS_FILE)


def test_the_shipped_file_parses():
    assert parse(POPULATIONS_FILE.read_text(encoding="utf-8")).limits == populations().limits


# -- the check and the verifier ------------------------------------------------------------------


def _outside(inst: Instance) -> list:
    return [f for f in run(inst) if f.check == "outside_population"]


def test_the_check_is_registered_as_info_for_the_declared_calculators():
    check = REGISTRY["outside_population"]
    assert check.severity == "info" and check.calculators == frozenset(populations().limits)


def test_the_check_fires_on_fib4_for_a_2_year_old_and_quotes_the_age():
    note = "Laboratory tests were drawn. A 2-year-old girl with easy bruising. AST 87 U/L."
    [f] = _outside(Instance(note=note, calculator_id=19, entities={"age": [2, "years"]}))
    assert f.severity == "info" and "Sterling" in f.reason
    assert f.evidence_text == "A 2-year-old girl with easy bruising." == note[f.evidence_start:f.evidence_end]
    assert _outside(Instance(note="A 40-year-old man.", calculator_id=19, entities={"age": [40, "years"]})) == []


def test_the_check_reads_the_notes_age_when_the_entities_have_none():
    # SIRS stores no age entity: the note's "N-year-old" (or "N-month-old") decides
    assert len(_outside(Instance(note="A 20-month-old boy with fever.", calculator_id=51))) == 1
    assert _outside(Instance(note="A 60-year-old woman with fever.", calculator_id=51)) == []
    assert _outside(Instance(note="A woman with fever.", calculator_id=51)) == []
    # the entity wins over the note when both are there
    assert _outside(Instance(note="Her 2-year-old son was well.", calculator_id=19, entities={"age": [40, "years"]})) == []


def _critique(calculator_id: int, entities: dict, label: str, lower: str, upper: str) -> str:
    task = Task(1, "test", 0, "audit", "decimal", "", "", "0" * 64,
                payload={"calculator_id": calculator_id, "entities": entities, "label": label,
                         "lower": lower, "upper": upper, "output_type": "decimal"})
    return asyncio.run(RulesBackend().generate(task)).text


def test_the_rules_verifier_says_when_the_patient_is_outside_and_keeps_its_verdict():
    ents = {"age": [2, "years"], "Aspartate aminotransferase": [87, "U/L"], "Alanine aminotransferase": [104, "U/L"],
            "Platelet count": [101000, "µL"]}
    # FIB-4 = age x AST / (platelets 10^9/L x sqrt(ALT)) = 2 x 87 / (101 x 10.198) = 174 / 1030.0 = 0.169
    text = _critique(19, ents, "0.169", "0.161", "0.177")
    assert "<verdict>yes</verdict>" in text
    assert "Outside the calculator's population: the patient is 2 years old" in text and "Sterling" in text
    adult = _critique(19, {**ents, "age": [40, "years"]}, "3.379", "3.21", "3.548")   # 3480 / 1030.0
    assert "<verdict>yes</verdict>" in adult and "Outside" not in adult


# -- the real v1.0 rows --------------------------------------------------------------------------

# Read in the notes: uid 291 "A previously healthy two-year-old African American female" (FIB-4),
# uid 154 "A 17-year-old female was admitted for living donor (LD) RTx." (MDRD), uid 301 "A 14-month-old
# previously healthy boy" (Centor); 144 and 159 are MDRD patients aged 94 and 73 (the MDRD Study
# enrolled 18-70). The four SIRS rows store no age: their notes say 14 years (595), 2 years (600),
# 20 months (601) and 5 years (605).
BY_ENTITIES = {144: 9, 154: 9, 159: 9, 291: 19, 301: 20}
BY_NOTE = {595: 51, 600: 51, 601: 51, 605: 51}


def test_real_rows_outside_their_calculators_population(real_instances):
    rows = rows_of(real_instances)
    by_entities = {r.uid: r.calculator_id for r in rows if population_problems(r.calculator_id, r.entities)}
    assert by_entities == BY_ENTITIES
    notes = {r.uid: r.note for r in rows}
    assert "two-year-old" in notes[291] and "A 17-year-old female" in notes[154] and "14-month-old" in notes[301]
    flagged = {r.uid: r.calculator_id for r in rows if _outside(Instance.of(r))}
    assert flagged == {**BY_ENTITIES, **BY_NOTE}       # 9 of the 1,047 rows
