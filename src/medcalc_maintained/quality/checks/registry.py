"""The check registry: one home for every zero-LLM label check.

A check is a small named function over one :class:`Instance` that returns :class:`Finding` objects.
It is added with :func:`register` (name, severity, the calculators it applies to); :func:`run` runs
every check that applies to an instance. Severities:

``error``       the label is likely wrong or unanswerable as it stands (counts in the detector);
``definition``  the label depends on a definition choice (another published definition changes it);
``info``        worth a look, not evidence of an error on its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable, Iterable

SEVERITIES = ("error", "definition", "info")
_NUMBER = re.compile(r"(?<![\d.])\d+(?:\.\d+)?(?![\d])")


@dataclass(frozen=True)
class Finding:
    """One reason to doubt a label; ``evidence_*`` quote the note (offsets into the note, -1: none)."""

    check: str
    severity: str
    reason: str
    evidence_text: str = ""
    evidence_start: int = -1
    evidence_end: int = -1


@dataclass
class Instance:
    """Everything a check may read about one row."""

    note: str
    question: str = ""
    entities: dict[str, Any] = field(default_factory=dict)
    label: str = ""
    output_type: str = "decimal"
    calculator_id: int = 0
    recompute: dict[str, Any] | None = None
    split: str = "test"
    uid: int = 0

    @cached_property
    def lower(self) -> str:
        return self.note.lower()

    @cached_property
    def numbers(self) -> dict[float, list[tuple[int, int]]]:
        """Every number printed in the note: value -> spans (scanned once per instance)."""
        out: dict[float, list[tuple[int, int]]] = {}
        for m in _NUMBER.finditer(self.note):
            out.setdefault(float(m.group(0)), []).append(m.span())
        return out

    def sentence_at(self, start: int, end: int | None = None) -> tuple[str, int, int]:
        """The sentence(s) of the note around ``start``..``end``: (text, start, end)."""
        end = start if end is None else end
        left = max(self.note.rfind(c, 0, start) for c in ".!?\n") + 1
        rights = [i for i in (self.note.find(c, end) for c in ".!?\n") if i >= 0]
        right = min(rights) + 1 if rights else len(self.note)
        while left < right and self.note[left].isspace():
            left += 1
        return self.note[left:right].rstrip(), left, left + len(self.note[left:right].rstrip())

    def finding(self, check: "Check", reason: str, match: re.Match | tuple[int, int] | None = None) -> Finding:
        """A finding of ``check`` quoting the sentence of ``match`` (a regex match on the note or a span)."""
        if match is None:
            return Finding(check.name, check.severity, reason)
        s, e = match.span() if isinstance(match, re.Match) else match
        text, a, b = self.sentence_at(s, e)
        return Finding(check.name, check.severity, reason, text, a, b)


@dataclass(frozen=True)
class Check:
    name: str
    severity: str
    fn: Callable[[Instance, "Check"], Iterable[Finding]]
    calculators: frozenset[int] | None
    description: str


REGISTRY: dict[str, Check] = {}
_BY_CALCULATOR: dict[int, list[Check]] = {}


def register(name: str, severity: str, *, calculators: Iterable[int] | None = None,
             description: str = "") -> Callable:
    """Decorator: add a check ``fn(instance, check) -> iterable of Finding`` to :data:`REGISTRY`."""
    if severity not in SEVERITIES:
        raise ValueError(f"check {name}: severity {severity!r} not in {SEVERITIES}")

    def deco(fn: Callable) -> Callable:
        if name in REGISTRY:
            raise ValueError(f"check {name} registered twice")
        doc = description or (fn.__doc__ or "").strip().split("\n")[0]
        if not doc:
            raise ValueError(f"check {name} has no description")
        calcs = frozenset(int(c) for c in calculators) if calculators is not None else None
        REGISTRY[name] = Check(name, severity, fn, calcs, doc)
        _BY_CALCULATOR.clear()
        return fn

    return deco


def checks_for(calculator_id: int) -> list[Check]:
    """The checks that apply to a calculator, in registration order (cached)."""
    got = _BY_CALCULATOR.get(calculator_id)
    if got is None:
        got = [c for c in REGISTRY.values() if c.calculators is None or calculator_id in c.calculators]
        _BY_CALCULATOR[calculator_id] = got
    return got


def run(inst: Instance) -> list[Finding]:
    """Every finding of every check that applies to ``inst``."""
    out: list[Finding] = []
    for check in checks_for(inst.calculator_id):
        out.extend(check.fn(inst, check) or ())
    return out
