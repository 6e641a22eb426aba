"""Backend ``rules``: the deterministic recompute audit as a verifier (offline default of ``audit``).

It re-derives the label from the upstream ``Relevant Entities`` with the reference calculators
(:func:`medcalc_maintained.quality.recompute.recompute_row`) and votes:

``no``       the finding is ``aggregation_mismatch`` (our calculator disagrees with the label) or
             ``implausible_input`` (an extracted input is physiologically implausible): the label
             looks wrong;
``yes``      the calculator reproduces the label from plausible inputs;
``abstain``  the label cannot be recomputed (a needed input is missing or unreadable).

When the row's patient is outside the population the calculator's source publication states
(:func:`medcalc_maintained.calculators.population.population_problems`: an age or sex entity outside
``calculators/populations.yaml``), the critique says so; the verdict does not change.

Same input, same output: one run per row is a complete record, so the stage records exactly one
vote per row (``runs = 1``) and flags a row when that single vote is ``no``.
"""

from __future__ import annotations

import time

from medcalc_maintained.calculators.population import population_problems
from medcalc_maintained.quality.recompute import FLAGGING, recompute_row
from medcalc_maintained.verifiers.base import Backend, Completion, Task


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def critique(finding: str, rec: dict, label: str, lower: str, upper: str, output_type: str) -> str:
    value = rec.get("recomputed")
    band = f" (accepted range {lower} to {upper})" if output_type == "decimal" else ""
    if finding == "not_computable":
        missing = rec.get("missing_inputs") or "an input"
        return f"Cannot recompute the label: missing or unreadable input(s): {missing}. No verdict."
    if finding == "implausible_input":
        return (f"Implausible extracted input(s): {rec.get('implausible_inputs')} (outside the physiological "
                f"ranges of calculators/plausibility.yaml), so the features the label was computed from look "
                f"wrong. Recomputed {value} from them; label {label}{band}; relative difference "
                f"{_pct(rec.get('rel_err'))}.")
    if finding == "aggregation_mismatch":
        return (f"Recomputed {value} from the upstream features with the reference calculator, but the label "
                f"is {label}{band}; relative difference {_pct(rec.get('rel_err'))}. The aggregation of the "
                f"features into the label looks wrong.")
    return f"Recomputed {value} from the upstream features; it agrees with the label {label}{band}."


class RulesBackend(Backend):
    name = "rules"
    model = "recompute (medcalc_maintained.calculators)"
    cacheable = False
    deterministic = True
    uses_prompt = False

    async def generate(self, task: Task) -> Completion:
        p = task.payload
        t0 = time.perf_counter()
        rec = recompute_row(int(p["calculator_id"]), p["entities"], p["label"], p["lower"], p["upper"],
                            p["output_type"])
        finding = rec["finding"]
        verdict = "no" if finding in FLAGGING else ("abstain" if finding == "not_computable" else "yes")
        text = critique(finding, rec, p["label"], p["lower"], p["upper"], p["output_type"])
        outside = population_problems(int(p["calculator_id"]), p["entities"])
        if outside:
            text += " Outside the calculator's population: " + "; ".join(outside) + "."
        text = f"<finding>{finding}</finding>\n<critique>{text}</critique>\n<verdict>{verdict}</verdict>"
        return Completion(text=text, latency_s=time.perf_counter() - t0, model_version=self.model,
                          finish_reason=finding)
