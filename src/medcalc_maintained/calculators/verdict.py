"""The verdict of the evidence verifier on one recorded input, and the rules that decide it.

:mod:`medcalc_maintained.calculators.evidence` reads criteria and categories and
:mod:`medcalc_maintained.calculators.evidence_quantity` reads numbers, :mod:`medcalc_maintained.calculators.evidence_dose` dosed drugs; each answers with a :class:`Verdict`
naming one rule of :data:`RULES`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

RULES: dict[str, str] = {
    "supports": "the quote states the input's value",
    "published": "a published release's record, carried onto another upstream note by a ledger rebase: the decision "
                 "the release published holds (ledger/derivation.py: input_verdict)",
    "quote-mismatch": "the quoted text is not the note's text at its offsets",
    "unknown-input": "the name is not a declared input of the calculator",
    "no-quote": "a value without a quote (only an absent criterion may quote nothing)",
    "not-named": "the quote names no term of the input's lexicon entry",
    "value-not-printed": "the recorded value is not printed in the quote",
    "bare-number": "the number is not attributed to any named quantity",
    "wrong-quantity": "the number belongs to another quantity named in its sentence",
    "reference-bound": "the number bounds a reference range",
    "range-endpoint": "the number is an endpoint of a range, not one value",
    "denominator": "the number is the denominator of a fraction (8/15)",
    "date-part": "the number is part of a date or a year",
    "unit-mismatch": "the printed unit does not fit the quantity or differs from the recorded unit",
    "timepoint": "the value is from another time and the record does not say which and why",
    "negated": "the criterion is negated in its own clause",
    "planned-or-suspected": "the criterion is planned, suspected or being ruled out, not established",
    "family-history": "the criterion is a relative's, not the patient's",
    "asserted-not-negated": "an absent value whose quote asserts the criterion",
    "absent-but-named": "an absent value the note names without negation elsewhere",
    "absent-by-missing-keyword": "an absent value without a negating quote, for a criterion or category the "
                                 "definition does not decide when unmentioned",
    "other-option": "a best response (a GCS component) whose sentence also states, unnegated, a more specific reading or a "
                    "better response of the same input (speech disjointed with inappropriate words is not confused "
                    "conversation; unresponsive to verbal stimuli but moaned is no absent verbal response), or a true of a "
                    "graded choice whose quote states a grade the calculator scores higher than true (metastatic for a "
                    "solid tumor that true scores as localized)",
    "treatment-effect": "the finding is the effect of a treatment given, not the patient's condition",
    "route-mismatch": "the quote states another route (or form) of the drug than the input's",
    "route-not-stated": "the quote states no route (or form) of a drug whose conversion depends on it",
    "frequency-not-stated": "the quote does not say how many times a day the drug is taken",
    "unlisted-drug": "the quote doses a drug the input's list of drugs lacks",
    "outside-population": "the recorded age or sex puts the patient outside the population the calculator's source "
                          "publication states (calculators/populations.yaml)",
}


@dataclass(frozen=True)
class Verdict:
    """Whether a quote supports one recorded input, the rule of :data:`RULES` that decided, and why."""

    supports: bool
    rule: str
    reason: str

    def document(self) -> dict[str, Any]:
        return {"supports": self.supports, "rule": self.rule, "reason": self.reason}


def ok(reason: str) -> Verdict:
    return Verdict(True, "supports", reason)


def no(rule: str, reason: str) -> Verdict:
    return Verdict(False, rule, reason)



def timepoint_stated(inp: Mapping[str, Any]) -> bool:
    """Whether a recorded input says which time it is from and why (``timepoint: {when, why}``)."""
    tp = inp.get("timepoint")
    return isinstance(tp, Mapping) and bool(str(tp.get("when") or "").strip()) and bool(str(tp.get("why") or "").strip())
