"""Reconstructing the inputs behind an adjudicated label (the campaign import).

The audit campaign recorded a decided label for each row but not the corrected inputs it came
from. For a row whose label the declared definition does not reproduce from the upstream entities,
:func:`reconstruct` looks for the explanation, in this order, and classifies the row
(:data:`CLASSES`):

1. a published alternative definition reproduces the label from the upstream entities unchanged:
   ``definition-contradiction`` (the label follows another definition than the row declares);
2. the smallest patch of inputs (one input, then two, then three while the candidates are few),
   each value read from the note with its evidence, with which the declared definition reproduces
   the label: ``inputs-reconstructed``. Candidates come from the note only: a number printed in a
   sentence that names the input (its unit when printed, else the entity's own), a criterion
   named in a non-negated sentence (present) or negated / never named (absent), a category the
   sentence names;
3. for an ``N/A`` label: ``na-justified`` when a check finding (a required input never mentioned,
   the calculator not applicable, no body weight...) or the reviewer's stated reason says why the
   note cannot answer, unless an input the finding says the note never mentions (its
   ``unmentioned`` field, a value, not its prose) is one the declared definition itself decides
   when unmentioned (``absent_when_unmentioned`` in ``calculators/definitions.yaml``: then the
   abstention contradicts the definition, ``definition-contradiction``);
4. otherwise ``unexplained``.

Nothing is guessed: a patch is kept only when every value is printed (or, for an absent
criterion, not asserted) in the note, and the derived value grades the label correct. A patch is a
*candidate*: the search matches words, not meaning, and proposes quotes that may not state their
input (a temperature taken as a heart rate, a denominator as a score). It never certifies them:
from release 2.2.0 on a derivation counts only inputs the evidence verifier
(:mod:`medcalc_maintained.calculators.evidence`) accepts (``ledger/derivation.py``), and
``import-campaign`` reports the verifier's verdict on every candidate (``reconstruction.csv``).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from medcalc_maintained.calculators import note_text as T
from medcalc_maintained.calculators.inputs import declared_inputs
from medcalc_maintained.calculators.policy import load_policy, reproducing_alternatives
from medcalc_maintained.core import units as U
from medcalc_maintained.core.answers import parse_answer
from medcalc_maintained.ledger.derivation import derive, input_entity_text, reproduces

INPUTS = "inputs-reconstructed"
CONTRADICTION = "definition-contradiction"
JUSTIFIED = "na-justified"
UNEXPLAINED = "unexplained"
REPRODUCED = "reproduced"  # the declared definition already gives the label from the upstream entities
CLASSES = (REPRODUCED, INPUTS, CONTRADICTION, JUSTIFIED, UNEXPLAINED)

# check-registry findings that say the note cannot answer (severity error)
NA_CHECKS = ("required_input_absent", "not_applicable", "body_weight", "exam_in_figure_only", "expected_keys_missing",
             "value_is_a_change", "recompute_not_computable")
MAX_SIZE = 3
NUMBER_WINDOW = 40  # characters after an input's name in which its value is read
MAX_CANDIDATES_FOR_3 = 24

_WORD = re.compile(r"[a-z][a-z0-9]{3,}")
_GENERIC = {"history", "criteria", "rule", "score", "with", "count", "level", "total", "rate", "type", "disease",
            "patient", "past", "days", "hours", "number", "dose", "present", "previous", "response", "best", "sign",
            "signs", "symptoms", "other", "than", "from", "less", "more", "greater", "serum", "blood", "value", "within",
            "the", "for", "and", "active", "current", "recent", "known"}


@dataclass
class Reconstruction:
    """The class of one row and, for ``inputs-reconstructed``, the inputs; for a contradiction the
    alternative the label follows (``None`` for an abstention that contradicts a convention)."""

    klass: str
    reason: str
    inputs: list[dict[str, Any]] = field(default_factory=list)
    alternative: str | None = None
    justification: str | None = None
    declared_value: str | None = None


@dataclass(frozen=True)
class _Candidate:
    name: str
    value: Any
    unit: str | None
    start: int | None
    end: int | None
    text: str

    def as_input(self) -> dict[str, Any]:
        return {"name": self.name, "value": self.value, "unit": self.unit,
                "evidence": {"start": self.start, "end": self.end, "text": self.text}, "reconstructed": True}


def _stems(name: str) -> list[str]:
    return [w[:5] for w in _WORD.findall(name.lower()) if w not in _GENERIC]


def _named_at(low: str, sentences: list[tuple[int, int]], name: str) -> list[tuple[int, int, int]]:
    """``(sentence start, sentence end, end of the first name match)`` of each sentence naming the input."""
    stems = _stems(name)
    if not stems:
        return []
    pats = [re.compile(r"\b" + re.escape(s) + r"\w*") for s in stems]
    out = []
    for a, b in sentences:
        hits = [m.end() for p in pats for m in [p.search(low, a, b)] if m]
        if hits:
            out.append((a, b, min(hits)))
    return out


def _unit_after(note: str, end: int, kind: str | None) -> tuple[str | None, int]:
    """The unit printed right after a number (one of the kind's known units), and where it ends."""
    if not kind:
        return None, end
    rest = note[end:end + 24]
    m = re.match(r"\s*([A-Za-zµμ/%^0-9.]+(?:/[A-Za-z0-9.]+)?)", rest)
    if not m:
        return None, end
    known = {u.lower(): u for u in U.known_units(kind)}
    token = m.group(1).rstrip(".,")
    if token.lower() in known:
        return token, end + m.start(1) + len(token)
    return None, end


def candidates(calculator_id: int, entities: Mapping[str, Any], note: str) -> list[_Candidate]:
    """Every single-input change the note supports, in a fixed order (declared inputs, then values).
    The note is read as the evidence verifier reads it (``calculators/note_text.py``: its sentences,
    its numbers, its negation cues), but a cue negates every mention in its sentence: scoped to its
    clause and term as the verifier scopes it (:func:`~medcalc_maintained.calculators.note_text.negated`),
    it changes the patch of 4 campaign rows (uids 259, 273, 427, 435), records the published history
    freezes."""
    low = note.lower()
    sentences = T.sentences(note)
    out: list[_Candidate] = []
    seen_names: set[str] = set()
    lowered = {str(k).strip().lower(): k for k in entities}
    for spec in declared_inputs(int(calculator_id)):
        if spec.name.lower() in seen_names or spec.accessor in ("date", "text", "steroid_dose", "opioid_list"):
            continue
        seen_names.add(spec.name.lower())
        key = lowered.get(spec.name.strip().lower(), spec.name)
        current = entities.get(key)
        named = _named_at(low, sentences, spec.name)
        mentions = [(a, b) for a, b, _ in named]
        if spec.accessor == "flag":
            now = bool(current) if isinstance(current, bool) else False
            plain = [(a, b) for a, b in mentions if not T.negation_in(note, a, b)]
            negated = [(a, b) for a, b in mentions if T.negation_in(note, a, b)]
            if not now and plain:
                a, b = plain[0]
                out.append(_Candidate(key, True, None, a, b, note[a:b]))
            elif now and negated:
                a, b = negated[0]
                out.append(_Candidate(key, False, None, a, b, note[a:b]))
            elif now and not mentions:
                out.append(_Candidate(key, False, None, None, None, ""))
        elif spec.accessor in ("quantity", "number"):
            cur_num = current[0] if isinstance(current, (list, tuple)) and current else current
            cur_unit = str(current[1]) if isinstance(current, (list, tuple)) and len(current) == 2 else None
            seen_values: set[tuple[float, str | None]] = set()
            for a, b, named_end in named:
                # a value is the number printed right after the input's name (within NUMBER_WINDOW characters)
                for start, stop, num in T.numbers(note, named_end, min(b, named_end + NUMBER_WINDOW)):
                    unit, end = _unit_after(note, stop, spec.kind if spec.accessor == "quantity" else None)
                    if spec.accessor == "quantity":
                        unit = unit or cur_unit or spec.canonical_unit
                    else:
                        unit = None
                    if isinstance(cur_num, (int, float)) and not isinstance(cur_num, bool) and float(cur_num) == num \
                            and (unit or None) == (cur_unit or None):
                        continue
                    if (num, unit) in seen_values:
                        continue
                    seen_values.add((num, unit))
                    value: Any = int(num) if num.is_integer() else num
                    out.append(_Candidate(key, value, unit, start, end, note[start:end]))
        elif spec.accessor == "choice" and spec.options:
            for opt in spec.options:
                if len(opt) < 4 or str(current).strip().lower() == opt.lower():
                    continue
                pat = re.compile(r"\b" + re.escape(opt.lower()) + r"\b")
                for a, b in mentions:
                    hit = pat.search(low, a, b)
                    if hit:
                        out.append(_Candidate(key, opt, None, hit.start(), hit.end(), note[hit.start():hit.end()]))
                        break
    return out


def _patches(cands: list[_Candidate]) -> Iterable[tuple[_Candidate, ...]]:
    limit = MAX_SIZE if len(cands) <= MAX_CANDIDATES_FOR_3 else 2
    for size in range(1, limit + 1):
        for combo in itertools.combinations(cands, size):
            if len({c.name for c in combo}) == size:  # one value per input
                yield combo


def search_inputs(calculator_id: int, entities: Mapping[str, Any], note: str, label: Any, lower: Any, upper: Any,
                  output_type: str) -> list[dict[str, Any]] | None:
    """The smallest evidenced patch of inputs with which the declared definition reproduces
    ``label``, or ``None``."""
    cands = candidates(calculator_id, entities, note)
    for combo in _patches(cands):
        spans = [(c.start, c.end) for c in combo if c.start is not None]
        if len(set(spans)) < len(spans):  # one printed value is the evidence of one input
            continue
        inputs = [c.as_input() for c in combo]
        d = derive(calculator_id, entities, inputs)
        if set(d.result.implausible) & {c.name for c in combo}:  # a value outside its physiological range
            continue
        if reproduces(d.value, label, lower, upper, output_type):
            return inputs
    return None


def conventions(calculator_id: int) -> list[str]:
    """Inputs the declared definition decides when the note does not mention them."""
    entry = load_policy().get(int(calculator_id)) or {}
    return [str(x) for x in entry.get("absent_when_unmentioned") or []]


def na_justification(calculator_id: int, findings: Iterable[Mapping[str, Any]], reviewer_reason: str | None
                     ) -> tuple[str | None, list[str]]:
    """``(justification, overruled)``: why an N/A is justified (``None`` when nothing says so), and the
    findings that a definition convention overrules (the input is decided when unmentioned).

    A finding is a mapping with ``check``, ``severity``, ``reason`` and ``unmentioned``: the names of
    the inputs it says the note never mentions, a value the check set (a table of the check registry
    made with ``structured=True``), never read back from the ``reason``."""
    conv = {c.lower() for c in conventions(calculator_id)}
    reasons, overruled = [], []
    for f in findings:
        if f.get("severity") != "error" or f.get("check") not in NA_CHECKS:
            continue
        if "unmentioned" not in f:
            raise ValueError(f"finding {f.get('check')!r} has no 'unmentioned' field: pass the check registry's "
                             "table made with structured=True (the stored findings.parquet does not carry it)")
        named = [str(n).strip().lower() for n in f["unmentioned"]]
        if any(n in c or c in n for n in named for c in conv):
            overruled.append(f"{f['check']}: {f['reason']}")
            continue
        reasons.append(f"{f['check']}: {f['reason']}")
    if reviewer_reason and reviewer_reason.strip():
        reasons.append(f"reviewer: {reviewer_reason.strip()}")
    return ("; ".join(reasons) if reasons else None), overruled


def reconstruct(calculator_id: int, entities: Mapping[str, Any], note: str, label: Any, lower: Any, upper: Any,
                output_type: str, *, findings: Iterable[Mapping[str, Any]] = (), reviewer_reason: str | None = None
                ) -> Reconstruction:
    """The class of one verified row's label (see the module docstring)."""
    cid = int(calculator_id)
    declared = derive(cid, entities)
    lab = parse_answer(label, output_type)
    if lab.is_abstain:
        why, overruled = na_justification(cid, findings, reviewer_reason)
        if why:
            return Reconstruction(JUSTIFIED, why, justification=why, declared_value=declared.value)
        if declared.value is None:
            missing = ", ".join(declared.result.missing + declared.result.invalid)
            return Reconstruction(JUSTIFIED, f"the declared definition cannot compute: {missing} absent",
                                  justification=f"required input(s) absent: {missing}", declared_value=None)
        conv = conventions(cid)
        absent = [c for c in conv if not any(str(k).strip().lower() == c.lower() for k in entities)]
        if overruled or absent:
            what = "; ".join(overruled) if overruled else ", ".join(absent) + " not mentioned"
            return Reconstruction(CONTRADICTION, f"N/A although the declared definition decides {what} "
                                  f"({', '.join(conv)} absent when unmentioned) and gives {declared.value}",
                                  declared_value=declared.value)
        return Reconstruction(UNEXPLAINED, f"N/A without a stated reason; the declared definition gives {declared.value}",
                              declared_value=declared.value)
    if reproduces(declared.value, label, lower, upper, output_type):
        return Reconstruction(REPRODUCED, f"{declared.definition} gives {declared.value}", declared_value=declared.value)
    alts = reproducing_alternatives(cid, dict(entities), label, output_type)
    alt = alts[0] if alts else None
    if alt is not None:
        return Reconstruction(CONTRADICTION, f"label {label} follows {alt}; the declared {declared.definition} gives "
                              f"{declared.value}", alternative=alt, declared_value=declared.value)
    inputs = search_inputs(cid, entities, note or "", label, lower, upper, output_type)
    if inputs is not None:
        shown = "; ".join(input_entity_text(i) for i in inputs)
        return Reconstruction(INPUTS, f"{declared.definition} gives {label} with {shown}", inputs=inputs,
                              declared_value=declared.value)
    return Reconstruction(UNEXPLAINED, f"no definition of calculators/definitions.yaml and no evidenced patch of up to "
                          f"{MAX_SIZE} inputs gives {label}; the declared {declared.definition} gives {declared.value}",
                          declared_value=declared.value)


__all__ = ["CLASSES", "CONTRADICTION", "INPUTS", "JUSTIFIED", "REPRODUCED", "Reconstruction", "UNEXPLAINED",
           "candidates", "conventions", "na_justification", "reconstruct", "search_inputs"]
