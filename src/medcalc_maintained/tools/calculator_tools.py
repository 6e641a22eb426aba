"""The 55 reference calculators as tools, independent of any transport: names, JSON schemas, calls.

* :func:`tool_name` / :func:`calculator_for_tool`: one stable tool name per calculator.
* :func:`input_schema`: the JSON schema of a calculator's arguments, derived from its declared
  inputs (:mod:`medcalc_maintained.calculators.inputs`): one property per entity key; quantities
  are ``{"value": number, "unit": string}`` (units of :mod:`medcalc_maintained.core.units`),
  criteria booleans, categorical inputs an ``enum`` of their allowed values, dates ``MM/DD/YYYY``.
* :func:`call_calculator`: arguments -> entities -> :func:`medcalc_maintained.calculators.compute`,
  returning the value, the derivation steps (inputs as read and converted to canonical units, then
  the formula of the calculator's docstring; the calculators do not expose intermediate values)
  and implausible-input warnings, and which implementation answered with its conformance
  (:func:`conformance`: the calculator's vectors passed, so a tool result traces to a checked formula). A missing, unknown, ill-typed or impossible input raises
  :class:`ToolInputError` naming the input, its expected unit and range: never a number.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache
from typing import Any, cast

from medcalc_maintained.calculators import compute, load_all
from medcalc_maintained.calculators.base import _as_number
from medcalc_maintained.calculators.inputs import InputSpec, declared_inputs, expected_text, spec_by_name
from medcalc_maintained.core import units as U

# Values no measurement can take, by plausibility range key (canonical units). Every other numeric
# input except temperature is never negative. Outside these: a tool error; outside the (wider
# than reference, narrower than these) plausibility range: a warning, the value is still computed.
HARD_LIMITS: dict[str, tuple[float | None, float | None]] = {
    "gcs": (3, 15),
    "fio2": (21, 100),
    "oxygen_saturation": (0, 100),
    "hematocrit": (0, 100),
    "ph": (0, 14),
}
TOOL_LIST = "list_calculators"
TOOL_LOOKUP = "lookup_instance"


class ToolInputError(ValueError):
    """A call the calculator cannot answer; ``inputs`` names the offending argument(s)."""

    def __init__(self, message: str, inputs: list[str]):
        super().__init__(message)
        self.inputs = inputs


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def tool_name(calculator_id: int) -> str:
    """``<slug of the calculator name>`` (at most 64 characters, MCP's limit)."""
    return _slug(load_all()[int(calculator_id)].name)[:64].rstrip("_")


def tool_names() -> dict[str, int]:
    """``{tool name: calculator id}`` of all calculators; names are unique (checked)."""
    out: dict[str, int] = {}
    for cid in sorted(load_all()):
        name = tool_name(cid)
        if name in out or name in (TOOL_LIST, TOOL_LOOKUP):
            raise ValueError(f"tool name {name!r} of calculators {out.get(name)} and {cid} collides")
        out[name] = cid
    return out


def calculator_for_tool(name: str) -> int | None:
    return tool_names().get(name)


def citation(calculator_id: int) -> str:
    """The calculator's docstring: its formula and source (MDCalc page or primary paper)."""
    return " ".join(load_all()[int(calculator_id)].source.split())


def _property(spec: InputSpec) -> dict[str, Any]:
    desc = expected_text(spec)
    if spec.accessor == "quantity":
        return {"type": "object", "description": desc, "additionalProperties": False,
                "properties": {"value": {"type": "number"}, "unit": {"type": "string", "examples": spec.units}},
                "required": ["value", "unit"]}
    if spec.accessor == "number":
        return {"type": "number", "description": desc}
    if spec.accessor == "flag":
        return {"type": "boolean", "description": "criterion present (absent when omitted)"}
    if spec.accessor == "choice":
        return {"type": "string", "enum": list(spec.options), "description": desc}
    if spec.accessor == "date":
        return {"type": "string", "pattern": r"^\d{2}/\d{2}/\d{4}$", "description": desc}
    if spec.accessor == "steroid_dose":
        return {"type": "object", "description": desc, "additionalProperties": False,
                "properties": {"name": {"type": "string", "enum": list(spec.options)}, "dose": {"type": "number"},
                               "unit": {"type": "string", "examples": U.known_units("drug_mass")}},
                "required": ["name", "dose", "unit"]}
    if spec.accessor == "opioid_list":
        item = {"type": "object", "additionalProperties": False,
                "properties": {"drug": {"type": "string", "enum": list(spec.options)},
                               "dose": {"type": "object", "properties": {"value": {"type": "number"},
                                                                         "unit": {"type": "string"}},
                                        "required": ["value", "unit"]},
                               "doses_per_day": {"type": "number", "minimum": 0}},
                "required": ["drug", "dose", "doses_per_day"]}
        return {"type": "array", "items": item, "minItems": 1,
                "description": "each opioid: dose (mg; fentanyl patch in mcg/hr, buccal in mcg) and doses per day"}
    return {"type": "string", "description": desc}


def _required(calculator_id: int, spec: InputSpec) -> bool:
    """Whether a call must give ``spec``: declared required, unless the calculator's definition itself
    decides it when unmentioned (``absent_when_unmentioned`` of ``definitions.yaml``: Child-Pugh's
    ascites and encephalopathy, MDRD's race), as the calculator reads it."""
    from medcalc_maintained.calculators.policy import load_policy

    decided = (load_policy().get(int(calculator_id)) or {}).get("absent_when_unmentioned") or []
    return spec.required and spec.name not in decided


def input_schema(calculator_id: int) -> dict[str, Any]:
    """JSON schema (draft 2020-12 subset) of the calculator's arguments."""
    specs = declared_inputs(calculator_id)
    return {"type": "object", "properties": {s.name: _property(s) for s in specs},
            "required": [s.name for s in specs if _required(calculator_id, s)], "additionalProperties": False}


def tool_arguments(calculator_id: int, entities: dict[str, Any]) -> dict[str, Any]:
    """The tool arguments of a ``Relevant Entities`` dict (the inverse of :func:`arguments_to_entities`):
    quantities as ``{value, unit}``, a steroid dose as ``{name, dose, unit}``, the MME's per-drug
    ``<Drug> Dose`` / ``<Drug> Dose Per Day`` pairs as the ``opioids`` list; the rest as they are."""
    specs = spec_by_name(calculator_id)
    args: dict[str, Any] = {}
    opioids: dict[str, dict[str, Any]] = {}
    for key, v in entities.items():
        spec = specs.get(key)
        lowered = str(key).lower()
        if spec is None and lowered.endswith((" dose", " dose per day")):
            drug = key[: -len(" Dose Per Day")] if lowered.endswith(" dose per day") else key[: -len(" Dose")]
            item = opioids.setdefault(drug, {"drug": drug})
            if lowered.endswith(" dose per day"):
                item["doses_per_day"] = v[0] if isinstance(v, (list, tuple)) else v
            else:
                item["dose"] = {"value": v[0], "unit": v[1]} if isinstance(v, (list, tuple)) else v
        elif spec is not None and spec.accessor == "quantity" and isinstance(v, (list, tuple)) and len(v) == 2:
            args[key] = {"value": v[0], "unit": v[1]}
        elif spec is not None and spec.accessor == "steroid_dose" and isinstance(v, (list, tuple)) and len(v) == 3:
            args[key] = {"name": v[0], "dose": v[1], "unit": v[2]}
        else:
            args[key] = v
    if opioids:
        args["opioids"] = list(opioids.values())
    return args


def definition_version(calculator_id: int) -> str:
    """The definition the maintained labels follow, from the policy (calculators/definitions.yaml)."""
    from medcalc_maintained.calculators.policy import load_policy

    entry = load_policy().get(int(calculator_id))
    return f"{entry['version']}: {' '.join(str(entry['definition']).split())}" if entry else "not declared"


def _as_tool(calculator_id: int, entities: dict[str, Any]) -> Any:
    """A conformance case through the tool itself: its arguments, :func:`call_calculator`, its value."""
    from medcalc_maintained.conformance.base import NoResult

    try:
        return _answer(calculator_id, tool_arguments(calculator_id, entities))["value"]
    except ToolInputError as exc:  # the tool's refusal: no result
        raise NoResult(str(exc)) from None


@lru_cache(maxsize=None)
def conformance(calculator_id: int) -> dict[str, Any]:
    """Which implementation the tool serves and how the tool itself (its argument reading, then the
    calculator) does on the calculator's conformance vectors (:mod:`medcalc_maintained.conformance`):
    ``{"implementation", "vectors", "passed", "vectors_sha256"}``."""
    from medcalc_maintained.conformance import load_vectors, run_vectors
    from medcalc_maintained.conformance.base import Implementation

    tool = Implementation("tool", "the MCP tool", _as_tool)
    [result] = run_vectors(load_vectors([int(calculator_id)]), tool).calculators
    return {"implementation": f"medcalc_maintained.calculators (medcalc-maintained {_package_version()})",
            "vectors": result.cases, "passed": result.passed, "vectors_sha256": _vectors_digest()}


@lru_cache(maxsize=1)
def _vectors_digest() -> str:
    """The packaged vectors' sha256 (read once: the same for every calculator)."""
    from medcalc_maintained.conformance import vectors_digest

    return vectors_digest()


def _package_version() -> str:
    from importlib import metadata

    try:
        return metadata.version("medcalc-maintained")
    except metadata.PackageNotFoundError:
        return "unknown"


def conformance_text(calculator_id: int) -> str:
    c = conformance(calculator_id)
    return (f"Implementation: {c['implementation']}; conformance: {c['passed']}/{c['vectors']} vectors pass "
            f"(vectors sha256 {c['vectors_sha256'][:12]}, docs/conformance.md)")


def describe(calculator_id: int) -> str:
    calc = load_all()[int(calculator_id)]
    return (f"{calc.name} (MedCalc-Bench calculator {calc.calculator_id}, output {calc.output_type}). "
            f"Definition version of the maintained labels: {definition_version(calculator_id)}. "
            f"{conformance_text(calculator_id)}. "
            f"Definition and citation: {citation(calculator_id)}")


def _bad(spec: InputSpec, problem: str) -> ToolInputError:
    return ToolInputError(f"input {spec.name!r}: {problem}; expected {expected_text(spec)}", [spec.name])


def _check_limits(spec: InputSpec, value: float, shown: str) -> None:
    if spec.kind == "temperature":
        return
    lo, hi = HARD_LIMITS.get(spec.range_key or "", (0, None))
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        raise _bad(spec, f"{shown} is out of range (never {'below ' + str(lo) if lo is not None and value < lo else 'above ' + str(hi)})")


def _quantity_entity(spec: InputSpec, v: Any) -> list[Any]:
    if isinstance(v, dict) and set(v) >= {"value", "unit"}:
        num, unit = v["value"], v["unit"]
    elif isinstance(v, (list, tuple)) and len(v) == 2:
        num, unit = v
    elif _as_number(v) is not None and spec.kind in ("percent", "rate", "age"):
        num, unit = v, spec.canonical_unit
    else:
        raise _bad(spec, f"{v!r} is not a {{value, unit}} object")
    x = _as_number(num)
    if x is None:
        raise _bad(spec, f"value {num!r} is not a number")
    try:
        canonical = U.to_canonical(cast(str, spec.kind), x, str(unit))  # a quantity names its kind
    except U.UnknownUnit:
        raise _bad(spec, f"unit {unit!r} is not known") from None
    _check_limits(spec, canonical, f"{x:g} {unit}")
    return [x, str(unit)]


def _opioid_entities(spec: InputSpec, items: Any) -> dict[str, Any]:
    if not isinstance(items, list) or not items:
        raise _bad(spec, "needs a non-empty list of {drug, dose, doses_per_day}")
    out: dict[str, Any] = {}
    for i, it in enumerate(items):
        if not isinstance(it, dict) or not {"drug", "dose", "doses_per_day"} <= set(it):
            raise _bad(spec, f"item {i} needs drug, dose and doses_per_day")
        if str(it["drug"]).strip().lower() not in spec.options:
            raise _bad(spec, f"item {i}: drug {it['drug']!r} is not known")
        dose, n = it["dose"], _as_number(it["doses_per_day"])
        dose = [dose.get("value"), dose.get("unit")] if isinstance(dose, dict) else dose
        if not (isinstance(dose, list) and len(dose) == 2 and (d0 := _as_number(dose[0])) is not None and d0 >= 0):
            raise _bad(spec, f"item {i}: dose {it['dose']!r} is not a non-negative {{value, unit}}")
        if n is None or n < 0:
            raise _bad(spec, f"item {i}: doses_per_day {it['doses_per_day']!r} is not a non-negative number")
        out[f"{it['drug']} Dose"] = dose
        out[f"{it['drug']} Dose Per Day"] = [n, "per day"]
    return out


def _entity(spec: InputSpec, v: Any) -> Any:
    if spec.accessor == "quantity":
        return _quantity_entity(spec, v)
    if spec.accessor == "number":
        x = _as_number(v[0] if isinstance(v, (list, tuple)) and v else v)
        if x is None:
            raise _bad(spec, f"{v!r} is not a number")
        _check_limits(spec, x, f"{x:g}")
        return x
    if spec.accessor == "flag":
        if not isinstance(v, bool):
            raise _bad(spec, f"{v!r} is not true or false")
        return v
    if spec.accessor == "choice":
        if str(v).strip().lower() not in {o.lower() for o in spec.options}:
            raise _bad(spec, f"{v!r} is not an allowed value")
        return v
    if spec.accessor == "steroid_dose":
        if not isinstance(v, dict) or not {"name", "dose", "unit"} <= set(v):
            raise _bad(spec, f"{v!r} needs name, dose and unit")
        dose = _as_number(v["dose"])
        if dose is None or dose < 0:
            raise _bad(spec, f"dose {v['dose']!r} is not a non-negative number")
        return [v["name"], dose, v["unit"]]
    return v


def _non_finite(v: Any, depth: int = 0) -> Any:
    """The first number inside ``v`` (a number, or text that reads as one) that is not finite:
    ``Infinity``, ``NaN``, or ``1e400`` (which a JSON reader turns into infinity); else ``None``."""
    if depth > 8 or isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return v if isinstance(v, float) and not math.isfinite(v) else None
    if isinstance(v, str):
        try:
            x = float(v.strip())
        except (ValueError, OverflowError):
            return None
        return v if not math.isfinite(x) else None
    items = v.values() if isinstance(v, dict) else v if isinstance(v, (list, tuple)) else ()
    return next((bad for bad in (_non_finite(i, depth + 1) for i in items) if bad is not None), None)


def arguments_to_entities(calculator_id: int, arguments: dict[str, Any] | None) -> dict[str, Any]:
    """The ``Relevant Entities`` dict a calculator reads, from tool arguments; raises
    :class:`ToolInputError` for an unknown, missing, ill-typed or impossible argument."""
    args = dict(arguments or {})
    specs = spec_by_name(calculator_id)
    lowered = {k.lower(): k for k in specs}
    entities: dict[str, Any] = {}
    given: set[str] = set()
    for key, v in args.items():
        key = key if key in specs else lowered.get(str(key).strip().lower(), key)
        spec = specs.get(key)
        if spec is None:
            raise ToolInputError(f"unknown input {key!r}; this calculator's inputs are "
                                 f"{', '.join(s.name for s in declared_inputs(calculator_id))}", [str(key)])
        if v is None:
            continue
        bad = _non_finite(v)
        if bad is not None:
            raise _bad(spec, f"{bad!r} is not a finite number")
        given.add(spec.name)
        if spec.accessor == "opioid_list":
            entities.update(_opioid_entities(spec, v))
        else:
            entities[key] = _entity(spec, v)
    for spec in declared_inputs(calculator_id):
        if _required(calculator_id, spec) and spec.name not in given and not any(a in args for a in spec.aliases):
            raise _bad(spec, "missing")
    return entities


def _step(spec: InputSpec | None, key: str, v: Any) -> str:
    if spec is not None and spec.accessor == "quantity" and isinstance(v, list):
        canonical = U.to_canonical(cast(str, spec.kind), float(v[0]), str(v[1]))  # a quantity names its kind
        return f"{key} = {v[0]:g} {v[1]} = {canonical:.6g} {spec.canonical_unit}"
    return f"{key} = {v}"


def call_calculator(calculator_id: int, arguments: dict[str, Any] | None) -> dict[str, Any]:
    """Compute one calculator from tool arguments: value, derivation steps, warnings, citation, and the
    implementation that answered with its conformance (:func:`conformance`)."""
    return {**_answer(calculator_id, arguments), "conformance": conformance(calculator_id)}


def _answer(calculator_id: int, arguments: dict[str, Any] | None) -> dict[str, Any]:
    calc = load_all()[int(calculator_id)]
    entities = arguments_to_entities(calculator_id, arguments)
    result = compute(calculator_id, entities)
    specs = spec_by_name(calculator_id)
    if not result.computable:
        names = [n for n in result.missing + result.invalid if not n.startswith("<")] or ["(inputs)"]
        parts = [f"input {n!r}: {'missing' if n in result.missing else 'invalid'}"
                 + (f"; expected {expected_text(specs[n])}" if n in specs else "") for n in names]
        raise ToolInputError("; ".join(parts) + "; no value computed", names)
    if _non_finite(result.value) is not None or _overflows(result.value):
        names = sorted(entities) or ["(inputs)"]
        raise ToolInputError(f"the result {result.value!r} is not a finite number: an input is out of range "
                             f"(inputs {', '.join(repr(n) for n in names)}); no value computed", names)
    warnings = []
    for n in result.implausible:
        spec = specs.get(n)
        where = f" (plausible {spec.plausible[0]} to {spec.plausible[1]} {spec.range_unit})" if spec and spec.plausible else ""
        warnings.append(f"input {n!r} = {entities.get(n)} is outside its physiological plausibility range{where}: "
                        "check the value; the result was computed with it")
    steps = [_step(specs.get(k), k, v) for k, v in entities.items()]
    absent = [s.name for s in declared_inputs(calculator_id) if s.accessor == "flag" and s.name not in entities]
    if absent:
        steps.append(f"criteria not given, taken as absent: {', '.join(absent)}")
    steps.append(f"formula: {calc.source.strip().split(chr(10) + chr(10))[0].strip()}")
    steps.append(f"result: {result.value}")
    return {"calculator_id": calc.calculator_id, "calculator": calc.name, "output_type": calc.output_type,
            "value": result.value, "steps": steps, "warnings": warnings, "citation": citation(calculator_id),
            "definition_version": definition_version(calculator_id)}


def _overflows(value: Any) -> bool:
    """Whether a computed value is a number too large to be a measurement result (an overflow of
    an intermediate step that stayed finite)."""
    try:
        return abs(float(str(value))) > 1e15
    except (TypeError, ValueError, OverflowError):
        return False


def list_calculators() -> list[dict[str, Any]]:
    return [{"tool": tool_name(cid), "calculator_id": cid, "name": c.name, "output_type": c.output_type,
             "inputs": [s.name for s in declared_inputs(cid)]} for cid, c in sorted(load_all().items())]
