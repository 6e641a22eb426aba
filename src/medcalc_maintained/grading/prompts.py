"""The prompt of every training and evaluation row: the fixed system prompt and the chat messages.

The ``compare`` stage writes these prompts into both training arms and ``compare train`` trains on
them, so a change here changes the stage's outputs (``dvc.yaml`` lists this module as a dependency).

Two variants (:data:`VARIANTS`): ``default`` (the prompt above: the answer alone in ``<answer>``) and
``stepwise``, which also asks for the inputs the model used, as a JSON object in ``<inputs>…</inputs>``
before the answer, under the names the row's calculator declares (``stepwise_inputs.json``, written from
``calculators/inputs.py`` by ``python -m medcalc_maintained.grading.stepwise_inputs``; this module reads only
that file, so a harness's venv needs no dependency of ours). ``evaluate --steps`` grades what it states
(:mod:`.steps`). The default prompt is unchanged by the variant.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

SYSTEM_PROMPT = (
    "You are a careful clinical calculation assistant. You are given a patient note and a question "
    "that names one medical calculator. Work out which values the calculator needs, find them in the "
    "note (converting units where needed), and compute the result step by step. End your reply with "
    "the final result alone between <answer> and </answer>: a number for scores and measurements, a "
    "date as MM/DD/YYYY, or a gestational age as ('W weeks', 'D days'). If the note does not contain "
    "what the calculator needs, or the calculator does not apply to this patient, reply "
    "<answer>N/A</answer> instead of guessing."
)


VARIANTS = ("default", "stepwise")
STEPWISE_SYSTEM_PROMPT = SYSTEM_PROMPT + (
    " Before the answer, state the values you used in one <inputs> block: a JSON object that maps each "
    "input named in the question's list to the value you took from the note, a measurement as "
    "[value, \"unit\"], a yes/no criterion as true or false, a category or a date as text; leave out an "
    "input the note does not give. For example: <inputs>{\"age\": [67, \"years\"], \"creatinine\": "
    "[1.2, \"mg/dL\"], \"hypertension\": true}</inputs>"
)
INPUTS_FILE = Path(__file__).with_name("stepwise_inputs.json")


@lru_cache(maxsize=1)
def _declared() -> dict[str, list[str]]:
    """``{calculator id: [input description]}`` from :data:`INPUTS_FILE`."""
    return dict(json.loads(INPUTS_FILE.read_text(encoding="utf-8"))["calculators"])


def check_variant(variant: str) -> str:
    if variant not in VARIANTS:
        raise ValueError(f"prompt variant {variant!r} is not one of {', '.join(VARIANTS)}")
    return variant


def system_prompt(variant: str = "default") -> str:
    """The system message of a prompt variant."""
    return STEPWISE_SYSTEM_PROMPT if check_variant(variant) == "stepwise" else SYSTEM_PROMPT


def input_list(calculator_id: int) -> str:
    """The inputs the stepwise prompt names for a calculator, one per line (name: form)."""
    try:
        lines = _declared()[str(int(calculator_id))]
    except KeyError:
        raise ValueError(f"calculator {calculator_id} declares no inputs in {INPUTS_FILE.name}") from None
    return "\n".join(f"- {line}" for line in lines)


def build_prompt(note: str, question: str, variant: str = "default",
                 calculator_id: int | None = None) -> list[dict[str, str]]:
    """The chat messages of one instance: the variant's system prompt, then the note and the question
    (``stepwise``: and the calculator's inputs by name, which needs ``calculator_id``)."""
    user = f"Patient note:\n{note.strip()}\n\nQuestion: {question.strip()}"
    if check_variant(variant) == "stepwise":
        if calculator_id is None:
            raise ValueError("the stepwise prompt names the calculator's inputs: give its calculator_id")
        user += f"\n\nInputs of this calculator (the names for <inputs>):\n{input_list(calculator_id)}"
    return [{"role": "system", "content": system_prompt(variant)}, {"role": "user", "content": user}]
