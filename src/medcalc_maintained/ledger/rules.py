"""The rules every ledger record must follow, run the same way by ``propose``, ``review import``,
``apply`` and the ledger contract of ``validate``.

* ``new_value`` is a possible label of its row (:func:`medcalc_maintained.calculators.ranges.label_problem`:
  written out, the row's type, inside the calculator's range; never rounded or coerced);
  ``old_value`` has the row's type;
* a physician record (``source: physician`` or reviewer role ``physician``) is ``blinded: true``;
* ``decided_at`` is a real ``YYYY-MM-DD`` date not after today;
* a record's derivation holds (:func:`derivation_problems`): its ``definition`` is declared in
  ``calculators/definitions.yaml``, each of its ``inputs`` quotes the note at its offsets, and the
  definition applied to the row's entities patched by the inputs reproduces ``new_value``; an
  ``override`` needs a physician reviewer;
* of two accepted records of one row and release, the one decided earlier (then: earlier in the
  ledger) stands and the later one is blamed, naming both (:func:`accepted_order`, :func:`duplicate_problem`).
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any, Mapping

from medcalc_maintained.calculators.ranges import label_problem
from medcalc_maintained.core.answers import limits, parse_answer
from medcalc_maintained.core.labels import fit_problem
from medcalc_maintained.core.rows import entities_or_empty
from medcalc_maintained.core.versions import UNRELEASED, rules
from medcalc_maintained.ledger import derivation as D

PHYSICIAN = "physician"
_ISO_DAY = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")


def is_physician(rec: Mapping[str, Any]) -> bool:
    reviewer = rec.get("reviewer")
    role = reviewer.get("role") if isinstance(reviewer, Mapping) else rec.get("reviewer_role")
    return rec.get("source") == PHYSICIAN or str(role or "").strip().lower() == PHYSICIAN


def blinded_problem(rec: Mapping[str, Any]) -> str | None:
    if is_physician(rec) and rec.get("blinded") is not True:
        return "a physician record must be blinded (blinded: true: the reviewer recomputed the label without seeing the old one)"
    return None


def decided_at_problem(value: Any, today: dt.date | None = None) -> str | None:
    """Why ``value`` is not a real decision date (``YYYY-MM-DD``, not after today)."""
    if isinstance(value, dt.datetime):
        value = value.date()
    if isinstance(value, dt.date):
        day = value
    else:
        m = _ISO_DAY.match(str(value if value is not None else "").strip())
        if not m:
            return f"decided_at {value!r} is not a YYYY-MM-DD date"
        try:
            day = dt.date(*(int(g) for g in m.groups()))
        except ValueError as exc:
            return f"decided_at {value!r} is not a real date ({exc})"
    today = today or dt.date.today()
    if day > today:
        return f"decided_at {day.isoformat()} is in the future (today is {today.isoformat()})"
    return None


def value_problems(rec: Mapping[str, Any], *, calculator_id: Any, output_type: str, style: str | None,
                   note: Any = None) -> list[tuple[str, str]]:
    """(field, problem) for ``new_value`` (a possible label of the row) and ``old_value`` (the row's type)."""
    out: list[tuple[str, str]] = []
    new = rec.get("new_value")
    problem = label_problem(calculator_id, new, output_type, style, note)
    if problem:
        out.append(("new_value", f"{new!r} is not a valid {output_type} answer ({problem})"))
    old = rec.get("old_value")
    old_problem = label_problem(calculator_id, old, output_type, style, None) if old is None or not str(old).strip() \
        else fit_problem(parse_answer(old, output_type), output_type, style)
    if old_problem:
        out.append(("old_value", f"{old!r} is not a valid {output_type} answer ({old_problem})"))
    return out


def record_problems(rec: Mapping[str, Any], *, calculator_id: Any, output_type: str, style: str | None,
                    note: Any = None, today: dt.date | None = None) -> list[tuple[str, str]]:
    """Every rule of one record against its row: (field, problem) pairs, empty when it follows them all."""
    out = value_problems(rec, calculator_id=calculator_id, output_type=output_type, style=style, note=note)
    if (p := blinded_problem(rec)):
        out.append(("blinded", p))
    if (p := decided_at_problem(rec.get("decided_at"), today)):
        out.append(("decided_at", p))
    return out


def derivation_problems(rec: Mapping[str, Any], *, calculator_id: Any, output_type: str, style: str | None,
                        note: Any, entities: Any, frozen: Mapping[str, Mapping[str, Any]] | None = None
                        ) -> list[tuple[str, str]]:
    """(field, problem) of a record's derivation: the named ``definition`` exists, the ``inputs``
    quote the note, an ``override`` has a physician reviewer, and a record that states inputs or a
    definition (and is no override) reproduces its ``new_value`` (MedCalc-Bench grading; an ``N/A``
    is reproduced when the derivation gives no value). Every problem is listed: an unknown
    ``definition`` still has its inputs checked (only the reproduction, which needs the definition,
    is skipped). ``frozen``: the verdicts the record's release published (``ledger/published.py``), which
    decide its inputs instead of today's verifier."""
    out: list[tuple[str, str]] = []
    if rec.get("override") is not None and not is_physician(rec):
        out.append(("override", "an override (a value no derivation gives) needs a physician reviewer"))
    unknown = D.definition_problem(calculator_id, rec.get("definition"))
    if unknown:
        out.append(("definition", unknown))
    inputs = rec.get("inputs")
    shape = D.input_problems(calculator_id, inputs, note)
    out += [("inputs", p) for p in shape]
    if not shape and _derivable(inputs) and inputs and rules(rec.get("release", UNRELEASED)).evidence_gate:
        out += [("inputs", p) for p in evidence_problems(calculator_id, inputs, note, entities, rec.get("definition"),
                                                         frozen=frozen,
                                                         evidence_only=rules(rec.get("release", UNRELEASED)).evidence_rows)]
    # nothing to derive: an override, no stated derivation, an unknown definition, malformed inputs
    if unknown or not _derivable(inputs) or rec.get("override") is not None or (
            not inputs and rec.get("definition") is None):
        return out
    new = str(rec.get("new_value", ""))
    answer = parse_answer(new, output_type)
    if not answer.is_valid:
        return out
    d = D.derive(calculator_id, entities_or_empty(entities), inputs or [], rec.get("definition"))
    if answer.is_abstain:
        if d.value is not None and not str(rec.get("justification") or "").strip():
            out.append(("inputs", f"new_value N/A but {d.definition} gives {d.value} from the row's entities with "
                                  f"{_shown(inputs)}; state a justification or the input that is absent"))
        return out
    lo, hi = limits(new, output_type, style)
    if not D.reproduces(d.value, new, lo, hi, output_type):
        out.append(("inputs", f"{d.definition} applied to the row's entities with {_shown(inputs)} gives {d.shown}, "
                              f"not new_value {new!r}"))
    return out


def evidence_problems(calculator_id: Any, inputs: list[Any], note: Any, entities: Any, definition: Any = None, *,
                      frozen: Mapping[str, Mapping[str, Any]] | None = None, evidence_only: bool = False) -> list[str]:
    """The evidence rules of records of releases from ``EVIDENCE_FROM`` on (and unreleased ones):
    every input's quote is accepted by the evidence verifier (``calculators/evidence.py``; the
    problem names the input, its quote and the rule), and no input changes nothing. An input whose
    verdict its published release froze (``frozen``, by ``ledger/published.py: verdict_key``) keeps it:
    a later verifier never rewrites what a published record was accepted on. ``evidence_only`` (records of releases
    that ship every input's evidence, ``core/versions.py: EVIDENCE_ROWS_FROM``): an input that changes nothing is
    allowed, as the quote that certifies the value the label's derivation already uses."""
    out = []
    text = note if isinstance(note, str) else None
    for n, inp in enumerate(inputs):
        v = D.input_verdict(int(calculator_id), inp, text, frozen, carried=True)
        if not v.supports:
            quote = str((inp.get("evidence") or {}).get("text") or "")
            hint = fix_hint(v.rule, inp)
            out.append(f"inputs[{n}] ({inp.get('name')}) quoting {quote[:100]!r}: rule {v.rule}: {v.reason}"
                       + (f"; {hint}" if hint else ""))
    ents = entities_or_empty(entities)
    for n in ([] if evidence_only else D.inert_inputs(int(calculator_id), ents, [dict(i) for i in inputs], definition)):
        out.append(f"inputs[{n}] ({inputs[n].get('name')}) changes nothing: the definition gives the same value "
                   "without it; record only the inputs the derivation needs")
    return out


UNIT_READING_HINT = ("record the unit the quote prints or, when the printed unit is a typo, say on the input how "
                     "you read it (unit_reading), e.g. unit_reading: {printed: mg/dL, why: an albumin of 3.5 mg/dL "
                     "is impossible; 3.5 is the usual g/dL value}")
DOSE_UNIT_HINT = "record the dose and the unit the quote prints"


def fix_hint(rule: str, inp: Mapping[str, Any]) -> str:
    """How to fix an input the evidence verifier refused by ``rule`` where its reason does not say it
    (``""`` when it does): a number whose printed unit is not the recorded one may declare how the
    record reads the printed unit (``unit_reading: {printed, why}``, read by
    ``calculators/evidence_units.py``); a dose records the unit printed."""
    if rule != "unit-mismatch":
        return ""
    value = inp.get("value")
    return UNIT_READING_HINT if isinstance(value, (int, float)) and not isinstance(value, bool) else DOSE_UNIT_HINT


def _derivable(inputs: Any) -> bool:
    """Whether ``inputs`` can patch entities: absent, or a list of mappings whose values and units have
    the schema's types (a record that failed the schema is still checked, without deriving from junk)."""
    if inputs is None:
        return True
    return isinstance(inputs, list) and all(
        isinstance(i, Mapping) and isinstance(i.get("value"), (int, float, str, bool, type(None)))
        and isinstance(i.get("unit"), (str, type(None))) for i in inputs)


def _shown(inputs: Any) -> str:
    if not inputs:
        return "no input changed"
    return "inputs " + ", ".join(D.input_entity_text(i) for i in inputs if isinstance(i, Mapping))


def underivable_problem(rec: Mapping[str, Any], *, calculator_id: Any, output_type: str, entities: Any) -> str | None:
    """Why a new record's value cannot come from its row (``propose`` refuses it): the
    declared definition gives no value from the row's entities patched by the record's inputs (a
    component not testable, an input absent) while ``new_value`` is a value, and the record names
    no alternative definition and is no override. ``None`` when the value may stand."""
    if rec.get("override") is not None or rec.get("definition") is not None:
        return None
    answer = parse_answer(str(rec.get("new_value", "")), output_type)
    if not answer.is_valid or answer.is_abstain:
        return None
    d = D.derive(calculator_id, entities_or_empty(entities), rec.get("inputs") or [])
    if d.value is not None:
        return None
    said = (f"new_value {rec.get('new_value')!r} cannot come from this row: the declared definition {d.definition} "
            f"gives {d.shown}")
    alternatives = D.alternatives(int(calculator_id))
    if not alternatives:
        return (f"{said}; calculators/definitions.yaml publishes no alternative definition of calculator "
                f"{int(calculator_id)}: propose N/A, or make it an override with a reason")
    named = "; ".join(f"{name} ({text})" if text else name for name, text in alternatives.items())
    return (f"{said}; name the alternative it follows (definition), one of calculators/definitions.yaml's: {named}; "
            "or make it an override with a reason")


def population_problem(rec: Mapping[str, Any], *, calculator_id: Any, output_type: str, entities: Any) -> str | None:
    """Why a new record's value is refused for a patient outside the calculator's declared population
    (``calculators/populations.yaml``; the row's entities patched by the record's inputs): a value
    there is an extrapolation the source publication does not support. ``N/A`` and a physician's
    override with its reason may stand."""
    from medcalc_maintained.calculators.population import population_problems

    if rec.get("override") is not None:
        return None
    answer = parse_answer(str(rec.get("new_value", "")), output_type)
    if not answer.is_valid or answer.is_abstain:
        return None
    problems = population_problems(int(calculator_id), D.patch(entities_or_empty(entities), rec.get("inputs")))
    if not problems:
        return None
    return (f"new_value {rec.get('new_value')!r} for a patient outside the calculator's population: "
            f"{'; '.join(problems)}; propose N/A (error type unanswerable) or, as a physician, an override with a reason")


def accepted_order(release_key: tuple, decided_at: Any, position: int) -> tuple:
    """Sort key of accepted records: release, then decision date, then ledger position. The first
    record of a row and release in this order is the one that stands."""
    return (release_key, str(decided_at or "9999-99-99"), position)


def duplicate_problem(split: str, uid: int, release: str, later: tuple[str, str, Any], first: tuple[str, str, Any]) -> str:
    """The message blaming ``later`` = (id, file, decided_at) for repeating ``first``'s row and release."""
    return (f"second accepted record for {split} uid {uid} in release {release}: {later[0]} ({later[1]}, decided "
            f"{later[2]}) repeats {first[0]} ({first[1]}, decided {first[2]}), which stands; withdraw or re-base {later[0]}")
