"""The check registry: one home for every zero-LLM label check.

A check is a small named function over one :class:`Instance` that returns :class:`Finding` objects.
It is added with :func:`register` (name, severity, the calculators it applies to); :func:`run` runs
every check that applies to an instance. Severities:

``error``       the label is likely wrong or unanswerable as it stands (counts in the detector);
``definition``  the label depends on a definition choice (another published definition changes it);
``info``        worth a look, not evidence of an error on its own.

A check may also say how the row's inputs read if its finding is right (``patch=``: a function
``patch(instance, finding)`` giving a list of inputs in the ledger's derivation format, ``[]`` for
"the row's own entities as they are", or ``None`` when the finding reads no value from the note);
releases from 2.1.0 on derive an unverified row's ``Proposed Answer`` from these patches
(:mod:`medcalc_maintained.release.proposals`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any, Callable, Iterable

from medcalc_maintained.calculators import note_text
from medcalc_maintained.core.rows import Row
from medcalc_maintained.quality.checks.prefilter import cannot_match

SEVERITIES = ("error", "definition", "info")
_STOPS = ".!?\n"  # characters that end a sentence
_ESCAPE = re.compile(r"\\.|\(\?P[<=]")  # escapes such as \S, and named groups: not letters of the text


@lru_cache(maxsize=None)
def fast_twin(pattern: re.Pattern) -> re.Pattern | None:
    """The case-sensitive twin of a case-insensitive pattern whose letters are all lower case (outside
    escapes such as ``\\S``), for use on lower-cased text; None when there is none."""
    if not pattern.flags & re.IGNORECASE or any(c.isupper() for c in _ESCAPE.sub("", pattern.pattern)):
        return None
    return re.compile(pattern.pattern, pattern.flags & ~re.IGNORECASE)


@lru_cache(maxsize=None)
def _probe(pattern: re.Pattern) -> re.Pattern | None:
    """A pattern that starts with ``\\b`` without it, or None. The regex engine cannot skip ahead to
    the characters a match may start with when the first thing to test is a word boundary, and
    tries the whole pattern at every position; without the boundary it can. Dropping an assertion
    only adds matches, so every match of ``pattern`` starts where the probe matches."""
    if not pattern.pattern.startswith("\\b"):
        return None
    return re.compile(pattern.pattern[2:], pattern.flags)


def _search(pattern: re.Pattern, text: str) -> re.Match | None:
    """``pattern.search(text)``, by way of :func:`_probe` where it has one: the leftmost place the
    probe matches where the pattern itself matches too."""
    probe = _probe(pattern)
    if probe is None:
        return pattern.search(text)
    pos = 0
    while (m := probe.search(text, pos)) is not None:
        full = pattern.match(text, m.start())
        if full is not None:
            return full
        pos = m.start() + 1
    return None


@lru_cache(maxsize=65536)  # keyed by entity names: a small vocabulary
def key_matches(pattern: re.Pattern, key: str) -> bool:
    """Whether an entity key (its name, not the note) matches a rule's key pattern."""
    return pattern.search(key) is not None


@dataclass(frozen=True)
class Finding:
    """One reason to doubt a label; ``evidence_*`` quote the note (offsets into the note, -1: none).

    ``unmentioned``: the calculator inputs the finding says the note never mentions, by the names
    the rules give them (``required_input_absent``), as values: read them here, never from the
    ``reason``, which is prose for people. The stored findings table (:data:`.table.FINDING_COLUMNS`)
    does not carry them; :func:`.table.run_checks` with ``structured=True`` does."""

    check: str
    severity: str
    reason: str
    evidence_text: str = ""
    evidence_start: int = -1
    evidence_end: int = -1
    unmentioned: tuple[str, ...] = ()


