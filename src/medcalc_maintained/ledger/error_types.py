"""Error type of a changed label, from the evidence (the one rule; campaign import and new records).

The rule, in order (the first that holds decides):

1. ``confirmed`` -> no error type.
2. ``abstain`` (new label N/A) -> ``unanswerable``; ``underspecified`` when the rationale is about
   the scoring timepoint.
3. The rationale is about the scoring timepoint -> ``underspecified``.
4. A definition choice explains the change -> ``underspecified``: a published alternative
   definition (``calculators/definitions.yaml``), fed the upstream entities, reproduces the old
   label while the declared definition does not; or the declared definition reproduces the old
   label and an alternative the new one.
5. The reference calculator on the upstream entities disagrees with the old label and agrees with
   the new one (under the declared definition or an alternative) -> ``aggregation`` (the old
   label's logic or arithmetic was wrong).
6. An input is shown wrong -> ``extraction``. "Shown wrong" means one of: the recompute audit
   flagged an implausible input; the rationale names an input of the row (a word of one of its
   entity names); flipping a single boolean entity reproduces the new label; an ``error`` finding
   of the offline checks names the row.
7. Otherwise ``other`` (the entities reproduce the old label, or nothing reproduces either label,
   and no input is shown wrong): the change is kept, its cause is not typed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from medcalc_maintained.calculators import compute
from medcalc_maintained.calculators.policy import reproducing_alternatives
from medcalc_maintained.core.answers import labels_agree, parse_answer

TIMEPOINT = re.compile(r"time ?point|time ?frame|at (?:the time of )?(?:presentation|admission)|most recent|time course",
                       re.IGNORECASE)
# words of entity names that name no input by themselves
_GENERIC = {"history", "criteria", "rule", "score", "the", "for", "with", "count", "level", "total", "rate", "type",
            "disease", "patient", "past", "week", "days", "hours", "number", "per", "day", "dose", "present", "previous",
            "response", "best", "has-bled", "caprini", "sign", "signs", "symptoms", "other", "than", "from", "less"}


@dataclass
class Evidence:
    """What is known about one changed label (all optional: missing evidence decides nothing)."""

    default_old: bool | None = None       # the reference calculator on the upstream entities gives the old label
    default_new: bool | None = None       # ... gives the new label
    alternatives_old: list[str] = field(default_factory=list)   # alternatives giving the old label
    alternatives_new: list[str] = field(default_factory=list)   # alternatives giving the new label
    wrong_inputs: list[str] = field(default_factory=list)       # why an input is shown wrong


def _input_words(entities: dict[str, Any]) -> dict[str, str]:
    words: dict[str, str] = {}
    for key in entities:
        for w in re.findall(r"[a-z][a-z0-9-]{3,}", str(key).lower()):
            if w not in _GENERIC:
                words.setdefault(w, str(key))
    return words


def named_inputs(text: str, entities: dict[str, Any]) -> list[str]:
    """Entity names the ``text`` names (by a significant word of the name, whole-word match)."""
    low = (text or "").lower()
    return sorted({key for w, key in _input_words(entities).items() if re.search(rf"\b{re.escape(w)}\b", low)})


def single_flip(calculator_id: int, entities: dict[str, Any], new: str, output_type: str) -> list[str]:
    """Boolean entities whose flip alone makes the reference calculator give ``new``."""
    out = []
    for key, v in entities.items():
        if isinstance(v, bool):
            r = compute(calculator_id, {**entities, key: not v}).value
            if r is not None and labels_agree(r, new, output_type):
                out.append(key)
    return out


# Offline checks (the check registry's names) whose `error` findings show an input of the row wrong.
INPUT_CHECKS = ("boolean_contradicted", "body_weight", "value_is_a_change", "foreign_entity_keys",
                "expected_keys_missing")


def input_findings(findings: Any) -> dict[tuple[str, int], list[str]]:
    """``(split, uid) -> reasons`` of the findings table's checks that show an input wrong."""
    out: dict[tuple[str, int], list[str]] = {}
    if findings is None or not len(findings):
        return out
    chosen = findings[(findings["severity"] == "error") & findings["check"].isin(INPUT_CHECKS)]
    for s, u, c, r in zip(chosen["split"], chosen["uid"], chosen["check"], chosen["reason"]):
        out.setdefault((str(s), int(u)), []).append(f"{c}: {r}")
    return out


def gather(calculator_id: int, entities: dict[str, Any], old: str, new: str, output_type: str, *,
           rationale: str = "", finding: str | None = None, error_findings: list[str] | None = None) -> Evidence:
    """The evidence of one changed label (``new`` may be N/A)."""
    ev = Evidence()
    default = compute(calculator_id, entities).value
    new_ok = parse_answer(new, output_type).is_valid and not parse_answer(new, output_type).is_abstain
    old_ok = parse_answer(old, output_type).is_valid and not parse_answer(old, output_type).is_abstain
    if default is not None:  # an old N/A (a reversed abstention) is neither reproduced nor contradicted
        ev.default_old = labels_agree(default, old, output_type) if old_ok else None
        ev.default_new = new_ok and labels_agree(default, new, output_type)
    if old_ok:
        ev.alternatives_old = reproducing_alternatives(calculator_id, entities, old, output_type)
    if new_ok:
        ev.alternatives_new = reproducing_alternatives(calculator_id, entities, new, output_type)
    if finding == "implausible_input":
        ev.wrong_inputs.append("recompute audit: implausible input")
    named = named_inputs(rationale, entities)
    if named:
        ev.wrong_inputs.append("rationale names " + ", ".join(named))
    if new_ok:
        flips = single_flip(calculator_id, entities, new, output_type)
        if flips:
            ev.wrong_inputs.append("flipping " + ", ".join(flips) + " alone gives the new label")
    ev.wrong_inputs.extend(f"check: {f}" for f in (error_findings or []))
    return ev


def classify_error(status: str, note: str, finding: str | None, evidence: Evidence | None = None) -> str | None:
    """Error type of a decision by the rule of the module docstring. Without ``evidence`` only the
    recompute ``finding`` is known: ``aggregation_mismatch`` -> aggregation, ``implausible_input``
    -> extraction, else ``other``."""
    if status == "confirmed":
        return None
    timepoint = bool(TIMEPOINT.search(note or ""))
    if status == "abstain":
        return "underspecified" if timepoint else "unanswerable"
    if timepoint:
        return "underspecified"
    if evidence is None:
        return {"aggregation_mismatch": "aggregation", "implausible_input": "extraction"}.get(finding or "", "other")
    if evidence.alternatives_old or (evidence.default_old and evidence.alternatives_new):
        return "underspecified"
    if evidence.default_old is False and (evidence.default_new or evidence.alternatives_new):
        return "aggregation"
    if evidence.wrong_inputs:
        return "extraction"
    return "other"


def explain(evidence: Evidence) -> list[str]:
    """The evidence as record lines (what the type was decided from)."""
    out = []
    if evidence.default_old is not None:
        out.append(f"reference calculator on the upstream entities: old label {'reproduced' if evidence.default_old else 'not reproduced'}, "
                   f"new label {'reproduced' if evidence.default_new else 'not reproduced'}")
    if evidence.alternatives_old:
        out.append("old label follows the alternative definition(s) " + ", ".join(evidence.alternatives_old))
    if evidence.alternatives_new:
        out.append("new label follows the alternative definition(s) " + ", ".join(evidence.alternatives_new))
    out.extend(f"input shown wrong: {w}" for w in evidence.wrong_inputs)
    return out


__all__ = ["Evidence", "TIMEPOINT", "classify_error", "explain", "gather", "named_inputs", "single_flip"]
