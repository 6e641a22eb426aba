"""Checks of the extracted values and the label against what the note says: boolean criteria the
note contradicts, and answers or intermediates the note prints that disagree with the label."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Iterator

from medcalc_maintained.core.answers import parse_answer
from medcalc_maintained.quality.checks.registry import Check, Finding, Instance, key_matches, register
from medcalc_maintained.quality.checks.rules import rules

_WINDOW = 40  # characters before a mention searched for its qualifier


def criterion_absent(inst: Instance, finding: Finding) -> list[dict[str, Any]] | None:
    """The patch of a contradicted criterion: the criterion the finding names set absent, quoting the
    sentence the finding quotes (no quote when the note never mentions it)."""
    keys = [k for k, v in inst.entities.items() if v is True and finding.reason.startswith(f"{str(k)!r} is entered")]
    if not keys:
        return None
    quoted = finding.evidence_start >= 0 and finding.evidence_text
    evidence = ({"start": finding.evidence_start, "end": finding.evidence_end, "text": finding.evidence_text}
                if quoted else {"start": None, "end": None, "text": ""})
    return [{"name": str(keys[0]), "value": False, "unit": None, "evidence": evidence, "reconstructed": True}]


@register("boolean_contradicted", "error", patch=criterion_absent)
def boolean_contradicted(inst: Instance, check: Check) -> Iterator[Finding]:
    """A criterion entered as present is absent from the note, or the note qualifies it as another
    condition (portal vs systemic hypertension) or as the current event (not a previous one)."""
    for b in rules().boolean_criteria:
        keys = [k for k, v in inst.entities.items() if v is True and key_matches(b.key, str(k))]
        if not keys:
            continue
        mentions = list(inst.finditer(b.concept))
        if not mentions:
            yield inst.finding(check, f"{keys[0]!r} is entered as present but the note never mentions it: {b.rationale}")
            continue
        before = [(max(0, m.start() - _WINDOW), m.start()) for m in mentions]
        near = [(max(0, m.start() - _WINDOW), m.end() + _WINDOW) for m in mentions]
        if b.wrong_if_near is not None and all(inst.search(b.wrong_if_near, a, e) for a, e in near):
            yield inst.finding(check, f"{keys[0]!r} is entered as present but every mention is past or inactive: {b.rationale}", mentions[0])
        elif b.wrong_if_before is not None and all(inst.search(b.wrong_if_before, a, e) for a, e in before):
            yield inst.finding(check, f"{keys[0]!r} is entered as present but every mention is qualified: {b.rationale}", mentions[0])
        elif b.needs_before is not None and not any(inst.search(b.needs_before, a, e) for a, e in before):
            yield inst.finding(check, f"{keys[0]!r} is entered as present but no mention is a past event: {b.rationale}", mentions[0])


@register("printed_value_disagrees", "error", calculators={c for p in rules().printed_values for c in p.calculators})
def printed_value_disagrees(inst: Instance, check: Check) -> Iterator[Finding]:
    """The note prints the answer or an intermediate (measured LDL, anion gap) that the label contradicts."""
    label = parse_answer(inst.label, inst.output_type)
    if label.kind not in ("decimal", "integer") or label.value is None:
        return
    for p in rules().printed_values:
        if inst.calculator_id not in p.calculators:
            continue
        m = inst.search(p.pattern)
        if not m:
            continue
        v = float(m.group(1))
        if p.mmol_below is not None and v < p.mmol_below:
            v *= p.mmol_factor
        gt = label.number
        if abs(v - gt) > p.tolerance * max(abs(v), abs(gt), 1e-9):
            yield inst.finding(check, f"the note prints the {p.name}, which differs from the label by more than "
                                      f"{p.tolerance:.0%}: {p.rationale}", m)


_BMI = re.compile(r"\b(?:bmi|body mass index)\b(?:\s*\([^)]{0,10}\))?\s*(?:of|was|is|:|=|,)?\s*(\d+(?:\.\d+)?)", re.I)
_HEIGHT_TO_M = {"m": 1.0, "cm": 0.01, "in": 0.0254, "inches": 0.0254, "ft": 0.3048}


def _bmi(inst: Instance) -> tuple[float | None, re.Match | None]:
    """The patient's BMI: the one the note prints (in a plausible range), else weight / height²."""
    m = inst.search(_BMI)
    if m is not None and 10 <= float(m.group(1)) <= 100:
        return float(m.group(1)), m
    from medcalc_maintained.quality.checks.note_checks import weight_kg

    kg, h = weight_kg(inst.entities), inst.entities.get("height")
    if kg and isinstance(h, (list, tuple)) and len(h) == 2 and isinstance(h[0], (int, float)) and h[0] > 0:
        factor = _HEIGHT_TO_M.get(str(h[1]).strip().lower())
        if factor:
            return kg / (float(h[0]) * factor) ** 2, None
    return None, None


