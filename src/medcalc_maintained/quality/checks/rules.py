"""Loader of ``rules.yaml``: the per-calculator rules of the checks, compiled once."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from medcalc_maintained.core.io import DataError

RULES_FILE = Path(__file__).with_name("rules.yaml")
SECTIONS = ("required_inputs", "figure_only", "not_applicable", "foreign_keys", "body_weight")
_UID = re.compile(r"\buids?\b", re.I)


@dataclass(frozen=True)
class Rule:
    calculators: frozenset[int]
    patterns: tuple[re.Pattern, ...]
    rationale: str
    input: str = ""
    min_age_years: float | None = None
    max_age_years: float | None = None
    min_weight_kg: float | None = None


def _compile(path: Path, where: str, pats: list[str]) -> tuple[re.Pattern, ...]:
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
    return Rule(frozenset(int(c) for c in spec["calculators"]), _compile(path, where, spec.get("any")),
                str(spec["rationale"]), str(spec.get("input", "")), spec.get("min_age_years"),
                spec.get("max_age_years"), spec.get("min_weight_kg"))


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
class Rules:
    required_inputs: tuple[Rule, ...]
    figure_only: tuple[Rule, ...]
    not_applicable: tuple[Rule, ...]
    foreign_keys: tuple[tuple[re.Pattern, frozenset[int], str], ...]
    weight_adult_min_kg: float
    weight_change: tuple[str, ...]
    weight_rationale: str

    def for_calculator(self, section: str, calculator_id: int) -> list[Rule]:
        return [r for r in getattr(self, section) if calculator_id in r.calculators]


def load(path: Path = RULES_FILE) -> Rules:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
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
                 float(bw.get("adult_min_kg", 30)), tuple(bw.get("change_patterns") or ()), str(bw.get("rationale", "")))


@lru_cache(maxsize=1)
def rules() -> Rules:
    return load()
