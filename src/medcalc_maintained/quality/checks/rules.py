"""Loader of ``rules.yaml``: the per-calculator rules of the checks, compiled once."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from medcalc_maintained.core.errors import DataError
from medcalc_maintained.core.yaml_text import safe_load

RULES_FILE = Path(__file__).with_name("rules.yaml")
SECTIONS = ("required_inputs", "figure_only", "not_applicable", "foreign_keys", "body_weight", "boolean_criteria",
            "printed_values", "expected_keys", "bmi_criteria")
_UID = re.compile(r"\buids?\b", re.I)
_AGE_FIELDS = ("min_age_years", "max_age_years")  # the one home of age limits is calculators/populations.yaml


@dataclass(frozen=True)
class Rule:
    calculators: frozenset[int]
    patterns: tuple[re.Pattern, ...]
    rationale: str
    input: str = ""
    min_weight_kg: float | None = None


def _compile(path: Path, where: str, pats: list[str] | None) -> tuple[re.Pattern, ...]:
    out = []
    for p in pats or []:
        try:
            out.append(re.compile(p, re.I))
        except re.error as exc:
            raise DataError(path, f"bad regular expression {p!r}: {exc}", field=where) from None
    return tuple(out)


def _rule(path: Path, where: str, spec: dict[str, Any]) -> Rule:
    if not spec.get("rationale"):
        raise DataError(path, "every rule needs a rationale", field=where)
    if not spec.get("calculators"):
        raise DataError(path, "every rule names its calculators", field=where)
    ages = sorted(k for k in spec if k in _AGE_FIELDS)
    if ages:
        raise DataError(path, f"{', '.join(ages)}: a calculator's age limits are declared, with their source, in "
                              "calculators/populations.yaml (check outside_population)", field=where)
    return Rule(frozenset(int(c) for c in spec["calculators"]), _compile(path, where, spec.get("any")),
                str(spec["rationale"]), str(spec.get("input", "")), spec.get("min_weight_kg"))


def check_no_uids(path: Path, data: Any, where: str = "") -> None:
    """Refuse a rule file that names a row: rules are clinical facts, not per-row exceptions."""
    if isinstance(data, dict):
        for k, v in data.items():
            if _UID.search(str(k)) or str(k).lower() in {"row", "rows", "row_number"}:
                raise DataError(path, "rules must not name rows (uid): write a general clinical rule", field=f"{where}.{k}".strip("."))
            check_no_uids(path, v, f"{where}.{k}".strip("."))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            check_no_uids(path, v, f"{where}[{i}]")
    elif isinstance(data, str) and _UID.search(data) and re.search(r"\buids?\s*[:=#]?\s*\d", data, re.I):
        raise DataError(path, "rules must not name rows (uid): write a general clinical rule", field=where)


@dataclass(frozen=True)
class Boolean:
    key: re.Pattern
    concept: re.Pattern
    wrong_if_before: re.Pattern | None
    needs_before: re.Pattern | None
    rationale: str
    wrong_if_near: re.Pattern | None = None


@dataclass(frozen=True)
class Printed:
    calculators: frozenset[int]
    name: str
    pattern: re.Pattern
    tolerance: float
    mmol_below: float | None
    mmol_factor: float
    rationale: str


@dataclass(frozen=True)
class BmiCriterion:
    key: re.Pattern
    min_bmi: float
    margin: float
    rationale: str


def _bmi_criteria(path: Path, specs: list[dict[str, Any]] | None) -> tuple[BmiCriterion, ...]:
    out = []
    for i, b in enumerate(specs or []):
        w = f"bmi_criteria[{i}]"
        if not (b.get("key") and b.get("min_bmi") and b.get("rationale")):
            raise DataError(path, "needs key, min_bmi and rationale", field=w)
        out.append(BmiCriterion(_pattern(path, w, b["key"]), float(b["min_bmi"]), float(b.get("margin", 0.0)), str(b["rationale"])))
    return tuple(out)


def _pattern(path: Path, where: str, pat: str) -> re.Pattern:
    return _compile(path, where, [pat])[0]


def _one(path: Path, where: str, pat: str | None) -> re.Pattern | None:
    return _pattern(path, where, pat) if pat else None


def _booleans(path: Path, specs: list[dict[str, Any]] | None) -> tuple[Boolean, ...]:
    out = []
    for i, b in enumerate(specs or []):
        w = f"boolean_criteria[{i}]"
        if not (b.get("key") and b.get("concept") and b.get("rationale")):
            raise DataError(path, "needs key, concept and rationale", field=w)
        out.append(Boolean(_pattern(path, w, b["key"]), _pattern(path, w, b["concept"]), _one(path, w, b.get("wrong_if_before")),
                           _one(path, w, b.get("needs_before")), str(b["rationale"]),
                           _one(path, w, b.get("wrong_if_near"))))
    return tuple(out)


def _printed(path: Path, specs: list[dict[str, Any]] | None) -> tuple[Printed, ...]:
    out = []
    for i, p in enumerate(specs or []):
        w = f"printed_values[{i}]"
        if not (p.get("calculators") and p.get("pattern") and p.get("rationale") and p.get("name")):
            raise DataError(path, "needs calculators, name, pattern and rationale", field=w)
        out.append(Printed(frozenset(int(c) for c in p["calculators"]), str(p["name"]), _pattern(path, w, p["pattern"]),
                           float(p.get("tolerance", 0.05)), p.get("mmol_below"), float(p.get("mmol_factor", 1.0)),
                           str(p["rationale"])))
    return tuple(out)


def _expected(path: Path, specs: list[dict[str, Any]] | None) -> tuple:
    out = []
    for i, e in enumerate(specs or []):
        if not (e.get("calculators") and e.get("keys") and e.get("rationale")):
            raise DataError(path, "needs calculators, keys and rationale", field=f"expected_keys[{i}]")
        out.append((frozenset(int(c) for c in e["calculators"]), tuple(map(str, e["keys"])), int(e.get("max_missing", 0)),
                    str(e["rationale"])))
    return tuple(out)


@dataclass(frozen=True)
class Rules:
    required_inputs: tuple[Rule, ...]
    figure_only: tuple[Rule, ...]
    not_applicable: tuple[Rule, ...]
    foreign_keys: tuple[tuple[re.Pattern, frozenset[int], str], ...]
    weight_adult_min_kg: float
    weight_change: tuple[re.Pattern, ...]
    weight_rationale: str
    pediatric: tuple[re.Pattern, ...] = ()
    boolean_criteria: tuple["Boolean", ...] = ()
    printed_values: tuple["Printed", ...] = ()
    expected_keys: tuple[tuple[frozenset[int], tuple[str, ...], int, str], ...] = ()
    bmi_criteria: tuple[BmiCriterion, ...] = ()

    def for_calculator(self, section: str, calculator_id: int) -> list[Rule]:
        return [r for r in getattr(self, section) if calculator_id in r.calculators]


def load(path: Path = RULES_FILE) -> Rules:
    try:
        data = safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise DataError(path, f"malformed YAML: {exc}") from None
    unknown = set(data) - set(SECTIONS)
    if unknown:
        raise DataError(path, f"unknown section(s) {sorted(unknown)} (known: {', '.join(SECTIONS)})")
    check_no_uids(path, data)
    sec = {s: tuple(_rule(path, f"{s}[{i}]", spec) for i, spec in enumerate(data.get(s) or []))
           for s in ("required_inputs", "figure_only", "not_applicable")}
    fk = tuple((re.compile(f["pattern"], re.I), frozenset(int(c) for c in f.get("allowed") or []), str(f["rationale"]))
               for f in data.get("foreign_keys") or [])
    bw = data.get("body_weight") or {}
    return Rules(sec["required_inputs"], sec["figure_only"], sec["not_applicable"], fk,
                 float(bw.get("adult_min_kg", 30)), _compile(path, "body_weight.change_patterns", bw.get("change_patterns")), str(bw.get("rationale", "")),
                 _compile(path, "body_weight.pediatric", bw.get("pediatric")), _booleans(path, data.get("boolean_criteria")),
                 _printed(path, data.get("printed_values")), _expected(path, data.get("expected_keys")),
                 _bmi_criteria(path, data.get("bmi_criteria")))


@lru_cache(maxsize=1)
def rules() -> Rules:
    return load()