@register("bmi_contradicts_obesity", "error", description="an obesity criterion that the patient's BMI contradicts")
def bmi_contradicts_obesity(inst: Instance, check: Check) -> Iterator[Finding]:
    for c in rules().bmi_criteria:
        keys = [k for k, v in inst.entities.items() if isinstance(v, bool) and key_matches(c.key, str(k))]
        if not keys:
            continue
        bmi, m = _bmi(inst)
        if bmi is None:
            return
        present = bool(inst.entities[keys[0]])
        if not present and bmi >= c.min_bmi + c.margin:
            yield inst.finding(check, f"{keys[0]!r} is entered as absent but the BMI is {bmi:.1f}: {c.rationale}", m)
        elif present and bmi < c.min_bmi - c.margin:
            yield inst.finding(check, f"{keys[0]!r} is entered as present but the BMI is {bmi:.1f}: {c.rationale}", m)


_CHANGE_WORDS = ("lost", "gained", "decrease", "decreased", "decreases", "reduction", "reduced", "drop", "dropped",
                 "fell", "rise", "rose", "increase", "increased", "increases")
_CHANGE_SIGNS = ("−", "+", "↓", "↑")
_CHANGE_BEFORE = re.compile(r"(?:\(\s*[" + "".join(_CHANGE_SIGNS) + r"]|\b(?:" + "|".join(_CHANGE_WORDS)
                            + r")\s+(?:of|by)\s*)\s*$", re.I)
_NAME_TOKEN = re.compile(r"[a-z]{4,}")
_SKIP_TOKENS = {"history", "criteria", "rule", "with", "present", "dose", "with", "test", "count", "level"}


def _numeric_entities(inst: Instance) -> list[tuple[str, float]]:
    """(key, value) of the numeric ``[value, unit]`` entities other than age, once per instance."""
    got = inst.memo.get("numeric")
    if got is None:
        got = inst.memo["numeric"] = [
            (key, float(val[0])) for key, val in inst.entities.items()
            if isinstance(val, (list, tuple)) and len(val) == 2 and isinstance(val[0], (int, float))
            and not isinstance(val[0], bool) and str(key).lower() != "age"]
    return got


@lru_cache(maxsize=4096)  # keyed by entity names: a small vocabulary
def _name_stems(key: str) -> tuple[str, ...]:
    """The first five letters of each word of an entity's name that could name it in a note."""
    return tuple(t[:5] for t in _NAME_TOKEN.findall(key.lower()) if t not in _SKIP_TOKENS)


def _is_change(inst: Instance, a: int) -> bool:
    """Whether the number printed at offset ``a`` is a change ("lost 7", "(+7"), not a level."""
    lo = max(0, a - 30)
    tail = inst.note[lo:a].rstrip().lower()
    # the regex decides, but only where it can match: after a sign, or after "<change word> of|by"
    if not (tail.endswith(_CHANGE_SIGNS) or (tail.endswith(("of", "by")) and tail[:-2].rstrip().endswith(_CHANGE_WORDS))):
        return False
    return inst.search(_CHANGE_BEFORE, lo, a) is not None


@register("value_is_a_change", "error")
def value_is_a_change(inst: Instance, check: Check) -> Iterator[Finding]:
    """A numeric input is printed in the note only as a change (a signed difference, "lost 7"), not as a level."""
    for key, value in _numeric_entities(inst):
        occ = inst.occurrences(abs(value))
        if occ and all(_is_change(inst, a) for a, _ in occ):
            yield inst.finding(check, f"{key!r} is printed only as a change, not as a measured level", occ[0])


@register("value_far_from_its_name", "info")
def value_far_from_its_name(inst: Instance, check: Check) -> Iterator[Finding]:
    """A numeric input appears in the note only in sentences that do not name its quantity."""
    for key, value in _numeric_entities(inst):
        stems = _name_stems(str(key))
        occ = inst.occurrences(value) if stems else None
        if not occ:
            continue
        for a, b in occ:
            left, right = inst.sentence_span(a, b)
            sentence = inst.lower[left:right] if inst.lower is not None else inst.note[left:right].lower()
            if any(t in sentence for t in stems):
                break
        else:
            yield inst.finding(check, f"{key!r}: the number appears only where the note does not name the quantity", occ[0])
