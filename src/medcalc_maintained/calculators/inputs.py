"""The declared inputs of every calculator: entity key, accessor type, unit kind, range, allowed values.

A calculator reads its features only through the typed accessors of
:class:`~medcalc_maintained.calculators.base.Inputs` (``quantity(key, kind, range_key=)``,
``number``, ``flag``, ``choice(key, options)``, ``date``, ``text``); each call already states the
entity key, the unit kind (:mod:`medcalc_maintained.core.units`), the plausibility range
(``plausibility.yaml``) and the allowed values. :func:`declared_inputs` reads those declarations
by running the calculator on a recording :class:`Inputs` in a few probe scenarios (flags off and
on, each option of a choice, values across the plausible range) and taking the union, so the
declaration cannot drift from the code that computes. Nothing is computed for real and no
computed value changes.

Two calculators read structured entities the accessors cannot describe (steroid conversion: one
``[name, dose, unit]`` entity; MME: one ``<Opioid> Dose`` / ``<Opioid> Dose Per Day`` pair per
drug); their inputs are declared by hand in :data:`STRUCTURED`.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import cast

from medcalc_maintained.calculators.base import CannotCompute, Inputs, plausibility_ranges
from medcalc_maintained.core import units as U

N_SCENARIOS = 6


@dataclass(frozen=True)
class InputSpec:
    """One declared input. ``kind`` is the unit kind of a quantity (``core.units``); ``range_key``
    names its plausibility range; ``options`` are the allowed values of a choice."""

    name: str
    accessor: str
    kind: str | None = None
    range_key: str | None = None
    options: tuple[str, ...] = ()
    required: bool = True
    aliases: tuple[str, ...] = ()

    @property
    def canonical_unit(self) -> str | None:
        return U.CANONICAL.get(self.kind) if self.kind else None

    @property
    def units(self) -> list[str]:
        return U.known_units(self.kind) if self.accessor == "quantity" and self.kind else []

    @property
    def plausible(self) -> tuple[float | None, float | None] | None:
        """``(min, max)`` of the plausibility range in the canonical unit, or ``None``."""
        rng = plausibility_ranges().get(self.range_key or "") if self.range_key else None
        if rng is None and self.kind:
            rng = plausibility_ranges().get(self.kind)
        return (rng.get("min"), rng.get("max")) if rng else None

    @property
    def range_unit(self) -> str | None:
        rng = plausibility_ranges().get(self.range_key or self.kind or "")
        return rng.get("unit") if rng else self.canonical_unit


@dataclass
class _Seen:
    spec: InputSpec
    scenarios: set[int] = field(default_factory=set)
    always_required: bool = True


class _Probe(Inputs):
    """An :class:`Inputs` that records every accessor call and answers with a synthetic value."""

    def __init__(self, scenario: int, seen: dict[str, _Seen]):
        super().__init__({})
        self.scenario = scenario
        self.seen = seen
        self.aliases: dict[str, tuple[str, ...]] = {}

    def _record(self, key: str, accessor: str, *, kind=None, range_key=None, options=(), required=True) -> None:
        s = self.seen.get(key)
        if s is None:
            spec = InputSpec(key, accessor, kind, range_key, tuple(options), True, self.aliases.get(key, ()))
            s = self.seen[key] = _Seen(spec)
        elif range_key and not s.spec.range_key:
            s.spec = replace(s.spec, range_key=range_key)
        s.scenarios.add(self.scenario)
        s.always_required = s.always_required and required

    def _frac(self) -> float:
        return (0.15, 0.5, 0.85, 0.3, 0.7, 0.05)[self.scenario % 6]

    def _value(self, kind: str | None, range_key: str | None) -> float:
        rng = plausibility_ranges().get(range_key or "") or plausibility_ranges().get(kind or "")
        lo, hi = (rng.get("min", 0), rng.get("max", 100)) if rng else (1.0, 100.0)
        return float(lo) + (float(hi) - float(lo)) * self._frac()

    def has(self, key: str) -> bool:
        return True

    def key(self, *names: str) -> str:
        self.aliases[names[0]] = tuple(names[1:])
        return names[0]

    def _check_range(self, key: str, kind: str, value: float, range_key: str | None) -> None:
        if key in self.seen and range_key:
            self._record(key, self.seen[key].spec.accessor, range_key=range_key)

    def quantity(self, key, kind, *, required=True, range_key=None):
        self._record(key, "quantity", kind=kind, range_key=range_key, required=required)
        return self._value(kind, range_key)

    def number(self, key, *, required=True, range_key=None):
        self._record(key, "number", range_key=range_key, required=required)
        return round(self._value(None, range_key)) if range_key else float(1 + self.scenario % 3)

    def flag(self, key, default=False):
        self._record(key, "flag", required=False)
        return self.scenario % 2 == 1

    def choice(self, key, options, *, required=True, default=None):
        self._record(key, "choice", options=[str(k) for k in options], required=required)
        values = list(options.values())
        return values[self.scenario % len(values)] if values else default

    def text(self, key, *, required=True):
        self._record(key, "text", required=required)
        return "x"

    def date(self, key, *, required=True):
        self._record(key, "date", required=required)
        return dt.date(2020, 1, 1)


def _steroid_names() -> tuple[str, ...]:
    from medcalc_maintained.calculators import dosing_dates

    return tuple(dosing_dates._STEROID_EQUIVALENT_MG)


def _opioid_names() -> tuple[str, ...]:
    from medcalc_maintained.calculators import dosing_dates

    return tuple(dosing_dates._MME_FACTOR) + tuple(dosing_dates._MME_ALIASES)


def _structured() -> dict[int, list[InputSpec]]:
    return {
        24: [InputSpec("input steroid", "steroid_dose", "drug_mass", None, _steroid_names()),
             InputSpec("target steroid", "choice", None, None, _steroid_names())],
        49: [InputSpec("opioids", "opioid_list", "drug_mass", "doses_per_day", _opioid_names())],
    }


STRUCTURED = (24, 49)


@lru_cache(maxsize=None)
def declared_inputs(calculator_id: int) -> tuple[InputSpec, ...]:
    """The declared inputs of calculator ``calculator_id`` in the order the calculator reads them."""
    from medcalc_maintained.calculators import load_all

    calc = load_all()[int(calculator_id)]
    if calc.calculator_id in STRUCTURED:
        return tuple(_structured()[calc.calculator_id])
    seen: dict[str, _Seen] = {}
    for scenario in range(N_SCENARIOS):
        probe = _Probe(scenario, seen)
        try:
            calc.fn(probe)
        except (CannotCompute, ArithmeticError, ValueError, TypeError):
            pass
        for key, aliases in probe.aliases.items():
            if key in seen and aliases and not seen[key].spec.aliases:
                seen[key].spec = replace(seen[key].spec, aliases=aliases)
    out = []
    for s in seen.values():
        required = s.always_required and len(s.scenarios) == N_SCENARIOS and s.spec.accessor != "flag"
        out.append(replace(s.spec, required=required))
    return tuple(out)


@lru_cache(maxsize=None)
def _either_or_lists(calculator_id: int) -> tuple[tuple[str, ...], ...]:
    """The either/or lists of a calculator's own code: the string arguments of each ``_any(x, "A", "B", ...)``
    call in its function (any one present and true counts the criterion once)."""
    import ast
    import inspect
    import textwrap

    from medcalc_maintained.calculators import load_all

    fn = load_all()[int(calculator_id)].fn
    out: list[tuple[str, ...]] = []
    for node in ast.walk(ast.parse(textwrap.dedent(inspect.getsource(fn)))):
        if isinstance(node, ast.Call):
            name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
            names = tuple(a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str))
            if name == "_any" and len(names) >= 2 and names not in out:
                out.append(names)
    return tuple(out)


@lru_cache(maxsize=None)
def spelling_groups(calculator_id: int) -> tuple[tuple[str, ...], ...]:
    """The declared inputs of a calculator that its code reads as one criterion, in declaration order:
    each either/or list of its function (spellings of one entity, ``Congestive Heart Faliure`` / ``Congestive
    Heart Failure``, or findings that score the criterion once, ``Stroke`` / ``Transient Ischemic Attacks
    History``), and names equal but for case."""
    lists = _either_or_lists(calculator_id) if calculator_id not in STRUCTURED else ()
    groups: list[list[str]] = []
    for n in (s.name for s in declared_inputs(calculator_id)):
        mine = {n.lower()} | {x.lower() for lst in lists if n in lst for x in lst}
        group = next((g for g in groups if any(m.lower() in mine for m in g)), None)
        if group is None:
            groups.append([n])
        else:
            group.append(n)
    return tuple(tuple(g) for g in groups if len(g) > 1)


def spec_by_name(calculator_id: int) -> dict[str, InputSpec]:
    """``{entity key or alias: spec}`` of one calculator (aliases compared case-insensitively by callers)."""
    out: dict[str, InputSpec] = {}
    for spec in declared_inputs(calculator_id):
        out[spec.name] = spec
        for a in spec.aliases:
            out.setdefault(a, spec)
    return out


def expected_text(spec: InputSpec) -> str:
    """What a valid value of ``spec`` looks like: unit(s) and plausible range, or allowed values."""
    if spec.accessor in ("choice", "steroid_dose", "opioid_list") and spec.options:
        allowed = f"one of {', '.join(spec.options)}"
        if spec.accessor == "choice":
            return allowed
        return f"drug {allowed}; dose in {', '.join(U.known_units(cast(str, spec.kind)))}"  # drug doses name their kind
    if spec.accessor == "flag":
        return "true or false"
    if spec.accessor == "date":
        return "a date MM/DD/YYYY"
    parts = []
    if spec.accessor == "quantity":
        parts.append(f"unit one of {', '.join(spec.units)} (canonical {spec.canonical_unit})")
    rng = spec.plausible
    if rng:
        parts.append(f"plausible range {rng[0]} to {rng[1]} {spec.range_unit or ''}".rstrip())
    return "; ".join(parts) or "a number"