@dataclass
class Instance:
    """Everything a check may read about one row: a view of a :class:`~medcalc_maintained.core.rows.Row`
    (:meth:`of`) with the row's recompute record, and the search helpers the checks share."""

    note: str
    question: str = ""
    entities: dict[str, Any] = field(default_factory=dict)
    label: str = ""
    output_type: str = "decimal"
    calculator_id: int = 0
    recompute: dict[str, Any] | None = None
    split: str = "test"
    uid: int = 0

    memo: dict[Any, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def of(cls, row: Row, recompute: dict[str, Any] | None = None) -> "Instance":
        """The view of ``row`` the checks read, with its recompute record (``finding``, ``missing_inputs``,
        ``implausible_inputs``, ``recomputed``) when there is one."""
        return cls(row.note or "", row.question or "", row.entities, row.label, row.output_type, row.calculator_id,
                   recompute, row.split, row.uid)

    @cached_property
    def lower(self) -> str | None:
        """The note in lower case, or None when lower-casing would move offsets (a few Unicode letters)."""
        low = self.note.lower()
        return low if len(low) == len(self.note) else None

    def _text_for(self, pattern: re.Pattern) -> tuple[re.Pattern, str]:
        twin = fast_twin(pattern)
        if twin is not None and self.lower is not None:
            return twin, self.lower
        return pattern, self.note

    def search(self, pattern: re.Pattern, start: int = 0, end: int | None = None) -> re.Match | None:
        """``pattern.search`` over the note (or ``note[start:end]``), offsets relative to that text.
        A case-insensitive rule pattern runs case-sensitively on the lower-cased note when it can
        (:func:`fast_twin`): the same matches, several times faster; and a text that holds none of
        the pattern's required literals is not searched at all (:mod:`.prefilter`). Read matched
        text from the note by offsets, not from ``match.group``: it is lower case on the fast path."""
        pattern, text = self._text_for(pattern)
        if cannot_match(pattern, text, start, end):
            return None
        return _search(pattern, text[start:end] if start or end is not None else text)

    def finditer(self, pattern: re.Pattern, start: int = 0, end: int | None = None) -> Iterable[re.Match]:
        """``pattern.finditer`` over the note (or ``note[start:end]``), with the shortcuts of :meth:`search`."""
        pattern, text = self._text_for(pattern)
        if cannot_match(pattern, text, start, end):
            return iter(())
        return pattern.finditer(text[start:end] if start or end is not None else text)

    @cached_property
    def numbers(self) -> list[tuple[int, int, float]]:
        """The numbers printed in the note as the evidence verifier reads them
        (:func:`medcalc_maintained.calculators.note_text.numbers`), read once."""
        return list(note_text.numbers(self.note))

    def occurrences(self, value: float) -> list[tuple[int, int]]:
        """Spans of the note where ``value`` is printed as a number (``7``, ``7.0``, ``07``; not inside
        ``17`` or ``7.5``), cached per value."""
        key = ("occ", float(value))
        got = self.memo.get(key)
        if got is None:
            got = self.memo[key] = [(s, e) for s, e, v in self.numbers if v == float(value)]
        return got

    @cached_property
    def _stops(self) -> str:
        """The sentence-ending characters this note holds (most notes have no ``!`` or ``?``)."""
        return "".join(c for c in _STOPS if c in self.note)

    def sentence_span(self, start: int, end: int | None = None) -> tuple[int, int]:
        """Offsets of the sentence(s) of the note around ``start``..``end``, without the spaces that
        surround them. Sentences end at ``.``, ``!``, ``?`` or a newline."""
        end = start if end is None else end
        note, left, right = self.note, 0, len(self.note)
        for c in self._stops:
            i = note.rfind(c, 0, start) + 1
            if i > left:
                left = i
            j = note.find(c, end)
            if 0 <= j < right - 1:
                right = j + 1
        while left < right and note[left].isspace():
            left += 1
        while right > left and note[right - 1].isspace():
            right -= 1
        return left, right

    def sentence_at(self, start: int, end: int | None = None) -> tuple[str, int, int]:
        """The sentence(s) of the note around ``start``..``end``: (text, start, end)."""
        left, right = self.sentence_span(start, end)
        return self.note[left:right], left, right

    def finding(self, check: "Check", reason: str, match: re.Match | tuple[int, int] | None = None, *,
                unmentioned: tuple[str, ...] = ()) -> Finding:
        """A finding of ``check`` quoting the sentence of ``match`` (a regex match on the note or a span);
        ``unmentioned``: the inputs it says the note never mentions (:class:`Finding`)."""
        if match is None:
            return Finding(check.name, check.severity, reason, unmentioned=unmentioned)
        s, e = match.span() if isinstance(match, re.Match) else match
        text, a, b = self.sentence_at(s, e)
        return Finding(check.name, check.severity, reason, text, a, b, unmentioned)


@dataclass(frozen=True)
class Check:
    name: str
    severity: str
    fn: Callable[[Instance, "Check"], Iterable[Finding]]
    calculators: frozenset[int] | None
    description: str
    patch: Callable[[Instance, Finding], list[dict[str, Any]] | None] | None = None


REGISTRY: dict[str, Check] = {}
_BY_CALCULATOR: dict[int, list[Check]] = {}


def register(name: str, severity: str, *, calculators: Iterable[int] | None = None,
             description: str = "", patch: Callable | None = None) -> Callable:
    """Decorator: add a check ``fn(instance, check) -> iterable of Finding`` to :data:`REGISTRY`
    (``patch``: the inputs its finding reads from the note, see the module docstring)."""
    if severity not in SEVERITIES:
        raise ValueError(f"check {name}: severity {severity!r} not in {SEVERITIES}")

    def deco(fn: Callable) -> Callable:
        if name in REGISTRY:
            raise ValueError(f"check {name} registered twice")
        doc = description or (fn.__doc__ or "").strip().split("\n")[0]
        if not doc:
            raise ValueError(f"check {name} has no description")
        calcs = frozenset(int(c) for c in calculators) if calculators is not None else None
        REGISTRY[name] = Check(name, severity, fn, calcs, doc, patch)
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
